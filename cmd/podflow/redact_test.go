package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"podflow.dev/podflow/bundle"
	"podflow.dev/podflow/bundle/redact"
)

func redactRun(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	out, errOut := &bytes.Buffer{}, &bytes.Buffer{}
	code := run(context.Background(), args, streams{In: strings.NewReader(""), Out: out, ErrOut: errOut})
	return code, out.String(), errOut.String()
}

// leakyBundle writes an unredacted bundle, as collect --no-redact would.
func leakyBundle(t *testing.T, withManifest bool) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "raw")
	files := map[string]string{
		"cluster-resources/secrets/shop.json":              `{"items":[{"metadata":{"name":"db","namespace":"shop"},"data":{"password":"aHVudGVyMg=="}}]}` + "\n",
		"cluster-resources/pods/shop.json":                 `{"items":[{"metadata":{"name":"web-0","namespace":"shop","uid":"0f5e3d9a-1b2c-4d5e-8f90-a1b2c3d4e5f6"},"spec":{"nodeName":"worker-7","containers":[{"name":"app","env":[{"name":"DB_PASSWORD","value":"hunter2"}]}]}}]}` + "\n",
		"cluster-resources/pods/logs/shop/web-0/app.log":   "start\nconnecting to postgres://app:hunter2@db:5432/x\n",
		bundle.NodePath("worker-7", bundle.NodeKubeletLog): `Nov 29 10:00:00 worker-7 kubelet[1]: I1129 x.go:1] "SyncLoop ADD" pod="shop/web-0"` + "\n",
	}
	if !withManifest {
		for name, data := range files {
			p := filepath.Join(dir, filepath.FromSlash(name))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	w, err := bundle.Create(dir, bundle.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range files {
		if err := w.WriteFile(name, []byte(data)); err != nil {
			t.Fatal(err)
		}
	}
	m := &bundle.Manifest{PodflowVersion: "test", Type: "cluster", Scope: bundle.Scope{Namespaces: []string{"shop"}},
		Sources:   []bundle.Source{{Name: "logs", Status: bundle.StatusPartial, Error: "get https://admin:s3cr3t@api.shop:6443/logs: timeout"}},
		Redaction: bundle.Redaction{Policy: "none"}}
	if err := w.Close(m); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestScanRedactScan(t *testing.T) {
	raw := leakyBundle(t, true)
	code, out, _ := redactRun(t, "scan", raw)
	want := "cluster-resources/pods/logs/shop/web-0/app.log:2: url-password\n" +
		"cluster-resources/pods/shop.json:1: credential-env\n" +
		"cluster-resources/secrets/shop.json:1: secret-value\n" +
		"podflow.json:16: url-password\n"
	if code != exitFindings || out != want {
		t.Fatalf("scan raw: exit %d, output:\n%s\nwant:\n%s", code, out, want)
	}
	code, out, _ = redactRun(t, "scan", raw, "-o", "json")
	var report scanReport
	if err := json.Unmarshal([]byte(out), &report); err != nil || code != exitFindings || report.Total != 4 || report.ByRule["url-password"] != 2 {
		t.Fatalf("scan -o json: exit %d, %v, %s", code, err, out)
	}

	target := filepath.Join(t.TempDir(), "shareable.tar.gz")
	code, out, errOut := redactRun(t, "redact", raw, "-o", target, "--redact-key", "k")
	if code != exitOK {
		t.Fatalf("redact: exit %d\n%s%s", code, out, errOut)
	}
	if !strings.HasPrefix(out, target+": 5 files, 4 values masked (policy podflow "+redact.PolicyVersion+")\n") {
		t.Fatalf("redact summary:\n%s", out)
	}
	code, out, _ = redactRun(t, "scan", target)
	if code != exitOK || out != "" {
		t.Fatalf("scan redacted: exit %d\n%s", code, out)
	}
	b, err := bundle.Open(target, bundle.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if problems := bundle.Verify(b); len(problems) != 0 {
		t.Fatalf("verify: %v", problems)
	}
	m := b.Manifest
	if m.Type != "cluster" || len(m.Sources) != 2 || m.Sources[1].Name != "redact" || strings.Contains(m.Sources[0].Error, "s3cr3t") {
		t.Fatalf("manifest sources: %+v", m.Sources)
	}
	r := m.Redaction
	wantByRule := map[string]int{"secret-value": 1, "credential-env": 1, "url-password": 2}
	if r.Policy != redact.PolicyName || !r.Enabled || r.Total != 4 || !equalCounts(r.ByRule, wantByRule) || r.ByFile[bundle.ManifestPath]["url-password"] != 1 {
		t.Fatalf("manifest redaction: %+v", r)
	}
	// Redacting again finds nothing new and keeps the earlier counts.
	again := filepath.Join(t.TempDir(), "again")
	if code, out, errOut := redactRun(t, "redact", target, "-o", again, "--redact-key", "k"); code != exitOK || !strings.Contains(out, "4 values masked") {
		t.Fatalf("redact twice: exit %d\n%s%s", code, out, errOut)
	}
	b2, err := bundle.Open(again, bundle.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range b.Names() {
		if name == bundle.ManifestPath {
			continue
		}
		d1, _ := b.ReadFile(name)
		d2, _ := b2.ReadFile(name)
		if !bytes.Equal(d1, d2) {
			t.Errorf("%s changed on the second redaction", name)
		}
	}
}

func equalCounts(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func TestRedactForeignBundle(t *testing.T) {
	raw := leakyBundle(t, false)
	target := filepath.Join(t.TempDir(), "out.tar.gz")
	if code, out, errOut := redactRun(t, "redact", raw, "-o", target); code != exitOK {
		t.Fatalf("redact: exit %d\n%s%s", code, out, errOut)
	}
	b, err := bundle.Open(target, bundle.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if b.Manifest == nil || b.Manifest.Type != "converted" || b.Manifest.Redaction.Total != 3 || len(bundle.Verify(b)) != 0 {
		t.Fatalf("manifest: %+v", b.Manifest)
	}
}

func TestRedactPseudonymize(t *testing.T) {
	raw := leakyBundle(t, true)
	dir := t.TempDir()
	mapping := filepath.Join(dir, "mapping.yaml")
	out1, out2 := filepath.Join(dir, "one"), filepath.Join(dir, "two")
	for _, target := range []string{out1, out2} {
		code, out, errOut := redactRun(t, "redact", raw, "-o", target, "--redact-key", "k", "--pseudonymize", "--mapping", mapping)
		if code != exitOK || !strings.Contains(out, "mapping in "+mapping) {
			t.Fatalf("redact --pseudonymize: exit %d\n%s%s", code, out, errOut)
		}
	}
	b1, err := bundle.Open(out1, bundle.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	b2, err := bundle.Open(out2, bundle.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if problems := bundle.Verify(b1); len(problems) != 0 {
		t.Fatalf("verify: %v", problems)
	}
	want := []string{
		"cluster-resources/pods/logs/namespace-1/pod-1/app.log", "cluster-resources/pods/namespace-1.json",
		"cluster-resources/secrets/namespace-1.json", "nodes/node-1/kubelet.log", "podflow.json", "version.yaml",
	}
	if got := b1.Names(); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("paths:\n%v\nwant\n%v", got, want)
	}
	for _, name := range b1.Names() {
		d1, _ := b1.ReadFile(name)
		if name != bundle.ManifestPath {
			if d2, _ := b2.ReadFile(name); !bytes.Equal(d1, d2) {
				t.Errorf("%s differs between two runs with the same mapping and key", name)
			}
		}
		for _, id := range []string{"shop", "web-0", "worker-7", "0f5e3d9a", "hunter2", "s3cr3t"} {
			if bytes.Contains(d1, []byte(id)) {
				t.Errorf("%s still holds %q:\n%s", name, id, d1)
			}
		}
	}
	m, err := redact.LoadMapping(mapping)
	if err != nil || m.Names["shop"] != "namespace-1" || m.Names["worker-7"] != "node-1" {
		t.Fatalf("mapping: %+v, %v", m, err)
	}
	if r := b1.Manifest.Redaction; r.ByFile["cluster-resources/pods/namespace-1.json"]["credential-env"] != 1 {
		t.Fatalf("redaction counts keep pseudonymized paths: %+v", r.ByFile)
	}
}

func TestRedactAndScanUsage(t *testing.T) {
	raw := leakyBundle(t, true)
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("rules:\n- name: x\n  regex: 'no-group'\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"redact", raw}, exitUsage, "missing -o OUT"},
		{[]string{"redact", raw, "-o", filepath.Join(dir, "o"), "--pseudonymize"}, exitUsage, "--pseudonymize needs --mapping"},
		{[]string{"redact", raw, "-o", filepath.Join(dir, "o"), "--mapping", "m.yaml"}, exitUsage, "--mapping only goes with --pseudonymize"},
		{[]string{"redact", raw, "-o", filepath.Join(dir, "o"), "--pseudonymize", "--mapping", filepath.Join(dir, "o", "m.yaml")}, exitUsage, "inside the output bundle"},
		{[]string{"redact", raw, "-o", filepath.Join(dir, "o"), "--redact-config", bad}, exitError, `redaction config "` + bad + `": rule 1 (x): regex has no capture group`},
		{[]string{"redact", raw, "-o", raw}, exitError, "is an input of this run"},
		{[]string{"redact", raw, "-o", raw, "--force"}, exitError, "is an input of this run"},
		{[]string{"redact", raw, "-o", dir, "--force"}, exitError, "replaces only a bundle it wrote"},
		{[]string{"scan", raw, "-o", "xml"}, exitUsage, `unknown output format "xml"`},
		{[]string{"scan", filepath.Join(dir, "missing")}, exitError, "open bundle"},
	} {
		code, _, errOut := redactRun(t, c.args...)
		if code != c.code || !strings.Contains(errOut, c.msg) {
			t.Errorf("podflow %v: exit %d, stderr %q; want exit %d and %q", c.args, code, errOut, c.code, c.msg)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "o")); err == nil {
		t.Errorf("a failed redact left output behind")
	}
}

// A pseudonymized bundle must still tell the same story: every reference the rules
// follow (owners, nodes, events, logs) resolves under the new names.
func TestPseudonymizedBundleAnalyzesTheSame(t *testing.T) {
	demo := filepath.Join("..", "..", "testdata", "bundles", "demo")
	dir := t.TempDir()
	target := filepath.Join(dir, "demo")
	if code, out, errOut := redactRun(t, "redact", demo, "-o", target, "--pseudonymize", "--mapping", filepath.Join(dir, "mapping.yaml")); code != exitOK {
		t.Fatalf("redact: exit %d\n%s%s", code, out, errOut)
	}
	type report struct {
		Summary  map[string]any `json:"summary"`
		Findings []struct {
			Rule, Stage, Severity string
			Root                  bool
		} `json:"findings"`
	}
	analyze := func(path string) report {
		code, out, errOut := redactRun(t, "analyze", path, "-o", "json")
		var r report
		if err := json.Unmarshal([]byte(out), &r); err != nil || (code != exitOK && code != exitFindings) {
			t.Fatalf("analyze %s: exit %d, %v\n%s", path, code, err, errOut)
		}
		return r
	}
	before, after := analyze(demo), analyze(target)
	if len(before.Findings) == 0 {
		t.Fatal("the demo bundle has no findings to compare")
	}
	b, _ := json.Marshal(before.Findings)
	a, _ := json.Marshal(after.Findings)
	bs, _ := json.Marshal(before.Summary)
	as, _ := json.Marshal(after.Summary)
	if string(a) != string(b) || string(as) != string(bs) {
		t.Fatalf("analysis changed:\nbefore %s %s\nafter  %s %s", b, bs, a, as)
	}
}

// rootFinding is a root-cause finding reduced to what pseudonymization must keep: the
// rule, its stage and its subjects, whose names a mapping translates.
type rootFinding struct {
	Rule     string
	Stage    string
	Subjects []string
}

// rootFindings runs `podflow analyze -o json` and returns its root causes, with every
// subject's namespace and name passed through rename, sorted.
func rootFindings(t *testing.T, path string, rename func(string) string) []string {
	t.Helper()
	code, out, errOut := redactRun(t, "analyze", path, "-o", "json")
	var r struct {
		Findings []struct {
			Rule     string `json:"rule"`
			Stage    string `json:"stage"`
			Root     bool   `json:"root"`
			Subjects []struct {
				Kind      string `json:"kind"`
				Namespace string `json:"namespace"`
				Name      string `json:"name"`
			} `json:"subjects"`
		} `json:"findings"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil || (code != exitOK && code != exitFindings) {
		t.Fatalf("analyze %s: exit %d, %v\n%s", path, code, err, errOut)
	}
	var roots []string
	for _, f := range r.Findings {
		if !f.Root {
			continue
		}
		rf := rootFinding{Rule: f.Rule, Stage: f.Stage}
		for _, s := range f.Subjects {
			rf.Subjects = append(rf.Subjects, s.Kind+"/"+rename(s.Namespace)+"/"+rename(s.Name))
		}
		sort.Strings(rf.Subjects)
		b, _ := json.Marshal(rf) // strings only: always encodes
		roots = append(roots, string(b))
	}
	sort.Strings(roots)
	return roots
}

// Every recorded scenario must reach the same root causes about the same (renamed)
// objects once pseudonymized: a rule that stops firing, or blames another object, means
// pseudonymization broke a reference the rule follows.
func TestPseudonymizedScenarioBundlesKeepTheirRootCauses(t *testing.T) {
	root := filepath.Join("..", "..", "testdata", "bundles")
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	compared := 0
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		compared++
		t.Run(e.Name(), func(t *testing.T) {
			src := filepath.Join(root, e.Name())
			dir := t.TempDir()
			target, mapping := filepath.Join(dir, "out"), filepath.Join(dir, "mapping.yaml")
			code, out, errOut := redactRun(t, "redact", src, "-o", target, "--pseudonymize", "--mapping", mapping, "--redact-key", "equivalence")
			if code != exitOK {
				t.Fatalf("redact: exit %d\n%s%s", code, out, errOut)
			}
			m, err := redact.LoadMapping(mapping)
			if err != nil {
				t.Fatal(err)
			}
			p := redact.NewPseudonymizer(m)
			renamed := 0
			want := rootFindings(t, src, func(s string) string {
				v := p.String(s)
				if v != s {
					renamed++
				}
				return v
			})
			if len(want) > 0 && renamed == 0 {
				t.Fatalf("the mapping renames no subject of the root causes: %v", want)
			}
			got := rootFindings(t, target, func(s string) string { return s })
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("root causes changed by pseudonymization:\nbefore (mapped)\n  %s\nafter\n  %s",
					strings.Join(want, "\n  "), strings.Join(got, "\n  "))
			}
		})
	}
	if compared < 2 {
		t.Fatalf("%s holds %d recorded bundles; want the scenarios and the demo", root, compared)
	}
}

func TestRedactPseudonymizeEncryptedMapping(t *testing.T) {
	raw := leakyBundle(t, true)
	dir := t.TempDir()
	mapping, pass := filepath.Join(dir, "mapping.yaml"), filepath.Join(dir, "pass")
	if err := os.WriteFile(pass, []byte("tulip-lantern-42\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	args := []string{"redact", raw, "--redact-key", "k", "--pseudonymize", "--mapping", mapping, "--mapping-passphrase-file", pass}
	if code, out, errOut := redactRun(t, append(args, "-o", filepath.Join(dir, "one"))...); code != exitOK {
		t.Fatalf("first run: exit %d\n%s%s", code, out, errOut)
	}
	if data, _ := os.ReadFile(mapping); bytes.Contains(data, []byte("shop")) {
		t.Fatalf("mapping written in the clear:\n%s", data)
	}
	m, err := redact.LoadMappingWith(mapping, []byte("tulip-lantern-42"))
	if err != nil || m.Names["shop"] == "" {
		t.Fatalf("mapping does not decrypt with the passphrase from the file: %v", err)
	}
	// Reusing the encrypted mapping needs the passphrase: without it the run stops.
	noPass := []string{"redact", raw, "--redact-key", "k", "--pseudonymize", "--mapping", mapping, "-o", filepath.Join(dir, "two")}
	if code, _, errOut := redactRun(t, noPass...); code != exitError || !strings.Contains(errOut, "mapping-passphrase-file") {
		t.Fatalf("reuse without passphrase: exit %d, stderr %s", code, errOut)
	}
	if code, _, errOut := redactRun(t, "redact", raw, "-o", filepath.Join(dir, "three"), "--mapping-passphrase-file", pass); code != exitUsage {
		t.Fatalf("passphrase without --pseudonymize: exit %d, stderr %s", code, errOut)
	}
}
