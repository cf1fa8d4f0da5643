package main

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"podflow.dev/podflow/index"
)

// TestFingerprintCorpus measures the index's "same cause" fingerprint on the incident
// corpus: every pair of incidents the corpus records with the same cause (rule) should
// share the fingerprint of their root findings, and no pair recorded with different
// causes may. The first is a rate reported and held to a floor; the second must be zero.
func TestFingerprintCorpus(t *testing.T) {
	cases, err := readCases(filepath.Join("..", "..", "testdata", "incidents"))
	if err != nil {
		t.Fatal(err)
	}
	catalog, err := selectRules(nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	type got struct {
		want string
		key  index.Key
	}
	var gs []got
	for _, c := range cases {
		r := runCase(c, catalog)
		if r.Err != nil || r.Root == nil || r.Root.Rule != reportedRule(catalog, c.Rule) {
			continue // a misdiagnosis is TestIncidents' failure, not the fingerprint's
		}
		// A case labelled with a signature of a rule (a failure the rule's other
		// signatures do not say) shares its cause only with that signature's cases.
		gs = append(gs, got{c.Rule, index.FindingKey(r.Root)})
	}
	var samePairs, sameShared, diffPairs, diffShared, classOnlyDiff int
	var splits []string
	for i := range gs {
		for j := i + 1; j < len(gs); j++ {
			a, b := gs[i], gs[j]
			if a.want == b.want {
				samePairs++
				if a.key.Fingerprint == b.key.Fingerprint {
					sameShared++
				}
				continue
			}
			diffPairs++
			if a.key.Fingerprint == b.key.Fingerprint {
				diffShared++
				t.Errorf("different causes share fingerprint %s: %s and %s (%q)", a.key.Fingerprint, a.want, b.want, a.key.Template)
			}
			if a.key.Class == b.key.Class {
				classOnlyDiff++
			}
		}
	}
	groups := map[string]map[string]int{}
	shown := map[string]string{}
	for _, g := range gs {
		if groups[g.want] == nil {
			groups[g.want] = map[string]int{}
		}
		groups[g.want][g.key.Fingerprint]++
		if shown[g.key.Fingerprint] == "" {
			shown[g.key.Fingerprint] = g.key.Template
		}
	}
	causes := 0
	for rule, ts := range groups {
		causes++
		if len(ts) > 1 {
			var l []string
			for t, n := range ts {
				l = append(l, fmt.Sprintf("%d× %s %q", n, t, shown[t]))
			}
			sort.Strings(l)
			splits = append(splits, rule+":\n      "+strings.Join(l, "\n      "))
		}
	}
	sort.Strings(splits)
	rate := 1.0
	if samePairs > 0 {
		rate = float64(sameShared) / float64(samePairs)
	}
	t.Logf("fingerprint %s on %d diagnosed incidents, %d causes: same-cause pairs sharing it %d/%d (%.1f%%); different-cause pairs sharing it %d/%d (class alone: %d)",
		index.FingerprintVersion, len(gs), causes, sameShared, samePairs, 100*rate, diffShared, diffPairs, classOnlyDiff)
	if testing.Verbose() {
		t.Logf("causes whose incidents split into several fingerprints (fingerprint, then one template):\n  %s", strings.Join(splits, "\n  "))
	}
	if len(gs) < minIncidents*9/10 {
		t.Errorf("only %d incidents diagnosed, the measure needs the corpus", len(gs))
	}
	if rate < minSameCauseShared {
		t.Errorf("same-cause pairs share the fingerprint at %.1f%%, want at least %.0f%%", 100*rate, 100*minSameCauseShared)
	}
}

// minSameCauseShared is the floor for the share of same-cause incident pairs whose
// fingerprints agree, set a little under what v2 measures (93.5% of 474 pairs of 335
// incidents; v1, keyed on the cause sentence alone, measured 62.2% on the same corpus).
const minSameCauseShared = 0.90
