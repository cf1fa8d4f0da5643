package bundle

import (
	"encoding/json"
	"fmt"
	"sort"
	"time"
)

// Summary is a human-sized description of a bundle, for `podflow inspect`.
type Summary struct {
	Source         string         `json:"source"`
	FormatVersion  string         `json:"formatVersion,omitempty"`
	PodflowVersion string         `json:"podflowVersion,omitempty"`
	Type           string         `json:"type,omitempty"`
	CollectedAt    *time.Time     `json:"collectedAt,omitempty"`
	Scope          *Scope         `json:"scope,omitempty"`
	Cluster        *Cluster       `json:"cluster,omitempty"`
	Sources        []Source       `json:"sources,omitempty"`
	Kinds          map[string]int `json:"kinds"`
	Namespaces     []string       `json:"namespaces"`
	// Nodes are the nodes the bundle knows of: objects in nodes.json and nodes with
	// evidence of their own under nodes/.
	Nodes []string `json:"nodes"`
	// NodeEvidence are the nodes with files under nodes/ (journals, CRI state).
	NodeEvidence []string `json:"nodeEvidence"`
	Logs         int      `json:"containerLogs"`
	Files        int      `json:"files"`
	Bytes        int64    `json:"bytes"`
	Redacted     int      `json:"redacted"`
	// Unreadable lists lists that are not valid JSON, by path.
	Unreadable []string `json:"unreadable,omitempty"`
}

// Summarize counts what a bundle holds without interpreting it.
func Summarize(b *Bundle) Summary {
	s := Summary{Source: b.Source, Kinds: map[string]int{}, Files: len(b.names), Bytes: b.size,
		Namespaces: []string{}, Nodes: []string{}, NodeEvidence: []string{}}
	if m := b.Manifest; m != nil {
		s.FormatVersion, s.PodflowVersion, s.Type = m.FormatVersion, m.PodflowVersion, m.Type
		at := m.CollectedAt
		s.CollectedAt, s.Scope, s.Cluster, s.Sources = &at, &m.Scope, &m.Cluster, m.Sources
		s.Redacted = m.Redaction.Total
	}
	namespaces, nodes, evidence := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for _, name := range b.names {
		info := ParsePath(name)
		switch info.Area {
		case "cluster", "namespaced":
			n, err := b.listItems(name)
			if err != nil {
				s.Unreadable = append(s.Unreadable, name)
				continue
			}
			s.Kinds[info.Kind] += n
			if info.Kind == KindNodes {
				data, _ := b.ReadFile(name) // listed by Names; Scan keeps the nodes list too
				for _, node := range NodeNames(data) {
					nodes[node] = true
				}
			}
			if info.Namespace != "" {
				namespaces[info.Namespace] = true
			}
		case "log":
			s.Logs++
		case "node":
			nodes[info.Node], evidence[info.Node] = true, true
		}
	}
	s.Namespaces, s.Nodes, s.NodeEvidence = sortedKeys(namespaces), sortedKeys(nodes), sortedKeys(evidence)
	return s
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// listItems counts a list's items, from the digest of a scanned bundle.
func (b *Bundle) listItems(name string) (int, error) {
	if d, ok := b.digests[name]; ok {
		if d.Unreadable {
			return 0, fmt.Errorf("%s is not a readable JSON list", name)
		}
		return d.Items, nil
	}
	data, err := b.ReadFile(name)
	if err != nil {
		return 0, err
	}
	return countItems(data)
}

// NodeNames are the names of the nodes in a nodes list (cluster-resources/nodes.json).
func NodeNames(data []byte) []string {
	var list struct {
		Items []struct {
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
		} `json:"items"`
	}
	if json.Unmarshal(data, &list) != nil {
		return nil
	}
	var out []string
	for _, it := range list.Items {
		if it.Metadata.Name != "" {
			out = append(out, it.Metadata.Name)
		}
	}
	return out
}

func countItems(data []byte) (int, error) {
	var list struct {
		Items []json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal(data, &list); err != nil {
		return 0, err
	}
	return len(list.Items), nil
}
