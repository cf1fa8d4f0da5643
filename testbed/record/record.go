// Package record trims a bundle collected on the test bed down to a few namespaces, so
// that a recorded fixture holds one scenario's evidence and stays small enough to review:
// only those namespaces' lists and container logs, and only the node evidence (journal
// lines, CRI entries, kernel OOM reports) that mentions their pods. The node objects and
// every other cluster-scoped list are kept whole. The trimmed bundle gets a fresh
// manifest, so it verifies like any bundle podflow writes.
package record

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path"
	"regexp"
	"sort"
	"strings"

	"podflow.dev/podflow/bundle"
)

// Trimmed is a trimmed bundle: its files and the manifest to close it with.
type Trimmed struct {
	Files    map[string][]byte
	Manifest bundle.Manifest
}

// Size is the total size of the trimmed files.
func (t *Trimmed) Size() int64 {
	var n int64
	for _, d := range t.Files {
		n += int64(len(d))
	}
	return n
}

// Bundle returns the trimmed files and manifest as an in-memory bundle.
func (t *Trimmed) Bundle() (*bundle.Bundle, error) {
	b, err := bundle.New("trimmed", t.Files)
	if err != nil {
		return nil, err
	}
	// The manifest is written with the files (Write), not held among them; checks that
	// measure time against the collection need it.
	m := t.Manifest
	b.Manifest = &m
	return b, nil
}

// Trim keeps what concerns namespaces. src must be a bundle with a manifest.
func Trim(src *bundle.Bundle, namespaces []string) (*Trimmed, error) {
	if src.Manifest == nil {
		return nil, fmt.Errorf("trim %s: no %s", src.Source, bundle.ManifestPath)
	}
	keepNS := map[string]bool{}
	for _, ns := range namespaces {
		keepNS[ns] = true
	}
	keys, err := podKeys(src, keepNS)
	if err != nil {
		return nil, err
	}
	out := &Trimmed{Files: map[string][]byte{}}
	for _, name := range src.Names() {
		if name == bundle.ManifestPath {
			continue
		}
		data, _ := src.ReadFile(name) // listed by Names, so present
		kept, keep, err := trimFile(name, data, keepNS, keys)
		if err != nil {
			return nil, fmt.Errorf("trim %s: %w", name, err)
		}
		if keep {
			out.Files[name] = kept
		}
	}
	out.Manifest = trimManifest(*src.Manifest, out.Files, namespaces)
	return out, nil
}

// trimFile decides what of one file to keep.
func trimFile(name string, data []byte, keepNS map[string]bool, keys *podKeySet) ([]byte, bool, error) {
	info := bundle.ParsePath(name)
	switch info.Area {
	case "namespaced", "log":
		return data, keepNS[info.Namespace], nil
	case "cluster":
		if info.Kind == bundle.KindNamespaces {
			out, err := filterList(data, "items", func(item map[string]any) bool {
				return keepNS[nestedString(item, "metadata", "name")]
			})
			return out, true, err
		}
		return data, true, nil
	case "node":
		return trimNodeFile(info, data, keepNS, keys)
	}
	return data, true, nil
}

func trimNodeFile(info bundle.PathInfo, data []byte, keepNS map[string]bool, keys *podKeySet) ([]byte, bool, error) {
	inNS := func(item map[string]any) bool {
		return keepNS[nestedString(item, "labels", "io.kubernetes.pod.namespace")]
	}
	switch {
	case info.NodeFile == bundle.NodeKubeletLog || info.NodeFile == bundle.NodeRuntimeLog:
		return keepEntries(data, keys), true, nil
	case info.NodeFile == bundle.NodeDmesg:
		return keepOOMReports(data, keys), true, nil
	case info.NodeFile == bundle.NodeCRIPods:
		out, err := filterList(data, "items", inNS)
		return out, true, err
	case info.NodeFile == bundle.NodeCRIContainers:
		out, err := filterList(data, "containers", inNS)
		return out, true, err
	case strings.HasPrefix(info.NodeFile, "crictl/inspect/") || strings.HasPrefix(info.NodeFile, "crictl/inspectp/"):
		id := strings.TrimSuffix(path.Base(info.NodeFile), ".json")
		return data, keys.ids[id], nil
	}
	return data, true, nil
}

// podKeySet identifies the kept namespaces' pods in node evidence: IDs (pod UIDs,
// container and sandbox IDs) match anywhere, since the kernel writes them inside cgroup
// paths ("poda5062396-..."); names ("namespace/pod" as the kubelet writes a pod, and
// "namespace/" for the namespace's other objects) match only as whole names, so
// "shop/web" does not match "shop/web-config" nor "myshop/web".
type podKeySet struct {
	ids   map[string]bool
	names []string
}

func (k *podKeySet) matches(line string) bool {
	for id := range k.ids {
		if strings.Contains(line, id) {
			return true
		}
	}
	for _, n := range k.names {
		for i := 0; ; {
			j := strings.Index(line[i:], n)
			if j < 0 {
				break
			}
			start, end := i+j, i+j+len(n)
			before := start == 0 || !isNameByte(line[start-1])
			after := strings.HasSuffix(n, "/") || end == len(line) || !isNameByte(line[end])
			if before && after {
				return true
			}
			i = start + 1
		}
	}
	return false
}

func isNameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '.'
}

// podKeys collects the keys of the kept namespaces' pods from the pod lists and the CRI
// state. Images the pods use that no node has are keys too: the runtime logs a failing
// pull by image, not by pod.
func podKeys(src *bundle.Bundle, keepNS map[string]bool) (*podKeySet, error) {
	keys := &podKeySet{ids: map[string]bool{}}
	present, err := nodeImages(src)
	if err != nil {
		return nil, err
	}
	for ns := range keepNS {
		keys.names = append(keys.names, ns+"/")
		data, err := src.ReadFile(bundle.NamespacedResourcePath(bundle.KindPods, ns))
		if err != nil {
			continue // no pods in this namespace: nothing on the node names them
		}
		var list struct {
			Items []struct {
				Metadata struct{ Name, Namespace, UID string } `json:"metadata"`
				Spec     struct {
					Containers     []struct{ Image string } `json:"containers"`
					InitContainers []struct{ Image string } `json:"initContainers"`
				} `json:"spec"`
				Status struct {
					ContainerStatuses     []containerStatus `json:"containerStatuses"`
					InitContainerStatuses []containerStatus `json:"initContainerStatuses"`
				} `json:"status"`
			} `json:"items"`
		}
		if err := json.Unmarshal(data, &list); err != nil {
			return nil, fmt.Errorf("decode %s: %w", bundle.NamespacedResourcePath(bundle.KindPods, ns), err)
		}
		for _, p := range list.Items {
			keys.names = append(keys.names, p.Metadata.Namespace+"/"+p.Metadata.Name)
			for _, c := range append(p.Spec.Containers, p.Spec.InitContainers...) {
				if c.Image != "" && !present[c.Image] {
					keys.ids[c.Image] = true
				}
			}
			if p.Metadata.UID != "" {
				keys.ids[p.Metadata.UID] = true
			}
			for _, st := range append(p.Status.ContainerStatuses, p.Status.InitContainerStatuses...) {
				for _, id := range []string{st.ContainerID, st.LastState.Terminated.ContainerID} {
					if _, bare, ok := strings.Cut(id, "://"); ok && bare != "" {
						keys.ids[bare] = true
					}
				}
			}
		}
	}
	for _, name := range src.Names() {
		info := bundle.ParsePath(name)
		if info.Area != "node" || (info.NodeFile != bundle.NodeCRIPods && info.NodeFile != bundle.NodeCRIContainers) {
			continue
		}
		data, _ := src.ReadFile(name) // listed by Names, so present
		var doc struct {
			Items      []criEntry `json:"items"`
			Containers []criEntry `json:"containers"`
		}
		if err := json.Unmarshal(data, &doc); err != nil {
			return nil, fmt.Errorf("decode %s: %w", name, err)
		}
		for _, e := range append(doc.Items, doc.Containers...) {
			if !keepNS[e.Labels["io.kubernetes.pod.namespace"]] {
				continue
			}
			for _, id := range []string{e.ID, e.PodSandboxID, e.Labels["io.kubernetes.pod.uid"]} {
				if id != "" {
					keys.ids[id] = true
				}
			}
		}
	}
	sort.Strings(keys.names)
	return keys, nil
}

// nodeImages lists the image names every node of the bundle reports having.
func nodeImages(src *bundle.Bundle) (map[string]bool, error) {
	out := map[string]bool{}
	data, err := src.ReadFile(bundle.ClusterResourcePath(bundle.KindNodes))
	if err != nil {
		return out, nil // no node list: every image counts as missing, which only keeps more
	}
	var list struct {
		Items []struct {
			Status struct {
				Images []struct {
					Names []string `json:"names"`
				} `json:"images"`
			} `json:"status"`
		} `json:"items"`
	}
	if err := json.Unmarshal(data, &list); err != nil {
		return nil, fmt.Errorf("decode %s: %w", bundle.ClusterResourcePath(bundle.KindNodes), err)
	}
	for _, n := range list.Items {
		for _, img := range n.Status.Images {
			for _, name := range img.Names {
				out[name] = true
			}
		}
	}
	return out, nil
}

type containerStatus struct {
	ContainerID string `json:"containerID"`
	LastState   struct {
		Terminated struct {
			ContainerID string `json:"containerID"`
		} `json:"terminated"`
	} `json:"lastState"`
}

type criEntry struct {
	ID           string            `json:"id"`
	PodSandboxID string            `json:"podSandboxId"`
	Labels       map[string]string `json:"labels"`
}

// entryStart matches the first line of a log entry, after an optional journal prefix
// ("2026-01-02T03:04:05+0000 host kubelet[123]: "): a klog header or a logfmt line.
// Other lines continue the entry before them, as klog's multi-line values do
// (output=<, the indented text, >).
var entryStart = regexp.MustCompile(`^(?:\S+ \S+ [^\s\[]+\[\d+\]: )?(?:[IWEF]\d{4} |time=|level=)`)

// keepEntries keeps the log entries that mention a key, with their continuation lines.
func keepEntries(data []byte, keys *podKeySet) []byte {
	var out bytes.Buffer
	keeping := false
	for _, line := range bytes.SplitAfter(data, []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		if entryStart.Match(line) || !keeping {
			keeping = keys.matches(string(line))
		}
		if keeping {
			out.Write(line)
		}
	}
	return out.Bytes()
}

// keepOOMReports keeps the kernel's OOM reports that mention a key. A report runs from
// its "invoked oom-killer" line to the next one; its victim line ("Killed process") does
// not name the pod, its memory cgroup line does.
func keepOOMReports(data []byte, keys *podKeySet) []byte {
	var out bytes.Buffer
	var block [][]byte
	flush := func() {
		if keys.matches(string(bytes.Join(block, nil))) {
			for _, l := range block {
				out.Write(l)
			}
		}
		block = block[:0]
	}
	for _, line := range bytes.SplitAfter(data, []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		if bytes.Contains(line, []byte("invoked oom-killer")) {
			flush()
		}
		block = append(block, line)
	}
	flush()
	return out.Bytes()
}

// filterList keeps the items of the JSON array under field that keep accepts; every other
// field of the document is kept as it was.
func filterList(data []byte, field string, keep func(map[string]any) bool) ([]byte, error) {
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	raw, ok := doc[field]
	if !ok || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return data, nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, fmt.Errorf("%s: %w", field, err)
	}
	kept := []json.RawMessage{}
	for _, it := range items {
		var m map[string]any
		if err := json.Unmarshal(it, &m); err != nil {
			return nil, fmt.Errorf("%s item: %w", field, err)
		}
		if keep(m) {
			kept = append(kept, it)
		}
	}
	doc[field], _ = json.Marshal(kept) // RawMessages that were just decoded always encode
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(out, '\n'), nil
}

func nestedString(m map[string]any, keys ...string) string {
	var v any = m
	for _, k := range keys {
		mm, ok := v.(map[string]any)
		if !ok {
			return ""
		}
		v = mm[k]
	}
	s, _ := v.(string)
	return s
}

// trimManifest narrows the manifest to the kept files: sources keep the files that
// remain (a source whose every file was dropped is dropped), redaction counts are
// recomputed from the kept files, and the scope names the kept namespaces.
func trimManifest(m bundle.Manifest, files map[string][]byte, namespaces []string) bundle.Manifest {
	m.Scope.Namespaces = append([]string(nil), namespaces...)
	sort.Strings(m.Scope.Namespaces)
	m.Scope.AllNamespaces = false
	var sources []bundle.Source
	for _, s := range m.Sources {
		if len(s.Files) == 0 {
			if !mentionsOtherNamespace(s, namespaces) {
				sources = append(sources, s)
			}
			continue
		}
		var kept []string
		for _, f := range s.Files {
			if _, ok := files[f]; ok {
				kept = append(kept, f)
			}
		}
		if len(kept) > 0 {
			s.Files = kept
			sources = append(sources, s)
		}
	}
	m.Sources = sources
	r := bundle.Redaction{Policy: m.Redaction.Policy, Version: m.Redaction.Version, Enabled: m.Redaction.Enabled}
	for file, rules := range m.Redaction.ByFile {
		if _, ok := files[file]; !ok {
			continue
		}
		for rule, n := range rules {
			r.Add(file, rule, n)
		}
	}
	m.Redaction = r
	m.Files = nil
	return m
}

// mentionsOtherNamespace reports whether a file-less source is about a pod of a dropped
// namespace: its name is a path like logs/<namespace>/<pod>/<container>.
func mentionsOtherNamespace(s bundle.Source, namespaces []string) bool {
	parts := strings.Split(s.Name, "/")
	if len(parts) < 3 || parts[0] != "logs" {
		return false
	}
	for _, ns := range namespaces {
		if parts[1] == ns {
			return false
		}
	}
	return true
}

// Write writes t as a directory bundle at dir, replacing what is there.
func Write(dir string, t *Trimmed) error {
	w, err := bundle.Create(dir, bundle.WriterOptions{Force: true})
	if err != nil {
		return err
	}
	names := make([]string, 0, len(t.Files))
	for n := range t.Files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if err := w.WriteFile(n, t.Files[n]); err != nil {
			w.Abort()
			return err
		}
	}
	m := t.Manifest
	return w.Close(&m)
}
