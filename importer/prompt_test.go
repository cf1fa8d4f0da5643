package importer

import (
	"strings"
	"testing"
)

// A prompt that prints the directory and git branch after "user@host" and a space
// introduces its command like any other, and a log it prints is that pod's.
func TestPromptWithDirectoryAndBranch(t *testing.T) {
	paste := "fredstanley@Freds-MacBook-Pro osm (main) $ kubectl get pods --namespace osm-system\n" +
		"NAME                              READY   STATUS             RESTARTS   AGE\n" +
		"osm-controller-66cdc68f64-l2gz7   0/1     CrashLoopBackOff   21         85m\n" +
		"\n" +
		"fredstanley@Freds-MacBook-Pro osm (main) $ kubectl logs -f pod/osm-controller-66cdc68f64-l2gz7 -n osm-system\n" +
		"unknown flag: --certificate-manager\n" +
		"Usage of ads:\n" +
		"      --cert-manager string                 Certificate manager (default \"tresor\")\n"
	chunks := splitChunks([]byte(paste))
	var cmds []string
	for _, c := range chunks {
		if c.cmd != "" {
			cmds = append(cmds, c.cmd)
		}
	}
	if len(cmds) != 2 || !strings.HasPrefix(cmds[1], "kubectl logs -f pod/osm-controller") {
		t.Fatalf("commands %q, want the get and the logs command", cmds)
	}
	rep := analyzePaste(t, map[string][]byte{"kubectl.txt": []byte(paste)})
	root := firstRoot(rep)
	if root == nil || root.Rule != "runtime-flag-not-defined" || !strings.Contains(root.Cause, "--certificate-manager") {
		t.Fatalf("root = %s, want runtime-flag-not-defined naming --certificate-manager", diagnosis(rep))
	}
	for _, s := range []string{"user@host repo (main) $", "fredstanley@Freds-MacBook-Pro osm (main) $ "} {
		if !rePromptAlone.MatchString(s) {
			t.Errorf("%q is not read as a prompt alone", s)
		}
	}
	if rePrompt.MatchString("send mail to ops@example.com and ask $ kubectl") {
		t.Errorf("a sentence with an address read as a prompt")
	}
}
