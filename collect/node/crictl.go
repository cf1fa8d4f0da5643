package node

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// The encoders below reproduce what crictl v1.37 prints, so that readers of crictl output
// read podflow bundles and bundles hold what a user would have seen running crictl:
//   crictl pods -o json      ListPodSandboxResponse, newest first
//   crictl ps -a -o json     ListContainersResponse, newest first
//   crictl images -o json    ListImagesResponse, sorted by first tag, digest, then ID
//   crictl inspect ID        {"status": ..., "info": ...} with readable timestamps
//   crictl inspectp ID       the same for a sandbox
// crictl marshals with protojson and EmitDefaultValues (lowerCamelCase names, int64 as
// strings, zero values present).

var protoJSON = protojson.MarshalOptions{EmitDefaultValues: true}

// marshalProto encodes m as crictl does, indented by two spaces. protojson varies its
// whitespace on purpose; re-indenting makes the bytes stable, so collecting the same
// state twice gives the same file.
func marshalProto(m proto.Message) ([]byte, error) {
	raw, err := protoJSON.Marshal(m)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, raw, "", "  "); err != nil {
		return nil, err
	}
	buf.WriteByte('\n')
	return buf.Bytes(), nil
}

// podsJSON is `crictl pods -o json`: sandboxes without metadata are dropped, as crictl does.
func podsJSON(items []*runtimeapi.PodSandbox) ([]byte, error) {
	kept := make([]*runtimeapi.PodSandbox, 0, len(items))
	for _, p := range items {
		if p.GetMetadata() != nil {
			kept = append(kept, p)
		}
	}
	sort.SliceStable(kept, func(i, j int) bool { return kept[i].GetCreatedAt() > kept[j].GetCreatedAt() })
	return marshalProto(&runtimeapi.ListPodSandboxResponse{Items: kept})
}

// containersJSON is `crictl ps -a -o json`.
func containersJSON(items []*runtimeapi.Container) ([]byte, error) {
	kept := make([]*runtimeapi.Container, 0, len(items))
	for _, c := range items {
		if c.GetMetadata() != nil {
			kept = append(kept, c)
		}
	}
	sort.SliceStable(kept, func(i, j int) bool { return kept[i].GetCreatedAt() > kept[j].GetCreatedAt() })
	return marshalProto(&runtimeapi.ListContainersResponse{Containers: kept})
}

// imagesJSON is `crictl images -o json`.
func imagesJSON(items []*runtimeapi.Image) ([]byte, error) {
	sorted := slices.Clone(items)
	slices.SortStableFunc(sorted, func(a, b *runtimeapi.Image) int {
		if len(a.GetRepoTags()) > 0 && len(b.GetRepoTags()) > 0 {
			return cmp.Compare(a.GetRepoTags()[0], b.GetRepoTags()[0])
		}
		if len(a.GetRepoDigests()) > 0 && len(b.GetRepoDigests()) > 0 {
			return cmp.Compare(a.GetRepoDigests()[0], b.GetRepoDigests()[0])
		}
		return cmp.Compare(a.GetId(), b.GetId())
	})
	return marshalProto(&runtimeapi.ListImagesResponse{Images: sorted})
}

// inspectContainerJSON is `crictl inspect ID`.
func inspectContainerJSON(r *runtimeapi.ContainerStatusResponse) ([]byte, error) {
	cs := r.GetStatus()
	if cs == nil {
		return nil, fmt.Errorf("runtime returned no status")
	}
	status, err := protoMap(cs)
	if err != nil {
		return nil, err
	}
	status["createdAt"] = formatNanos(cs.GetCreatedAt())
	// crictl shows the zero time for a start or finish that has not happened.
	var startedAt, finishedAt time.Time
	if cs.GetState() != runtimeapi.ContainerState_CONTAINER_CREATED {
		startedAt = time.Unix(0, cs.GetStartedAt())
	}
	if cs.GetState() == runtimeapi.ContainerState_CONTAINER_EXITED ||
		(cs.GetState() == runtimeapi.ContainerState_CONTAINER_UNKNOWN && cs.GetFinishedAt() > 0) {
		finishedAt = time.Unix(0, cs.GetFinishedAt())
	}
	status["startedAt"] = startedAt.Format(time.RFC3339Nano)
	status["finishedAt"] = finishedAt.Format(time.RFC3339Nano)
	return statusWithInfo(status, r.GetInfo())
}

// inspectPodJSON is `crictl inspectp ID`.
func inspectPodJSON(r *runtimeapi.PodSandboxStatusResponse) ([]byte, error) {
	ps := r.GetStatus()
	if ps == nil {
		return nil, fmt.Errorf("runtime returned no status")
	}
	status, err := protoMap(ps)
	if err != nil {
		return nil, err
	}
	status["createdAt"] = formatNanos(ps.GetCreatedAt())
	return statusWithInfo(status, r.GetInfo())
}

// formatNanos renders a CRI timestamp as crictl does: RFC3339Nano in the node's zone.
func formatNanos(ns int64) string {
	return time.Unix(0, ns).Format(time.RFC3339Nano)
}

// protoMap is crictl's status object: the protojson fields, plus every other field of the
// Go struct as null (crictl's marshalMapInOrder walks the struct, so unset messages such
// as "resources" appear as null rather than being left out).
func protoMap(m proto.Message) (map[string]any, error) {
	raw, err := protoJSON.Marshal(m)
	if err != nil {
		return nil, err
	}
	decoded := map[string]any{}
	if err := json.Unmarshal(raw, &decoded); err != nil {
		return nil, err
	}
	out := map[string]any{}
	v := reflect.Indirect(reflect.ValueOf(m))
	for i := range v.NumField() {
		field := jsonFieldFromTag(v.Type().Field(i).Tag)
		if field == "" || field == "-" {
			continue
		}
		out[field] = decoded[field]
	}
	return out, nil
}

// jsonFieldFromTag is the field's JSON name as crictl computes it: the protobuf tag's
// json= name, else the json tag's.
func jsonFieldFromTag(tag reflect.StructTag) string {
	field, _, _ := strings.Cut(tag.Get("json"), ",")
	for _, f := range strings.Split(tag.Get("protobuf"), ",") {
		if name, ok := strings.CutPrefix(f, "json="); ok {
			field = name
		}
	}
	return field
}

// statusWithInfo composes crictl's inspect object: "status" plus each verbose info key,
// JSON objects decoded in place and other values as strings without their quotes.
func statusWithInfo(status map[string]any, info map[string]string) ([]byte, error) {
	out := map[string]any{"status": status}
	for k, v := range info {
		if strings.HasPrefix(v, "{") {
			var obj map[string]any
			if err := json.Unmarshal([]byte(v), &obj); err == nil {
				out[k] = obj
				continue
			}
			// crictl gives up on a malformed info object; the raw text is still evidence.
		}
		out[k] = strings.Trim(v, `"`)
	}
	data, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(data, '\n'), nil
}
