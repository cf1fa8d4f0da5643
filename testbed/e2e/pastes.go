//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// pasteScenarios are captured as a user pastes them into a ticket: what kubectl and
// crictl print, not what podflow collects. importer/testdata/captured/<scenario>/ holds
// them; the importer's tests check that podflow diagnoses the paste as it diagnoses the
// recorded bundle of the same scenario. Bare pods only, so pod names match across runs.
var pasteScenarios = []string{"command-not-found", "image-pull-dns", "oom-killed", "untolerated-taint"}

// pasteNodes are the scenarios whose cause lies in a node's settings (its taints), so
// their ticket also holds `kubectl describe nodes`, as the user would be asked for.
var pasteNodes = []string{"untolerated-taint"}

func capturing() bool { return recording() || os.Getenv("PODFLOW_CAPTURE") == "1" }

// capturePastes runs the commands a user would run about a scenario's namespace and
// writes their output, each behind its `$ command` prompt line, into one ticket file.
func capturePastes(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	kubectl := []string{tb.bin("kubectl"), "--kubeconfig", tb.adminKubeconfig}
	crictl := []string{tb.bin("crictl"), "--runtime-endpoint", "unix://" + tb.containerdSock}
	steps := []struct {
		prompt string
		argv   []string
	}{
		{"kubectl get pods -n " + name + " -o wide", append(kubectl, "get", "pods", "-n", name, "-o", "wide")},
		{"kubectl describe pods -n " + name, append(kubectl, "describe", "pods", "-n", name)},
		{"kubectl get events -n " + name, append(kubectl, "get", "events", "-n", name)},
		{"sudo crictl ps -a --namespace " + name, append(crictl, "ps", "-a", "--namespace", name)},
		{"sudo crictl pods --namespace " + name, append(crictl, "pods", "--namespace", name)},
	}
	if containsString(pasteNodes, name) {
		steps = append(steps, struct {
			prompt string
			argv   []string
		}{"kubectl describe nodes", append(kubectl, "describe", "nodes")})
	}
	var b strings.Builder
	for _, s := range steps {
		// Standard output only: crictl warns on stderr about its config file search,
		// naming paths of this machine.
		cmd := exec.CommandContext(ctx, s.argv[0], s.argv[1:]...)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("capture %q: %v\n%s%s", s.prompt, err, out, stderr.String())
		}
		fmt.Fprintf(&b, "$ %s\n%s\n", s.prompt, out)
	}
	dir := filepath.Join(tb.repo, "importer", "testdata", "captured", name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "ticket.txt"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("captured %s", dir)
}
