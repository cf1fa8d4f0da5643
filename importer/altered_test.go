package importer

import (
	"strings"
	"testing"

	"podflow.dev/podflow/analyze"
)

// rootOf analyzes one pasted file and returns its primary root: the first root a rule
// or signature explains, else the first root.
func rootOf(t *testing.T, name, text string) *analyze.Finding {
	t.Helper()
	rep := analyzePaste(t, map[string][]byte{name: []byte(text)})
	var first *analyze.Finding
	for _, f := range rep.Findings {
		if !f.Root {
			continue
		}
		if f.Rule != analyze.UnexplainedRule && f.Rule != analyze.CatalogRule {
			return f
		}
		if first == nil {
			first = f
		}
	}
	if first == nil {
		t.Fatalf("%s: no root finding", name)
	}
	return first
}

func wantRoot(t *testing.T, f *analyze.Finding, stage analyze.Stage, rule string, mentions ...string) {
	t.Helper()
	if f.Stage != stage || f.Rule != rule {
		t.Fatalf("root = %s %s (%s), want %s %s", f.Stage, f.Rule, f.Cause, stage, rule)
	}
	for _, m := range mentions {
		if !strings.Contains(f.Cause, m) {
			t.Errorf("cause %q does not name %q", f.Cause, m)
		}
	}
}

// A known message altered on its way into a ticket still reads as the component
// printed it, and the finding cites the line where the ticket holds it. The lines are
// built from the components' templates: runc's "exec user process caused %q", the
// attach/detach controller's "Multi-Attach error for volume %q Volume is already used by
// pod(s) %s", the API server's "no matches for kind %q in version %q".
func TestAlteredMessages(t *testing.T) {
	t.Run("typographic quotes", func(t *testing.T) {
		f := rootOf(t, "report.txt", "The job fails on the arm nodes:\n\nstandard_init_linux.go:228: exec user process caused \u201cexec format error\u201d\n")
		wantRoot(t, f, analyze.StageStart, "start-exec-format-error", "exec format error")
		if ev := f.Evidence[0]; ev.Path != "report.txt" || ev.Line != 3 {
			t.Errorf("evidence at %s:%d, want report.txt:3", ev.Path, ev.Line)
		}
	})
	t.Run("message wrapped at a soft break", func(t *testing.T) {
		f := rootOf(t, "notes.txt", "after an upgrade the new pod hangs with\n\n"+
			"Multi-Attach error for volume \"pvc-1f0c2d3e-aaaa-bbbb-cccc-0123456789ab\" \n"+
			"Volume is already used by pod(s) web-5d8c7b9f6-x2x9q\n\nuntil the old one is gone\n")
		wantRoot(t, f, analyze.StageVolume, "volume-multi-attach", "pvc-1f0c2d3e-aaaa-bbbb-cccc-0123456789ab", "web-5d8c7b9f6-x2x9q")
		if ev := f.Evidence[0]; ev.Path != "notes.txt" || ev.Line != 3 || ev.EndLine != 4 {
			t.Errorf("evidence at %s:%d-%d, want notes.txt:3-4", ev.Path, ev.Line, ev.EndLine)
		}
	})
	t.Run("a value wrapped at a terminal UI's border", func(t *testing.T) {
		f := rootOf(t, "helm.txt", "Error: unable to build kubernetes objects from release manifest: unable to recognize \"\": "+
			"no matches for kind \"PodDisruptionBudget\" in version \"policy/v1be \u2502\u2502 ta1\"\n")
		wantRoot(t, f, analyze.StageRequest, "request-kind-not-found", "policy/v1beta1")
	})
}

// The outermost layer a component on the Pod path prints gives the stage: an x509
// error under the kubelet's "Failed to pull image" is the pull failing, even where the
// ticket cut the chain between them; the same words an application logs alone stay
// its own runtime trouble.
func TestOuterLayerGivesStage(t *testing.T) {
	f := rootOf(t, "report.txt", "pods stay in ImagePullBackOff:\n\nFailed to pull image \"registry.example:5000/team/app:1.2\" x509: certificate signed by unknown authority\n")
	if f.Stage != analyze.StageImage {
		t.Fatalf("root = %s %s (%s), want the image stage", f.Stage, f.Rule, f.Cause)
	}
	f = rootOf(t, "app.log", "2024-05-01T10:00:00Z ERROR calling the billing API: Post \"https://billing.internal/v1/charge\": x509: certificate signed by unknown authority\n")
	if f.Stage != analyze.StageRuntime {
		t.Fatalf("an application's own TLS error: root = %s %s (%s), want the runtime stage", f.Stage, f.Rule, f.Cause)
	}
}

// A memory limit a describe fragment shows is known even when the fragment has no Name
// and the rest of the spec is not in the evidence.
func TestOOMLimitFromFragment(t *testing.T) {
	text := "    State:          Running\n" +
		"      Started:      Mon, 02 Sep 2024 10:00:00 +0000\n" +
		"    Last State:     Terminated\n" +
		"      Reason:       OOMKilled\n" +
		"      Exit Code:    137\n" +
		"      Started:      Mon, 02 Sep 2024 09:00:00 +0000\n" +
		"      Finished:     Mon, 02 Sep 2024 09:59:59 +0000\n" +
		"    Ready:          True\n" +
		"    Restart Count:  12\n" +
		"    Limits:\n" +
		"      memory:  512Mi\n" +
		"    Requests:\n" +
		"      memory:  256Mi\n"
	f := rootOf(t, "describe.txt", text)
	wantRoot(t, f, analyze.StageRuntime, "runtime-oom-killed", "512Mi")
}

// A prompt names the pod whose log follows, also a powerline prompt whose glyphs the
// copy lost and whose right-hand part (an exit status, a time) is on the same line.
func TestLogsPromptNamesThePod(t *testing.T) {
	text := "  ~/src/shop  kubectl logs web-7d9f5c                                            1  12:00:01 \n" +
		"exec /app/server: exec format error\n"
	f := rootOf(t, "logs.txt", text)
	wantRoot(t, f, analyze.StageStart, "start-exec-format-error")
	found := false
	for _, s := range f.Subjects {
		found = found || s.Kind == "Pod" && s.Namespace == "default" && s.Name == "web-7d9f5c"
	}
	if !found {
		t.Errorf("subjects %v do not name pod default/web-7d9f5c", f.Subjects)
	}
	if got := promptCommand("kubectl logs web-7d9f5c                 1  12:00:01 "); got != "kubectl logs web-7d9f5c" {
		t.Errorf("promptCommand = %q", got)
	}
	if got := promptCommand("kubectl logs web-7d9f5c \ue0b2 1 \ue0b2 12:00:01"); got != "kubectl logs web-7d9f5c" {
		t.Errorf("promptCommand with glyphs = %q", got)
	}
}
