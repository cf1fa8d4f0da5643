// Command gengitleaks converts the rules of gitleaks' default configuration into
// podflow's vendor detectors (bundle/redact/gitleaks_rules.go) and records each rule's
// own true and false positives for podflow's tests (gitleaks_samples_test.go).
//
// It lives in a module of its own so that podflow's module does not depend on gitleaks
// and its dependencies: only the generated Go files are part of podflow. Run it with
// go generate in bundle/redact; the gitleaks version is the one this module requires.
//
// gitleaks defines each rule in a function that checks the rule against its samples
// and returns it; the samples are local to the function. To record them, the rule
// functions are built from a copy of gitleaks that replaces gitleaks'
// validation with one that keeps the samples, and its random sample generator with
// one seeded by the pattern, so that the generated files are reproducible.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

const gitleaksModule = "github.com/zricethezav/gitleaks/v8"

// skipped are gitleaks rules podflow leaves out, with the reason recorded in the
// generated file.
var skipped = map[string]string{
	"private-key":     "podflow's own private-key detector masks PEM private keys, plain, with \\n escapes or base64-encoded, in one pass; this rule's pattern takes quadratic time on many key headers",
	"generic-api-key": "podflow's credential-name detectors cover a key under a credential-like name; on its own this rule is slow and its only hit on recorded bundles was a pod UID",
}

type allowlist struct {
	Condition   string   `json:"condition"`
	RegexTarget string   `json:"regexTarget"`
	Regexes     []string `json:"regexes"`
	StopWords   []string `json:"stopWords"`
	Paths       []string `json:"paths"`
	Commits     int      `json:"commits"`
}

type rule struct {
	ID          string      `json:"id"`
	Regex       string      `json:"regex"`
	Path        string      `json:"path"`
	SecretGroup int         `json:"secretGroup"`
	Entropy     float64     `json:"entropy"`
	Keywords    []string    `json:"keywords"`
	Allowlists  []allowlist `json:"allowlists"`
	Required    int         `json:"required"`
	TPs         []string    `json:"tps"`
	FPs         []string    `json:"fps"`
}

type extracted struct {
	Global []allowlist `json:"global"`
	Rules  []rule      `json:"rules"`
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "gengitleaks:", err)
		os.Exit(1)
	}
}

func run() error {
	out := flag.String("out", "gitleaks_rules.go", "generated detectors")
	samples := flag.String("samples", "gitleaks_samples_test.go", "generated samples")
	pkg := flag.String("package", "redact", "package of the generated files")
	flag.Parse()
	self, err := moduleDir()
	if err != nil {
		return err
	}
	dir, version, err := gitleaksDir(self)
	if err != nil {
		return err
	}
	funcs, err := ruleFuncs(filepath.Join(dir, "cmd", "generate", "config", "main.go"))
	if err != nil {
		return err
	}
	data, err := extract(self, dir, funcs)
	if err != nil {
		return err
	}
	var ex extracted
	if err := json.Unmarshal(data, &ex); err != nil {
		return fmt.Errorf("read extracted rules: %w", err)
	}
	src, err := rulesFile(*pkg, version, ex)
	if err != nil {
		return err
	}
	if err := os.WriteFile(*out, src, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", *out, err)
	}
	src, err = samplesFile(*pkg, version, ex)
	if err != nil {
		return err
	}
	if err := os.WriteFile(*samples, src, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", *samples, err)
	}
	return nil
}

// moduleDir finds this generator's module, where the extraction program is built; go
// generate runs the generator in it (go run -C).
func moduleDir() (string, error) {
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Dir}}")
	b, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("find the generator module: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}

func gitleaksDir(self string) (dir, version string, err error) {
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Dir}} {{.Version}}", gitleaksModule)
	cmd.Dir = self
	b, err := cmd.Output()
	if err != nil {
		return "", "", fmt.Errorf("find %s: %w", gitleaksModule, err)
	}
	dir, version, ok := strings.Cut(strings.TrimSpace(string(b)), " ")
	if !ok || dir == "" {
		return "", "", fmt.Errorf("find %s: module not downloaded (run go mod download in %s)", gitleaksModule, self)
	}
	return dir, version, nil
}

// ruleFuncs lists the rules.X functions gitleaks' config generator puts in its default
// configuration, in its order.
func ruleFuncs(mainGo string) ([]string, error) {
	f, err := parser.ParseFile(token.NewFileSet(), mainGo, nil, 0)
	if err != nil {
		return nil, fmt.Errorf("parse gitleaks' config generator: %w", err)
	}
	var funcs []string
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		if x, ok := sel.X.(*ast.Ident); ok && x.Name == "rules" && len(call.Args) == 0 {
			funcs = append(funcs, sel.Sel.Name)
		}
		return true
	})
	if len(funcs) == 0 {
		return nil, errors.New("no rules found in gitleaks' config generator")
	}
	return funcs, nil
}

// extract builds and runs a program that calls every rule function of a copy of
// gitleaks whose validation records the samples, and returns its JSON.
func extract(self, gitleaks string, funcs []string) ([]byte, error) {
	tmp, err := os.MkdirTemp(self, "_extract")
	if err != nil {
		return nil, fmt.Errorf("extraction program: %w", err)
	}
	defer os.RemoveAll(tmp)
	calls := make([]string, len(funcs))
	for i, f := range funcs {
		calls[i] = "\t\trules." + f + "(),"
	}
	prog := strings.Replace(extractProgram, "\t\t// RULES\n", strings.Join(calls, "\n")+"\n", 1)
	if err := os.WriteFile(filepath.Join(tmp, "main.go"), []byte(prog), 0o644); err != nil {
		return nil, err
	}
	// The go command does not overlay files of the module cache, so the rule functions
	// are built from a copy of the module with the two files replaced.
	copyDir := filepath.Join(tmp, "gitleaks")
	if err := os.CopyFS(copyDir, os.DirFS(gitleaks)); err != nil {
		return nil, fmt.Errorf("copy gitleaks: %w", err)
	}
	replace := map[string]string{
		filepath.Join("cmd", "generate", "config", "utils", "validate.go"): recordingValidate,
		filepath.Join("cmd", "generate", "secrets", "regen.go"):            seededSecrets,
	}
	for path, src := range replace {
		path = filepath.Join(copyDir, path)
		if _, err := os.Stat(path); err != nil {
			return nil, fmt.Errorf("gitleaks layout changed: %w", err)
		}
		if err := os.Chmod(path, 0o644); err != nil {
			return nil, err
		}
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			return nil, err
		}
	}
	mod, err := os.ReadFile(filepath.Join(self, "go.mod"))
	if err != nil {
		return nil, err
	}
	sum, err := os.ReadFile(filepath.Join(self, "go.sum"))
	if err != nil {
		return nil, err
	}
	mod = append(mod, "\nreplace "+gitleaksModule+" => "+copyDir+"\n"...)
	modPath := filepath.Join(tmp, "extract.mod")
	if err := os.WriteFile(modPath, mod, 0o644); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(tmp, "extract.sum"), sum, 0o644); err != nil {
		return nil, err
	}
	cmd := exec.Command("go", "run", "-modfile", modPath, "./"+filepath.Base(tmp))
	cmd.Dir = self
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	b, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("run the extraction program: %w\n%s", err, stderr.String())
	}
	return b, nil
}

func goString(s string) string {
	if !strings.ContainsAny(s, "`\r") && strconv.CanBackquote(s) {
		return "`" + s + "`"
	}
	return strconv.Quote(s)
}

func stringList(ss []string) string {
	if len(ss) == 0 {
		return "nil"
	}
	parts := make([]string, len(ss))
	for i, s := range ss {
		parts[i] = goString(s)
	}
	return "[]string{" + strings.Join(parts, ", ") + "}"
}

func allowList(as []allowlist) string {
	var parts []string
	for _, a := range as {
		if len(a.Regexes) == 0 && len(a.StopWords) == 0 {
			continue // commits and paths alone never apply to a bundle
		}
		var f []string
		if a.Condition == "AND" {
			f = append(f, "and: true")
			if len(a.Paths) > 0 || a.Commits > 0 {
				continue // needs a path or commit too, which a bundle never has
			}
		}
		if a.RegexTarget != "" {
			f = append(f, "target: "+strconv.Quote(a.RegexTarget))
		}
		if len(a.Regexes) > 0 {
			f = append(f, "regexes: "+stringList(a.Regexes))
		}
		if len(a.StopWords) > 0 {
			sw := append([]string(nil), a.StopWords...)
			sort.Strings(sw)
			f = append(f, "stopWords: "+stringList(sw))
		}
		parts = append(parts, "{"+strings.Join(f, ", ")+"}")
	}
	if len(parts) == 0 {
		return ""
	}
	return "[]vendorAllow{\n" + strings.Join(parts, ",\n") + ",\n}"
}

func keep(r rule) (bool, string) {
	if why, ok := skipped[r.ID]; ok {
		return false, why
	}
	switch {
	case r.Regex == "":
		return false, "matches file names only"
	case r.Path != "":
		return false, "applies to files named " + r.Path + " only"
	case r.Required > 0:
		return false, "needs findings of other rules nearby"
	}
	return true, ""
}

func rulesFile(pkg, version string, ex extracted) ([]byte, error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "// Code generated by gengitleaks from %s %s; DO NOT EDIT.\n\n", gitleaksModule, version)
	fmt.Fprintf(&b, "package %s\n\n", pkg)
	fmt.Fprintf(&b, "// GitleaksVersion is the gitleaks release whose default rules the vendor detectors\n// are converted from.\nconst GitleaksVersion = %q\n\n", version)
	b.WriteString("// Rules of gitleaks' default configuration left out:\n")
	for _, r := range ex.Rules {
		if ok, why := keep(r); !ok {
			fmt.Fprintf(&b, "//   - %s: %s\n", r.ID, why)
		}
	}
	b.WriteString("\n// gitleaksGlobalAllow are gitleaks' allowlists for every rule.\n")
	if a := allowList(ex.Global); a != "" {
		fmt.Fprintf(&b, "var gitleaksGlobalAllow = %s\n\n", a)
	} else {
		b.WriteString("var gitleaksGlobalAllow []vendorAllow\n\n")
	}
	b.WriteString("// gitleaksRules are gitleaks' rules in its order.\nvar gitleaksRules = []vendorRule{\n")
	for _, r := range ex.Rules {
		if ok, _ := keep(r); !ok {
			continue
		}
		kw := make([]string, 0, len(r.Keywords))
		seen := map[string]bool{}
		for _, k := range r.Keywords {
			k = strings.ToLower(k)
			if !seen[k] {
				seen[k] = true
				kw = append(kw, k)
			}
		}
		fmt.Fprintf(&b, "{id: %q, re: %s", r.ID, goString(r.Regex))
		if r.SecretGroup > 0 {
			fmt.Fprintf(&b, ", secretGroup: %d", r.SecretGroup)
		}
		if r.Entropy > 0 {
			fmt.Fprintf(&b, ", entropy: %s", strconv.FormatFloat(r.Entropy, 'g', -1, 64))
		}
		fmt.Fprintf(&b, ", keywords: %s", stringList(kw))
		if a := allowList(r.Allowlists); a != "" {
			fmt.Fprintf(&b, ",\nallow: %s", a)
		}
		b.WriteString("},\n")
	}
	b.WriteString("}\n")
	src, err := format.Source(b.Bytes())
	if err != nil {
		return nil, fmt.Errorf("format generated rules: %w", err)
	}
	return src, nil
}

func samplesFile(pkg, version string, ex extracted) ([]byte, error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "// Code generated by gengitleaks from %s %s; DO NOT EDIT.\n\n", gitleaksModule, version)
	fmt.Fprintf(&b, "package %s\n\n", pkg)
	b.WriteString("// gitleaksSamples are the true and false positives gitleaks checks each rule against,\n// by rule ID.\n")
	b.WriteString("var gitleaksSamples = map[string]vendorSamples{\n")
	for _, r := range ex.Rules {
		if ok, _ := keep(r); !ok {
			continue
		}
		quote := func(ss []string) string {
			if len(ss) == 0 {
				return "nil"
			}
			parts := make([]string, len(ss))
			for i, s := range ss {
				parts[i] = strconv.Quote(s)
			}
			return "[]string{\n" + strings.Join(parts, ",\n") + ",\n}"
		}
		fmt.Fprintf(&b, "%q: {\ntps: %s,\nfps: %s,\n},\n", r.ID, quote(r.TPs), quote(r.FPs))
	}
	b.WriteString("}\n")
	src, err := format.Source(b.Bytes())
	if err != nil {
		return nil, fmt.Errorf("format generated samples: %w", err)
	}
	return src, nil
}
