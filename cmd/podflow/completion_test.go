package main

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// complete runs cobra's hidden __complete, as a shell's completion script does, and
// returns the candidates and the directive line.
func complete(t *testing.T, args ...string) ([]string, string) {
	t.Helper()
	code, out, errOut := runPodflow(t, append([]string{"__complete"}, args...)...)
	if code != exitOK {
		t.Fatalf("__complete %v: exit %d\n%s", args, code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	return lines[:len(lines)-1], lines[len(lines)-1]
}

func TestCompletion(t *testing.T) {
	demo := filepath.Join("..", "..", "testdata", "bundles", "demo")
	demoPods := []string{"crash-exit-1/worker-89b5c5d5-chzvn", "image-pull-dns/app", "oom-killed/app",
		"quota-exceeded/web-699768d496-jvvlr", "quota-exceeded/web-699768d496-wlnk4"}
	noFiles := ":4"
	for _, tc := range []struct {
		name      string
		args      []string
		want      []string
		directive string
	}{
		{"rule IDs for --rule", []string{"analyze", demo, "--rule", "image-pull-d"}, []string{"image-pull-dns"}, noFiles},
		{"rule IDs for --skip-rule", []string{"analyze", demo, "--skip-rule", "runtime-oom"}, []string{"runtime-oom-killed"}, noFiles},
		{"rule IDs for rules ID", []string{"rules", "volume-pvc"}, []string{"volume-pvc-unbound"}, noFiles},
		{"report formats", []string{"analyze", demo, "-o", ""}, []string{"table", "json", "yaml", "markdown", "html"}, noFiles},
		{"explain formats", []string{"explain", demo, "x/y", "-o", ""}, []string{"text", "json", "yaml", "html"}, noFiles},
		{"input formats", []string{"analyze", demo, "--format", "s"}, []string{"sosreport"}, noFiles},
		{"severities", []string{"analyze", demo, "--fail-on", ""}, []string{"info", "warning", "error", "critical", "none"}, noFiles},
		{"pods of the bundle for --pod", []string{"analyze", demo, "--pod", ""}, demoPods, noFiles},
		{"pods with a prefix", []string{"analyze", demo, "--pod", "quota"}, demoPods[3:], noFiles},
		{"namespaces of the bundle", []string{"analyze", demo, "-n", ""}, []string{"crash-exit-1", "image-pull-dns", "oom-killed", "quota-exceeded"}, noFiles},
		{"explain's pod after the input", []string{"explain", demo, "oom"}, []string{"oom-killed/app"}, noFiles},
		{"explain's first argument is a file", []string{"explain", ""}, nil, ":0"},
		{"no bundle, no pods", []string{"analyze", "--pod", ""}, nil, noFiles},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, directive := complete(t, tc.args...)
			if !slices.Equal(got, tc.want) {
				t.Errorf("candidates = %q, want %q", got, tc.want)
			}
			if directive != tc.directive {
				t.Errorf("directive = %s, want %s", directive, tc.directive)
			}
		})
	}
}
