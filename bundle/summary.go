package bundle

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/go-json-experiment/json/jsontext"
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

// countItems counts the items of a JSON list as json.Unmarshal into a struct with an
// Items []json.RawMessage field would, accepting and refusing the same documents, but
// in one streaming pass that copies nothing: inspect and verify count every list of a
// bundle, and the copy of each item was most of their time.
func countItems(data []byte) (int, error) {
	dec := jsontext.NewDecoder(bytes.NewReader(data), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	tok, err := dec.ReadToken()
	if err != nil {
		return 0, err
	}
	n := 0
	switch tok.Kind() {
	case 'n':
		// null decodes into nothing, without an error.
	case '{':
		for dec.PeekKind() != '}' {
			name, err := dec.ReadToken()
			if err != nil {
				return 0, err
			}
			if !strings.EqualFold(name.String(), "items") {
				if err := dec.SkipValue(); err != nil {
					return 0, err
				}
				continue
			}
			// Every key that folds to "items" sets the field; the last one wins.
			if n, err = countArray(dec); err != nil {
				return 0, err
			}
		}
		if _, err := dec.ReadToken(); err != nil {
			return 0, err
		}
	default:
		return 0, fmt.Errorf("a JSON %s is not a list", tok.Kind())
	}
	if _, err := dec.ReadToken(); !errors.Is(err, io.EOF) {
		if err == nil {
			err = errors.New("data after the top-level value")
		}
		return 0, err
	}
	return n, nil
}

// countArray counts the values of the array (or null) dec is at.
func countArray(dec *jsontext.Decoder) (int, error) {
	switch dec.PeekKind() {
	case 'n':
		_, err := dec.ReadToken()
		return 0, err
	case '[':
	default:
		if err := dec.SkipValue(); err != nil {
			return 0, err
		}
		return 0, errors.New("items is not a JSON array")
	}
	if _, err := dec.ReadToken(); err != nil {
		return 0, err
	}
	n := 0
	for dec.PeekKind() != ']' {
		if err := dec.SkipValue(); err != nil {
			return 0, err
		}
		n++
	}
	_, err := dec.ReadToken()
	return n, err
}
