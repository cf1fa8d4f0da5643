package rules

import (
	"embed"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"podflow.dev/podflow/analyze"
	"podflow.dev/podflow/bundle"
)

// builtinSignatures are podflow's own signatures, one file per stage, in chain order.
//
//go:embed signatures
var builtinSignatures embed.FS

var (
	builtinOnce sync.Once
	builtinSigs []*analyze.Signature
	builtinErr  error

	parseOnce  sync.Once
	parsedSigs []*analyze.Signature
	parsedErr  error
)

// Signatures returns podflow's built-in signatures, in chain order (by stage, then as
// listed in each file). They are checked by the tests, so an error here is a bug.
func Signatures() ([]*analyze.Signature, error) {
	builtinOnce.Do(func() {
		builtinSigs, builtinErr = builtinSignatureList()
		if builtinErr == nil {
			builtinErr = analyze.CheckSignatureSet(builtinSigs, All())
		}
	})
	return builtinSigs, builtinErr
}

// builtinSignatureList parses the built-in signatures without checking them against the
// rules, for rules that read their knowledge (Signatures depends on every rule).
func builtinSignatureList() ([]*analyze.Signature, error) {
	parseOnce.Do(func() {
		entries, err := fs.ReadDir(builtinSignatures, "signatures")
		if err != nil {
			parsedErr = err
			return
		}
		var files []string
		for _, e := range entries {
			if strings.HasSuffix(e.Name(), ".yaml") {
				files = append(files, e.Name())
			}
		}
		// image.yaml, image-rules.yaml: a file's stage is its name up to the first dash.
		order := func(name string) int {
			stage, _, _ := strings.Cut(strings.TrimSuffix(name, ".yaml"), "-")
			return analyze.Stage(stage).Order()
		}
		slices.SortStableFunc(files, func(a, b string) int {
			if oa, ob := order(a), order(b); oa != ob {
				return oa - ob
			}
			return strings.Compare(a, b)
		})
		for _, name := range files {
			data, err := builtinSignatures.ReadFile(path.Join("signatures", name))
			if err != nil {
				parsedErr = err
				return
			}
			sigs, err := analyze.ParseSignatures(path.Join("rules/signatures", name), data)
			if err != nil {
				parsedErr = err
				return
			}
			parsedSigs = append(parsedSigs, sigs...)
		}
	})
	return parsedSigs, parsedErr
}

// LoadSignatures reads user signatures from files or directories (every *.yaml and
// *.yml in a directory, sorted) and checks them against the built-in rules and
// signatures. Errors name the file, line and field.
func LoadSignatures(paths []string) ([]*analyze.Signature, error) {
	builtin, err := Signatures()
	if err != nil {
		return nil, err
	}
	var out []*analyze.Signature
	cost := 0
	for _, p := range paths {
		files, err := signatureFiles(p)
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			// A file named on the command line may be a link; one found in a folder
			// may not. Either way only a regular file within the cap is read.
			data, err := bundle.ReadRegular(f, analyze.MaxSignatureFileBytes, f == p)
			if err != nil {
				return nil, fmt.Errorf("read signatures: %w", err)
			}
			sigs, err := analyze.ParseSignatures(f, data)
			if err != nil {
				return nil, err
			}
			for _, s := range sigs {
				cost += s.Cost()
			}
			if cost > analyze.MaxSignaturesCost {
				return nil, fmt.Errorf("read signatures: %s: the signatures read so far compile to %d instructions, more than the %d an analysis tries on every line; keep fewer or simpler patterns", f, cost, analyze.MaxSignaturesCost)
			}
			out = append(out, sigs...)
		}
	}
	if err := analyze.CheckSignatureSet(append(slices.Clone(builtin), out...), All()); err != nil {
		return nil, err
	}
	return out, nil
}

func signatureFiles(p string) ([]string, error) {
	st, err := os.Stat(p)
	if err != nil {
		return nil, fmt.Errorf("read signatures: %w", err)
	}
	if !st.IsDir() {
		return []string{p}, nil
	}
	var files []string
	err = filepath.WalkDir(p, func(f string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && (strings.HasSuffix(f, ".yaml") || strings.HasSuffix(f, ".yml")) {
			files = append(files, f)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read signatures in %s: %w", p, err)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("read signatures: %s holds no .yaml file", p)
	}
	slices.Sort(files)
	return files, nil
}

// SignatureByID returns the built-in signature with the ID, or nil.
func SignatureByID(id string) *analyze.Signature {
	sigs, _ := Signatures()
	for _, s := range sigs {
		if s.ID == id {
			return s
		}
	}
	return nil
}

// Catalog is every rule and then every built-in signature as a rule, plus the user
// signatures given: what analyze runs.
func Catalog(user []*analyze.Signature) ([]*analyze.Rule, error) {
	sigs, err := Signatures()
	if err != nil {
		return nil, err
	}
	out := All()
	goRules := map[string]*analyze.Rule{}
	for _, r := range out {
		goRules[r.ID] = r
	}
	for _, s := range append(slices.Clone(sigs), user...) {
		r := s.Rule()
		// A signature that is a rule's message knowledge reports what that rule reports:
		// a workload's outcome (a rollout past its deadline) stays an outcome, explained by
		// its pods' own trouble, whether it was read from an object or from a paste.
		if gr := goRules[s.ForRule]; gr != nil {
			r.Outcome = gr.Outcome
		}
		out = append(out, r)
	}
	return out, nil
}
