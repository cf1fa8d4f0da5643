package importer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// Labels the kubelet puts on CRI containers and sandboxes; podflow links CRI state to
// pods by the UID label.
const (
	criLabelPodUID       = "io.kubernetes.pod.uid"
	criLabelPodName      = "io.kubernetes.pod.name"
	criLabelPodNamespace = "io.kubernetes.pod.namespace"
	criLabelContainer    = "io.kubernetes.container.name"
)

// criMeta, criContainerRow and criSandboxRow are the JSON shapes `crictl ps -o json` and
// `crictl pods -o json` print (protobuf JSON), holding only what a table row shows.
type criMeta struct {
	Name      string `json:"name"`
	UID       string `json:"uid,omitempty"`
	Namespace string `json:"namespace,omitempty"`
	Attempt   int    `json:"attempt"`
}

type criContainerRow struct {
	ID           string `json:"id"`
	PodSandboxID string `json:"podSandboxId"`
	Metadata     criMeta
	Image        struct {
		Image string `json:"image"`
	} `json:"image"`
	State  string            `json:"state"`
	Labels map[string]string `json:"labels"`
	line   int
}

type criSandboxRow struct {
	ID       string            `json:"id"`
	Metadata criMeta           `json:"metadata"`
	State    string            `json:"state"`
	Labels   map[string]string `json:"labels"`
	line     int
}

// MarshalJSON writes the metadata under its protobuf name.
func (c criContainerRow) MarshalJSON() ([]byte, error) {
	type plain struct {
		ID           string            `json:"id"`
		PodSandboxID string            `json:"podSandboxId"`
		Metadata     criMeta           `json:"metadata"`
		Image        map[string]string `json:"image"`
		State        string            `json:"state"`
		Labels       map[string]string `json:"labels"`
	}
	return json.Marshal(plain{c.ID, c.PodSandboxID, c.Metadata, map[string]string{"image": c.Image.Image}, c.State, c.Labels})
}

// parseCRIContainers reads `crictl ps -a` (sigs.k8s.io/cri-tools cmd/crictl/container.go
// ListContainers): CONTAINER IMAGE CREATED STATE NAME ATTEMPT POD ID POD NAMESPACE, the
// last two absent in older crictl. IDs are cut to 13 characters and CREATED is relative
// ("2 minutes ago"), so no time is kept.
func parseCRIContainers(lines []textLine) ([]criContainerRow, []string) {
	t := newTable(lines[0].s)
	var out []criContainerRow
	var problems []string
	for _, l := range lines[1:] {
		if strings.TrimSpace(l.s) == "" {
			continue
		}
		cells, ok := t.row(l.s, "CREATED")
		state := criState("CONTAINER_", cells["STATE"], "Created", "Running", "Exited", "Unknown")
		attempt, err := strconv.Atoi(cells["ATTEMPT"])
		if !ok || cells["CONTAINER"] == "" || cells["NAME"] == "" || state == "" || err != nil {
			problems = append(problems, fmt.Sprintf("line %d: not a crictl ps row", l.n))
			continue
		}
		c := criContainerRow{ID: cells["CONTAINER"], PodSandboxID: cells["POD ID"], State: state, line: l.n,
			Labels: map[string]string{criLabelContainer: cells["NAME"]}}
		c.Metadata = criMeta{Name: cells["NAME"], Attempt: attempt}
		c.Image.Image = cells["IMAGE"]
		if v := cells["POD"]; v != "" {
			c.Labels[criLabelPodName] = v
		}
		if v := cells["NAMESPACE"]; v != "" {
			c.Labels[criLabelPodNamespace] = v
		}
		out = append(out, c)
	}
	return out, problems
}

// parseCRISandboxes reads `crictl pods` (cmd/crictl/sandbox.go ListPodSandboxes):
// POD ID CREATED STATE NAME NAMESPACE ATTEMPT RUNTIME.
func parseCRISandboxes(lines []textLine) ([]criSandboxRow, []string) {
	t := newTable(lines[0].s)
	var out []criSandboxRow
	var problems []string
	for _, l := range lines[1:] {
		if strings.TrimSpace(l.s) == "" {
			continue
		}
		cells, ok := t.row(l.s, "CREATED")
		state := criState("SANDBOX_", cells["STATE"], "Ready", "NotReady")
		attempt, err := strconv.Atoi(cells["ATTEMPT"])
		if !ok || cells["POD ID"] == "" || cells["NAME"] == "" || state == "" || err != nil {
			problems = append(problems, fmt.Sprintf("line %d: not a crictl pods row", l.n))
			continue
		}
		out = append(out, criSandboxRow{ID: cells["POD ID"], State: state, line: l.n,
			Metadata: criMeta{Name: cells["NAME"], Namespace: cells["NAMESPACE"], Attempt: attempt},
			Labels:   map[string]string{criLabelPodName: cells["NAME"], criLabelPodNamespace: cells["NAMESPACE"]}})
	}
	return out, problems
}

// criState maps a table's state word back to the CRI enum name.
func criState(prefix, word string, known ...string) string {
	for _, k := range known {
		if word == k {
			return prefix + strings.ToUpper(k)
		}
	}
	return ""
}

// criInspectDoc is what podflow needs of one `crictl inspect` or `inspectp` document.
type criInspectDoc struct {
	ID, SandboxID  string
	Labels         map[string]string
	Namespace, Pod string
	UID            string
	sandbox        bool
}

// parseCRIInspect reads crictl inspect or inspectp output: {"status": …, "info": …}, or
// an array of them. false when data is not that.
func parseCRIInspect(data []byte) ([]criInspectDoc, bool) {
	trimmed := bytes.TrimSpace(data)
	var raws []json.RawMessage
	if len(trimmed) > 0 && trimmed[0] == '[' {
		if json.Unmarshal(trimmed, &raws) != nil {
			return nil, false
		}
	} else {
		raws = []json.RawMessage{trimmed}
	}
	var out []criInspectDoc
	for _, raw := range raws {
		var doc struct {
			Status *struct {
				ID           string            `json:"id"`
				PodSandboxID string            `json:"podSandboxId"`
				Metadata     criMeta           `json:"metadata"`
				Labels       map[string]string `json:"labels"`
				Image        json.RawMessage   `json:"image"`
			} `json:"status"`
			Info json.RawMessage `json:"info"`
			Kind string          `json:"kind"`
		}
		if json.Unmarshal(raw, &doc) != nil || doc.Status == nil || doc.Status.ID == "" || doc.Kind != "" {
			return nil, false
		}
		s := doc.Status
		d := criInspectDoc{ID: s.ID, SandboxID: s.PodSandboxID, Labels: s.Labels,
			Namespace: firstOf(s.Labels[criLabelPodNamespace], s.Metadata.Namespace),
			Pod:       s.Labels[criLabelPodName], UID: firstOf(s.Labels[criLabelPodUID], s.Metadata.UID),
			sandbox: s.PodSandboxID == "" && s.Image == nil}
		if d.sandbox && d.Pod == "" {
			d.Pod = s.Metadata.Name
		}
		out = append(out, d)
	}
	return out, len(out) > 0
}

func firstOf(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}

// criJoin joins what table rows show with the inspect documents of the same node: a
// row's 13-character ID becomes the full ID, and the pod UID comes from the container's
// or its sandbox's labels, so podflow can link the row to its pod.
type criJoin struct {
	docs []criInspectDoc
	// podUIDs maps namespace/name to a pod UID known from API objects.
	podUIDs map[string]string
}

func (j criJoin) full(id string, sandbox bool) (criInspectDoc, bool) {
	if id == "" {
		return criInspectDoc{}, false
	}
	for _, d := range j.docs {
		if d.sandbox == sandbox && strings.HasPrefix(d.ID, id) {
			return d, true
		}
	}
	return criInspectDoc{}, false
}

func (j criJoin) uid(ns, pod string) string {
	if pod == "" {
		return ""
	}
	if ns != "" {
		return j.podUIDs[ns+"/"+pod]
	}
	// Older crictl prints no NAMESPACE column: a pod name that only one namespace has is
	// still unambiguous.
	uid := ""
	for key, u := range j.podUIDs {
		if strings.HasSuffix(key, "/"+pod) {
			if uid != "" {
				return ""
			}
			uid = u
		}
	}
	return uid
}

// containers completes table rows; it returns how many rows still have no pod UID.
func (j criJoin) containers(rows []criContainerRow) int {
	missing := 0
	for i := range rows {
		c := &rows[i]
		if d, ok := j.full(c.ID, false); ok {
			c.ID = d.ID
			c.PodSandboxID = firstOf(d.SandboxID, c.PodSandboxID)
			c.Labels[criLabelPodUID] = d.UID
			c.Labels[criLabelPodName] = firstOf(c.Labels[criLabelPodName], d.Pod)
			c.Labels[criLabelPodNamespace] = firstOf(c.Labels[criLabelPodNamespace], d.Namespace)
		}
		if sb, ok := j.full(c.PodSandboxID, true); ok {
			c.PodSandboxID = sb.ID
			c.Labels[criLabelPodUID] = firstOf(c.Labels[criLabelPodUID], sb.UID)
		}
		if c.Labels[criLabelPodUID] == "" {
			c.Labels[criLabelPodUID] = j.uid(c.Labels[criLabelPodNamespace], c.Labels[criLabelPodName])
		}
		if c.Labels[criLabelPodUID] == "" {
			delete(c.Labels, criLabelPodUID)
			missing++
		}
	}
	return missing
}

// sandboxes completes table rows; it returns how many rows still have no pod UID.
func (j criJoin) sandboxes(rows []criSandboxRow) int {
	missing := 0
	for i := range rows {
		s := &rows[i]
		if d, ok := j.full(s.ID, true); ok {
			s.ID = d.ID
			s.Metadata.UID = d.UID
		}
		if s.Metadata.UID == "" {
			s.Metadata.UID = j.uid(s.Metadata.Namespace, s.Metadata.Name)
		}
		if s.Metadata.UID == "" {
			missing++
		} else {
			s.Labels[criLabelPodUID] = s.Metadata.UID
		}
	}
	return missing
}

// criListJSON writes rows as crictl -o json does: {"containers": [...]} or {"items": [...]}.
func criListJSON[T any](key string, rows []T) []byte {
	data, _ := json.MarshalIndent(map[string][]T{key: rows}, "", "  ") // plain structs always encode
	return append(data, '\n')
}
