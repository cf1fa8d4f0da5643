package main

// extractProgram calls every rule function of gitleaks' default configuration and
// prints the rules, the global allowlists and the recorded samples as JSON. The rule
// calls replace the RULES line.
const extractProgram = `package main

import (
	"encoding/json"
	"os"
	"sort"

	"github.com/zricethezav/gitleaks/v8/cmd/generate/config/base"
	"github.com/zricethezav/gitleaks/v8/cmd/generate/config/rules"
	"github.com/zricethezav/gitleaks/v8/cmd/generate/config/utils"
	"github.com/zricethezav/gitleaks/v8/config"
)

type allowlist struct {
	Condition   string   ` + "`json:\"condition\"`" + `
	RegexTarget string   ` + "`json:\"regexTarget\"`" + `
	Regexes     []string ` + "`json:\"regexes\"`" + `
	StopWords   []string ` + "`json:\"stopWords\"`" + `
	Paths       []string ` + "`json:\"paths\"`" + `
	Commits     int      ` + "`json:\"commits\"`" + `
}

type rule struct {
	ID          string      ` + "`json:\"id\"`" + `
	Regex       string      ` + "`json:\"regex\"`" + `
	Path        string      ` + "`json:\"path\"`" + `
	SecretGroup int         ` + "`json:\"secretGroup\"`" + `
	Entropy     float64     ` + "`json:\"entropy\"`" + `
	Keywords    []string    ` + "`json:\"keywords\"`" + `
	Allowlists  []allowlist ` + "`json:\"allowlists\"`" + `
	Required    int         ` + "`json:\"required\"`" + `
	TPs         []string    ` + "`json:\"tps\"`" + `
	FPs         []string    ` + "`json:\"fps\"`" + `
}

func allowlists(as []*config.Allowlist) []allowlist {
	var out []allowlist
	for _, a := range as {
		if a == nil {
			continue
		}
		o := allowlist{Condition: a.MatchCondition.String(), RegexTarget: a.RegexTarget, StopWords: a.StopWords, Commits: len(a.Commits)}
		for _, re := range a.Regexes {
			o.Regexes = append(o.Regexes, re.String())
		}
		for _, re := range a.Paths {
			o.Paths = append(o.Paths, re.String())
		}
		sort.Strings(o.StopWords)
		out = append(out, o)
	}
	return out
}

func main() {
	list := []*config.Rule{
		// RULES
	}
	var out struct {
		Global []allowlist ` + "`json:\"global\"`" + `
		Rules  []rule      ` + "`json:\"rules\"`" + `
	}
	out.Global = allowlists(base.CreateGlobalConfig().Allowlists)
	for _, r := range list {
		o := rule{ID: r.RuleID, SecretGroup: r.SecretGroup, Entropy: r.Entropy, Keywords: r.Keywords,
			Allowlists: allowlists(r.Allowlists), Required: len(r.RequiredRules)}
		if r.Regex != nil {
			o.Regex = r.Regex.String()
		}
		if r.Path != nil {
			o.Path = r.Path.String()
		}
		s := utils.Samples[r.RuleID]
		o.TPs, o.FPs = s.TPs, s.FPs
		out.Rules = append(out.Rules, o)
	}
	enc := json.NewEncoder(os.Stdout)
	if err := enc.Encode(out); err != nil {
		panic(err)
	}
}
`

// recordingValidate replaces gitleaks' cmd/generate/config/utils/validate.go: it keeps
// each rule's samples instead of checking them (gitleaks' own tests check them).
const recordingValidate = `package utils

import (
	"sort"

	"github.com/zricethezav/gitleaks/v8/config"
)

// Sample holds the true and false positives of one rule.
type Sample struct{ TPs, FPs []string }

// Samples are the samples recorded by rule ID.
var Samples = map[string]Sample{}

func Validate(rule config.Rule, truePositives []string, falsePositives []string) *config.Rule {
	s := Samples[rule.RuleID]
	s.TPs = append(s.TPs, truePositives...)
	s.FPs = append(s.FPs, falsePositives...)
	// Some samples come from a map: sorted, the generated file is reproducible.
	sort.Strings(s.TPs)
	sort.Strings(s.FPs)
	Samples[rule.RuleID] = s
	return &rule
}

func ValidateWithPaths(rule config.Rule, truePositives map[string]string, falsePositives map[string]string) *config.Rule {
	values := func(m map[string]string) []string {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		out := make([]string, len(keys))
		for i, k := range keys {
			out[i] = m[k]
		}
		return out
	}
	return Validate(rule, values(truePositives), values(falsePositives))
}
`

// seededSecrets replaces gitleaks' cmd/generate/secrets/regen.go: the same pattern
// always yields the same sample secret.
const seededSecrets = `package secrets

import (
	"hash/fnv"

	"github.com/lucasjones/reggen"
)

func NewSecret(regex string) string {
	g, err := reggen.NewGenerator(regex)
	if err != nil {
		panic(err)
	}
	h := fnv.New64a()
	h.Write([]byte(regex))
	g.SetSeed(int64(h.Sum64() >> 1))
	return g.Generate(1)
}
`
