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
	for _, s := range []string{"➜  ~ kubectl get pods -n shop", "➜  deploy git:(main) ✗ kubectl describe pod web", "☹  kubectl --context do-nyc1 get nodes"} {
		if m := rePrompt.FindStringSubmatch(s); m == nil || !strings.HasPrefix(m[1], "kubectl ") {
			t.Errorf("%q: command %q, want the kubectl command", s, m)
		}
	}
	if rePrompt.MatchString("send mail to ops@example.com and ask $ kubectl") {
		t.Errorf("a sentence with an address read as a prompt")
	}
}

// `kubectl logs TYPE/NAME` of a workload prints the log of a pod kubectl picks: the
// pod it names on stderr ("Found 2 pods, using pod/NAME") when the paste keeps that
// line, else a container's log of a pod not known; either way its lines are read. A
// name no object may have names no pod.
func TestLogsOfAWorkload(t *testing.T) {
	const log = "I0514 19:02:30.326011       1 metadata.go:85] retrieving instance data from ec2 metadata\n" +
		"E0514 19:05:01.000000       1 driver.go:100] \"Failed to pull image\" err=\"rpc error: code = Unknown desc = failed to pull and unpack image \\\"docker.io/acme/app:9\\\": failed to resolve reference \\\"docker.io/acme/app:9\\\": docker.io/acme/app:9: not found\"\n"
	for _, c := range []struct{ name, paste, pod string }{
		{"named by kubectl", "$ kubectl logs deployment/web -n shop -c app\nFound 2 pods, using pod/web-5c55c975b4-4lx62\n" + log, "web-5c55c975b4-4lx62"},
		{"not named", "$ kubectl logs deploy/web -n shop -c app\n" + log, ""},
		{"a name no object has", "$ kubectl logs ../../etc -n shop -c app\n" + log, ""},
	} {
		chunks := splitChunks([]byte(c.paste))
		lc, ok := parseLogsCommand(chunks[0].cmd)
		if !ok {
			t.Fatalf("%s: %q is no logs command", c.name, chunks[0].cmd)
		}
		if lc.pod == "" {
			lc.pod = logPodNamed(chunks[0].lines)
		}
		if lc.pod != c.pod {
			t.Errorf("%s: pod %q, want %q", c.name, lc.pod, c.pod)
		}
		rep := analyzePaste(t, map[string][]byte{"kubectl.txt": []byte(c.paste)})
		if root := firstRoot(rep); root == nil || root.Rule != "image-pull-not-found" {
			t.Errorf("%s: root = %s, want image-pull-not-found from the log", c.name, diagnosis(rep))
		}
	}
}

// A kubectl command that changes the cluster, pasted without its prompt, introduces
// kubectl's own output: its "error: …" is the client's, at the request stage, not a
// container's log. A sentence that starts with such a word stays a sentence.
func TestBareWriteCommand(t *testing.T) {
	paste := "kubectl apply -f pod.yaml\nerror: error converting YAML to JSON: yaml: line 8: did not find expected key\n"
	chunks := splitChunks([]byte(paste))
	if len(chunks) == 0 || chunks[0].cmd != "kubectl apply -f pod.yaml" {
		t.Fatalf("chunks %+v, want the apply command first", chunks)
	}
	rep := analyzePaste(t, map[string][]byte{"kubectl.txt": []byte(paste)})
	root := firstRoot(rep)
	if root == nil || root.Stage != "request" || !strings.Contains(root.Cause, "line 8") {
		t.Fatalf("root = %s, want a request-stage finding naming line 8", diagnosis(rep))
	}
	for _, s := range []string{"kubectl run web --image=nginx:1.25", "kubectl delete pod web-1 -n shop", "kubectl exec -it web-1 -- sh", "kubectl version"} {
		if !reBareCommand.MatchString(s) {
			t.Errorf("%q not read as a command", s)
		}
	}
	for _, s := range []string{"kubectl apply fails for me since yesterday", "kubectl delete is slow"} {
		if reBareCommand.MatchString(s) {
			t.Errorf("%q read as a command", s)
		}
	}
}

// A command whose output the paste fences below it ("$ k logs POD", then ``` and the
// log) keeps that output: the pod the command names is the log's.
func TestCommandAboveAFence(t *testing.T) {
	paste := "$ k logs -n tor example-onion-service-tor-daemon-f8f94c688-mgwp4\n```\n" +
		"standard_init_linux.go:228: exec user process caused: exec format error\n```\n\nThe pod restarts.\n"
	chunks := splitChunks([]byte(paste))
	if len(chunks) == 0 || len(chunks[0].lines) != 1 || chunks[0].lines[0].n != 3 {
		t.Fatalf("chunks = %+v, want the command with the fenced line 3 as its output", chunks)
	}
	rep := analyzePaste(t, map[string][]byte{"kubectl.txt": []byte(paste)})
	root := firstRoot(rep)
	if root == nil || root.Rule != "start-exec-format-error" || len(root.Subjects) == 0 ||
		root.Subjects[0].Name != "example-onion-service-tor-daemon-f8f94c688-mgwp4" || root.Subjects[0].Namespace != "tor" {
		t.Errorf("root = %s, want start-exec-format-error of pod tor/example-onion-service-tor-daemon-f8f94c688-mgwp4", diagnosis(rep))
	}
}

// A fence opened on the output's first line ("```panic: …") keeps the lines below it in
// the same output, up to a fence that closes on the last line ("… refused```"): a Go
// panic's traceback stays with its panic line, and the closing backticks are not text.
func TestFenceOnTheOutputsOwnLines(t *testing.T) {
	paste := "An investigation of the logs shows this\n" +
		"```panic: runtime error: invalid memory address or nil pointer dereference\n" +
		"goroutine 1538 [running]:\n" +
		"github.com/rancher/opni/pkg/resources/gateway.(*Reconciler).configMap(0xc001669980)\n" +
		"\t/src/pkg/resources/gateway/configmap.go:49 +0x18d\n" +
		"```\n" +
		"and then\n" +
		"```E0926 10:48:40.346646   76692 portforward.go:331] an error occurred forwarding 5010 -> 6000```\n" +
		"```first line\n" +
		"last line```\n"
	var got [][]string
	for _, c := range splitChunks([]byte(paste)) {
		var lines []string
		for _, l := range c.lines {
			lines = append(lines, l.s)
		}
		if strings.TrimSpace(strings.Join(lines, "")) != "" {
			got = append(got, lines)
		}
	}
	want := [][]string{
		{"An investigation of the logs shows this"},
		{"panic: runtime error: invalid memory address or nil pointer dereference", "goroutine 1538 [running]:",
			"github.com/rancher/opni/pkg/resources/gateway.(*Reconciler).configMap(0xc001669980)", "\t/src/pkg/resources/gateway/configmap.go:49 +0x18d"},
		{"and then"},
		{"E0926 10:48:40.346646   76692 portforward.go:331] an error occurred forwarding 5010 -> 6000"},
		{"first line", "last line"},
	}
	if len(got) != len(want) {
		t.Fatalf("chunks %q, want %q", got, want)
	}
	for i := range want {
		if strings.Join(got[i], "\n") != strings.Join(want[i], "\n") {
			t.Errorf("chunk %d = %q, want %q", i, got[i], want[i])
		}
	}
	panicked, _, _ := strings.Cut(paste, "and then")
	rep := analyzePaste(t, map[string][]byte{"ticket.md": []byte(panicked)})
	if root := firstRoot(rep); root == nil || root.Rule != "runtime-go-panic" || !strings.Contains(root.Cause, "gateway.(*Reconciler).configMap (configmap.go:49)") {
		t.Fatalf("root = %s, want the panic in gateway.(*Reconciler).configMap (configmap.go:49)", diagnosis(rep))
	}
}
