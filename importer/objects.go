package importer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"

	yamlv3 "go.yaml.in/yaml/v3"
	"sigs.k8s.io/yaml"

	"podflow.dev/podflow/untrusted/yamlbudget"
)

// errNoKind is JSON without a kind: not kubectl get output, most often a program's JSON
// log records (a CNI daemon's, a controller's), whose lines stay available as text.
var errNoKind = errors.New("no kind: not kubectl get output")

// rawObject is one object of `kubectl get -o json|yaml` output, with its original line.
type rawObject struct {
	kind, namespace, name string
	data                  json.RawMessage
	line                  int
}

// looksLikeObjects tells whether a chunk starts like kubectl's JSON or YAML output.
func looksLikeObjects(lines []textLine) bool {
	for _, l := range lines {
		s := strings.TrimSpace(l.s)
		if s == "" || s == "---" {
			continue
		}
		return strings.HasPrefix(s, "{") || isJSONArrayStart(s) ||
			strings.HasPrefix(l.s, "apiVersion:") || strings.HasPrefix(l.s, "kind:") || strings.HasPrefix(l.s, "items:") ||
			// A YAML list of objects, as `-o yaml` of a List's items is pasted.
			strings.HasPrefix(l.s, "- apiVersion:") || strings.HasPrefix(l.s, "- kind:") ||
			// An object's spec or metadata quoted without its kind (kindlessObjects).
			l.s == "spec:" || l.s == "metadata:"
	}
	return false
}

// jsonLines reports whether a block is a log of one JSON object per line (a Docker
// json-file log's {"log":…,"stream":…,"time":…}, a structured logger's): two or more
// lines open an object with a quoted key, and they are at least half of its lines (the
// rest are what a terminal cut off them, or lines between).
func jsonLines(lines []textLine) bool {
	n := 0
	for _, l := range lines {
		s := strings.TrimSpace(l.s)
		if strings.HasPrefix(s, `{"`) {
			n++
		}
	}
	return n >= 2 && 2*n >= len(lines)
}

// unwrapJSONLog reads a Docker json-file log in place: each line's {"log": …} becomes
// the text the container wrote, and a line a terminal cut ("…to node \"i-00db5016" /
// "9b8e6314a\": RequestCanceled…") is joined with the rest on the lines below it, which
// are left blank so the lines keep their numbers. Lines of other JSON stay as they are.
func unwrapJSONLog(lines []textLine) {
	for i := 0; i < len(lines); i++ {
		s := strings.TrimSpace(lines[i].s)
		if !strings.HasPrefix(s, `{"`) {
			continue
		}
		var rec struct {
			Log    *string `json:"log"`
			Stream string  `json:"stream"`
			Time   string  `json:"time"`
		}
		joined, end := s, i
		for json.Unmarshal([]byte(joined), &rec) != nil && end+1 < len(lines) && end-i < 3 {
			end++
			joined += strings.TrimRight(lines[end].s, "\r")
		}
		if rec.Log == nil || rec.Stream == "" && rec.Time == "" {
			continue
		}
		lines[i].s = strings.TrimRight(*rec.Log, "\r\n")
		for j := i + 1; j <= end; j++ {
			lines[j].s = ""
		}
		i = end
	}
}

// reYAMLKeyLine is a YAML mapping key, with or without its value, as an object's
// document prints one.
var reYAMLKeyLine = regexp.MustCompile(`^ *[A-Za-z][A-Za-z0-9_.-]*:(?: |$)`)

// objectTopKeys are the keys an object's document has at its top.
var objectTopKeys = map[string]bool{"apiVersion": true, "kind": true, "metadata": true, "spec": true, "status": true,
	"data": true, "stringData": true, "type": true, "items": true, "rules": true, "subjects": true, "roleRef": true,
	"webhooks": true, "subsets": true, "endpoints": true, "addressType": true, "ports": true, "immutable": true}

func indentOf(s string) int {
	return len(s) - len(strings.TrimLeft(s, " "))
}

// yamlTopKey is the key a YAML line at a document's indentation names.
func yamlTopKey(s string) string {
	k, _, _ := strings.Cut(strings.TrimSpace(s), ":")
	return k
}

// objectStartsAt tells whether line i opens an object's YAML among other text: an
// `apiVersion: V` or `kind: K` line indented by at most four spaces whose next line
// is another key of the document at its indentation. Inside a document at
// indentation open (-1 when none is), a second apiVersion or kind at that indentation
// opens the next one, as a paste of two objects without "---" between them does; a
// deeper one (a scaleTargetRef's, an ownerReference's) is the document's own.
func objectStartsAt(lines []textLine, i int, open int, keys map[string]bool) bool {
	s := lines[i].s
	ind := indentOf(s)
	if ind > 4 || open >= 0 && ind != open {
		return false
	}
	t := s[ind:]
	if (t == "spec:" || t == "metadata:") && open < 0 && i+1 < len(lines) {
		// An object's spec or metadata quoted without its kind (kindlessObjects).
		next := lines[i+1].s
		return indentOf(next) > ind && reYAMLKeyLine.MatchString(next)
	}
	if !strings.HasPrefix(t, "apiVersion: ") && !strings.HasPrefix(t, "kind: ") {
		return false
	}
	if open >= 0 {
		return keys[yamlTopKey(t)]
	}
	if v := strings.TrimSpace(t[strings.Index(t, ":")+1:]); v == "" || strings.ContainsAny(v, " \t") || i+1 >= len(lines) {
		// An object's kind and apiVersion are one word each.
		return false
	}
	next := lines[i+1].s
	return indentOf(next) == ind && reYAMLKeyLine.MatchString(next) && objectTopKeys[yamlTopKey(next)]
}

// yamlGoesOn tells whether line i continues an object's YAML whose document is at
// indentation ind: a deeper line, a key or list item at ind, "---", or a blank line
// after which the document goes on.
func yamlGoesOn(lines []textLine, i, ind int) bool {
	s := lines[i].s
	if strings.TrimSpace(s) == "" {
		for j := i + 1; j < len(lines) && j <= i+2; j++ {
			n := lines[j].s
			if strings.TrimSpace(n) == "" {
				continue
			}
			return indentOf(n) > ind || indentOf(n) == ind && (strings.TrimSpace(n) == "---" || objectTopKeys[yamlTopKey(n)] && reYAMLKeyLine.MatchString(n))
		}
		return false
	}
	switch d := indentOf(s); {
	case d > ind:
		return true
	case d < ind:
		return false
	}
	t := s[ind:]
	return t == "---" || strings.HasPrefix(t, "- ") || reYAMLKeyLine.MatchString(t)
}

// dedentBlock takes away the indentation of an object's YAML quoted as an indented
// block of text (a Markdown code block), so that its "---" separates documents again;
// lines indented less than its first are left as they are.
func dedentBlock(lines []textLine) []textLine {
	ind := -1
	for _, l := range lines {
		if strings.TrimSpace(l.s) != "" {
			ind = indentOf(l.s)
			break
		}
	}
	if ind <= 0 {
		return lines
	}
	out := make([]textLine, len(lines))
	for i, l := range lines {
		if indentOf(l.s) >= ind {
			l.s = l.s[ind:]
		}
		out[i] = l
	}
	return out
}

// parseObjects reads JSON (one or several documents) or YAML (one or several documents)
// and flattens Lists into their items.
func parseObjects(lines []textLine) ([]rawObject, error) {
	if !startsJSON(lines) {
		if objs, ok := graftedObjects(lines); ok {
			return objs, nil
		}
	}
	lines = withoutTemplateActions(withoutElisions(lines))
	var buf strings.Builder
	for _, l := range lines {
		buf.WriteString(l.s)
		buf.WriteByte('\n')
	}
	text := buf.String()
	lineOf := func(rel int) int { return lines[min(max(rel-1, 0), len(lines)-1)].n }
	if t := strings.TrimSpace(text); strings.HasPrefix(t, "{") || strings.HasPrefix(t, "[") {
		return jsonObjects([]byte(text), lineOf)
	}
	return yamlObjects([]byte(text), lineOf)
}

// reTemplateAction is a Go template action of a Helm chart's manifest ({{ .Values.x }},
// {{- include "chart.labels" . | nindent 4 }}).
var reTemplateAction = regexp.MustCompile(`\{\{-?.*?-?\}\}`)

// withoutTemplateActions makes a chart's template pasted as a manifest readable YAML: a
// line that is only an action ({{- if … }}, {{ end }}, an include that writes a block)
// becomes empty, and an action inside a value becomes the word "templated", so the
// literal names and settings around them are read. Line numbers stay those of the input.
func withoutTemplateActions(lines []textLine) []textLine {
	var out []textLine
	for i, l := range lines {
		if !strings.Contains(l.s, "{{") {
			if out != nil {
				out = append(out, l)
			}
			continue
		}
		if out == nil {
			out = append([]textLine(nil), lines[:i]...)
		}
		if strings.TrimSpace(reTemplateAction.ReplaceAllString(l.s, "")) == "" {
			l.s = ""
		} else {
			l.s = reTemplateAction.ReplaceAllString(l.s, "templated")
		}
		out = append(out, l)
	}
	if out == nil {
		return lines
	}
	return out
}

// startsJSON tells JSON from YAML by its first character.
func startsJSON(lines []textLine) bool {
	for _, l := range lines {
		if t := strings.TrimSpace(l.s); t != "" {
			return strings.HasPrefix(t, "{") || strings.HasPrefix(t, "[")
		}
	}
	return false
}

// withoutElisions drops the lines a ticket puts where it cut an object short ("  ...",
// "[...]", "<snip>", isElision): indented, they break YAML that is otherwise whole. Line numbers
// stay those of the input.
func withoutElisions(lines []textLine) []textLine {
	var out []textLine
	for i, l := range lines {
		if isElision(lines, i) {
			if out == nil {
				out = append([]textLine(nil), lines[:i]...)
			}
			continue
		}
		if out != nil {
			out = append(out, l)
		}
	}
	if out == nil {
		return lines
	}
	return out
}

func jsonObjects(data []byte, lineOf func(int) int) ([]rawObject, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	var out []rawObject
	for {
		var raw json.RawMessage
		err := dec.Decode(&raw)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return out, jsonErr(data, dec, err)
		}
		start := lineAt(data, dec.InputOffset()-int64(len(raw)))
		items, _ := jsonItemLines(raw)
		objs, err := flatten(raw, start, func(i int) int {
			if i < len(items) {
				return start + items[i] - 1
			}
			return 0
		})
		if err != nil {
			return out, fmt.Errorf("line %d: %w", lineOf(start), err)
		}
		for i := range objs {
			objs[i].line = lineOf(objs[i].line)
		}
		out = append(out, objs...)
	}
	return out, nil
}

func yamlObjects(data []byte, lineOf func(int) int) ([]rawObject, error) {
	dec := yamlv3.NewDecoder(bytes.NewReader(data))
	budget := yamlbudget.Budget(len(data))
	var out []rawObject
	for {
		var doc yamlv3.Node
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return out, err
		}
		if len(doc.Content) == 0 {
			continue
		}
		root := doc.Content[0]
		size, err := yamlbudget.CheckNode(root, budget)
		if err != nil {
			return out, fmt.Errorf("line %d: %w", lineOf(root.Line), err)
		}
		budget -= size // the documents of a stream share one budget
		var items []int
		if root.Kind == yamlv3.SequenceNode {
			items = nodeLines(root)
		}
		for i := 0; root.Kind == yamlv3.MappingNode && i+1 < len(root.Content); i += 2 {
			if root.Content[i].Value == "items" && root.Content[i+1].Kind == yamlv3.SequenceNode {
				items = nodeLines(root.Content[i+1])
			}
		}
		y, err := yamlv3.Marshal(root)
		if err != nil {
			return out, err
		}
		j, err := yaml.YAMLToJSON(y)
		if err != nil {
			return out, fmt.Errorf("line %d: %w", lineOf(root.Line), err)
		}
		objs, err := flatten(j, root.Line, func(i int) int {
			if i < len(items) {
				return items[i]
			}
			return 0
		})
		if err != nil {
			return out, fmt.Errorf("line %d: %w", lineOf(root.Line), err)
		}
		for i := range objs {
			objs[i].line = lineOf(objs[i].line)
		}
		out = append(out, objs...)
	}
	return out, nil
}

// flatten returns an object, or the items of a List, with the relative line of each.
func flatten(data []byte, line int, itemLine func(int) int) ([]rawObject, error) {
	var head struct {
		Kind     string            `json:"kind"`
		Items    []json.RawMessage `json:"items"`
		Metadata struct {
			Name      string `json:"name"`
			Namespace string `json:"namespace"`
		} `json:"metadata"`
	}
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) > 0 && trimmed[0] == '[' {
		if err := json.Unmarshal(data, &head.Items); err != nil {
			return nil, err
		}
		head.Kind = "List"
	} else if err := json.Unmarshal(data, &head); err != nil {
		return nil, err
	}
	if head.Kind == "" {
		return nil, errNoKind
	}
	if head.Items != nil || strings.HasSuffix(head.Kind, "List") {
		var out []rawObject
		for i, it := range head.Items {
			objs, err := flatten(it, line, func(int) int { return 0 })
			if err != nil {
				return nil, fmt.Errorf("items[%d]: %w", i, err)
			}
			for k := range objs {
				if l := itemLine(i); l > 0 {
					objs[k].line = l
				}
			}
			out = append(out, objs...)
		}
		return out, nil
	}
	return []rawObject{{kind: head.Kind, namespace: head.Metadata.Namespace, name: head.Metadata.Name, data: json.RawMessage(trimmed), line: line}}, nil
}

// withoutSecretValues keeps a Secret's keys and drops its values, as podflow collects.
func withoutSecretValues(data json.RawMessage) json.RawMessage {
	var obj map[string]any
	if json.Unmarshal(data, &obj) != nil {
		return data
	}
	for _, field := range []string{"data", "stringData"} {
		if m, ok := obj[field].(map[string]any); ok {
			for k := range m {
				m[k] = ""
			}
		}
	}
	if md, ok := obj["metadata"].(map[string]any); ok {
		if ann, ok := md["annotations"].(map[string]any); ok {
			delete(ann, "kubectl.kubernetes.io/last-applied-configuration")
		}
	}
	out, err := json.Marshal(obj)
	if err != nil {
		return data
	}
	return out
}

// isJSONArrayStart tells a JSON array from other lines that open with a bracket (a
// "[root@host ~]#" prompt, a dmesg "[ 12.3]" time).
func isJSONArrayStart(s string) bool {
	rest, ok := strings.CutPrefix(s, "[")
	if !ok {
		return false
	}
	rest = strings.TrimSpace(rest)
	return rest == "" || strings.HasPrefix(rest, "{") || strings.HasPrefix(rest, "[") || strings.HasPrefix(rest, "]") ||
		strings.HasPrefix(rest, `"`)
}
