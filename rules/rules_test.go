package rules

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"podflow.dev/podflow/analyze"
	"podflow.dev/podflow/bundle"
)

var update = flag.Bool("update", false, "rewrite the want.golden files from the current output")

func TestAdmissionLimitRangeViolated(t *testing.T)     { runGolden(t, AdmissionLimitRangeViolated) }
func TestAdmissionPodSecurity(t *testing.T)            { runGolden(t, AdmissionPodSecurity) }
func TestAdmissionPriorityClassMissing(t *testing.T)   { runGolden(t, AdmissionPriorityClassMissing) }
func TestAdmissionQuotaExceeded(t *testing.T)          { runGolden(t, AdmissionQuotaExceeded) }
func TestAdmissionQuotaResourcesRequired(t *testing.T) { runGolden(t, AdmissionQuotaResourcesRequired) }
func TestAdmissionServiceAccountMissing(t *testing.T)  { runGolden(t, AdmissionServiceAccountMissing) }
func TestAdmissionWebhookDenied(t *testing.T)          { runGolden(t, AdmissionWebhookDenied) }
func TestAdmissionWebhookUnreachable(t *testing.T)     { runGolden(t, AdmissionWebhookUnreachable) }
func TestConfigRunAsNonRoot(t *testing.T)              { runGolden(t, ConfigRunAsNonRoot) }
func TestConfigSecretKeyMissing(t *testing.T)          { runGolden(t, ConfigSecretKeyMissing) }
func TestControllerDaemonSetFailedPlacement(t *testing.T) {
	runGolden(t, ControllerDaemonSetFailedPlacement)
}
func TestControllerJobBackoffLimit(t *testing.T) { runGolden(t, ControllerJobBackoffLimit) }
func TestControllerProgressDeadlineExceeded(t *testing.T) {
	runGolden(t, ControllerProgressDeadlineExceeded)
}
func TestControllerReplicasZero(t *testing.T)          { runGolden(t, ControllerReplicasZero) }
func TestControllerRolloutStuck(t *testing.T)          { runGolden(t, ControllerRolloutStuck) }
func TestControllerStatefulSetStuck(t *testing.T)      { runGolden(t, ControllerStatefulSetStuck) }
func TestImageInvalidName(t *testing.T)                { runGolden(t, ImageInvalidName) }
func TestImageNeverPull(t *testing.T)                  { runGolden(t, ImageNeverPull) }
func TestImagePullDNS(t *testing.T)                    { runGolden(t, ImagePullDNS) }
func TestImagePullNotFound(t *testing.T)               { runGolden(t, ImagePullNotFound) }
func TestImagePullRateLimited(t *testing.T)            { runGolden(t, ImagePullRateLimited) }
func TestImagePullUnauthorized(t *testing.T)           { runGolden(t, ImagePullUnauthorized) }
func TestImagePullX509(t *testing.T)                   { runGolden(t, ImagePullX509) }
func TestNodeNotReady(t *testing.T)                    { runGolden(t, NodeNotReady) }
func TestNodePodEvicted(t *testing.T)                  { runGolden(t, NodePodEvicted) }
func TestProbeLivenessRestarts(t *testing.T)           { runGolden(t, ProbeLivenessRestarts) }
func TestProbeReadinessFailing(t *testing.T)           { runGolden(t, ProbeReadinessFailing) }
func TestProbeStartupFailing(t *testing.T)             { runGolden(t, ProbeStartupFailing) }
func TestRuntimeCrashExit(t *testing.T)                { runGolden(t, RuntimeCrashExit) }
func TestRuntimeOOMKilled(t *testing.T)                { runGolden(t, RuntimeOOMKilled) }
func TestSandboxCreateFailed(t *testing.T)             { runGolden(t, SandboxCreateFailed) }
func TestSandboxImagePullFailed(t *testing.T)          { runGolden(t, SandboxImagePullFailed) }
func TestSandboxIPExhausted(t *testing.T)              { runGolden(t, SandboxIPExhausted) }
func TestSandboxNetworkNotReady(t *testing.T)          { runGolden(t, SandboxNetworkNotReady) }
func TestSchedulingAffinityUnsatisfiable(t *testing.T) { runGolden(t, SchedulingAffinityUnsatisfiable) }
func TestSchedulingHostPortConflict(t *testing.T)      { runGolden(t, SchedulingHostPortConflict) }
func TestSchedulingInsufficientResources(t *testing.T) { runGolden(t, SchedulingInsufficientResources) }
func TestSchedulingNodeSelectorMismatch(t *testing.T)  { runGolden(t, SchedulingNodeSelectorMismatch) }
func TestSchedulingTopologySpreadUnsatisfiable(t *testing.T) {
	runGolden(t, SchedulingTopologySpreadUnsatisfiable)
}
func TestSchedulingUntoleratedTaint(t *testing.T)    { runGolden(t, SchedulingUntoleratedTaint) }
func TestServiceEndpointSliceMissing(t *testing.T)   { runGolden(t, ServiceEndpointSliceMissing) }
func TestServiceNoReadyEndpoints(t *testing.T)       { runGolden(t, ServiceNoReadyEndpoints) }
func TestServiceSelectorMatchesNothing(t *testing.T) { runGolden(t, ServiceSelectorMatchesNothing) }
func TestServiceTargetPortMismatch(t *testing.T)     { runGolden(t, ServiceTargetPortMismatch) }
func TestServiceWithoutEndpoints(t *testing.T)       { runGolden(t, ServiceWithoutEndpoints) }
func TestStartCommandNotFound(t *testing.T)          { runGolden(t, StartCommandNotFound) }
func TestStartExecFormatError(t *testing.T)          { runGolden(t, StartExecFormatError) }
func TestStartInitContainerFailed(t *testing.T)      { runGolden(t, StartInitContainerFailed) }
func TestStartPermissionDenied(t *testing.T)         { runGolden(t, StartPermissionDenied) }
func TestTerminationDeletionStalled(t *testing.T)    { runGolden(t, TerminationDeletionStalled) }
func TestTerminationFinalizersStuck(t *testing.T)    { runGolden(t, TerminationFinalizersStuck) }
func TestTerminationGracePeriodOverrun(t *testing.T) { runGolden(t, TerminationGracePeriodOverrun) }
func TestTerminationNodeLost(t *testing.T)           { runGolden(t, TerminationNodeLost) }
func TestVolumeConfigMapMissing(t *testing.T)        { runGolden(t, VolumeConfigMapMissing) }
func TestVolumeCSIDriverMissing(t *testing.T)        { runGolden(t, VolumeCSIDriverMissing) }
func TestVolumeMultiAttach(t *testing.T)             { runGolden(t, VolumeMultiAttach) }
func TestVolumeNodeAffinityConflict(t *testing.T)    { runGolden(t, VolumeNodeAffinityConflict) }
func TestVolumePVCUnbound(t *testing.T)              { runGolden(t, VolumePVCUnbound) }

// golden is what a rule's case is compared on: its findings and skips, and the load
// warnings of the fixture (a fixture should load cleanly).
type golden struct {
	Findings []*analyze.Finding    `json:"findings"`
	Skipped  []analyze.SkippedRule `json:"skippedRules,omitempty"`
	Warnings []analyze.Warning     `json:"warnings,omitempty"`
}

// runGolden runs a rule through the real engine on every case under testdata/<id>/ and
// diffs the rendered findings with want.golden.
func runGolden(t *testing.T, rule *analyze.Rule) {
	t.Helper()
	cases, err := filepath.Glob(filepath.Join("testdata", rule.ID, "*"))
	if err != nil || len(cases) == 0 {
		t.Fatalf("no test cases under testdata/%s", rule.ID)
	}
	for _, dir := range cases {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			b, err := bundle.Open(filepath.Join(dir, "bundle"), bundle.DefaultLimits())
			if err != nil {
				t.Fatal(err)
			}
			rep := analyze.Run(analyze.Load([]*bundle.Bundle{b}, nil), []*analyze.Rule{rule}, analyze.Options{})
			for _, v := range rep.Violations {
				t.Errorf("contract violation: %s: %s", v.Rule, v.Message)
			}
			checkCitations(t, b, rep)
			name := filepath.Base(dir)
			switch {
			case strings.HasPrefix(name, "fires-") && len(rep.Findings) == 0:
				t.Errorf("case %s should fire but found nothing", name)
			case strings.HasPrefix(name, "quiet-") && len(rep.Findings) > 0:
				t.Errorf("case %s should stay quiet but found: %s", name, rep.Findings[0].Cause)
			}
			// Plans are pinned on the recorded scenarios (TestPlansOfRecordings), not in
			// every rule's golden.
			got, err := yaml.Marshal(golden{Findings: withoutPlans(rep.Findings), Skipped: rep.Skipped, Warnings: rep.Warnings})
			if err != nil {
				t.Fatal(err)
			}
			wantPath := filepath.Join(dir, "want.golden")
			if *update {
				if err := os.WriteFile(wantPath, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(wantPath)
			if err != nil {
				t.Fatalf("%v (run go test ./rules -update to create it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s differs (go test ./rules -update rewrites it):\n%s", wantPath, diff(string(want), string(got)))
			}
		})
	}
}

// checkCitations fails on evidence that points nowhere: a path not in the bundle, a JSON
// pointer that does not resolve, a line past the end of the file.
func checkCitations(t *testing.T, b *bundle.Bundle, rep *analyze.Report) {
	t.Helper()
	for _, f := range rep.Findings {
		if len(f.Evidence) == 0 {
			t.Errorf("%s cites no evidence", f.ID)
		}
		for _, e := range f.Evidence {
			data, err := b.ReadFile(e.Path)
			if err != nil {
				t.Errorf("%s cites %s: %v", f.ID, e.Location, err)
				continue
			}
			if e.Pointer != "" && !resolves(data, e.Pointer) {
				t.Errorf("%s cites %s: the JSON pointer does not resolve", f.ID, e.Location)
			}
			lines := bytes.Count(data, []byte{'\n'}) + 1
			if e.Line > lines || e.EndLine > lines {
				t.Errorf("%s cites %s: the file has %d lines", f.ID, e.Location, lines)
			}
		}
	}
}

// resolves reports whether an RFC 6901 pointer names a value in a JSON document.
func resolves(data []byte, pointer string) bool {
	var doc any
	if err := json.Unmarshal(data, &doc); err != nil {
		return false
	}
	for _, tok := range strings.Split(pointer, "/")[1:] {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch v := doc.(type) {
		case map[string]any:
			next, ok := v[tok]
			if !ok {
				return false
			}
			doc = next
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(v) {
				return false
			}
			doc = v[i]
		default:
			return false
		}
	}
	return true
}

// diff shows the lines that differ, enough to see what changed in a golden file.
func diff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	for i := 0; i < len(w) || i < len(g); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			b.WriteString("line " + strconv.Itoa(i+1) + ":\n  - " + wl + "\n  + " + gl + "\n")
		}
	}
	return b.String()
}

func TestRegistry(t *testing.T) {
	all := All()
	ids := make([]string, len(all))
	for i, r := range all {
		ids[i] = r.ID
	}
	if !sort.StringsAreSorted(ids) {
		t.Errorf("registry is not sorted by ID: %v", ids)
	}
	seen := map[string]bool{}
	for _, r := range all {
		if seen[r.ID] {
			t.Errorf("duplicate rule ID %s", r.ID)
		}
		seen[r.ID] = true
		if r.Title == "" || r.Run == nil || !r.Stage.Valid() || r.Severity.Rank() < 0 {
			t.Errorf("%s: title, run, stage and severity are required", r.ID)
		}
		if !strings.Contains(r.Doc, "## Confirm on a live cluster") || !strings.Contains(r.Doc, "## Fix") {
			t.Errorf("%s: doc needs its meaning, a \"## Confirm on a live cluster\" and a \"## Fix\" section", r.ID)
		}
		if len(r.Needs.Required) == 0 && len(r.Needs.AnyOf) == 0 {
			t.Errorf("%s: declares no required input", r.ID)
		}
		for _, k := range slices.Concat(r.Needs.Required, r.Needs.AnyOf, r.Needs.Optional) {
			if !k.Valid() {
				t.Errorf("%s: unknown input kind %q", r.ID, k)
			}
		}
		file := strings.ReplaceAll(r.ID, "-", "_") + ".go"
		if _, err := os.Stat(file); err != nil {
			t.Errorf("%s: rule file %s: %v", r.ID, file, err)
		}
		fires, _ := filepath.Glob(filepath.Join("testdata", r.ID, "fires-*"))
		quiet, _ := filepath.Glob(filepath.Join("testdata", r.ID, "quiet-*"))
		if len(fires) == 0 || len(quiet) == 0 {
			t.Errorf("%s: needs a firing case (testdata/%s/fires-*) and a quiet near miss (testdata/%s/quiet-*)", r.ID, r.ID, r.ID)
		}
	}
	dirs, _ := os.ReadDir("testdata")
	for _, d := range dirs {
		if d.IsDir() && !seen[d.Name()] {
			t.Errorf("testdata/%s belongs to no registered rule", d.Name())
		}
	}
}

// withoutPlans copies findings with their plans left out.
func withoutPlans(fs []*analyze.Finding) []*analyze.Finding {
	out := make([]*analyze.Finding, len(fs))
	for i, f := range fs {
		c := *f
		c.Plan = nil
		out[i] = &c
	}
	return out
}
