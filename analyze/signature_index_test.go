package analyze

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"podflow.dev/podflow/bundle"
)

// builtinSignatures reads podflow's own signature files.
func builtinSignatures(t *testing.T) []*Signature {
	t.Helper()
	files, err := filepath.Glob("../rules/signatures/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no signature files: %v", err)
	}
	var sigs []*Signature
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		s, err := ParseSignatures(f, data)
		if err != nil {
			t.Fatal(err)
		}
		sigs = append(sigs, s...)
	}
	return sigs
}

func loadRecorded(t *testing.T, dir string) *Graph {
	t.Helper()
	return loadRecordedWith(t, dir, LoadOptions{})
}

// loadRecordedWith loads the recorded bundle in dir with opts.
func loadRecordedWith(t *testing.T, dir string, opts LoadOptions) *Graph {
	t.Helper()
	b, err := bundle.Open(dir, bundle.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	return loadBundleWith(t, b, opts)
}

// loadBundleWith loads b with opts.
func loadBundleWith(t *testing.T, b *bundle.Bundle, opts LoadOptions) *Graph {
	t.Helper()
	g, err := LoadWith(context.Background(), []*bundle.Bundle{b}, nil, opts)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// The index only narrows which lines each signature is tried on: recorded bundles give
// the same findings of every built-in signature with it as without it. A third of the
// bundles, each failing its own way, keep the test short; the incident corpus and the
// goldens run every bundle with the index.
func TestSignatureIndexChangesNoFinding(t *testing.T) {
	sigs := builtinSignatures(t)
	dirs, _ := filepath.Glob("../testdata/bundles/*")
	if len(dirs) < 10 {
		t.Fatalf("only %d recorded bundles", len(dirs))
	}
	indexed, found := 0, 0
	for i, dir := range dirs {
		if i%3 != 0 {
			continue
		}
		g := loadRecorded(t, dir)
		wants := make([][]*Finding, len(sigs))
		for i, s := range sigs {
			wants[i], _ = runRule(g, s.Rule())
		}
		g.indexSignatures(sigs, true)
		for i, s := range sigs {
			want := wants[i]
			got, _ := runRule(g, s.Rule())
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s: signature %s: %d findings with the index, %d without", filepath.Base(dir), s.ID, len(got), len(want))
			}
			if _, ok := g.signatureLines(s); ok {
				indexed++
			}
			found += len(want)
		}
	}
	if indexed == 0 || found == 0 {
		t.Fatalf("nothing compared: %d signatures indexed, %d findings", indexed, found)
	}
}

// Every line a signature's literal is in (as literal.in decides, case folded or not,
// ASCII or not) is found by the automaton.
func FuzzLiteralSetFindsEveryLiteral(f *testing.F) {
	for _, seed := range []string{
		"Failed to pull image \"x\": rpc error",
		"FAILED QUOTA: compute-resources",
		"failed quota: \u212Aelvin", // Kelvin sign: lower case is "k"
		"Back-off pulling image \"İstanbul\"",
		"0/3 nodes are available: 3 Insufficient cpu.",
		"",
	} {
		f.Add(seed)
	}
	sigs := []*Signature{}
	for _, p := range []string{`Failed to pull image "(?P<image>[^"]+)"`, `(?i)failed quota: (?P<q>\S+)`,
		`(?i)kelvin`, `(?i)pulling image "i̇stanbul"`, `nodes are available: (?P<n>\d+) Insufficient`, `(?i)cannot determine`} {
		s := &Signature{ID: "t"}
		s.res = append(s.res, nil)
		s.lits = append(s.lits, requiredLiteral(p))
		sigs = append(sigs, s)
	}
	// The NFA and the DFA made from it must both find every literal (dfaMinText).
	sets := []*literalSet{newLiteralSet(sigs, false, true), newLiteralSet(sigs, true, true)}
	f.Fuzz(func(t *testing.T, text string) {
		for _, set := range sets {
			hit := map[int]bool{}
			set.scan(text, func(si int) { hit[si] = true })
			for si, s := range sigs {
				if s.lits[0].in(text) && !hit[si] {
					t.Errorf("literal %+v is in %q but was not found", s.lits[0], text)
				}
			}
			// Also inside a longer text, as the reason-prefixed form of a line is.
			long := "Reason: " + strings.Repeat(text, 2)
			hit = map[int]bool{}
			set.scan(long, func(si int) { hit[si] = true })
			for si, s := range sigs {
				if s.lits[0].in(long) && !hit[si] {
					t.Errorf("literal %+v is in %q but was not found", s.lits[0], long)
				}
			}
		}
	})
}

// An analysis that runs alone in its process (the CLI's analyze) does not keep the
// automaton of its signatures' literals once it has indexed the lines with it: at 20k
// pods the DFA is 8 MB, held while the rules run, when the process's memory peaks. Any
// other analysis keeps it for the next one, and both find the same.
func TestAnAnalysisAloneKeepsNoAutomaton(t *testing.T) {
	// A literal of this test's own, so that no other test's analysis built the set.
	sig := strings.ReplaceAll(templateSig, "429 Too Many Requests", "429 Too Many Requests alone-automaton-test")
	sig = strings.ReplaceAll(sig, "toomanyrequests", "toomanyrequests-alone-automaton-test")
	sigs, err := ParseSignatures("t.yaml", []byte(sig))
	if err != nil {
		t.Fatal(err)
	}
	kept := func() bool {
		automata.Lock()
		defer automata.Unlock()
		for key := range automata.m {
			if strings.Contains(key, "alone-automaton-test") {
				return true
			}
		}
		return false
	}
	mem := memGraphFiles(map[string]string{
		"cluster-resources/events/shop.json": `{"kind":"EventList","items":[{"metadata":{"name":"e1","namespace":"shop"},` +
			`"involvedObject":{"kind":"Pod","namespace":"shop","name":"web-1"},"reason":"Failed","type":"Warning",` +
			`"message":"Failed to pull image \"app:1\": 429 Too Many Requests alone-automaton-test","count":1,` +
			`"lastTimestamp":"2026-11-29T10:00:00Z"}]}`,
	})
	run := func(alone bool) []*Finding {
		g := Load([]*bundle.Bundle{mem(t)}, nil)
		r := Run(g, []*Rule{sigs[0].Rule()}, Options{Alone: alone, LastRun: alone})
		return r.Findings
	}
	alone := run(true)
	if kept() {
		t.Fatal("an analysis alone kept its automaton")
	}
	if len(alone) != 1 {
		t.Fatalf("an analysis alone found %d findings, want 1", len(alone))
	}
	shared := run(false)
	if !kept() {
		t.Fatal("an analysis not alone did not keep its automaton for the next")
	}
	if !reflect.DeepEqual(alone, shared) {
		t.Error("an analysis alone found other findings than one that keeps its automaton")
	}
}

// memGraphFiles is a bundle of files in memory, made for each caller.
func memGraphFiles(files map[string]string) func(t *testing.T) *bundle.Bundle {
	return func(t *testing.T) *bundle.Bundle {
		raw := map[string][]byte{}
		for name, s := range files {
			raw[name] = []byte(s)
		}
		b, err := bundle.New("mem", raw)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
}

// Lines scanned joined in chunks find, per signature, exactly the lines each scanned
// on its own finds: no literal spans two lines, none is lost at a chunk's edge, and a
// line beyond ASCII is still read in lower case.
func TestJoinedScanFindsWhatEachLineFinds(t *testing.T) {
	sigs := builtinSignatures(t)
	var indexable []*Signature
	for _, s := range sigs {
		if s.indexable() {
			indexable = append(indexable, s)
		}
	}
	seeds := []string{
		"Failed to pull image \"x\": rpc error", "FAILED QUOTA: compute-resources", "failed quota: \u212Aelvin",
		"Back-off pulling image \"İstanbul\"", "0/3 nodes are available: 3 Insufficient cpu.", "", "no space left on device",
		"OOMKilled", "x509: certificate signed by unknown authority", "permission denied", "Readiness probe failed",
	}
	var lines []Line
	for i := 0; len(lines) < 30000; i++ {
		// Halves of seeds side by side, so that a literal could only be found across
		// two lines if the scan let it.
		a, b := seeds[i%len(seeds)], seeds[(i*7+3)%len(seeds)]
		lines = append(lines, Line{Text: a[len(a)/2:] + strings.Repeat(" ", i%3)}, Line{Text: b[:len(b)/2]}, Line{Text: a + " " + b})
	}
	for _, dfa := range []bool{false, true} {
		set := newLiteralSet(indexable, dfa, true)
		if !set.joinable {
			t.Fatal("the built-in signatures' literals are not joinable")
		}
		joined := set.findIn(lines, 0, len(lines))
		set.joinable = false
		alone := set.findIn(lines, 0, len(lines))
		if !reflect.DeepEqual(joined, alone) {
			t.Errorf("dfa=%v: joined scan found other lines than each line alone", dfa)
		}
		n := 0
		for _, f := range alone {
			n += len(f)
		}
		if n == 0 {
			t.Errorf("dfa=%v: no literal found", dfa)
		}
	}
}
