package analyze

import (
	"errors"
	"fmt"
	"strings"

	yamlv3 "go.yaml.in/yaml/v3"

	"podflow.dev/podflow/untrusted/yamlbudget"
)

// FieldError is a problem with one field of a signature.
type FieldError struct {
	Field string
	Msg   string
}

func (e *FieldError) Error() string { return "field " + e.Field + ": " + e.Msg }

// SignatureError says which file, line and field of a signature file is wrong.
type SignatureError struct {
	File  string
	Line  int
	Field string
	Msg   string
}

func (e *SignatureError) Error() string {
	loc := e.File
	if e.Line > 0 {
		loc += ":" + itoa(e.Line)
	}
	if e.Field != "" {
		return fmt.Sprintf("%s: field %s: %s", loc, e.Field, e.Msg)
	}
	return loc + ": " + e.Msg
}

// rawSignature is a signature as written in YAML.
type rawSignature struct {
	ID        string   `yaml:"id"`
	Stage     string   `yaml:"stage"`
	Title     string   `yaml:"title"`
	Component string   `yaml:"component"`
	Versions  string   `yaml:"versions"`
	PrintedBy string   `yaml:"printedBy"`
	Where     []string `yaml:"where"`
	Patterns  []string `yaml:"patterns"`
	Unless    []string `yaml:"unless"`
	Cause     string   `yaml:"cause"`
	Fix       string   `yaml:"fix"`
	Confirm   []string `yaml:"confirm"`
	Doc       string   `yaml:"doc"`
	Severity  string   `yaml:"severity"`
	Examples  struct {
		Fires []string `yaml:"fires"`
		Quiet []string `yaml:"quiet"`
	} `yaml:"examples"`
	Incidents   []string `yaml:"incidents"`
	Rule        string   `yaml:"rule"`
	Fallback    bool     `yaml:"fallback"`
	NodeCond    bool     `yaml:"nodeCondition"`
	Fingerprint []string `yaml:"fingerprint"`
	Change      *struct {
		Target  string   `yaml:"target"`
		Fields  []string `yaml:"fields"`
		Suggest string   `yaml:"suggest"`
		Recurs  string   `yaml:"recurs"`
	} `yaml:"change"`
}

var signatureFields = map[string]bool{"id": true, "stage": true, "title": true, "component": true, "versions": true,
	"printedBy": true, "where": true, "patterns": true, "unless": true, "cause": true, "fix": true, "confirm": true, "doc": true,
	"severity": true, "examples": true, "incidents": true, "rule": true, "fallback": true, "nodeCondition": true, "change": true, "fingerprint": true}

// ParseSignatures reads one signature file (a YAML list of signatures). Every error
// names the file, the line and the field.
func ParseSignatures(file string, data []byte) ([]*Signature, error) {
	if len(data) > maxSignatureFileBytes {
		return nil, &SignatureError{File: file, Msg: fmt.Sprintf("larger than %d MiB", maxSignatureFileBytes>>20)}
	}
	var doc yamlv3.Node
	if err := yamlv3.Unmarshal(data, &doc); err != nil {
		line := 0
		var te *yamlv3.TypeError
		if !errors.As(err, &te) {
			// A message without a line number leaves line at 0, "unknown": the scan's
			// own error says nothing more.
			_, _ = fmt.Sscanf(strings.TrimPrefix(err.Error(), "yaml: "), "line %d:", &line)
		}
		return nil, &SignatureError{File: file, Line: line, Msg: "not valid YAML: " + strings.TrimPrefix(err.Error(), "yaml: ")}
	}
	if doc.Kind == 0 {
		return nil, nil
	}
	if _, err := yamlbudget.CheckNode(&doc, yamlbudget.Budget(len(data))); err != nil {
		return nil, &SignatureError{File: file, Msg: err.Error()}
	}
	root := &doc
	if root.Kind == yamlv3.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	if root.Kind != yamlv3.SequenceNode {
		return nil, &SignatureError{File: file, Line: root.Line, Msg: "a signature file is a YAML list of signatures (- id: ...)"}
	}
	if len(root.Content) > maxSignatures {
		return nil, &SignatureError{File: file, Msg: fmt.Sprintf("more than %d signatures", maxSignatures)}
	}
	var out []*Signature
	cost := 0
	for _, item := range root.Content {
		s, err := parseSignature(file, item)
		if err != nil {
			return nil, err
		}
		// Checked as they compile: a file of heavy patterns stops at the budget, not
		// after all of them are built.
		if cost += s.Cost(); cost > MaxSignaturesCost {
			return nil, &SignatureError{File: file, Line: item.Line, Msg: fmt.Sprintf("the signatures up to here compile to %d instructions, more than the %d an analysis tries on every line; keep fewer or simpler patterns", cost, MaxSignaturesCost)}
		}
		out = append(out, s)
	}
	return out, nil
}

func parseSignature(file string, item *yamlv3.Node) (*Signature, error) {
	if item.Kind != yamlv3.MappingNode {
		return nil, &SignatureError{File: file, Line: item.Line, Msg: "a signature is a mapping (id: ..., stage: ..., patterns: [...])"}
	}
	keyLine := map[string]int{}
	for i := 0; i+1 < len(item.Content); i += 2 {
		k := item.Content[i]
		if !signatureFields[k.Value] {
			return nil, &SignatureError{File: file, Line: k.Line, Field: k.Value, Msg: "unknown field (known: id, stage, title, component, versions, printedBy, where, patterns, unless, cause, fix, confirm, doc, severity, examples, incidents, rule, fallback, nodeCondition, change, fingerprint)"}
		}
		keyLine[k.Value] = k.Line
	}
	var raw rawSignature
	if err := item.Decode(&raw); err != nil {
		return nil, &SignatureError{File: file, Line: item.Line, Msg: strings.TrimPrefix(err.Error(), "yaml: ")}
	}
	s := &Signature{ID: raw.ID, Stage: Stage(raw.Stage), Title: raw.Title, Component: raw.Component, Versions: raw.Versions,
		PrintedBy: raw.PrintedBy, Patterns: raw.Patterns, Unless: raw.Unless, Cause: raw.Cause, Fix: raw.Fix, Confirm: raw.Confirm,
		Doc: raw.Doc, Severity: Severity(raw.Severity), Incidents: raw.Incidents, ForRule: raw.Rule, Fallback: raw.Fallback, NodeCondition: raw.NodeCond, Fingerprint: raw.Fingerprint, File: file, Line: item.Line}
	s.Examples.Fires, s.Examples.Quiet = raw.Examples.Fires, raw.Examples.Quiet
	if c := raw.Change; c != nil {
		s.Change = &ChangeSpec{Target: c.Target, Fields: c.Fields, Suggest: c.Suggest, Recurs: c.Recurs}
	}
	for _, w := range raw.Where {
		s.Where = append(s.Where, TextKind(w))
	}
	if fe := s.compile(); fe != nil {
		top := fe.Field
		if i := strings.IndexAny(top, "[."); i >= 0 {
			top = top[:i]
		}
		line := keyLine[top]
		if line == 0 {
			line = item.Line
		}
		return nil, &SignatureError{File: file, Line: line, Field: fe.Field, Msg: fe.Msg}
	}
	return s, nil
}

// CheckSignatureSet refuses a set in which two signatures, or a signature and a rule,
// share an ID.
func CheckSignatureSet(sigs []*Signature, rules []*Rule) error {
	seen := map[string]string{}
	goRules := map[string]*Rule{}
	for _, r := range rules {
		if r.signature == nil {
			seen[r.ID] = "rule " + r.ID
			goRules[r.ID] = r
		}
	}
	for _, s := range sigs {
		if s.ForRule != "" {
			r := goRules[s.ForRule]
			if r == nil {
				return &SignatureError{File: s.File, Line: s.Line, Field: "rule", Msg: fmt.Sprintf("no rule %q (podflow rules lists them)", s.ForRule)}
			}
			if r.Stage != s.Stage {
				return &SignatureError{File: s.File, Line: s.Line, Field: "stage", Msg: fmt.Sprintf("rule %s is at stage %s, not %s", r.ID, r.Stage, s.Stage)}
			}
		}
		if prev, ok := seen[s.ID]; ok {
			return &SignatureError{File: s.File, Line: s.Line, Field: "id", Msg: fmt.Sprintf("%q is already taken by %s", s.ID, prev)}
		}
		seen[s.ID] = fmt.Sprintf("the signature at %s:%d", s.File, s.Line)
	}
	return nil
}
