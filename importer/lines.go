package importer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	yamlv3 "go.yaml.in/yaml/v3"

	"podflow.dev/podflow/untrusted/yamlbudget"
)

// jsonItemLines returns the 1-based line where each element of a List's items (or of a
// bare top-level array) starts, so a finding about items[i] can cite its line. It also
// validates the document: an error says what is wrong and on which line.
func jsonItemLines(data []byte) ([]int, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return nil, jsonErr(data, dec, err)
	}
	var lines []int
	switch tok {
	case json.Delim('['):
		if lines, err = arrayLines(data, dec); err != nil {
			return nil, err
		}
	case json.Delim('{'):
		for dec.More() {
			key, err := dec.Token()
			if err != nil {
				return nil, jsonErr(data, dec, err)
			}
			if key == "items" {
				t, err := dec.Token()
				if err != nil {
					return nil, jsonErr(data, dec, err)
				}
				if t == json.Delim('[') {
					if lines, err = arrayLines(data, dec); err != nil {
						return nil, err
					}
					continue
				}
				if t != nil {
					return nil, fmt.Errorf("line %d: items is not an array", lineAt(data, dec.InputOffset()))
				}
				continue
			}
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return nil, jsonErr(data, dec, err)
			}
		}
		if _, err := dec.Token(); err != nil {
			return nil, jsonErr(data, dec, err)
		}
	default:
		return nil, errors.New("not a JSON object or array")
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("line %d: data after the end of the document", lineAt(data, dec.InputOffset()))
	}
	return lines, nil
}

func arrayLines(data []byte, dec *json.Decoder) ([]int, error) {
	var lines []int
	line, counted := 1, int64(0)
	for dec.More() {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, jsonErr(data, dec, err)
		}
		start := dec.InputOffset() - int64(len(raw))
		line += bytes.Count(data[counted:start], []byte{'\n'})
		counted = start
		lines = append(lines, line)
	}
	if _, err := dec.Token(); err != nil {
		return nil, jsonErr(data, dec, err)
	}
	return lines, nil
}

func lineAt(data []byte, off int64) int {
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	if off < 0 {
		off = 0
	}
	return bytes.Count(data[:off], []byte{'\n'}) + 1
}

func jsonErr(data []byte, dec *json.Decoder, err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("line %d: unexpected end of JSON", lineAt(data, int64(len(data))))
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Errorf("line %d: %w", lineAt(data, se.Offset), err)
	}
	return fmt.Errorf("line %d: %w", lineAt(data, dec.InputOffset()), err)
}

// yamlToJSON converts one YAML List document to JSON and returns the line of each item.
func yamlToJSON(data []byte) ([]byte, []int, error) {
	var doc yamlv3.Node
	if err := yamlv3.Unmarshal(data, &doc); err != nil {
		return nil, nil, err
	}
	var lines []int
	if len(doc.Content) == 1 {
		root := doc.Content[0]
		switch root.Kind {
		case yamlv3.SequenceNode:
			lines = nodeLines(root)
		case yamlv3.MappingNode:
			for i := 0; i+1 < len(root.Content); i += 2 {
				if root.Content[i].Value == "items" && root.Content[i+1].Kind == yamlv3.SequenceNode {
					lines = nodeLines(root.Content[i+1])
				}
			}
		default:
			return nil, nil, errors.New("not a YAML mapping or sequence")
		}
	}
	out, err := yamlbudget.YAMLToJSON(data)
	if err != nil {
		return nil, nil, err
	}
	return out, lines, nil
}

func nodeLines(seq *yamlv3.Node) []int {
	lines := make([]int, len(seq.Content))
	for i, n := range seq.Content {
		lines[i] = n.Line
	}
	return lines
}
