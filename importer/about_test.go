package importer

import (
	"strings"
	"testing"

	"podflow.dev/podflow/analyze"
	"podflow.dev/podflow/bundle"
	"podflow.dev/podflow/rules"
)

// TestAPasteSaysWhoseTextItIs: text no reader takes is said to be about what its command
// or its own lines name (a client's own output, an APIService, an autoscaler, a
// DaemonSet, a namespace), and, when no component is known to print it, placed at that
// subject's stage, instead of being guessed a container's log or a node's journal from
// the file's shape.
func TestAPasteSaysWhoseTextItIs(t *testing.T) {
	for _, tc := range []struct {
		name, file, paste string
		subject           string // kind/namespace/name of the root's first subject
		stage             analyze.Stage
		says              string
	}{
		{"kubectl's own error after a cmder prompt", "ticket.txt",
			"λ kubectl get --raw /apis | head\n" +
				"error: unable to retrieve the complete list of server APIs: custom.metrics.k8s.io/v1beta1: the server is currently unable to handle the request\n",
			"Client//kubectl", analyze.StageRequest, "kubectl's own output"},
		{"kubectl's API error without a prompt", "ticket.txt",
			"Error from server (ServiceUnavailable): the server is currently unable to handle the request (get pods.metrics.k8s.io)\n",
			"Client//kubectl", analyze.StageRequest, "kubectl's own output"},
		{"an APIService describe named by its prompt", "ticket.txt",
			"[root@cp-1 ~]# kubectl describe apiservice v1beta1.custom.metrics.k8s.io\n" +
				"Name:         v1beta1.custom.metrics.k8s.io\n" +
				"Namespace:\n" +
				"API Version:  apiregistration.k8s.io/v1\n" +
				"Kind:         APIService\n" +
				"Status:\n" +
				"  Conditions:\n" +
				"    Message:               failing or missing response from https://10.0.0.9:6443: bad status from https://10.0.0.9:6443: 503\n" +
				"    Reason:                FailedDiscoveryCheck\n" +
				"    Status:                False\n" +
				"    Type:                  Available\n",
			"APIService//v1beta1.custom.metrics.k8s.io", analyze.StageRequest, "apiservice v1beta1.custom.metrics.k8s.io "},
		{"an autoscaler describe after an oc prompt", "ticket.txt",
			"# oc describe hpa/api\n" +
				"Name:                     api\n" +
				"Namespace:                shop\n" +
				"Reference:                DeploymentConfig/api\n" +
				"Min replicas:             2\n" +
				"Conditions:\n" +
				"  Type         Status  Reason          Message\n" +
				"  ----         ------  ------          -------\n" +
				"  AbleToScale  False   FailedGetScale  the HPA controller was unable to get the target's current scale: frobnicated widget refused\n",
			"HorizontalPodAutoscaler/shop/api", analyze.StageController, "horizontalpodautoscaler shop/api "},
		{"a DaemonSet describe known by its file name", "describe-ds.txt",
			"Desired Number of Nodes Scheduled: 0\n" +
				"Current Number of Nodes Scheduled: 0\n" +
				"Pods Status:\t0 Running / 0 Waiting / 0 Succeeded / 0 Failed\n" +
				"Error: the frobnicator refused the widget\n",
			"DaemonSet//(unknown)", analyze.StageController, "the daemonset (its name is not in the evidence)"},
		{"a pull by the container CLI, pasted without its prompt", "ticket.txt",
			"docker pull registry.example.com/team/app:v9\n" +
				"Error response from daemon: frobnicated widget unknown\n",
			"Client//docker", analyze.StageImage, "docker's own output"},
		{"an autoscaler's event row without its object", "events.txt",
			"Warning  FailedGetScale  4s    horizontal-pod-autoscaler  deployments/scale.apps \"api\" not found\n",
			"HorizontalPodAutoscaler/default/(unknown)", analyze.StageController, "horizontalpodautoscaler default/(unknown)"},
		{"a client's connection refused", "ticket.txt",
			"$ telnet web.shop.svc 8080\n" +
				"Trying 10.96.0.12...\n" +
				"telnet: Unable to connect to remote host: Connection refused\n",
			"Client//telnet", analyze.StageService, "telnet's own output"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, _ := importDir(t, map[string][]byte{tc.file: []byte(tc.paste)}, FormatLoose)
			rep := analyze.Run(analyze.Load([]*bundle.Bundle{b}, nil), rules.All(), analyze.Options{Unexplained: true})
			var roots []string
			for _, f := range rep.Findings {
				if !f.Root {
					continue
				}
				s := f.Subjects[0]
				roots = append(roots, string(f.Stage)+" "+s.Kind+"/"+s.Namespace+"/"+s.Name+": "+f.Cause)
				// The subject's stage places trouble no component is known to print;
				// a catalog reading places it by the component that prints it.
				stageOK := f.Stage == tc.stage || f.Rule == analyze.CatalogRule
				if s.Kind+"/"+s.Namespace+"/"+s.Name == tc.subject && stageOK && strings.Contains(f.Cause, tc.says) {
					return
				}
			}
			t.Errorf("no root about %s at %s saying %q; roots:\n%s", tc.subject, tc.stage, tc.says, strings.Join(roots, "\n"))
		})
	}
}

// TestALogIsNotGuessedFromAnEventsFile: a file named for kubectl's events holds a
// component's report, not a container's log, even when its lines are bare error text.
func TestALogIsNotGuessedFromAnEventsFile(t *testing.T) {
	lines := []textLine{{s: "CreateContainerConfigError", n: 1}, {s: `Error:secret "app-token" not found`, n: 2}}
	if looksLikeLog("events.txt", "", lines) {
		t.Error("events.txt read as a container's log")
	}
	if !looksLikeLog("app.txt", "", lines) {
		t.Error("error text in a file of no telling name is no longer read as a program's output")
	}
}
