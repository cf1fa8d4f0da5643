package rules

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"podflow.dev/podflow/analyze"
	"podflow.dev/podflow/bundle"
	"podflow.dev/podflow/importer"
)

// pasteFindings imports files as pasted text, the way a user brings evidence, and runs
// one rule on what the import made of them.
func pasteFindings(t *testing.T, rule *analyze.Rule, files map[string]string) []*analyze.Finding {
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
				t.Fatalf("want one finding, got %d", len(fs))
			}
			for _, w := range c.want {
				if !strings.Contains(fs[0].Cause, w) {
					t.Errorf("the cause does not say %q: %s", w, fs[0].Cause)
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
