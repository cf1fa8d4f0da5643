package rules

import (
	"strings"
	"testing"

	"podflow.dev/podflow/analyze"
	"podflow.dev/podflow/catalog"
)

// loadSignatures are podflow's signatures; the test stops if they do not load.
func loadSignatures(t *testing.T) []*analyze.Signature {
	t.Helper()
	sigs, err := Signatures()
	if err != nil {
		t.Fatal(err)
	}
	return sigs
}

// loadCatalog is every Go rule and signature (Catalog(nil)).
func loadCatalog(t *testing.T) []*analyze.Rule {
	t.Helper()
	all, err := Catalog(nil)
	if err != nil {
		t.Fatal(err)
	}
	return all
}

func ruleTieOf(t *testing.T, line string) (rule, entry string, ok bool) {
	t.Helper()
	sigs, all := loadSignatures(t), loadCatalog(t)
	return analyze.RuleTieLine(all, sigs, line)
}

// Another release's wording of a call site whose message a Go rule reads fires the Go
// rule; the same function's message of another meaning does not.
func TestRuleTieOtherReleaseOfTheCallSite(t *testing.T) {
	// The 1.5 to 1.12 kubelet's own CNI call (dockershim addToNetwork) around libcni's
	// missing binary: sandbox-create-failed reads that inner message under containerd's
	// "failed to setup network for sandbox".
	add := fromTemplate(t, "kubelet/fb13ae1cbf", fromTemplate(t, "cni-plugins/a9cbad6411", "loopback", "[/opt/loopback/bin /opt/cni/bin]"))
	if r, e, ok := ruleTieOf(t, add); !ok || r != "sandbox-create-failed" {
		t.Errorf("%q ties to %q (entry %s), want sandbox-create-failed", add, r, e)
	}
	// Its teardown of the same network is no failure to create a sandbox.
	del := fromTemplate(t, "kubelet/148d99f78d", fromTemplate(t, "cni-plugins/a9cbad6411", "loopback", "[/opt/cni/bin]"))
	if r, _, ok := ruleTieOf(t, del); ok {
		t.Errorf("%q ties to %s: tearing a network down does not fail a sandbox's creation", del, r)
	}

	// An inner message a rule ties under wrappers no component on the path prints says
	// nothing of which step failed.
	if r, _, ok := ruleTieOf(t, "the frobnicator gave up: "+fromTemplate(t, "kubelet/257fc0d1cb")); ok {
		t.Errorf("an unknown wrapper around the kubelet's cni config message ties to %s", r)
	}

	// The 1.6 scheduler's summary names the inter-pod affinity predicates by reason (the
	// companion signature's pattern knows "MatchInterPodAffinity (N)" in it, not this one).
	old := fromTemplate(t, "kube-scheduler/22ce096b11", "ExistingPodsAntiAffinityRulesNotMatch (3)")
	if r, e, ok := ruleTieOf(t, old); !ok || r != "scheduling-affinity-unsatisfiable" {
		t.Errorf("%q ties to %q (entry %s), want scheduling-affinity-unsatisfiable", old, r, e)
	}
	// Another predicate of the same summary is not the rule's, nor is the summary that
	// wraps a refusal another rule knows.
	for _, line := range []string{
		fromTemplate(t, "kube-scheduler/22ce096b11", "CheckServiceAffinity (3)"),
		fromTemplate(t, "kube-scheduler/22ce096b11", "NoDiskConflict (3)"),
	} {
		if r, _, ok := ruleTieOf(t, line); ok && r == "scheduling-affinity-unsatisfiable" || ok && r == "scheduling-host-port-conflict" {
			t.Errorf("%q ties to %s through the summary or another predicate", line, r)
		}
	}
}

// A tie is the rule's finding: its stage, its title with the line's values, its fix and
// its commands, above the floor's bare catalog finding.
func TestRuleTieMakesTheRulesFinding(t *testing.T) {
	line := "E0714 15:23:23.974280   16573 cni.go:257] " +
		fromTemplate(t, "kubelet/fb13ae1cbf", fromTemplate(t, "cni-plugins/a9cbad6411", "loopback", "[/opt/loopback/bin /opt/cni/bin]"))
	rs := roots(analyzePaste(t, map[string]string{"node.log": line + "\n"}))
	if len(rs) != 1 || rs[0].Rule != "sandbox-create-failed" {
		t.Fatalf("roots = %v, want one sandbox-create-failed", ruleIDs(rs))
	}
	f := rs[0]
	if f.Stage != analyze.StageSandbox || !strings.Contains(f.Cause, `"loopback"`) || !strings.Contains(f.Cause, "cni-plugins/a9cbad6411") {
		t.Errorf("stage %s, cause %q: want the sandbox stage, the plugin the line names and the entry that tied it", f.Stage, f.Cause)
	}
	if !strings.Contains(f.Remediation, "/opt/cni/bin") || len(f.Confirm) == 0 {
		t.Errorf("remediation %q, confirm %v: want the rule's fix and commands", f.Remediation, f.Confirm)
	}
	if len(f.Catalog) != 1 || f.Catalog[0].Layer != "rule" {
		t.Errorf("catalog = %+v, want the tied entry with layer rule", f.Catalog)
	}
}

// No catalog entry leads to two Go rules, and no entry a signature ties leads to a Go
// rule: a line ties one rule at most, by the stated precedence (docs/signatures.md).
func TestRuleTiesOneRuleAnEntry(t *testing.T) {
	sigs, all := loadSignatures(t), loadCatalog(t)
	entries, sites := analyze.RuleTies(all, sigs)
	sigEntries, _ := analyze.SignatureTies(sigs)
	bySig := map[string]string{}
	for s, es := range sigEntries {
		for _, e := range es {
			bySig[e] = s
		}
	}
	owner := map[string]string{}
	n := 0
	for r, es := range entries {
		for _, e := range es {
			n++
			if o, ok := owner[e]; ok {
				t.Errorf("catalog entry %s leads to %s and %s", e, o, r)
			}
			owner[e] = r
			if s, ok := bySig[e]; ok {
				if _, _, tied := analyze.RuleTieLine(all, sigs, catalog.Default().Lookup(e).Example()); tied {
					t.Errorf("catalog entry %s ties signature %s and rule %s", e, s, r)
				}
			}
		}
	}
	t.Logf("%d Go rules tie to call sites; %d catalog entries lead to one by their own example", len(sites), n)
	for _, r := range all {
		if r.Signature() == nil && len(sites[r.ID]) == 0 {
			t.Logf("no ties: %s", r.ID)
		}
	}
	if len(sites) < 20 || n < 30 {
		t.Errorf("%d rules tied, %d entries lead to one: fewer than 20 rules or 30 entries", len(sites), n)
	}
}

// A Go rule's own examples are read as its own: each firing example is one the rule's
// analysis of the message alone, or its tie, fires on, never a quiet one.
func TestRuleExamplesFireTheRule(t *testing.T) {
	for _, r := range All() {
		for _, ex := range r.Examples.Fires {
			rs := roots(analyzePaste(t, map[string]string{"events.txt": ex + "\n"}))
			if len(rs) == 0 || rs[0].Rule != r.ID {
				t.Errorf("%s: firing example %q gives roots %v", r.ID, ex, ruleIDs(rs))
			}
		}
		for _, ex := range r.Examples.Quiet {
			for _, f := range analyzePaste(t, map[string]string{"events.txt": ex + "\n"}).Findings {
				if f.Rule == r.ID {
					t.Errorf("%s: quiet example %q fires it: %s", r.ID, ex, f.Cause)
				}
			}
		}
	}
}

// A tie at the image stage names the image the kubelet's pull wrapper printed when the
// registry's words name only a tag and a repository (containers/image's "Tag %s not
// found in repository %s", as CRI-O returns it).
func TestRuleTieNamesThePulledImage(t *testing.T) {
	events := "Events:\n  Type     Reason   Age  From               Message\n  ----     ------   ---- ----               -------\n" +
		"  Normal   Pulling  3m   kubelet, worker-2   pulling image \"example/tool:v9.1-custom\"\n" +
		"  Warning  Failed   2m   kubelet, worker-2   Failed to pull image \"example/tool:v9.1-custom\": rpc error: code = Unknown desc = Tag v9.1-custom not found in repository docker.io/example/tool\n"
	rs := catalogRoots(t, map[string]string{"describe.txt": events})
	if len(rs) != 1 || rs[0].Rule != "image-pull-not-found" || !strings.Contains(rs[0].Cause, "example/tool:v9.1-custom") {
		for _, f := range rs {
			t.Logf("root %s %s: %s", f.Stage, f.Rule, f.Cause)
		}
		t.Fatalf("want one image-pull-not-found root naming example/tool:v9.1-custom")
	}
}
