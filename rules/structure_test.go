package rules

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

// The package's shape, checked from its source: a rule file (one that declares a rule
// listed in All) holds its declaration, Doc, Run and finding builder, and nothing
// another file uses; reasoning several rules share lives in the facts layer
// (analyze/facts_*.go), so a rule file uses no other file's names either (at most
// selfContainedBound files may, each with its reason). And a failure classification, a
// constant of a kind type such as analyze.PullErrorKind or sandboxKind, is claimed by
// at most one rule, so one failure never becomes two findings.

// TestRuleFilesStandAlone fails when a file uses a name declared in a rule file: a
// helper, a type, a method or a field. Only registry.go may name a rule file's rule.
func TestRuleFilesStandAlone(t *testing.T) {
	pkg := loadRulesSource(t, ".")
	if got, want := len(pkg.ruleFiles), len(All()); got != want {
		t.Fatalf("found %d rule files declaring a rule listed in All, want %d (one per rule)", got, want)
	}
	for _, u := range pkg.crossUses() {
		t.Errorf("%s uses %s, declared in rule file %s: move it to the facts layer (analyze/facts_*.go)", u.from, u.name, u.decl)
	}
}

// selfContainedBound is how many rule files may use a name declared in another file of
// the package. Shared reasoning belongs to the facts layer (analyze/facts_*.go) or the
// signatures; a rule reads like a go/analysis pass: its declaration, Run and finding
// builder, reading facts.
const selfContainedBound = 2

// allowedDependents are the rule files that may use another file's names, each with why.
var allowedDependents = map[string]string{
	"node_not_ready.go": "reads the node-stage signatures (signatures.go) to name why a kubelet exited; " +
		"the signatures are data loaded by package rules, not reasoning to move",
}

// TestRuleFilesSelfContained fails when a rule file uses a name declared in another
// file of the package (a family file's helper, type, constant, method or field), unless
// it is one of the at most selfContainedBound allowed files. It prints which files
// depend on which names.
func TestRuleFilesSelfContained(t *testing.T) {
	pkg := loadRulesSource(t, ".")
	if len(allowedDependents) > selfContainedBound {
		t.Errorf("%d rule files are allowed to use other files' names, at most %d may be", len(allowedDependents), selfContainedBound)
	}
	deps := pkg.dependents()
	for _, file := range slices.Sorted(maps.Keys(deps)) {
		t.Logf("%s uses %s", file, strings.Join(deps[file], ", "))
	}
	t.Logf("%d of %d rule files use names declared in another file", len(deps), len(pkg.ruleFiles))
	for _, v := range selfContainedViolations(deps, allowedDependents) {
		t.Error(v)
	}
}

// selfContainedViolations lists the dependent rule files not allowed, and the allowed
// files that no longer depend, sorted.
func selfContainedViolations(deps map[string][]string, allowed map[string]string) []string {
	var out []string
	for file, names := range deps {
		if _, ok := allowed[file]; !ok {
			out = append(out, fmt.Sprintf("%s uses %s: move shared reasoning to the facts layer (analyze/facts_*.go) or into the rule",
				file, strings.Join(names, ", ")))
		}
	}
	for _, file := range slices.Sorted(maps.Keys(allowed)) {
		if _, ok := deps[file]; !ok {
			out = append(out, file+" no longer uses another file's names: take it off the list")
		}
	}
	sort.Strings(out)
	return out
}

// TestClassificationsClaimedOnce fails when two rule files use the same constant of a
// classification type: one of the facts layer (factClassifications), or one a family
// file of the package declares.
func TestClassificationsClaimedOnce(t *testing.T) {
	pkg := loadRulesSource(t, ".")
	claims := pkg.claims()
	facts := pkg.factClaims(t)
	if len(facts) == 0 {
		t.Fatal("no fact classification constants used: analyze.PullErrorDNS and analyze.SandboxPauseImage should be")
	}
	for c, files := range facts {
		claims["analyze."+c] = files
	}
	for c, files := range claims {
		if len(files) > 1 {
			t.Errorf("classification %s is claimed by %d rules (%s): give it to one", c, len(files), strings.Join(files, ", "))
		}
	}
}

// factClassifications are the classification types of the facts layer: a failure kind
// a fact computes once, each constant of which one rule claims.
var factClassifications = []string{"PullErrorKind", "SandboxKind"}

// factClaims maps each constant of a fact classification (declared in package analyze,
// next to the rules package) to the rule files that name it as analyze.<Name>.
func (s *rulesSource) factClaims(t *testing.T) map[string][]string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(s.dir, "..", "analyze", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	consts := map[string]bool{}
	fset := token.NewFileSet()
	for _, n := range names {
		if strings.HasSuffix(n, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, n, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, spec := range g.Specs {
				vs := spec.(*ast.ValueSpec)
				if typ, ok := vs.Type.(*ast.Ident); ok && slices.Contains(factClassifications, typ.Name) {
					for _, id := range vs.Names {
						consts[id.Name] = true
					}
				}
			}
		}
	}
	users := map[string]map[string]bool{}
	for _, f := range s.files {
		from := s.file(f.Pos())
		if !s.isRuleFile(from) {
			continue
		}
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if x, ok := sel.X.(*ast.Ident); ok && x.Name == "analyze" && consts[sel.Sel.Name] {
				if users[sel.Sel.Name] == nil {
					users[sel.Sel.Name] = map[string]bool{}
				}
				users[sel.Sel.Name][from] = true
			}
			return true
		})
	}
	out := map[string][]string{}
	for c, files := range users {
		out[c] = slices.Sorted(maps.Keys(files))
	}
	return out
}

// TestStructureCheckCatches runs both checks on a small package that breaks each once,
// so a check that stopped seeing anything would fail here.
func TestStructureCheckCatches(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"registry.go": "package rules\n\nfunc All() []*analyze.Rule { return []*analyze.Rule{A, B, C} }\n",
		"a_rule.go": "package rules\n\nvar A = &analyze.Rule{Run: runA}\n\n" +
			"func runA() { _ = helper(); claim(kindX) }\n\nfunc helper() int { return 1 }\n",
		"b_rule.go": "package rules\n\nvar B = &analyze.Rule{Run: runB}\n\n" +
			"func runB() { _ = helper(); claim(kindX); claim(kindY) }\n",
		"c_rule.go": "package rules\n\nvar C = &analyze.Rule{Run: runC}\n\n" +
			"func runC() { claim(kindY); _ = analyze.PullErrorDNS }\n",
		"family.go": "package rules\n\ntype kind string\n\nconst (\n\tkindX kind = \"x\"\n\tkindY kind = \"y\"\n)\n\n" +
			"func claim(kind) {}\n",
	}
	files["../analyze/facts_kind.go"] = "package analyze\n\ntype PullErrorKind string\n\n" +
		"const (\n\tPullErrorDNS PullErrorKind = \"dns\"\n\tPullErrorX509 PullErrorKind = \"x509\"\n)\n"
	for _, sub := range []string{"rules", "analyze"} {
		if err := os.Mkdir(filepath.Join(dir, sub), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, "rules", name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	pkg := loadRulesSource(t, filepath.Join(dir, "rules"))
	if got := strings.Join(pkg.ruleFiles, " "); got != "a_rule.go b_rule.go c_rule.go" {
		t.Errorf("rule files = %q, want a_rule.go b_rule.go c_rule.go", got)
	}
	var uses []string
	for _, u := range pkg.crossUses() {
		uses = append(uses, fmt.Sprintf("%s:%s:%s", u.from, u.name, u.decl))
	}
	if got, want := strings.Join(uses, " "), "b_rule.go:helper:a_rule.go"; got != want {
		t.Errorf("cross uses = %q, want %q", got, want)
	}
	deps := pkg.dependents()
	for file, want := range map[string]string{
		"a_rule.go": "family.go:claim family.go:kindX",
		"b_rule.go": "a_rule.go:helper family.go:claim family.go:kindX family.go:kindY",
		"c_rule.go": "family.go:claim family.go:kindY",
	} {
		if got := strings.Join(deps[file], " "); got != want {
			t.Errorf("dependents[%s] = %q, want %q", file, got, want)
		}
	}
	// Two allowed files pass; the third dependent fails, and so does an allowed file
	// that no longer depends.
	allowed := map[string]string{"a_rule.go": "one", "b_rule.go": "two"}
	got := selfContainedViolations(deps, allowed)
	if len(got) != 1 || !strings.HasPrefix(got[0], "c_rule.go uses family.go:claim") {
		t.Errorf("violations with two allowed = %q, want c_rule.go's", got)
	}
	allowed["c_rule.go"], allowed["d_rule.go"] = "three", "stale"
	if got := selfContainedViolations(deps, allowed); len(got) != 1 || !strings.HasPrefix(got[0], "d_rule.go no longer") {
		t.Errorf("violations with c allowed and d stale = %q", got)
	}
	if got := pkg.factClaims(t); len(got["PullErrorDNS"]) != 1 {
		t.Errorf("claims of analyze.PullErrorDNS = %q, want c_rule.go", got["PullErrorDNS"])
	}
	claims := pkg.claims()
	if got := strings.Join(claims["kindX"], " "); got != "a_rule.go b_rule.go" {
		t.Errorf("claims of kindX = %q, want both rule files", got)
	}
	if got := strings.Join(claims["kindY"], " "); got != "b_rule.go c_rule.go" {
		t.Errorf("claims of kindY = %q, want b_rule.go c_rule.go", got)
	}
}

// rulesSource is the package's non-test files, type-checked on their own: imports
// resolve to empty packages, which leaves every name the package declares resolved.
type rulesSource struct {
	dir       string
	fset      *token.FileSet
	files     []*ast.File
	info      *types.Info
	pkg       *types.Package
	ruleFiles []string              // sorted
	ruleVars  map[types.Object]bool // the rules All lists
}

// emptyImporter gives every import an empty package: the checks need the package's
// own names only, and type errors about imported names are expected and ignored.
type emptyImporter struct{}

func (emptyImporter) Import(p string) (*types.Package, error) {
	pkg := types.NewPackage(p, path.Base(p))
	pkg.MarkComplete()
	return pkg, nil
}

func loadRulesSource(t *testing.T, dir string) *rulesSource {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	s := &rulesSource{dir: dir, fset: token.NewFileSet(), ruleVars: map[types.Object]bool{}}
	for _, n := range names {
		if strings.HasSuffix(n, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(s.fset, n, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		s.files = append(s.files, f)
	}
	s.info = &types.Info{Uses: map[*ast.Ident]types.Object{}, Defs: map[*ast.Ident]types.Object{}}
	conf := types.Config{Importer: emptyImporter{}, Error: func(error) {}}
	s.pkg, _ = conf.Check("rules", s.fset, s.files, s.info)

	listed := registryNames(t, s.files, s.fset)
	for _, f := range s.files {
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.VAR {
				continue
			}
			for _, spec := range g.Specs {
				for _, id := range spec.(*ast.ValueSpec).Names {
					if listed[id.Name] {
						s.ruleVars[s.info.Defs[id]] = true
						s.ruleFiles = append(s.ruleFiles, s.file(f.Pos()))
					}
				}
			}
		}
	}
	sort.Strings(s.ruleFiles)
	s.ruleFiles = slices.Compact(s.ruleFiles)
	return s
}

// registryNames is the names All returns, read from registry.go.
func registryNames(t *testing.T, files []*ast.File, fset *token.FileSet) map[string]bool {
	t.Helper()
	names := map[string]bool{}
	for _, f := range files {
		if filepath.Base(fset.File(f.Pos()).Name()) != "registry.go" {
			continue
		}
		ast.Inspect(f, func(n ast.Node) bool {
			fd, ok := n.(*ast.FuncDecl)
			if !ok || fd.Name.Name != "All" {
				return true
			}
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				if lit, ok := n.(*ast.CompositeLit); ok {
					for _, e := range lit.Elts {
						if id, ok := e.(*ast.Ident); ok {
							names[id.Name] = true
						}
					}
				}
				return true
			})
			return false
		})
	}
	if len(names) == 0 {
		t.Fatal("registry.go: no rules listed in All")
	}
	return names
}

func (s *rulesSource) file(p token.Pos) string { return filepath.Base(s.fset.File(p).Name()) }

func (s *rulesSource) isRuleFile(name string) bool {
	_, found := slices.BinarySearch(s.ruleFiles, name)
	return found
}

type crossUse struct{ from, name, decl string }

// crossUses lists, once per file and name, the uses of a rule file's names elsewhere.
func (s *rulesSource) crossUses() []crossUse {
	seen := map[crossUse]bool{}
	var out []crossUse
	for id, obj := range s.info.Uses {
		if obj.Pkg() != s.pkg || !obj.Pos().IsValid() {
			continue
		}
		if _, ok := obj.(*types.PkgName); ok {
			continue
		}
		from, decl := s.file(id.Pos()), s.file(obj.Pos())
		if from == decl || !s.isRuleFile(decl) || !s.declaredAtTop(obj) {
			continue
		}
		if from == "registry.go" && s.ruleVars[obj] {
			continue
		}
		u := crossUse{from, id.Name, decl}
		if !seen[u] {
			seen[u] = true
			out = append(out, u)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		return out[i].from+out[i].name < out[j].from+out[j].name
	})
	return out
}

// dependents maps each rule file that uses a name declared in another file of the
// package (All aside) to those names, as "file:name", sorted.
func (s *rulesSource) dependents() map[string][]string {
	out := map[string][]string{}
	for id, obj := range s.info.Uses {
		if obj.Pkg() != s.pkg || !obj.Pos().IsValid() {
			continue
		}
		if _, ok := obj.(*types.PkgName); ok {
			continue
		}
		from, decl := s.file(id.Pos()), s.file(obj.Pos())
		if from == decl || !s.isRuleFile(from) || !s.declaredAtTop(obj) || (decl == "registry.go" && obj.Name() == "All") {
			continue
		}
		if u := decl + ":" + id.Name; !slices.Contains(out[from], u) {
			out[from] = append(out[from], u)
		}
	}
	for _, names := range out {
		sort.Strings(names)
	}
	return out
}

// declaredAtTop reports whether obj belongs to the file's top level: a package-level
// name, a method, or a field of a package-level type. A local variable cannot be used
// from another file, so it is left out.
func (s *rulesSource) declaredAtTop(obj types.Object) bool {
	if obj.Parent() == s.pkg.Scope() {
		return true
	}
	switch o := obj.(type) {
	case *types.Func:
		return o.Signature().Recv() != nil
	case *types.Var:
		return o.IsField()
	}
	return false
}

// claims maps each classification constant to the rule files that use it. A
// classification type is a named type declared outside rule files with at least two
// constants of it.
func (s *rulesSource) claims() map[string][]string {
	consts := map[types.Object]bool{}
	perType := map[*types.TypeName]int{}
	for _, name := range s.pkg.Scope().Names() {
		c, ok := s.pkg.Scope().Lookup(name).(*types.Const)
		if !ok {
			continue
		}
		named, ok := c.Type().(*types.Named)
		if !ok || named.Obj().Pkg() != s.pkg || s.isRuleFile(s.file(named.Obj().Pos())) {
			continue
		}
		consts[c] = true
		perType[named.Obj()]++
	}
	users := map[string]map[string]bool{}
	for id, obj := range s.info.Uses {
		if !consts[obj] || perType[obj.Type().(*types.Named).Obj()] < 2 {
			continue
		}
		if users[obj.Name()] == nil {
			users[obj.Name()] = map[string]bool{}
		}
		if from := s.file(id.Pos()); s.isRuleFile(from) {
			users[obj.Name()][from] = true
		}
	}
	out := map[string][]string{}
	for c, files := range users {
		out[c] = slices.Sorted(maps.Keys(files))
	}
	return out
}
