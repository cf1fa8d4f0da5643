package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// twoLinePaste is what a ticket often carries: one event line of a describe.
const twoLinePaste = "Events:\n" +
	"  Warning  BackOff  2m (x7 over 5m)  kubelet  Back-off restarting failed container api in pod api-7d9f-abc12_shop(1234-5678)\n"

func runWith(t *testing.T, s streams, args ...string) (int, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	s.Out, s.ErrOut = &out, &errOut
	if s.In == nil {
		s.In = strings.NewReader(twoLinePaste)
	}
	code := run(context.Background(), args, s)
	return code, out.String()
}

func TestAPastesAnswerFitsOneScreen(t *testing.T) {
	_, out := runWith(t, streams{}, "analyze", "-", "--width", "80", "--fail-on", "none")
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) > 24 {
		t.Errorf("a 2-line paste's answer is %d lines:\n%s", len(lines), out)
	}
	for _, l := range lines {
		if n := len([]rune(l)); n > 80 {
			t.Errorf("line of %d columns at --width 80: %q", n, l)
		}
	}
	if !strings.Contains(out, "shop/api-7d9f-abc12") || strings.Contains(out, "unnamed") {
		t.Errorf("the answer does not name the pod the paste names:\n%s", out)
	}
	last := lines[len(lines)-1]
	if !strings.Contains(strings.Join(lines[len(lines)-2:], " "), "`-v` says what to paste") || strings.Contains(out, "cluster-resources/") {
		t.Errorf("the answer should close with one line pointing at -v, got %q:\n%s", last, out)
	}
	_, verbose := runWith(t, streams{}, "analyze", "-", "--width", "80", "--fail-on", "none", "-v")
	if !strings.Contains(strings.Join(strings.Fields(verbose), " "), "kubectl get deployments,replicasets -n shop -o yaml") {
		t.Errorf("-v does not say what to paste in the paste's namespace:\n%s", verbose)
	}
	_, quiet := runWith(t, streams{}, "analyze", "-", "--width", "80", "--fail-on", "none", "-q")
	if strings.Contains(quiet, "no evidence to read") || !strings.Contains(quiet, "shop/api-7d9f-abc12") {
		t.Errorf("-q should print the findings only:\n%s", quiet)
	}
}

func TestWidthComesFromTheFlagOrColumns(t *testing.T) {
	_, piped := runWith(t, streams{}, "analyze", "-", "--fail-on", "none")
	if !strings.Contains(piped, "+---") {
		t.Fatalf("piped output without --width or COLUMNS is not the classic table:\n%s", piped)
	}
	env := func(vars map[string]string) func(string) string { return func(k string) string { return vars[k] } }
	_, cols := runWith(t, streams{Env: env(map[string]string{"COLUMNS": "60"})}, "analyze", "-", "--fail-on", "none")
	for _, l := range strings.Split(cols, "\n") {
		if len([]rune(l)) > 60 {
			t.Errorf("COLUMNS=60: line of %d columns: %q", len([]rune(l)), l)
		}
	}
	if strings.Contains(cols, "+---") {
		t.Errorf("COLUMNS=60 did not fit the table:\n%s", cols)
	}
	// Colour only on a terminal, and never with NO_COLOR.
	_, tty := runWith(t, streams{OutTTY: true, Env: env(map[string]string{"COLUMNS": "100"})}, "analyze", "-", "--fail-on", "none")
	if !strings.Contains(tty, "\x1b[") {
		t.Errorf("no colour on a terminal:\n%q", tty)
	}
	_, nocolor := runWith(t, streams{OutTTY: true, Env: env(map[string]string{"COLUMNS": "100", "NO_COLOR": "1"})}, "analyze", "-", "--fail-on", "none")
	if strings.Contains(nocolor, "\x1b[") {
		t.Errorf("colour despite NO_COLOR:\n%q", nocolor)
	}
	if strings.Contains(cols, "\x1b[") {
		t.Errorf("colour in a pipe:\n%q", cols)
	}
}

func TestExplainFitsTheWidth(t *testing.T) {
	code, out := runWith(t, streams{}, "explain", "-", "shop/api-7d9f-abc12", "--width", "60")
	if code != exitOK {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	for _, l := range strings.Split(out, "\n") {
		if len([]rune(l)) > 60 {
			t.Errorf("--width 60: line of %d columns: %q", len([]rune(l)), l)
		}
	}
}

func TestPodOfADeploymentHeldByAQuotaReportsTheQuota(t *testing.T) {
	demo := "../../testdata/bundles/demo"
	_, out := runWith(t, streams{}, "analyze", demo, "--pod", "quota-exceeded/web-699768d496-jvvlr", "--fail-on", "none", "--width", "120")
	if strings.Contains(out, "No problems found") || !strings.Contains(strings.Join(strings.Fields(out), " "), "ResourceQuota quota-exceeded/compute refuses the pods of Deployment quota-exceeded/web") {
		t.Errorf("--pod on a pod of a Deployment held by a quota:\n%s", out)
	}
	// A pod of another namespace does not get it.
	_, other := runWith(t, streams{}, "analyze", demo, "--pod", "oom-killed/app", "--fail-on", "none", "--width", "120")
	if strings.Contains(other, "ResourceQuota") {
		t.Errorf("the quota of another namespace is reported for oom-killed/app:\n%s", other)
	}
}
