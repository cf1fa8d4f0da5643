package redact

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const userRules = `name: acme
rules:
- name: acme-db-password
  literal: "correct horse battery"
- name: acme-ticket
  regex: 'ticket=([A-Z]+-[0-9]+)'
- name: acme-api-key
  kind: ConfigMap
  path: data.api-key
- name: acme-dotted
  kind: ConfigMap
  path: data["app.token.v2"]
- name: acme-all-args
  kind: Pod
  path: spec.containers.*.args
`

func TestUserRules(t *testing.T) {
	c, err := ParseConfig("rules.yaml", []byte(userRules))
	if err != nil {
		t.Fatal(err)
	}
	p, err := New(Options{Key: []byte("k"), Config: c})
	if err != nil {
		t.Fatal(err)
	}
	if r := p.Redaction(); r.Policy != "podflow+acme" {
		t.Fatalf("policy name = %q", r.Policy)
	}
	logIn := "login with correct horse battery for ticket=OPS-1234 and correct horse battery again\n"
	out, rules := applyOnce(t, p, "x.log", logIn)
	want := "login with " + mask(p, "acme-db-password", "correct horse battery") + " for ticket=" + mask(p, "acme-ticket", "OPS-1234") +
		" and " + mask(p, "acme-db-password", "correct horse battery") + " again\n"
	if out != want || rules["acme-db-password"] != 2 || rules["acme-ticket"] != 1 {
		t.Fatalf("user text rules:\ngot:  %s\nwant: %s\nrules %v", out, want, rules)
	}

	cm := `{"items":[{"metadata":{"name":"app"},"data":{"api-key":"k-1","app.token.v2":"t-2","other":"plain"}}]}`
	out = redactJSON(t, p, "cluster-resources/configmaps/shop.json", cm)
	want = `{"items":[{"metadata":{"name":"app"},"data":{"api-key":"` + mask(p, "acme-api-key", "k-1") + `","app.token.v2":"` + mask(p, "acme-dotted", "t-2") + `","other":"plain"}}]}`
	if out != want {
		t.Fatalf("kind path rules:\ngot:  %s\nwant: %s", out, want)
	}
	pod := `{"kind":"Pod","spec":{"containers":[{"args":["--a","b"]},{"args":["c"]}]}}`
	out = redactJSON(t, p, "x.json", pod)
	want = `{"kind":"Pod","spec":{"containers":[{"args":["` + mask(p, "acme-all-args", "--a") + `","` + mask(p, "acme-all-args", "b") + `"]},{"args":["` + mask(p, "acme-all-args", "c") + `"]}]}}`
	if out != want {
		t.Fatalf("wildcard path:\ngot:  %s\nwant: %s", out, want)
	}
	// The same path on another kind does nothing.
	other := `{"kind":"Secret","metadata":{"name":"x"},"spec":{"containers":[{"args":["--a"]}]}}`
	if out := redactJSON(t, p, "x.json", other); out != other {
		t.Fatalf("path rule applied to the wrong kind: %s", out)
	}
}

func TestBadConfigs(t *testing.T) {
	cases := []struct{ name, yaml, want string }{
		{"not yaml", "rules: [", `redaction config "bad.yaml": `},
		{"unknown field", "rules:\n- name: a\n  literal: abcdef\n  regexp: x\n", `unknown field "regexp"`},
		{"no rules", "name: x\n", `redaction config "bad.yaml": no rules`},
		{"missing name", "rules:\n- literal: abcdef\n", `rule 1: name is required`},
		{"bad name", "rules:\n- name: My_Rule\n  literal: abcdef\n", `rule 1 (My_Rule): name: use lower-case`},
		{"builtin name", "rules:\n- name: jwt\n  literal: abcdef\n", `rule 1 (jwt): name is a built-in rule's`},
		{"duplicate", "rules:\n- name: a\n  literal: abcdef\n- name: a\n  literal: ghijkl\n", `rule 2 (a): name is used by an earlier rule`},
		{"two kinds", "rules:\n- name: a\n  literal: abcdef\n  regex: '(x)'\n", `rule 1 (a): set exactly one of`},
		{"nothing set", "rules:\n- name: a\n", `rule 1 (a): set exactly one of`},
		{"short literal", "rules:\n- name: a\n  literal: abc\n", `rule 1 (a): literal is shorter than 4`},
		{"bad regex", "rules:\n- name: a\n  regex: '(x'\n", `rule 1 (a): regex: error parsing regexp`},
		{"no group", "rules:\n- name: a\n  regex: 'x+'\n", `rule 1 (a): regex has no capture group`},
		{"kind without path", "rules:\n- name: a\n  kind: Pod\n", `rule 1 (a): kind and path go together`},
		{"empty segment", "rules:\n- name: a\n  kind: Pod\n  path: spec..x\n", `rule 1 (a): path "spec..x": empty segment`},
		{"trailing dot", "rules:\n- name: a\n  kind: Pod\n  path: spec.\n", `ends with '.'`},
		{"bad bracket", "rules:\n- name: a\n  kind: Pod\n  path: data[x]\n", `'[' must open`},
		{"unterminated bracket", "rules:\n- name: a\n  kind: Pod\n  path: data[\"x\n", `unterminated`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseConfig("bad.yaml", []byte(c.yaml))
			var ce *ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("want a *ConfigError, got %v", err)
			}
			if !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), `"bad.yaml"`) {
				t.Fatalf("error %q does not say %q and name the file", err, c.want)
			}
		})
	}
}

func TestLoadConfigFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "rules.yaml")
	if err := os.WriteFile(path, []byte(userRules), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := LoadConfig(path)
	if err != nil || c.Name != "acme" || len(c.detectors) != 2 || len(c.paths) != 3 {
		t.Fatalf("LoadConfig = %+v, %v", c, err)
	}
	if _, err := LoadConfig(filepath.Join(dir, "missing.yaml")); err == nil || !strings.Contains(err.Error(), "missing.yaml") {
		t.Fatalf("missing file error = %v", err)
	}
}
