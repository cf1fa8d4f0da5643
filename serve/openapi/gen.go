//go:build ignore

// gen writes the OpenAPI documents podflow serve answers /openapi/v2 and /openapi/v3
// with: the Kubernetes API's own, from the Kubernetes source tree named by its one
// argument (api/openapi-spec), kept to the group versions a bundle can hold, gzipped.
// Of the v3 paths only what kubectl explain reads is kept: each resource path's get
// operation with the kind it returns (x-kubernetes-group-version-kind), which explain
// uses to find a resource's schema; the rest of the operations the server does not offer.
//
//	go run gen.go "$(go mod download -json k8s.io/kubernetes@v1.37.2 | jq -r .Dir)"
package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	openapiv2 "github.com/google/gnostic-models/openapiv2"
	"google.golang.org/protobuf/proto"
)

// groupVersions are those of bundle.Lists, and of the reviews the server answers.
var groupVersions = []string{
	"api/v1", "apis/apps/v1", "apis/batch/v1", "apis/autoscaling/v2", "apis/discovery.k8s.io/v1",
	"apis/networking.k8s.io/v1", "apis/policy/v1", "apis/rbac.authorization.k8s.io/v1", "apis/storage.k8s.io/v1",
	"apis/scheduling.k8s.io/v1", "apis/node.k8s.io/v1", "apis/coordination.k8s.io/v1",
	"apis/admissionregistration.k8s.io/v1", "apis/authorization.k8s.io/v1", "apis/authentication.k8s.io/v1",
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: go run gen.go KUBERNETES_SOURCE_DIR")
		os.Exit(2)
	}
	spec := filepath.Join(os.Args[1], "api", "openapi-spec")
	for _, gv := range groupVersions {
		name := strings.ReplaceAll(gv, "/", "__") + "_openapi.json"
		doc := map[string]any{}
		must(readJSON(filepath.Join(spec, "v3", name), &doc))
		doc["paths"] = kindsOfPaths(doc["paths"])
		must(writeGz(filepath.Join("v3", strings.ReplaceAll(gv, "/", "_")+".json.gz"), doc))
	}
	v2 := map[string]any{}
	must(readJSON(filepath.Join(spec, "swagger.json"), &v2))
	v2["paths"] = map[string]any{}
	raw, err := json.Marshal(v2)
	must(err)
	must(writeGz("v2.json.gz", json.RawMessage(raw)))
	doc, err := openapiv2.ParseDocument(raw)
	must(err)
	pb, err := proto.Marshal(doc)
	must(err)
	must(writeGzBytes("v2.pb.gz", pb))
}

// kindsOfPaths keeps, of a v3 document's paths, each get operation that names the kind
// it returns, reduced to that name (watch paths left out).
func kindsOfPaths(paths any) map[string]any {
	out := map[string]any{}
	all, _ := paths.(map[string]any)
	for p, item := range all {
		ops, _ := item.(map[string]any)
		get, _ := ops["get"].(map[string]any)
		gvk, ok := get["x-kubernetes-group-version-kind"]
		if !ok || strings.Contains(p, "/watch/") {
			continue
		}
		if action, _ := get["x-kubernetes-action"].(string); action != "get" && action != "list" {
			continue
		}
		out[p] = map[string]any{"get": map[string]any{
			"x-kubernetes-group-version-kind": gvk,
			"x-kubernetes-action":             get["x-kubernetes-action"],
			"responses":                       map[string]any{"200": map[string]any{"description": "OK"}},
		}}
	}
	return out
}

func readJSON(path string, into any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, into)
}

func writeGz(path string, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return writeGzBytes(path, data)
}

func writeGzBytes(path string, data []byte) error {
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return err
	}
	if _, err := zw.Write(data); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}

func must(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
