package redact

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"podflow.dev/podflow/bundle"
)

var update = flag.Bool("update", false, "rewrite golden files")

// corpusValue is the secret of one of gitleaks' true positives.
type corpusValue struct {
	rule, value string
	// alone is set when the rule recognizes the value standing on its own, without the
	// name or vendor next to it that the sample had (gitleaks finds it in any text).
	alone bool
}

// corpusValues extracts the distinct secrets of gitleaks' true positives with the
// converted rules themselves, so the corpus follows the generated gitleaks version.
func corpusValues(t *testing.T) []corpusValue {
	t.Helper()
	var out []corpusValue
	for i, r := range gitleaksRules {
		vd := &vendorDetector{rule: &gitleaksRules[i], keywords: keywords(r.keywords...)}
		vd.compile()
		seen := map[string]bool{}
		for _, tp := range gitleaksSamples[r.id].tps {
			for _, m := range vd.re.FindAllSubmatchIndex([]byte(tp), -1) {
				s, e := m[0], m[1]
				if r.secretGroup > 0 {
					s, e = m[2*r.secretGroup], m[2*r.secretGroup+1]
				} else {
					for g := 1; 2*g < len(m); g++ {
						if m[2*g] >= 0 && m[2*g+1] > m[2*g] {
							s, e = m[2*g], m[2*g+1]
							break
						}
					}
				}
				val := strings.TrimSpace(tp[s:e])
				if len(val) < 8 || seen[val] {
					continue
				}
				seen[val] = true
				// As in gitleaks, a rule sees only text holding one of its keywords.
				alone := false
				for _, k := range r.keywords {
					alone = alone || strings.Contains(strings.ToLower(val), k)
				}
				alone = alone && len(vd.spans([]byte(val))) > 0
				out = append(out, corpusValue{rule: r.id, value: val, alone: alone})
			}
		}
	}
	return out
}

// credentialNameFor names an env var after the rule's vendor, as a user would:
// github-pat's value as GITHUB_KEY.
func credentialNameFor(rule string) string {
	w, _, _ := strings.Cut(rule, "-")
	return strings.ToUpper(w) + "_KEY"
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// klogQuote quotes s as klog prints a string value.
func klogQuote(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	return `"` + r.Replace(s) + `"`
}

// corpusPlace plants a value into one place of a bundle: the file and its contents,
// and the forms in which the value would show in that file if it leaked.
type corpusPlace struct {
	name  string
	plant func(v corpusValue) (file, data string)
	// named is set when the value stands under a credential-like name.
	named bool
}

var corpusPlaces = []corpusPlace{
	{name: "pod env, neutral name", plant: func(v corpusValue) (string, string) {
		return "cluster-resources/pods/shop.json", `{"kind":"PodList","items":[{"metadata":{"name":"web-0","namespace":"shop"},"spec":{"containers":[{"name":"app","env":[{"name":"UPSTREAM_REF","value":` + jsonString(v.value) + `}]}]}}]}`
	}},
	{name: "pod env, credential name", named: true, plant: func(v corpusValue) (string, string) {
		return "cluster-resources/pods/shop.json", `{"kind":"PodList","items":[{"metadata":{"name":"web-0","namespace":"shop"},"spec":{"containers":[{"name":"app","env":[{"name":"` + credentialNameFor(v.rule) + `","value":` + jsonString(v.value) + `}]}]}}]}`
	}},
	{name: "container log line", plant: func(v corpusValue) (string, string) {
		return "cluster-resources/pods/logs/shop/web-0/app.log", "2026-11-29T10:00:00.000000Z INFO connected upstream " + v.value + " in 12ms\n"
	}},
	{name: "JSON log line", plant: func(v corpusValue) (string, string) {
		return "cluster-resources/pods/logs/shop/web-0/app.log", `{"level":"info","ts":"2026-11-29T10:00:00Z","msg":"connected upstream","ref":` + jsonString(v.value) + `}` + "\n"
	}},
	{name: "kubelet journal line", plant: func(v corpusValue) (string, string) {
		return "nodes/node-1/kubelet.log", `Nov 29 10:00:00 node-1 kubelet[1234]: I1129 10:00:00.000000    1234 kuberuntime_manager.go:1062] "Probe output" pod="shop/web-0" output=` + klogQuote(v.value) + "\n"
	}},
	{name: "ConfigMap value", plant: func(v corpusValue) (string, string) {
		return "cluster-resources/configmaps/shop.json", `{"kind":"ConfigMapList","items":[{"metadata":{"name":"app","namespace":"shop"},"data":{"upstream":` + jsonString(v.value) + `}}]}`
	}},
}

// leaked reports whether out still shows the value, in any form its file writes it.
func leaked(out, v string) bool {
	j := jsonString(v)
	return strings.Contains(out, v) || strings.Contains(out, j[1:len(j)-1]) || strings.Contains(out, klogQuote(v)[1:len(klogQuote(v))-1])
}

// TestGitleaksCorpus plants the secret of every gitleaks true positive in six places
// of a bundle. None may leak where the value is recognizable from itself or stands
// under a credential-like name.
func TestGitleaksCorpus(t *testing.T) {
	p := testPolicy(t)
	values := corpusValues(t)
	leaks := make([]int, len(corpusPlaces))
	expected := make([]int, len(corpusPlaces))
	alone := 0
	for _, v := range values {
		if v.alone {
			alone++
		}
		for i, pl := range corpusPlaces {
			file, data := pl.plant(v)
			out, err := p.Apply(file, []byte(data))
			if err != nil {
				t.Fatal(err)
			}
			if !leaked(string(out), v.value) {
				continue
			}
			leaks[i]++
			if v.alone || pl.named {
				t.Errorf("%s: %s value %q leaked:\n%s", pl.name, v.rule, v.value, out)
			} else {
				expected[i]++
			}
		}
	}
	t.Logf("%d values of %d rules, %d recognizable on their own", len(values), len(gitleaksRules), alone)
	total := 0
	for i, pl := range corpusPlaces {
		t.Logf("%-26s %4d of %d left (%d not recognizable without context)", pl.name, leaks[i], len(values), expected[i])
		total += leaks[i]
	}
	t.Logf("total %d of %d plants left", total, len(values)*len(corpusPlaces))
}

// TestGitleaksFalsePositives plants gitleaks' false positives in a log line and
// counts those masked by some other rule (the rule they belong to never masks them, see
// TestVendorRulesFollowGitleaks).
func TestGitleaksFalsePositives(t *testing.T) {
	p := testPolicy(t)
	n, masked := 0, map[string]int{}
	for _, r := range gitleaksRules {
		for _, fp := range gitleaksSamples[r.id].fps {
			n++
			c := counter{}
			out := string(splice([]byte(fp), p.textEdits([]byte(fp), -1, c)))
			if c[r.id] > 0 && !builtinRule(r.id) {
				t.Errorf("%s: own false positive masked: %q -> %q", r.id, fp, out)
			}
			for rule := range c {
				masked[rule]++
			}
		}
	}
	t.Logf("%d false positives; masked by other rules: %v", n, masked)
}

// builtinRule reports rule IDs podflow's own detectors use too: podflow masks a
// private key's header whatever its body, which gitleaks lists as a false positive.
func builtinRule(id string) bool {
	for _, d := range builtinDetectors {
		if d.rule == id {
			return true
		}
	}
	return false
}

// TestRecordedBundleMasks lists every mask the policy makes on the recorded bundles
// (file, line, rule), as a reviewed golden file: a change in what the detectors find
// on real evidence shows in its diff.
func TestRecordedBundleMasks(t *testing.T) {
	root := filepath.Join("..", "..", "testdata", "bundles")
	dirs, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	p := testPolicy(t)
	var lines []string
	kept := map[string]int{}
	for _, d := range dirs {
		if !d.IsDir() {
			continue
		}
		b, err := bundle.Open(filepath.Join(root, d.Name()), bundle.DefaultLimits())
		if err != nil {
			t.Fatalf("open %s: %v", d.Name(), err)
		}
		for _, h := range p.Scan(b) {
			lines = append(lines, fmt.Sprintf("%s/%s:%d: %s", d.Name(), h.File, h.Line, h.Rule))
		}
		for _, name := range b.Names() {
			data, err := b.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range maskPattern.FindAll(data, -1) {
				rule := strings.SplitN(string(m), ":", 3)[1]
				kept[rule]++
			}
		}
	}
	sort.Strings(lines)
	var rules []string
	for r, n := range kept {
		rules = append(rules, fmt.Sprintf("# %s: %d", r, n))
	}
	sort.Strings(rules)
	got := "# Masks the recorded bundles hold from collection, by rule:\n" + strings.Join(rules, "\n") +
		"\n# What the policy masks on top of them, by bundle, file, line and rule:\n" + strings.Join(lines, "\n") + "\n"
	golden := filepath.Join("testdata", "recorded-bundle-masks.golden")
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -update)", err)
	}
	if got != string(want) {
		t.Errorf("masks on recorded bundles changed; review and run go test -update:\n%s", lineDiff(string(want), got))
	}
}

// lineDiff lists lines only in want (-) or only in got (+).
func lineDiff(want, got string) string {
	w, g := map[string]bool{}, map[string]bool{}
	for _, l := range strings.Split(want, "\n") {
		w[l] = true
	}
	for _, l := range strings.Split(got, "\n") {
		g[l] = true
	}
	var b strings.Builder
	for _, l := range strings.Split(want, "\n") {
		if !g[l] {
			b.WriteString("- " + l + "\n")
		}
	}
	for _, l := range strings.Split(got, "\n") {
		if !w[l] {
			b.WriteString("+ " + l + "\n")
		}
	}
	return b.String()
}
