// Package yamlbudget decodes untrusted YAML with a bound on what its aliases expand
// to. A YAML alias repeats its anchor's whole value: one 256 KiB value aliased 4,000
// times is 1 GiB once decoded, from a file of a few hundred KiB, and the YAML
// libraries' own alias checks (a ratio of aliases to nodes) let that shape through.
// Every decode of a bundle file, a paste or a user's configuration goes through
// Check first: the document is parsed into nodes, where an alias is a pointer to
// its anchor and costs nothing, and the size each node would expand to is counted
// once per node; a document whose expansion passes the budget is refused before
// anything is expanded.
package yamlbudget

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	yamlv3 "go.yaml.in/yaml/v3"
	"sigs.k8s.io/yaml"
)

// Slack is how many bytes past twice the document's own size its aliases may expand
// to: far above what a hand-written configuration or a Kubernetes object uses them
// for, far below what would hurt.
const Slack = 16 << 20

// ErrExpansion is returned for a document whose aliases expand past the budget.
var ErrExpansion = errors.New("YAML aliases expand past the size podflow reads")

// Budget is the expanded size allowed for a document of n bytes.
func Budget(n int) int64 { return 2*int64(n) + Slack }

// Check refuses data whose aliases expand past Budget(len(data)). A document without
// an anchor cannot expand and is not parsed. A document with anchors and aliases
// that the YAML parser refuses is refused: its expansion cannot be counted.
func Check(data []byte) error {
	if !bytes.Contains(data, []byte{'&'}) || !bytes.Contains(data, []byte{'*'}) {
		return nil
	}
	budget := Budget(len(data))
	dec := yamlv3.NewDecoder(bytes.NewReader(data))
	var total int64
	for {
		var doc yamlv3.Node
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("YAML with aliases podflow cannot count: %w", err)
		}
		n, err := CheckNode(&doc, budget-total)
		if err != nil {
			return err
		}
		total += n
	}
}

// CheckNode returns the size n expands to, or ErrExpansion when that passes budget
// (or when an anchor contains an alias of itself).
func CheckNode(n *yamlv3.Node, budget int64) (int64, error) {
	c := counter{size: map[*yamlv3.Node]int64{}, budget: budget}
	size, err := c.count(n)
	if err != nil {
		return 0, err
	}
	return size, nil
}

type counter struct {
	size   map[*yamlv3.Node]int64 // -1 while the node is being counted
	budget int64
}

func (c *counter) count(n *yamlv3.Node) (int64, error) {
	if n == nil {
		return 0, nil
	}
	if s, ok := c.size[n]; ok {
		if s < 0 {
			return 0, fmt.Errorf("%w: line %d: an anchor contains an alias of itself", ErrExpansion, n.Line)
		}
		return s, nil
	}
	c.size[n] = -1
	s := int64(1 + len(n.Value) + len(n.Tag))
	if n.Kind == yamlv3.AliasNode {
		a, err := c.count(n.Alias)
		if err != nil {
			return 0, err
		}
		s += a
	}
	for _, child := range n.Content {
		a, err := c.count(child)
		if err != nil {
			return 0, err
		}
		s += a
		if s > c.budget {
			break
		}
	}
	if s > c.budget {
		return 0, fmt.Errorf("%w: line %d expands past %d MiB", ErrExpansion, n.Line, c.budget>>20)
	}
	c.size[n] = s
	return s, nil
}

// Unmarshal is sigs.k8s.io/yaml's Unmarshal after Check.
func Unmarshal(data []byte, v any, opts ...yaml.JSONOpt) error {
	if err := Check(data); err != nil {
		return err
	}
	return yaml.Unmarshal(data, v, opts...)
}

// UnmarshalStrict is sigs.k8s.io/yaml's UnmarshalStrict after Check.
func UnmarshalStrict(data []byte, v any, opts ...yaml.JSONOpt) error {
	if err := Check(data); err != nil {
		return err
	}
	return yaml.UnmarshalStrict(data, v, opts...)
}

// YAMLToJSON is sigs.k8s.io/yaml's YAMLToJSON after Check.
func YAMLToJSON(data []byte) ([]byte, error) {
	if err := Check(data); err != nil {
		return nil, err
	}
	return yaml.YAMLToJSON(data)
}
