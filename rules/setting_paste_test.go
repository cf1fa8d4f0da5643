package rules

import (
	"strings"
	"testing"

	"podflow.dev/podflow/analyze"
)

// A pasted ticket's root cause names the setting its text states (the distribution, the
// release moved to), which the component's line alone does not.
func TestPastedRootNamesTheTicketsSetting(t *testing.T) {
	rs := catalogRoots(t, map[string]string{
		"message.txt": "After upgrading the chart from 1.4.2 to 1.4.5, the new pod cannot resolve the DNS service and keeps restarting.\n" +
			"- Kubernetes engine: RKE2 version v1.21.7+rke2r2\n",
		"container.log": `2022/04/10 12:01:02 [emerg] 1#1: host not found in resolver "kube-dns.kube-system.svc.cluster.local" in /etc/nginx/nginx.conf:12` + "\n",
	})
	c := rootCauseHas(t, rs, "kube-dns.kube-system.svc.cluster.local", "RKE2", "release 1.4.5")
	if strings.Contains(c, "1.4.2") {
		t.Errorf("root cause names the release moved from: %s", c)
	}
}

// A change the ticket says made the trouble go away names the release that works, not
// the one that fails: no setting of the trouble's.
func TestAWorkaroundReleaseIsNoSetting(t *testing.T) {
	rs := catalogRoots(t, map[string]string{
		"message.txt":   "The pod keeps restarting with the 2.4 image. Switching to the nginx:2.3 image solves the issue.\n",
		"container.log": `2022/04/10 12:01:02 [emerg] 1#1: host not found in resolver "kube-dns.kube-system.svc.cluster.local" in /etc/nginx/nginx.conf:12` + "\n",
	})
	if c := rootCauseHas(t, rs, "kube-dns.kube-system.svc.cluster.local"); strings.Contains(c, "2.3") {
		t.Errorf("root cause names the release that works as the setting: %s", c)
	}
}

// Output alone states no setting: a component's own version is not the ticket's.
func TestComponentOutputStatesNoSetting(t *testing.T) {
	rs := catalogRoots(t, map[string]string{
		"container.log": `2022/04/10 12:01:02 [emerg] 1#1: host not found in resolver "kube-dns.kube-system.svc.cluster.local" in /etc/nginx/nginx.conf:12` + "\n" +
			`2022/04/10 12:01:02 [notice] 1#1: nginx version 1.25.3 was upgraded from 1.24.0 on EKS nodes` + "\n" +
			`I0410 12:01:02.000000       1 main.go:30] Starting the controller after an upgrade to version v1.9.4 on the EKS cluster` + "\n",
	})
	for _, f := range rs {
		if strings.Contains(f.Cause, "setting:") {
			t.Errorf("root cause names a setting no reporter wrote: %s", f.Cause)
		}
	}
}

// A ticket whose output does not name its pod names the workload in its prose, and the
// amount a change set a resource to: the root cause names both.
func TestPastedRootNamesTheTicketsSubjectAndAmount(t *testing.T) {
	rs := catalogRoots(t, map[string]string{
		"message.txt": "Our memory bump to 3840Mi took the `prometheus-server` deployment down on rollout, it never schedules.\n",
		"events.txt":  "Warning  FailedScheduling  2m (x5 over 10m)  default-scheduler  0/5 nodes are available: 1 Insufficient cpu, 5 Insufficient memory.\n",
	})
	rootCauseHas(t, rs, "Deployment prometheus-server", "memory 3840Mi")
}

// A workload the prose names without quotes, a hyphenated name beside its kind, is the
// ticket's subject; a compound adjective beside a kind ("multi-tenant deployment") is not.
func TestPastedRootNamesAnUnquotedWorkload(t *testing.T) {
	rs := catalogRoots(t, map[string]string{
		"message.txt": "I ran the install action, but the pega-db-install JOB got failed in our multi-tenant deployment.\n",
		"events.txt":  "Warning  BackoffLimitExceeded  2m  job-controller  Job has reached the specified backoff limit\n",
	})
	c := rootCauseHas(t, rs, "Job pega-db-install")
	if strings.Contains(c, "multi-tenant") {
		t.Errorf("root cause names a compound adjective as a pod: %s", c)
	}
}

// A platform's release or model and a component's release are named with their names:
// "Flatcar 3227.2.0", "containerd 1.4.4", not a bare "release".
func TestPastedRootNamesAPlatformsModelAndAComponentsRelease(t *testing.T) {
	rs := catalogRoots(t, map[string]string{
		"message.txt":   "As of Flatcar 3227.2.0 the pods fail on nodes running containerd 1.4.4 with Antrea.\n",
		"container.log": `2022/04/10 12:01:02 [emerg] 1#1: host not found in resolver "kube-dns.kube-system.svc.cluster.local" in /etc/nginx/nginx.conf:12` + "\n",
	})
	c := rootCauseHas(t, rs, "Flatcar 3227.2.0", "containerd 1.4.4")
	if strings.Contains(c, "release 3227.2.0") {
		t.Errorf("root cause names the platform's release twice: %s", c)
	}
}

// rootCauseHas fails t unless there is a root whose first cause holds every text, and
// returns that cause.
func rootCauseHas(t *testing.T, rs []*analyze.Finding, texts ...string) string {
	t.Helper()
	if len(rs) == 0 {
		t.Fatal("no root")
	}
	c := rs[0].Cause
	for _, want := range texts {
		if !strings.Contains(c, want) {
			t.Errorf("root cause lacks %q: %s", want, c)
		}
	}
	return c
}

// An object not found must exist in the pod's namespace; when the evidence does not
// say which that is, the namespace the ticket's own command installs into is named.
func TestANamespaceFromTheTicketsCommand(t *testing.T) {
	ticket := "Steps:\n\n    helm install web ./chart --namespace shop-prod --set auth.enabled=true\n\n" +
		"The pod fails with \"Error: secrets \"web-auth\" not found\".\n"
	rs := catalogRoots(t, map[string]string{"ticket.txt": ticket})
	rootCauseHas(t, rs, `secrets "web-auth" not found`, "namespace shop-prod (the ticket's command)")

	// The pod's own namespace, shown, is the one.
	describe := "Name:         web-7d9f-x2x9q\nNamespace:    shop\nStatus:       Pending\nEvents:\n  Type     Reason  Age  From     Message\n  ----     ------  ---  ----     -------\n" +
		"  Warning  Failed  10s  kubelet  Error: secret \"web-auth\" not found\n"
	rs = catalogRoots(t, map[string]string{"ticket.txt": ticket, "describe.txt": describe})
	for _, f := range rs {
		if strings.Contains(f.Cause, "shop-prod") {
			t.Errorf("cause names the command's namespace beside the pod's own: %s", f.Cause)
		}
	}
}

// A manifest pasted beside a FailedScheduling event gives the label its nodeSelector
// block asks for on the line below it: the root names what no node carries.
func TestPastedRootNamesTheManifestsNodeSelector(t *testing.T) {
	rs := catalogRoots(t, map[string]string{
		"message.txt": "```\nEvents:\n  Type     Reason            Age   From               Message\n" +
			"  ----     ------            ----  ----               -------\n" +
			"  Warning  FailedScheduling  47s   default-scheduler  0/5 nodes are available: 5 node(s) didn't match node selector.\n```\n\n" +
			"and the deployment's template has:\n```\n      nodeSelector:\n        node.kubernetes.io/instance-type: controlpanel\n```\n",
	})
	rootCauseHas(t, rs, "node.kubernetes.io/instance-type: controlpanel")
}
