// Command gen generates podflow's message catalog from the released Go sources of the
// components on the Pod path. For each module and version pinned in pins.yaml it runs
// `go mod download -json MODULE@VERSION`, parses the pinned packages with go/parser and
// walks the call sites that print or return a message: event recorder calls, fmt.Errorf,
// errors.New and wrapping, klog (structured or not), logrus and logr, gRPC status errors,
// scheduler framework statuses and API errors. Identical templates of one component are
// merged across releases into one entry with the first and last release that print it.
//
//	go run ./catalog/gen -pins catalog/gen/pins.yaml -out catalog/data/catalog.jsonl.gz
package main

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"sigs.k8s.io/yaml"

	"podflow.dev/podflow/catalog"
)

// pins is the generator's configuration: which modules and releases to read.
type pins struct {
	Modules   []module    `json:"modules"`
	NotServed []notServed `json:"notServed"`
}

type module struct {
	Module   string   `json:"module"`
	Versions []string `json:"versions"`
	// Releases names the component release a module version stands for, when the two
	// differ (the cri plugin module of containerd 1.4, the staging modules of Kubernetes).
	Releases map[string]string `json:"releases,omitempty"`
	// V0IsV1: module version v0.X.Y is Kubernetes release v1.X.Y.
	V0IsV1   bool         `json:"v0IsV1,omitempty"`
	Packages []packageSel `json:"packages"`
}

// packageSel selects the directories under Dir (or Dir alone when Exact) as printed by
// Component; with Files, only the files of those base names (a large package of which
// a few files print on the Pod path).
type packageSel struct {
	Dir       string   `json:"dir"`
	Component string   `json:"component"`
	Exact     bool     `json:"exact,omitempty"`
	Files     []string `json:"files,omitempty"`
}

type notServed struct {
	Module string `json:"module"`
	Why    string `json:"why"`
}

func main() {
	pinsPath := flag.String("pins", "catalog/gen/pins.yaml", "the pinned modules and releases")
	out := flag.String("out", "catalog/data/catalog.jsonl.gz", "where to write the catalog")
	only := flag.String("only", "", "read only modules whose path contains this (for trying a pin)")
	curated := flag.String("curated", "catalog/gen/curated.yaml", "curated messages of components no Go module prints")
	flag.Parse()
	if err := run(*pinsPath, *curated, *out, *only); err != nil {
		fmt.Fprintln(os.Stderr, "catalog gen:", err)
		os.Exit(1)
	}
}

func run(pinsPath, curatedPath, out, only string) error {
	b, err := os.ReadFile(pinsPath)
	if err != nil {
		return err
	}
	var p pins
	if err := yaml.UnmarshalStrict(b, &p); err != nil {
		return fmt.Errorf("%s: %w", pinsPath, err)
	}
	m := newMerger()
	header := catalog.Header{Format: catalog.FormatVersion}
	for _, ns := range p.NotServed {
		header.NotServe = append(header.NotServe, ns.Module+": "+ns.Why)
	}
	for _, mod := range p.Modules {
		if only != "" && !strings.Contains(mod.Module, only) {
			continue
		}
		header.Pins = append(header.Pins, catalog.Pin{Module: mod.Module, Versions: mod.Versions})
		for _, v := range mod.Versions {
			var dir string
			if mod.Module == "std" {
				dir, err = goroot(v)
			} else {
				dir, err = download(mod.Module, v)
			}
			if err != nil {
				return err
			}
			rel := v
			if r, ok := mod.Releases[v]; ok {
				rel = r
			} else if mod.V0IsV1 && strings.HasPrefix(v, "v0.") {
				rel = "v1." + strings.TrimPrefix(v, "v0.")
			}
			sites, stats, err := readModule(mod, dir)
			if err != nil {
				return fmt.Errorf("%s@%s: %w", mod.Module, v, err)
			}
			fmt.Fprintf(os.Stderr, "%s@%s: %d files, %d call sites\n", mod.Module, v, stats.files, len(sites))
			m.add(mod.Module, rel, sites)
		}
	}
	if only == "" {
		if err := addCurated(m, curatedPath); err != nil {
			return err
		}
	}
	entries := m.entries()
	header.Entries = len(entries)
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(zw)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(header); err != nil {
		return err
	}
	for _, e := range entries {
		if err := enc.Encode(e); err != nil {
			return err
		}
	}
	if err := zw.Close(); err != nil {
		return err
	}
	if err := os.WriteFile(out, buf.Bytes(), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "%s: %d entries, %d bytes (dropped: %s)\n", out, len(entries), buf.Len(), m.dropSummary())
	return nil
}

// curatedEntry is one message of a component no served Go module prints, copied from the
// source file it cites (catalog/gen/curated.yaml).
type curatedEntry struct {
	Component string `json:"component"`
	Module    string `json:"module"`
	File      string `json:"file"`
	Function  string `json:"function"`
	Kind      string `json:"kind"`
	Level     string `json:"level"`
	Reason    string `json:"reason,omitempty"`
	Stage     string `json:"stage,omitempty"`
	Template  string `json:"template"`
}

// addCurated adds the curated entries; they carry the release label "curated".
func addCurated(m *merger, path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var c struct {
		Entries []curatedEntry `json:"entries"`
	}
	if err := yaml.UnmarshalStrict(b, &c); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	for i, e := range c.Entries {
		if e.Component == "" || e.Module == "" || e.File == "" || e.Template == "" || e.Kind == "" {
			return fmt.Errorf("%s: entry %d: component, module, file, kind and template are required", path, i+1)
		}
		pkg := e.Module
		if d := filepath.Dir(e.File); d != "." {
			pkg += "/" + d
		}
		s := site{component: e.Component, pkg: pkg, function: e.Function, file: e.File, kind: e.Kind, level: e.Level,
			reason: e.Reason, template: e.Template, plain: !strings.Contains(e.Template, "%"), stage: e.Stage, curated: true}
		n := len(m.byKey)
		m.add(e.Module, "curated", []site{s})
		if len(m.byKey) == n {
			return fmt.Errorf("%s: entry %d (%q) was dropped or repeats another", path, i+1, e.Template)
		}
	}
	return nil
}

// goroot is the standard library's source directory of the running Go, which must be
// the pinned version.
func goroot(version string) (string, error) {
	out, err := exec.Command("go", "env", "GOROOT", "GOVERSION").Output()
	if err != nil {
		return "", fmt.Errorf("go env: %w", err)
	}
	f := strings.Fields(string(out))
	if len(f) != 2 {
		return "", fmt.Errorf("go env GOROOT GOVERSION: unexpected %q", out)
	}
	if f[1] != version {
		return "", fmt.Errorf("the standard library is pinned at %s and this Go is %s: run the generator with %s (GOTOOLCHAIN=%s)", version, f[1], version, version)
	}
	return filepath.Join(f[0], "src"), nil
}

// download runs `go mod download -json MOD@VER` and returns the module's directory.
func download(mod, ver string) (string, error) {
	cmd := exec.Command("go", "mod", "download", "-json", mod+"@"+ver)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	outb, err := cmd.Output()
	var info struct{ Dir, Error string }
	_ = json.Unmarshal(outb, &info)
	if info.Error != "" {
		return "", fmt.Errorf("go mod download %s@%s: %s", mod, ver, info.Error)
	}
	if err != nil {
		return "", fmt.Errorf("go mod download %s@%s: %w: %s", mod, ver, err, stderr.String())
	}
	if info.Dir == "" {
		return "", fmt.Errorf("go mod download %s@%s: no directory", mod, ver)
	}
	return info.Dir, nil
}

// skipDirs are directories that hold no code a component runs.
var skipDirs = map[string]bool{"vendor": true, "testdata": true, "test": true, "tests": true, "e2e": true,
	"e2e_node": true, "testing": true, "fake": true, "fakes": true, "mock": true, "mocks": true,
	"integration": true, "hack": true, "third_party": true, "examples": true, "testutil": true,
	"testutils": true, "benchmark": true, "docs": true, ".git": true}

// testDouble reports whether a file name is a test double's (fake_manager.go,
// fake_iptables.go, mock_client.go, client_fake.go): code compiled into a component for
// its tests, whose messages no running component prints ("secret %s not found" of the
// kubelet's fake secret manager).
func testDouble(name string) bool {
	name = strings.TrimSuffix(name, ".go")
	return name == "fake" || strings.HasPrefix(name, "fake_") || strings.HasPrefix(name, "mock_") || strings.HasSuffix(name, "_fake") || strings.HasSuffix(name, "_mock")
}

type fileInfo struct {
	rel       string // path inside the module
	pkg       string // import path
	component string
	f         *ast.File
	imports   map[string]string // local name → import path
}

type readStats struct{ files int }

// readModule parses the selected packages of one module release and returns its call sites.
func readModule(mod module, dir string) ([]site, readStats, error) {
	var st readStats
	fset := token.NewFileSet()
	var files []*fileInfo
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel != "." && (skipDirs[d.Name()] || strings.HasPrefix(d.Name(), "_")) && !pinnedWithin(mod.Packages, rel) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") || strings.Contains(path.Base(rel), "zz_generated") ||
			strings.HasSuffix(rel, ".pb.go") || testDouble(path.Base(rel)) {
			return nil
		}
		relDir := path.Dir(rel)
		comp := selectComponent(mod.Packages, relDir, path.Base(rel))
		if comp == "" || underSkipped(relDir) && !namedBy(mod.Packages, relDir) {
			return nil
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		f, err := parser.ParseFile(fset, rel, src, parser.SkipObjectResolution)
		if err != nil {
			// A file that does not parse (a generator template) prints nothing we can read.
			return nil
		}
		pkg := mod.Module
		if relDir != "." {
			pkg += "/" + relDir
		}
		if mod.Module == "std" {
			pkg = relDir
		}
		if i := strings.Index(relDir, "staging/src/"); i >= 0 {
			pkg = relDir[i+len("staging/src/"):]
		}
		fi := &fileInfo{rel: rel, pkg: pkg, component: comp, f: f, imports: map[string]string{}}
		for _, im := range f.Imports {
			ip, _ := strconv.Unquote(im.Path.Value)
			name := path.Base(ip)
			if strings.HasPrefix(name, "v") && len(name) <= 3 && strings.Count(ip, "/") > 0 {
				// gopkg-style or /v2 major suffix: the package name is the element before
				if _, err := strconv.Atoi(name[1:]); err == nil {
					name = path.Base(path.Dir(ip))
				}
			}
			if im.Name != nil {
				name = im.Name.Name
			}
			fi.imports[name] = ip
		}
		files = append(files, fi)
		st.files++
		return nil
	})
	if err != nil {
		return nil, st, err
	}
	r := newResolver(files)
	r.indexForms(files)
	var sites []site
	for _, fi := range files {
		sites = append(sites, r.walkFile(fset, fi)...)
	}
	return sites, st, nil
}

// pinnedWithin reports whether a pinned package lies in (or is) the directory rel: a
// directory skipped by its name (third_party) is still read where the pins ask for it.
func pinnedWithin(sels []packageSel, rel string) bool {
	for _, s := range sels {
		d := strings.TrimSuffix(s.Dir, "/")
		if d == rel || strings.HasPrefix(d, rel+"/") {
			return true
		}
	}
	return false
}

// underSkipped reports whether a directory lies in one skipped by its name.
func underSkipped(relDir string) bool {
	for _, e := range strings.Split(relDir, "/") {
		if skipDirs[e] || strings.HasPrefix(e, "_") {
			return true
		}
	}
	return false
}

// namedBy reports whether a pin names relDir or a directory above it other than the root.
func namedBy(sels []packageSel, relDir string) bool {
	for _, s := range sels {
		d := strings.TrimSuffix(s.Dir, "/")
		if d != "." && d != "" && (relDir == d || !s.Exact && strings.HasPrefix(relDir, d+"/")) {
			return true
		}
	}
	return false
}

// selectComponent is the component of the file base in relDir: the pin of the longest
// directory that selects it, "" when none does.
func selectComponent(sels []packageSel, relDir, base string) string {
	best, bestLen := "", -1
	for _, s := range sels {
		if len(s.Files) > 0 && !slices.Contains(s.Files, base) {
			continue
		}
		d := strings.TrimSuffix(s.Dir, "/")
		ok := false
		switch {
		case d == "." || d == "":
			ok = !s.Exact || relDir == "."
		case s.Exact:
			ok = relDir == d
		default:
			ok = relDir == d || strings.HasPrefix(relDir, d+"/")
		}
		if ok && len(d) > bestLen {
			best, bestLen = s.Component, len(d)
		}
	}
	return best
}

// site is one call that prints or returns a message.
type site struct {
	component, pkg, function, file string
	line                           int
	kind, reason, level, template  string
	eventType                      string
	stage                          string // a curated entry's stage, when given
	curated                        bool
	pos                            token.Pos
	plain                          bool
	keys                           []string
}

// resolver evaluates constant strings across the parsed packages.
type resolver struct {
	consts map[string]constDef // "importpath.Name"
	memo   map[string]string
	busy   map[string]bool
	// helpers are the formatting helpers ("importpath.Func"), causes the cause formats
	// of error types (by import path); see forms.go.
	helpers map[string]helper
	causes  map[string]causeFormat
}

type constDef struct {
	expr ast.Expr
	fi   *fileInfo
}

func newResolver(files []*fileInfo) *resolver {
	r := &resolver{consts: map[string]constDef{}, memo: map[string]string{}, busy: map[string]bool{}}
	for _, fi := range files {
		for _, d := range fi.f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, n := range vs.Names {
					if i < len(vs.Values) {
						r.consts[fi.pkg+"."+n.Name] = constDef{vs.Values[i], fi}
					}
				}
			}
		}
	}
	return r
}

func (r *resolver) constant(key string) (string, bool) {
	if v, ok := r.memo[key]; ok {
		return v, true
	}
	d, ok := r.consts[key]
	if !ok || r.busy[key] {
		return "", false
	}
	r.busy[key] = true
	v, ok := r.str(d.expr, d.fi, nil)
	delete(r.busy, key)
	if ok {
		r.memo[key] = v
	}
	return v, ok
}

// str evaluates e as a constant string: a literal, a concatenation, a constant of this or
// an imported package, a local variable assigned one, or fmt.Sprintf's format.
func (r *resolver) str(e ast.Expr, fi *fileInfo, locals map[string]ast.Expr) (string, bool) {
	switch x := e.(type) {
	case *ast.BasicLit:
		if x.Kind == token.STRING {
			s, err := strconv.Unquote(x.Value)
			return s, err == nil
		}
	case *ast.ParenExpr:
		return r.str(x.X, fi, locals)
	case *ast.BinaryExpr:
		if x.Op == token.ADD {
			a, ok1 := r.str(x.X, fi, locals)
			b, ok2 := r.str(x.Y, fi, locals)
			if ok1 && ok2 {
				return a + b, true
			}
		}
	case *ast.Ident:
		if locals != nil {
			if v, ok := locals[x.Name]; ok && v != nil {
				delete(locals, x.Name) // no cycles through a self-assignment
				s, ok := r.str(v, fi, locals)
				locals[x.Name] = v
				return s, ok
			}
		}
		return r.constant(fi.pkg + "." + x.Name)
	case *ast.SelectorExpr:
		if id, ok := x.X.(*ast.Ident); ok {
			if ip, ok := fi.imports[id.Name]; ok {
				return r.constant(ip + "." + x.Sel.Name)
			}
		}
	case *ast.CallExpr:
		if sel, ok := x.Fun.(*ast.SelectorExpr); ok {
			if id, ok := sel.X.(*ast.Ident); ok && fi.imports[id.Name] == "fmt" && (sel.Sel.Name == "Sprintf") && len(x.Args) > 0 {
				return r.str(x.Args[0], fi, locals)
			}
		}
		// A conversion such as string(reason) or EventReason("x").
		if len(x.Args) == 1 {
			if id, ok := x.Fun.(*ast.Ident); ok && (id.Name == "string" || isExportedType(id.Name)) {
				return r.str(x.Args[0], fi, locals)
			}
		}
	}
	return "", false
}

func isExportedType(name string) bool { return name != "" && name[0] >= 'A' && name[0] <= 'Z' }

// reasonOf is an event reason or status code: its constant value, or the name it is
// spelled with when it is not a constant.
func (r *resolver) reasonOf(e ast.Expr, fi *fileInfo, locals map[string]ast.Expr) string {
	if s, ok := r.str(e, fi, locals); ok {
		return s
	}
	switch x := e.(type) {
	case *ast.SelectorExpr:
		return x.Sel.Name
	case *ast.Ident:
		if x.Name != "reason" && x.Name != "nil" {
			return x.Name
		}
	}
	return ""
}

// printArgs joins the arguments of a Print-style call (klog.Error(a, b)) into a template:
// constant strings as text, anything else as %v.
func (r *resolver) printArgs(args []ast.Expr, fi *fileInfo, locals map[string]ast.Expr) (string, bool) {
	var b strings.Builder
	any := false
	for _, a := range args {
		if s, ok := r.str(a, fi, locals); ok {
			b.WriteString(strings.ReplaceAll(s, "%", "%%"))
			any = true
			continue
		}
		b.WriteString("%v")
	}
	return b.String(), any
}

var errorPkgs = map[string]bool{"errors": true, "github.com/pkg/errors": true, "golang.org/x/xerrors": true,
	"github.com/containerd/errdefs": false, "github.com/go-errors/errors": true}

const grpcStatus = "google.golang.org/grpc/status"

func (r *resolver) walkFile(fset *token.FileSet, fi *fileInfo) []site {
	var sites []site
	for _, d := range fi.f.Decls {
		fn := ""
		var body ast.Node = d
		if fd, ok := d.(*ast.FuncDecl); ok {
			fn = funcName(fd)
			if fd.Body == nil {
				continue
			}
			body = fd.Body
		}
		locals := map[string]ast.Expr{}
		consumed := map[*ast.CallExpr]bool{}
		at := func(s site, pos token.Pos) {
			s.component, s.pkg, s.function, s.file = fi.component, fi.pkg, fn, fi.rel
			s.line = fset.Position(pos).Line
			sites = append(sites, s)
		}
		isErrorMethod, wroteLabel := false, false
		if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv != nil && fd.Name.Name == "Error" && fd.Type.Results != nil && len(fd.Type.Results.List) == 1 {
			isErrorMethod = true
		}
		if gd, ok := d.(*ast.GenDecl); ok {
			for _, s := range r.declSites(gd, fi) {
				at(s, s.pos)
			}
		}
		ast.Inspect(body, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.ReturnStmt:
				// An error type's message: func (e T) Error() string { return "..." }
				if isErrorMethod && len(x.Results) == 1 {
					if t, ok := r.str(x.Results[0], fi, locals); ok {
						markSprintf(x.Results[0], consumed)
						at(site{kind: "error", level: "error", template: t, plain: !r.isFormat(x.Results[0], fi, locals)}, x.Pos())
					}
				}
			case *ast.CompositeLit:
				if s, ok := r.descriptorSite(x, fi); ok {
					at(s, x.Pos())
				}
			case *ast.KeyValueExpr:
				// A status reason set in a literal: ContainerStateWaiting{Reason: "ContainerCreating"}
				if k, ok := x.Key.(*ast.Ident); ok && k.Name == "Reason" {
					if v, ok := r.str(x.Value, fi, locals); ok && isReasonWord(v) {
						at(site{kind: "reason", template: v, plain: true, reason: v}, x.Pos())
					}
				}
				// and its message: PodCondition{Message: "..."}, Status{Message: fmt.Sprintf(...)}
				if k, ok := x.Key.(*ast.Ident); ok && k.Name == "Message" {
					if v, ok := r.str(x.Value, fi, locals); ok && strings.Contains(v, " ") {
						markSprintf(x.Value, consumed)
						at(site{kind: "message", template: v, plain: !r.isFormat(x.Value, fi, locals)}, x.Pos())
					}
				}
			case *ast.AssignStmt:
				if len(x.Lhs) == len(x.Rhs) {
					for i, l := range x.Lhs {
						if id, ok := l.(*ast.Ident); ok {
							locals[id.Name] = x.Rhs[i]
						}
					}
				}
			case *ast.ValueSpec:
				for i, n := range x.Names {
					if i < len(x.Values) {
						locals[n.Name] = x.Values[i]
					}
				}
			case *ast.CallExpr:
				if consumed[x] {
					return true
				}
				// An error type that builds its message: the first label it writes is the
				// message's head ("strict decoding error: " and the errors after it).
				if isErrorMethod && !wroteLabel {
					if t, ok := r.writtenLabel(x, fi, locals); ok {
						wroteLabel = true
						at(site{kind: "error", level: "error", template: t + "%v"}, x.Pos())
					}
				}
				for _, s := range r.classify(x, fi, locals, consumed) {
					at(s, x.Pos())
					// The reason of an event is itself printed (event rows, describe).
					if s.kind == "event" && isReasonWord(s.reason) {
						at(site{kind: "reason", template: s.reason, plain: true, reason: s.reason, eventType: s.eventType}, x.Pos())
					}
				}
			}
			return true
		})
	}
	return sites
}

// writtenLabel is the literal a builder's WriteString call writes when it is a label
// the rest of the message follows ("strict decoding error: ").
func (r *resolver) writtenLabel(call *ast.CallExpr, fi *fileInfo, locals map[string]ast.Expr) (string, bool) {
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != "WriteString" || len(call.Args) != 1 {
		return "", false
	}
	t, ok := r.str(call.Args[0], fi, locals)
	if !ok || !strings.HasSuffix(t, ": ") || strings.Contains(t, "%") || len(strings.Fields(t)) < 2 {
		return "", false
	}
	return t, true
}

// reasonWord is a CamelCase reason such as OOMKilled, FailedMount or CrashLoopBackOff: it
// is matched as a word, so one-capital words (Failed, Started) are left out.
var reasonWord = regexp.MustCompile(`^[A-Z][a-z]*[A-Z][A-Za-z]*$`)

func isReasonWord(s string) bool { return len(s) >= 8 && reasonWord.MatchString(s) }

// declSites are the messages of package-level declarations: constants named for a reason
// (const oomExitReason = "OOMKilled"), and the errno table of package syscall.
func (r *resolver) declSites(gd *ast.GenDecl, fi *fileInfo) []site {
	var out []site
	for _, spec := range gd.Specs {
		vs, ok := spec.(*ast.ValueSpec)
		if !ok {
			continue
		}
		for i, n := range vs.Names {
			if i >= len(vs.Values) {
				continue
			}
			if gd.Tok == token.CONST && strings.Contains(strings.ToLower(n.Name), "reason") {
				if v, ok := r.str(vs.Values[i], fi, nil); ok && isReasonWord(v) {
					out = append(out, site{kind: "reason", template: v, plain: true, reason: v, pos: n.Pos()})
				}
			}
			// var errNoSuchHost = &notFoundError{"no such host"}
			if gd.Tok == token.VAR {
				v := vs.Values[i]
				if u, ok := v.(*ast.UnaryExpr); ok && u.Op == token.AND {
					v = u.X
				}
				if cl, ok := v.(*ast.CompositeLit); ok && len(cl.Elts) == 1 {
					if tn, ok := cl.Type.(*ast.Ident); ok && strings.HasSuffix(strings.ToLower(tn.Name), "error") {
						el := cl.Elts[0]
						if kv, ok := el.(*ast.KeyValueExpr); ok {
							el = kv.Value
						}
						if t, ok := r.str(el, fi, nil); ok {
							out = append(out, site{kind: "error", level: "error", template: t, plain: true, pos: n.Pos()})
						}
					}
				}
			}
			if fi.pkg == "syscall" && n.Name == "errors" {
				if cl, ok := vs.Values[i].(*ast.CompositeLit); ok {
					for _, el := range cl.Elts {
						if kv, ok := el.(*ast.KeyValueExpr); ok {
							if v, ok := r.str(kv.Value, fi, nil); ok {
								out = append(out, site{kind: "error", level: "error", template: v, plain: true, pos: kv.Pos()})
							}
						}
					}
				}
			}
		}
	}
	return out
}

func funcName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	t := fd.Recv.List[0].Type
	star := ""
	if s, ok := t.(*ast.StarExpr); ok {
		star = "*"
		t = s.X
	}
	switch x := t.(type) {
	case *ast.IndexExpr:
		t = x.X
	case *ast.IndexListExpr:
		t = x.X
	}
	name := "?"
	if id, ok := t.(*ast.Ident); ok {
		name = id.Name
	}
	if star != "" {
		return "(*" + name + ")." + fd.Name.Name
	}
	return name + "." + fd.Name.Name
}

// markSprintf marks a fmt.Sprintf argument as consumed by the call that prints it.
func markSprintf(e ast.Expr, consumed map[*ast.CallExpr]bool) {
	if c, ok := e.(*ast.CallExpr); ok {
		consumed[c] = true
	}
}

var logLevels = map[string]string{
	"Errorf": "error", "Error": "error", "Errorln": "error", "ErrorS": "error", "ErrorDepth": "error", "ErrorSDepth": "error",
	"Fatalf": "error", "Fatal": "error", "Fatalln": "error", "Exitf": "error", "Exit": "error", "Panicf": "error", "Panic": "error",
	"Warningf": "warning", "Warning": "warning", "Warningln": "warning", "Warnf": "warning", "Warn": "warning", "Warnln": "warning", "WarningDepth": "warning",
	"Infof": "info", "Info": "info", "Infoln": "info", "InfoS": "info", "InfoDepth": "info", "InfoSDepth": "info",
	"Debugf": "info", "Debug": "info", "Tracef": "info", "Printf": "info", "Println": "info", "Print": "info",
}

// classify returns the messages one call prints or returns.

// structuredMsgArg is, for klog's structured calls, one more than the position of the
// message among the arguments (0: not a structured call).
var structuredMsgArg = map[string]int{"InfoS": 1, "InfoSDepth": 2, "ErrorS": 2, "ErrorSDepth": 3}

func (r *resolver) classify(call *ast.CallExpr, fi *fileInfo, locals map[string]ast.Expr, consumed map[*ast.CallExpr]bool) []site {
	name, recvPkg := "", ""
	recvIdent := ""
	switch f := call.Fun.(type) {
	case *ast.SelectorExpr:
		name = f.Sel.Name
		if id, ok := f.X.(*ast.Ident); ok {
			recvIdent = id.Name
			recvPkg = fi.imports[id.Name]
		}
	case *ast.Ident:
		name = f.Name
	default:
		return nil
	}
	args := call.Args
	format := func(e ast.Expr) (string, bool) {
		markSprintf(e, consumed)
		return r.str(e, fi, locals)
	}
	switch {
	case name == "Event" || name == "Eventf" || name == "PastEventf" || name == "AnnotatedEventf":
		if len(args) < 3 {
			return nil
		}
		ti := -1
		for i := 1; i < len(args) && i < 4; i++ {
			if t := eventType(args[i]); t != "" {
				ti = i
				break
			}
		}
		newAPI := name == "Eventf" && len(args) >= 6 && isNil(args[1])
		if ti < 0 {
			switch {
			case newAPI:
				ti = 2
			case name == "PastEventf" || name == "AnnotatedEventf":
				ti = 2
			default:
				ti = 1
			}
		}
		if newAPI && ti == 2 {
			if len(args) < 6 {
				return nil
			}
			t, ok := format(args[5])
			if !ok {
				return nil
			}
			return []site{{kind: "event", eventType: eventType(args[ti]), reason: r.reasonOf(args[3], fi, locals), template: t}}
		}
		if ti+2 >= len(args) {
			return nil
		}
		t, ok := format(args[ti+2])
		if !ok {
			return nil
		}
		return []site{{kind: "event", eventType: eventType(args[ti]), reason: r.reasonOf(args[ti+1], fi, locals), template: t, plain: name == "Event" && !r.isFormat(args[ti+2], fi, locals)}}
	case name == "BroadcastEvent" && len(args) == 4:
		// A recorder's wrapper that takes the object, the reason, the message and the
		// type (the VPC resource controller's K8sWrapper.BroadcastEvent).
		t, ok := format(args[2])
		if !ok {
			return nil
		}
		return []site{{kind: "event", eventType: eventType(args[3]), reason: r.reasonOf(args[1], fi, locals), template: t}}
	case recvPkg == "fmt":
		switch name {
		case "Errorf":
			if len(args) > 0 {
				if t, ok := format(args[0]); ok {
					return []site{{kind: "error", level: "error", template: t}}
				}
			}
		case "Sprintf":
			if len(args) > 0 {
				if t, ok := r.str(args[0], fi, locals); ok {
					return []site{{kind: "message", template: t}}
				}
			}
		}
		return nil
	case errorPkgs[recvPkg]:
		switch name {
		case "New":
			if len(args) == 1 {
				if t, ok := format(args[0]); ok {
					return []site{{kind: "error", level: "error", template: t, plain: !r.isFormat(args[0], fi, locals)}}
				}
			}
		case "Errorf":
			if len(args) > 0 {
				if t, ok := format(args[0]); ok {
					return []site{{kind: "error", level: "error", template: t}}
				}
			}
		case "Wrap", "WithMessage":
			if len(args) == 2 {
				if t, ok := format(args[1]); ok {
					if !r.isFormat(args[1], fi, locals) {
						t = strings.ReplaceAll(t, "%", "%%")
					}
					return []site{{kind: "error", level: "error", template: t + ": %w"}}
				}
			}
		case "Wrapf", "WithMessagef":
			if len(args) >= 2 {
				if t, ok := format(args[1]); ok {
					return []site{{kind: "error", level: "error", template: t + ": %w"}}
				}
			}
		}
		return nil
	case recvPkg == grpcStatus:
		if len(args) < 2 {
			return nil
		}
		code := r.reasonOf(args[0], fi, locals)
		switch name {
		case "Errorf", "Newf":
			if t, ok := format(args[1]); ok {
				return []site{{kind: "error", level: "error", reason: code, template: t}}
			}
		case "Error", "New":
			if t, ok := format(args[1]); ok {
				return []site{{kind: "error", level: "error", reason: code, template: t, plain: !r.isFormat(args[1], fi, locals)}}
			}
		}
		return nil
	case name == "NewStatus" && len(args) >= 2:
		code := r.reasonOf(args[0], fi, locals)
		var out []site
		for _, a := range args[1:] {
			if t, ok := format(a); ok {
				out = append(out, site{kind: "status", reason: code, level: statusLevel(code), template: t, plain: !r.isFormat(a, fi, locals)})
			}
		}
		return out
	case strings.Contains(name, "Condition") && strings.HasPrefix(strings.ToLower(name), "new") && len(args) >= 2:
		// newCondition(type, status, reason, message): the message of a workload condition.
		// It is a failure's when the constructor says so (newFailureCondition) or the
		// reason before it is a failure's (JobReasonDeadlineExceeded): a Job's "was active
		// longer than specified deadline" is why it failed, not news.
		var out []site
		for i, a := range args {
			if t, ok := r.str(a, fi, locals); ok && strings.Contains(t, " ") {
				markSprintf(a, consumed)
				s := site{kind: "message", template: t, plain: !r.isFormat(a, fi, locals)}
				if i > 0 {
					if reason, ok := r.str(args[i-1], fi, locals); ok && isReasonWord(reason) {
						s.reason = reason
					}
				}
				if strings.Contains(strings.ToLower(name), "fail") || i > 0 && failureReason.MatchString(r.reasonOf(args[i-1], fi, locals)) {
					s.level = "error"
				}
				out = append(out, s)
			}
		}
		return out
	case strings.Contains(name, "Condition") && len(args) >= 3:
		// setCondition(hpa, type, status, reason, "message %v", args…)
		return r.conditionSites(args, fi, locals, consumed)
	case fi.component == "go" && name == "logf" && len(args) > 0:
		// net/http's server logs what fails on a connection through its logf
		// ("http: TLS handshake error from %s: %v").
		if t, ok := format(args[0]); ok {
			return []site{{kind: "log", level: "error", template: t}}
		}
		return nil
	case fi.component == "go" && recvPkg == "" && (name == "plainError" || name == "errorString") && len(args) == 1:
		// the runtime's panics: memoryError = error(errorString("invalid memory address …"))
		if t, ok := format(args[0]); ok {
			return []site{{kind: "error", level: "error", template: t, plain: !r.isFormat(args[0], fi, locals)}}
		}
		return nil
	case strings.Contains(name, "PredicateFailureError") && len(args) == 2:
		if t, ok := format(args[1]); ok {
			return []site{{kind: "status", reason: r.reasonOf(args[0], fi, locals), level: "error", template: t, plain: !r.isFormat(args[1], fi, locals)}}
		}
		return nil
	case strings.Contains(name, "PredicateFailureError") && len(args) == 1:
		// Kubernetes 1.7 and before: the scheduler prints the predicate's name as the
		// reason a node does not fit ("2 CheckServiceAffinity").
		if t, ok := r.str(args[0], fi, locals); ok && isReasonWord(t) {
			return []site{{kind: "reason", reason: t, level: "error", template: t, plain: true}}
		}
		return nil
	case strings.HasPrefix(name, "New") && (name == "NewBadRequest" || name == "NewServiceUnavailable" || name == "NewTooManyRequests" ||
		name == "NewTimeoutError" || name == "NewUnauthorized" || name == "NewForbidden" && len(args) == 1):
		if len(args) >= 1 {
			if t, ok := format(args[0]); ok {
				return []site{{kind: "error", level: "error", reason: strings.TrimPrefix(name, "New"), template: t, plain: !r.isFormat(args[0], fi, locals)}}
			}
		}
		return nil
	}
	if s, ok := r.causeSite(name, args, fi, locals); ok {
		return []site{s}
	}
	if s, ok := r.helperSite(call, fi, locals); ok {
		return []site{s}
	}
	level, isLog := logLevels[name]
	if !isLog || recvPkg == "testing" || recvIdent == "t" || recvIdent == "b" || len(args) == 0 {
		return nil
	}
	s := site{kind: "log", level: level}
	switch {
	case structuredMsgArg[name] > 0:
		// The message follows the error (ErrorS) and the depth (…Depth).
		i := structuredMsgArg[name] - 1
		if len(args) <= i {
			return nil
		}
		t, ok := format(args[i])
		if !ok {
			return nil
		}
		s.template, s.plain, s.keys = t, !r.isFormat(args[i], fi, locals), r.keys(args[i+1:], fi, locals)
	case strings.HasSuffix(name, "f"):
		i := 0
		if strings.HasSuffix(name, "Depthf") {
			i = 1
		}
		t, ok := format(args[i])
		if !ok {
			return nil
		}
		s.template = t
	case name == "Error" && len(args) >= 2 && len(args)%2 == 0 && isStr(r, args[1], fi, locals) && !isStr(r, args[0], fi, locals):
		// logr: logger.Error(err, "msg", "key", value, ...)
		t, _ := format(args[1])
		s.template, s.plain, s.keys = t, !r.isFormat(args[1], fi, locals), r.keys(args[2:], fi, locals)
	case (name == "Info" || name == "Error") && len(args)%2 == 1 && len(args) >= 3 && isStr(r, args[0], fi, locals) && r.keysOnly(args[1:], fi, locals):
		// logr: logger.Info("msg", "key", value, ...)
		t, _ := format(args[0])
		s.template, s.plain, s.keys = t, !r.isFormat(args[0], fi, locals), r.keys(args[1:], fi, locals)
	default:
		if strings.HasSuffix(name, "Depth") {
			args = args[1:]
		}
		for _, a := range args {
			markSprintf(a, consumed)
		}
		t, ok := r.printArgs(args, fi, locals)
		if !ok {
			return nil
		}
		s.template = t
		if len(args) == 1 {
			if r.isFormat(args[0], fi, locals) {
				if f, ok := r.str(args[0], fi, locals); ok {
					s.template = f
				}
			} else {
				s.template, s.plain = strings.ReplaceAll(t, "%%", "%"), true
			}
		}
	}
	return []site{s}
}

// isFormat reports whether e is a format string being filled: fmt.Sprintf directly, or a
// local variable assigned one. A message printed as is, built that way, still has verbs.
func (r *resolver) isFormat(e ast.Expr, fi *fileInfo, locals map[string]ast.Expr) bool {
	for range 4 {
		if p, ok := e.(*ast.ParenExpr); ok {
			e = p.X
			continue
		}
		if id, ok := e.(*ast.Ident); ok && locals != nil {
			if v, ok := locals[id.Name]; ok && v != nil {
				e = v
				continue
			}
		}
		break
	}
	return isSprintf(e, fi)
}

func isSprintf(e ast.Expr, fi *fileInfo) bool {
	c, ok := e.(*ast.CallExpr)
	if !ok {
		return false
	}
	sel, ok := c.Fun.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	id, ok := sel.X.(*ast.Ident)
	return ok && fi.imports[id.Name] == "fmt"
}

func isStr(r *resolver, e ast.Expr, fi *fileInfo, locals map[string]ast.Expr) bool {
	_, ok := r.str(e, fi, locals)
	return ok
}

// keysOnly reports whether every even position of kv is a constant key without spaces.
func (r *resolver) keysOnly(kv []ast.Expr, fi *fileInfo, locals map[string]ast.Expr) bool {
	for i := 0; i < len(kv); i += 2 {
		k, ok := r.str(kv[i], fi, locals)
		if !ok || k == "" || strings.ContainsAny(k, " %:") {
			return false
		}
	}
	return true
}

func (r *resolver) keys(kv []ast.Expr, fi *fileInfo, locals map[string]ast.Expr) []string {
	var out []string
	for i := 0; i < len(kv); i += 2 {
		if k, ok := r.str(kv[i], fi, locals); ok && k != "" && !strings.ContainsAny(k, " %") {
			out = append(out, k)
		}
	}
	return out
}

func isNil(e ast.Expr) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == "nil"
}

// eventType is "Warning" or "Normal" when e spells one, else "".
func eventType(e ast.Expr) string {
	name := ""
	switch x := e.(type) {
	case *ast.SelectorExpr:
		name = x.Sel.Name
	case *ast.Ident:
		name = x.Name
	case *ast.BasicLit:
		s, _ := strconv.Unquote(x.Value)
		if s == "Warning" || s == "Normal" {
			return s
		}
		return ""
	}
	switch name {
	case "EventTypeWarning", "WarningEvent":
		return "Warning"
	case "EventTypeNormal", "NormalEvent":
		return "Normal"
	}
	return ""
}

func statusLevel(code string) string {
	switch code {
	case "Unschedulable", "UnschedulableAndUnresolvable", "Error":
		return "error"
	case "Wait", "Pending":
		return "warning"
	}
	return "info"
}

// merger merges the sites of every release into entries.
type merger struct {
	byKey map[string]*merged
	drops map[string]int
}

type merged struct {
	e        *catalog.Entry
	firstOrd []int // version sort key of First
	lastOrd  []int
	stages   map[string]bool
	lastRel  string
	releases map[string]bool
}

func newMerger() *merger { return &merger{byKey: map[string]*merged{}, drops: map[string]int{}} }

var kindRank = map[string]int{"event": 0, "status": 1, "error": 2, "log": 3, "message": 4, "reason": 5}

func (m *merger) add(mod, rel string, sites []site) {
	ord := versionKey(rel)
	// Sites of this release, grouped by entry, so the last release's sites replace the
	// earlier ones' location and stage.
	seen := map[string]bool{}
	for _, s := range sites {
		if why := dropReason(s); why != "" {
			m.drops[why]++
			continue
		}
		k := s.component + "\x00" + s.template
		g, ok := m.byKey[k]
		if !ok {
			g = &merged{e: &catalog.Entry{ID: entryID(s.component, s.template), Component: s.component, Template: s.template},
				firstOrd: ord, lastOrd: ord, stages: map[string]bool{}, releases: map[string]bool{}}
			g.e.First, g.e.Last = rel, rel
			m.byKey[k] = g
		}
		g.releases[rel] = true
		if less(ord, g.firstOrd) {
			g.firstOrd, g.e.First = ord, rel
		}
		newest := !less(ord, g.lastOrd)
		if newest {
			g.lastOrd, g.e.Last = ord, rel
		}
		if !newest {
			continue
		}
		if g.lastRel != rel || !seen[k] {
			// first site of this entry in a newer release: it describes the entry
			if g.lastRel != rel {
				g.stages = map[string]bool{}
				g.e.Sites = 0
			}
			g.lastRel = rel
		}
		seen[k] = true
		g.e.Sites++
		stage := stageFor(s)
		g.stages[stage] = true
		if g.e.Sites == 1 || kindRank[s.kind] < kindRank[g.e.Kind] {
			g.e.Module, g.e.Package, g.e.Function, g.e.File, g.e.Line = mod, s.pkg, s.function, s.file, s.line
			g.e.Kind, g.e.Plain, g.e.Keys = s.kind, s.plain, s.keys
			g.e.Reason = s.reason
			g.e.Level = levelFor(s)
			if s.curated {
				g.e.Source = "curated"
			}
		}
	}
}

func (m *merger) entries() []*catalog.Entry {
	var out []*catalog.Entry
	ids := map[string]string{}
	for _, g := range m.byKey {
		e := g.e
		e.Releases = len(g.releases)
		e.Stage = oneStage(g.stages)
		if e.Kind != "reason" && generic(e.Template, e.Plain) {
			e.Stage = ""
		}
		if s, ok := templateStage(e.Component, e.Template); ok {
			e.Stage = s
		}
		e.Class = classFor(e)
		if benign(e.Component, e.Template) {
			e.Class = "info"
		}
		if other, dup := ids[e.ID]; dup {
			panic("catalog gen: id collision " + e.ID + " " + other + " / " + e.Template)
		}
		ids[e.ID] = e.Template
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

func (m *merger) dropSummary() string {
	var ks []string
	for k, n := range m.drops {
		ks = append(ks, fmt.Sprintf("%s %d", k, n))
	}
	sort.Strings(ks)
	return strings.Join(ks, ", ")
}

// oneStage is the stage all sites agree on; "" when they do not.
func oneStage(stages map[string]bool) string {
	var nonEmpty []string
	for s := range stages {
		if s != "" {
			nonEmpty = append(nonEmpty, s)
		}
	}
	if len(nonEmpty) == 1 {
		return nonEmpty[0]
	}
	return ""
}

// entryID is the component's short name and a hash of component and template.
func entryID(component, template string) string {
	h := sha256.Sum256([]byte(component + "\x00" + template))
	return component + "/" + hex.EncodeToString(h[:5])
}

// dropReason says why a site is not worth an entry: too little literal text to match.
func dropReason(s site) string {
	lit := literalText(s.template, s.plain)
	if s.kind == "reason" {
		return ""
	}
	if len(s.template) > 600 {
		return "too-long"
	}
	letters, run, best, words := 0, 0, 0, 0
	for _, c := range lit {
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' {
			letters++
			run++
			best = max(best, run)
			if run == 1 {
				words++
			}
		} else {
			run = 0
		}
	}
	if letters < 8 || best < 4 {
		return "too-little-text"
	}
	// One word matches too much text to say anything, unless it is a CamelCase reason or
	// error name (ImagePullBackOff); two short words printed as they are too, unless the Go
	// standard library prints them (connection refused, no such host). Words around verbs
	// ("%s probe failed: %s") keep their structure and stay.
	if words == 1 && !isReasonWord(strings.TrimSpace(lit)) {
		return "one-word"
	}
	if words == 2 && letters < 12 && s.component != "go" && (s.plain || !strings.Contains(s.template, "%")) {
		return "two-short-words"
	}
	if s.kind == "message" && !strings.Contains(strings.TrimSpace(lit), " ") {
		return "message-one-word"
	}
	// A few words any program prints, with at most one verb ("not supported", "%s is not
	// allowed", "validation error: %s", "Response Headers:"), recognize other components'
	// lines, not this one's.
	if s.component != "go" && words <= 3 && commonWordsOnly(lit) && verbs(s) <= 1 {
		return "common-words"
	}
	return ""
}

// commonWords are words every component's errors use; a template made of them alone says
// nothing about who printed it.
var commonWords = map[string]bool{"not": true, "is": true, "are": true, "was": true, "be": true, "supported": true,
	"allowed": true, "response": true, "request": true, "headers": true, "error": true, "errors": true,
	"failed": true, "failure": true, "invalid": true, "unknown": true, "found": true, "denied": true,
	"validation": true, "value": true, "the": true, "a": true, "an": true, "no": true, "of": true, "for": true,
	"in": true, "to": true, "on": true}

// verbs counts the format verbs of a template: several verbs give even common words a
// structure of their own (`%s %q is invalid: %v`).
func verbs(s site) int {
	if s.plain {
		return 0
	}
	return strings.Count(s.template, "%") - 2*strings.Count(s.template, "%%")
}

func commonWordsOnly(lit string) bool {
	n := 0
	for _, w := range strings.FieldsFunc(strings.ToLower(lit), func(r rune) bool { return r < 'a' || r > 'z' }) {
		if !commonWords[w] {
			return false
		}
		n++
	}
	return n > 0
}

// generic reports whether a template is a few words any component could print ("not
// found", "permission denied"): such an entry names no stage by itself.
func generic(t string, plain bool) bool {
	if !plain && strings.Contains(t, "%") {
		return false
	}
	lit := strings.TrimSpace(literalText(t, plain))
	return len(strings.Fields(lit)) <= 3 && len(lit) < 24 && !isReasonWord(lit)
}

// literalText is the template without its verbs.
func literalText(t string, plain bool) string {
	if plain {
		return t
	}
	var b strings.Builder
	for i := 0; i < len(t); i++ {
		if t[i] != '%' {
			b.WriteByte(t[i])
			continue
		}
		j := i + 1
		for j < len(t) && strings.IndexByte("+-# 0123456789.*[]", t[j]) >= 0 {
			j++
		}
		if j < len(t) && t[j] == '%' {
			b.WriteByte('%')
		}
		b.WriteByte(' ')
		i = j
	}
	return b.String()
}

// versionKey orders release labels such as v1.34.5, v2.1.6, v0.28.10.
func versionKey(v string) []int {
	v = strings.TrimPrefix(v, "v")
	var out []int
	for _, p := range strings.FieldsFunc(v, func(r rune) bool { return r == '.' || r == '-' }) {
		n, err := strconv.Atoi(p)
		if err != nil {
			break
		}
		out = append(out, n)
	}
	return out
}

func less(a, b []int) bool {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return len(a) < len(b)
}
