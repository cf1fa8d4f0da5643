//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// pasteVariants are the two tickets every scenario is also diagnosed from: what
// `kubectl describe pods` and `kubectl get events` print, as a user pastes it, and the
// same with every table header and section title cut, as fragments of it are pasted.
var pasteVariants = []string{"paste", "paste-no-headers"}

// reHeaderLine matches the header lines a fragment loses: get events' column titles,
// describe's Events table title and its dashes.
var reHeaderLine = regexp.MustCompile(`^\s*(LAST SEEN|NAMESPACE\s+LAST SEEN|Type\s+Reason\s+Age\s+From\s+Message|----\s+------)`)

// pasteTicket runs the kubectl commands a user runs about a scenario's namespace and
// returns their output behind `$ command` prompts: the pods and their events, and the
// Services, which a user asked why a Service answers nothing pastes (a namespace
// without Services prints nothing on standard output).
func pasteTicket(ctx context.Context, ns string) (string, error) {
	kubectl := []string{tb.bin("kubectl"), "--kubeconfig", tb.adminKubeconfig}
	var b strings.Builder
	for _, step := range [][]string{{"describe", "pods", "-n", ns}, {"get", "events", "-n", ns}, {"describe", "services", "-n", ns}} {
		cmd := exec.CommandContext(ctx, kubectl[0], append(kubectl[1:], step...)...)
		out, err := cmd.Output()
		if err != nil {
			return "", fmt.Errorf("kubectl %s: %w", strings.Join(step, " "), err)
		}
		if len(out) == 0 {
			continue
		}
		fmt.Fprintf(&b, "$ kubectl %s\n%s\n", strings.Join(step, " "), out)
	}
	return b.String(), nil
}

func withoutHeaders(ticket string) string {
	var kept []string
	for _, l := range strings.Split(ticket, "\n") {
		if reHeaderLine.MatchString(l) || strings.TrimSpace(l) == "Events:" {
			continue
		}
		kept = append(kept, l)
	}
	return strings.Join(kept, "\n")
}

// checkPastes diagnoses the scenario from its pasted describe and events output, with
// and without headers, and records the root rule of each (or "none").
func checkPastes(t *testing.T, ctx context.Context, cli *podflowCLI, r *scenarioRun) {
	ticket, err := pasteTicket(ctx, r.s.Name)
	if err != nil {
		t.Fatal(err)
	}
	r.pastes = map[string]string{}
	for _, v := range pasteVariants {
		text := ticket
		if v == "paste-no-headers" {
			text = withoutHeaders(ticket)
		}
		path := tb.path("bundles", r.s.Name+"-"+v+".txt")
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		res, err := cli.run(ctx, "analyze", path, "--format", "loose", "-o", "json")
		if err != nil {
			t.Fatal(err)
		}
		if res.code != 0 && res.code != 3 {
			t.Errorf("scenario %s: analyze of its %s: %s", r.s.Name, v, res)
			r.pastes[v] = "error"
			continue
		}
		var a analysis
		if err := json.Unmarshal([]byte(res.stdout), &a); err != nil {
			t.Fatalf("analyze -o json printed invalid JSON: %v", err)
		}
		got := "none"
		for _, f := range a.Findings {
			if f.Root && (got == "none" || got == "unexplained") {
				got = f.Rule
			}
		}
		r.pastes[v] = got
	}
}

// logPasteSummary compares what the pastes gave with what the bundle gave, and enforces
// the goal: per variant, the same root cause as the bundle for at least 90% of the
// scenarios, a finding for every broken one and none for a healthy one. What a paste
// cannot show stays a legitimate difference: an exit code 1 without the container's log
// says nothing of a read-only root, a root-owned volume or the image's architecture (the
// finding says the log is missing), and a pod Pending on "1 node(s) didn't match Pod's
// node affinity/selector, 1 node(s) had untolerated taint(s)" reads the same whether the
// tainted node carries the selected labels or not (only the nodes' labels tell).
func logPasteSummary(t *testing.T, runs []*scenarioRun) {
	for _, v := range pasteVariants {
		same, total := 0, 0
		var differ []string
		for _, r := range runs {
			got, ok := r.pastes[v]
			if !ok || r.got == "" || r.got == "?" {
				continue
			}
			total++
			if got == r.got {
				same++
			} else {
				differ = append(differ, fmt.Sprintf("%s: bundle %s, %s %s", r.s.Name, r.got, v, got))
			}
			if r.s.Expect.Diagnosis.None && got != "none" {
				t.Errorf("scenario %s is healthy but its %s gives %s", r.s.Name, v, got)
			}
			if !r.s.Expect.Diagnosis.None && (got == "none" || got == "error") {
				t.Errorf("scenario %s: its %s gives no finding", r.s.Name, v)
			}
		}
		if total == 0 {
			continue
		}
		t.Logf("%s: the same root cause as the bundle for %d of %d scenarios (%.0f%%)", v, same, total, 100*float64(same)/float64(total))
		if len(differ) > 0 {
			t.Logf("%s differs:\n  %s", v, strings.Join(differ, "\n  "))
		}
		switch {
		case 10*same >= 9*total:
		case os.Getenv("PODFLOW_SCENARIOS") != "":
			// A chosen few scenarios are no sample of the goal.
			t.Logf("%s: the same root cause as the bundle for %d of %d chosen scenarios", v, same, total)
		default:
			t.Errorf("%s: the same root cause as the bundle for %d of %d scenarios, under the 90%% goal", v, same, total)
		}
	}
}
