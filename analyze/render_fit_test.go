package analyze

import (
	"strings"
	"testing"
	"time"
)

func TestAbbreviatePath(t *testing.T) {
	const long = "cluster-resources/pods/crash-exit-1.json:/items/0/status/containerStatuses/0/state/terminated"
	for _, tc := range []struct {
		n    int
		want string
	}{
		{100, long},
		{80, "c/pods/crash-exit-1.json:/items/0/status/containerStatuses/0/state/terminated"},
		{74, "c/p/crash-exit-1.json:/items/0/status/containerStatuses/0/state/terminated"},
		{72, "c/p/crash-exit-1.json:/items/0/…/containerStatuses/0/state/terminated"},
		{50, "c/p/crash-exit-1.json:/items/0/…/state/terminated"},
		// Too narrow for the item: the file stays whole, the pointer keeps its end.
		{40, "c/p/crash-exit-1.json:…/state/terminated"},
		// Too narrow for the file: the file is never cut.
		{16, "c/p/crash-exit-1.json"},
	} {
		got := abbreviatePath(long, tc.n)
		if got != tc.want {
			t.Errorf("abbreviatePath(%d) = %q, want %q", tc.n, got, tc.want)
		}
		if w := len([]rune(got)); w > tc.n && tc.n > 20 {
			t.Errorf("abbreviatePath(%d) is %d columns wide", tc.n, w)
		}
	}
}

func TestWrapKeepsWordsAndCutsLongOnes(t *testing.T) {
	got := wrap("image registry.podflow-e2e.invalid/shop/app:1.0 cannot be pulled pod web-7d9f8b6c5d-4xk2p", 16)
	// The registry host is longer than a line: it is left whole, never cut inside.
	want := []string{"image", "registry.podflow-e2e.invalid/", "shop/app:1.0", "cannot be pulled", "pod", "web-7d9f8b6c5d-4xk2p"}
	if len(got) != len(want) {
		t.Fatalf("wrap = %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("line %d = %q, want %q", i, got[i], want[i])
		}
	}
}

func TestTimelinesPrintInTimeOrder(t *testing.T) {
	at := func(s string) *time.Time {
		v, _ := time.Parse(time.RFC3339, s)
		return &v
	}
	steps := []Step{
		{Step: "created", Time: at("2026-11-29T10:00:00Z")},
		{Step: "scheduled", Time: at("2026-11-29T10:00:05Z")},
		{Step: "sandbox"}, // no time: stays after scheduled
		{Step: "pull", Time: at("2026-11-29T10:00:02Z")},
		{Step: "ready"},
	}
	var got []string
	for _, s := range timeOrdered(steps) {
		got = append(got, s.Step)
	}
	if want := "created pull ready scheduled sandbox"; strings.Join(got, " ") != want {
		t.Errorf("order = %v, want %s", got, want)
	}
}

func TestAStageThePodWentPastIsNotPending(t *testing.T) {
	r := &Report{Findings: []*Finding{{ID: "image#1", Stage: StageImage, Cause: "image cannot be pulled"}}}
	ready := Evidence{Location: Location{Path: "pods.json"}, Excerpt: "Ready=False"}
	pr := &PodReport{Findings: []string{"image#1"}, RootCause: "image#1",
		Timeline: []Step{{Step: "sandbox", Stage: StageSandbox, Status: StepPending, Detail: "no sandbox seen yet"},
			{Step: "ready", Stage: StageProbe, Status: StepPending, Detail: "not ready", Evidence: []Evidence{ready}}},
		Coverage: []StageCoverage{{Stage: StageScheduling, Status: CoverageEvidence}, {Stage: StageSandbox, Status: CoveragePartial},
			{Stage: StageImage, Status: CoverageEvidence}, {Stage: StageRuntime, Status: CoverageNone}, {Stage: StageProbe, Status: CoverageEvidence}}}
	var got []string
	for _, v := range podVerdicts(r, pr) {
		got = append(got, string(v.Stage)+"="+v.Status)
	}
	if want := "scheduling=ok sandbox=ok image=broken runtime=not-reached probe=not-reached"; strings.Join(got, " ") != want {
		t.Errorf("chain = %v, want %s", got, want)
	}
}

// A cause that holds a name wider than the cause column (a long registry host) gets
// the terminal's whole width: no line runs past the edge, and the name is not cut.
func TestAWideNameInTheCauseFitsTheWidth(t *testing.T) {
	const host = "123456789012.dkr.ecr.eu-west-1.amazonaws.com/"
	f := &Finding{ID: "image-pull-not-found#1", Rule: "image-pull-not-found", Stage: StageImage, Severity: SeverityError, Root: true,
		Subjects: []ObjectRef{{Kind: "Pod", Namespace: "shop", Name: "checkout-7c9d8f6b5-h2kq8"}},
		Cause:    "image " + host + "checkout:2.14.0 does not exist in its registry",
		Evidence: []Evidence{{Location: Location{Path: "ticket.txt", Line: 11}}}}
	r := &Report{Findings: []*Finding{f}}
	r.summarize()
	var b strings.Builder
	if err := renderFitted(&b, r, RenderOptions{Width: 80}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, l := range strings.Split(out, "\n") {
		if w := len([]rune(l)); w > 80 {
			t.Errorf("line of %d columns: %q", w, l)
		}
	}
	if !strings.Contains(out, host) {
		t.Errorf("the host is cut:\n%s", out)
	}
}
