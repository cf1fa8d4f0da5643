package rules

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"podflow.dev/podflow/analyze"
	"podflow.dev/podflow/bundle"
	"podflow.dev/podflow/importer"
)

// importPaste imports files as pasted text, the way a user brings evidence.
func importPaste(t *testing.T, files map[string]string) *bundle.Bundle {
	t.Helper()
	dir := t.TempDir()
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, _, err := importer.Open(dir, importer.Options{Format: importer.FormatLoose, Limits: bundle.DefaultLimits()})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// pasteFindings runs one rule on what the import of a paste made of it.
func pasteFindings(t *testing.T, rule *analyze.Rule, files map[string]string) []*analyze.Finding {
	t.Helper()
	b := importPaste(t, files)
	rep := analyze.Run(analyze.Load([]*bundle.Bundle{b}, nil), []*analyze.Rule{rule}, analyze.Options{})
	for _, v := range rep.Violations {
		t.Errorf("contract violation: %s: %s", v.Rule, v.Message)
	}
	return rep.Findings
}

// relationCase is a paste that shows one side of a relation between two objects, and
// the other side only through what a client or controller reports of it.
type relationCase struct {
	name  string
	files map[string]string
	// want are the phrases the finding's cause must hold; none means the rule stays quiet.
	want []string
	// wantNot are phrases the cause must not hold.
	wantNot []string
}

func runRelationCases(t *testing.T, rule *analyze.Rule, cases []relationCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fs := pasteFindings(t, rule, c.files)
			if len(c.want) == 0 {
				for _, f := range fs {
					t.Errorf("want no finding, got: %s", f.Cause)
				}
				return
			}
			if len(fs) != 1 {
				for _, f := range fs {
					t.Logf("finding: %s", f.Cause)
				}
				t.Fatalf("want one finding, got %d", len(fs))
			}
			for _, w := range c.want {
				if !strings.Contains(fs[0].Cause, w) {
					t.Errorf("the cause does not say %q: %s", w, fs[0].Cause)
				}
			}
			for _, w := range c.wantNot {
				if strings.Contains(fs[0].Cause, w) {
					t.Errorf("the cause says %q: %s", w, fs[0].Cause)
				}
			}
		})
	}
}

const describeSvcWithEndpoints = `$ kubectl describe svc api -n shop
Name:              api
Namespace:         shop
Labels:            app=api
Annotations:       <none>
Selector:          app=api
Type:              ClusterIP
IP:                10.96.40.12
Port:              http  80/TCP
TargetPort:        8081/TCP
Endpoints:         10.244.1.7:8081,10.244.2.9:8081
Session Affinity:  None
Events:            <none>
`

func TestServiceTargetPortMismatchFromRefusal(t *testing.T) {
	noEndpoints := strings.Replace(describeSvcWithEndpoints, "10.244.1.7:8081,10.244.2.9:8081", "<none>", 1)
	telnet := "$ telnet 10.96.40.12 80\nTrying 10.96.40.12...\ntelnet: Unable to connect to remote host: Connection refused\n"
	runRelationCases(t, ServiceTargetPortMismatch, []relationCase{
		{name: "telnet to the cluster IP refused", files: map[string]string{"svc.txt": describeSvcWithEndpoints, "client.txt": telnet},
			want: []string{"shop/api", "targetPort 8081", "2 ready endpoint(s)", "10.96.40.12:80 was refused", "its pods are not"}},
		{name: "curl to the service name refused", files: map[string]string{"svc.txt": describeSvcWithEndpoints,
			"client.txt": "$ curl http://api.shop/healthz\ncurl: (7) Failed to connect to api.shop port 80 after 2 ms: Connection refused\n"},
			want: []string{"targetPort 8081", "api.shop:80 was refused"}},
		{name: "go client dial refused", files: map[string]string{"svc.txt": describeSvcWithEndpoints,
			"app.log": `2024-03-01T10:00:00Z ERROR upstream failed: Get "http://10.96.40.12:80/v1": dial tcp 10.96.40.12:80: connect: connection refused` + "\n"},
			want: []string{"targetPort 8081", "10.96.40.12:80 was refused"}},
		// Without endpoints kube-proxy rejects the connection itself: the refusal says
		// nothing about the targetPort.
		{name: "no endpoints", files: map[string]string{"svc.txt": noEndpoints, "client.txt": telnet}},
		{name: "refusal from another address", files: map[string]string{"svc.txt": describeSvcWithEndpoints,
			"client.txt": "$ telnet 10.96.40.99 80\nTrying 10.96.40.99...\ntelnet: Unable to connect to remote host: Connection refused\n"}},
		{name: "refusal on another port", files: map[string]string{"svc.txt": describeSvcWithEndpoints,
			"client.txt": "$ telnet 10.96.40.12 443\nTrying 10.96.40.12...\ntelnet: Unable to connect to remote host: Connection refused\n"}},
		{name: "no client report", files: map[string]string{"svc.txt": describeSvcWithEndpoints}},
	})
}

func TestTerminationGracePeriodOverrunFromTimedDeletion(t *testing.T) {
	deleted := func(real string) string {
		return "$ time kubectl delete pod worker\npod \"worker\" deleted\n\nreal\t" + real + "\nuser\t0m0.170s\nsys\t0m0.048s\n"
	}
	shell := "    command: [\"/bin/sh\", \"-c\", \"while true; do date; sleep 10; done\"]\n"
	runRelationCases(t, TerminationGracePeriodOverrun, []relationCase{
		{name: "shell loop as PID 1", files: map[string]string{"delete.txt": deleted("0m32.870s"), "command.txt": shell},
			want: []string{"deleting pod worker took 32.9s", "default grace period of 30s", "PID 1 is sh", "SIGTERM", "inferred"}},
		{name: "sleep as the command", files: map[string]string{"delete.txt": deleted("0m31.2s"), "command.txt": "command: [\"sleep\", \"infinity\"]\n"},
			want: []string{"PID 1 is sleep"}},
		// The other side is missing or says the signal is handled: no relation to claim.
		{name: "quick deletion", files: map[string]string{"delete.txt": deleted("0m2.870s"), "command.txt": shell}},
		{name: "script traps TERM", files: map[string]string{"delete.txt": deleted("0m32.870s"),
			"command.txt": "    command: [\"/bin/sh\", \"-c\", \"trap 'exit 0' TERM; sleep 3600 & wait\"]\n"}},
		{name: "script execs its program", files: map[string]string{"delete.txt": deleted("0m32.870s"),
			"command.txt": "    command: [\"/bin/sh\", \"-c\", \"cd /app && exec ./server\"]\n"}},
		{name: "no command in the evidence", files: map[string]string{"delete.txt": deleted("0m32.870s")}},
		// Minutes are finalizers or a lost node, not a grace period.
		{name: "deletion far past the grace period", files: map[string]string{"delete.txt": deleted("5m12.000s"), "command.txt": shell}},
	})
}

func TestControllerStatefulSetStuckAtPartition(t *testing.T) {
	strategy := "updateStrategy:\n  rollingUpdate:\n    partition: 2\n  type: RollingUpdate\n"
	labels := func(hashes ...string) string {
		var b strings.Builder
		for i, h := range hashes {
			if i > 0 {
				b.WriteString("--\n")
			}
			b.WriteString("      controller-revision-hash: " + h + "\n")
			b.WriteString("      statefulset.kubernetes.io/pod-name: db-" + strconv.Itoa(i) + "\n")
		}
		return "$ kubectl get pods -o yaml | grep -A1 hash\n" + b.String()
	}
	runRelationCases(t, ControllerStatefulSetStuck, []relationCase{
		{name: "pods below the partition on the old revision", files: map[string]string{"sts.yaml": strategy, "pods.txt": labels("db-5f7c", "db-5f7c", "db-8a21", "db-8a21")},
			want: []string{"StatefulSet db", "partition is 2", "revision db-8a21", "db-0; db-1", "old revision db-5f7c", "pasted updateStrategy"}},
		// Every pod on one revision: the partition holds nothing back.
		{name: "all pods updated", files: map[string]string{"sts.yaml": strategy, "pods.txt": labels("db-8a21", "db-8a21", "db-8a21")}},
		// Pods above the partition still differ: the update is rolling, not held.
		{name: "update still rolling", files: map[string]string{"sts.yaml": strategy, "pods.txt": labels("db-5f7c", "db-5f7c", "db-8a21", "db-5f7c")}},
		{name: "no partition", files: map[string]string{"sts.yaml": strings.Replace(strategy, "partition: 2", "partition: 0", 1), "pods.txt": labels("db-5f7c", "db-8a21")}},
		{name: "labels without the strategy", files: map[string]string{"pods.txt": labels("db-5f7c", "db-5f7c", "db-8a21")}},
	})
}
