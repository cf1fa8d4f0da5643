package importer

import (
	"strings"
	"testing"

	"podflow.dev/podflow/analyze"
)

// TestCatalogIsTheFloor: a trouble line no rule or signature knows, but a component on
// the Pod path prints, gets a catalog finding at the stage of its outermost known layer,
// naming the innermost layer as the cause and citing where each is printed; a line no
// component prints stays unexplained.
func TestCatalogIsTheFloor(t *testing.T) {
	cases := []struct {
		name, file, text string
		rule             string
		stage            analyze.Stage
		mentions         []string
		components       []string
	}{
		{"kubelet admission refusal as an event row", "events.txt",
			"Events:\n  Type     Reason            Age   From     Message\n  ----     ------            ----  ----     -------\n  Warning  PodOSNotSupported  12s   kubelet  Pod was rejected: Failed to admit pod as the OS field doesn't match node OS\n",
			analyze.CatalogRule, analyze.StageNode, []string{"Failed to admit pod as the OS field doesn't match node OS"}, []string{"kubelet"}},
		{"kubelet admission refusal a signature knows", "events.txt",
			"Events:\n  Type     Reason        Age   From     Message\n  ----     ------        ----  ----     -------\n  Warning  NodeAffinity  12s   kubelet  Predicate NodeAffinity failed\n",
			// The kubelet's own admission refusals are curated: the signature explains them.
			"node-kubelet-admission-node-affinity", analyze.StageNode, []string{"NodeAffinity"}, nil},
		{"CNI IPAM daemon's JSON log line", "ipamd.log",
			`{"level":"error","ts":"2026-11-30T10:00:00.000Z","caller":"ipamd/ipamd.go:512","msg":"Failed to increase pool size due to not able to allocate ENI AllocENI: error attaching ENI: attachENI: failed to attach ENI:AttachmentLimitExceeded: Interface count 3 exceeds the limit for t3.medium"}` + "\n",
			analyze.CatalogRule, analyze.StageSandbox, []string{"AttachmentLimitExceeded"}, []string{"aws-vpc-cni"}},
		{"CNI daemon's nested chain", "flanneld.log",
			"I1130 10:00:00.000000    1234 main.go:100] starting\nE1130 10:00:01.000000    1234 main.go:333] Error registering network: failed to acquire lease: node \"worker-1\" pod cidr not assigned\n",
			// flannel's message is curated now: the signature, not the floor, explains it.
			"sandbox-node-pod-cidr-not-assigned", analyze.StageSandbox, []string{"pod cidr not assigned"}, nil},
		{"a line no component prints", "app.log",
			"2026-11-30 10:00:01 ERROR frobnicator quux exploded while zorbing the widget table\n",
			analyze.UnexplainedRule, "", []string{"zorbing"}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rep := analyzePaste(t, map[string][]byte{tc.file: []byte(tc.text)})
			root := firstRoot(rep)
			if root == nil {
				t.Fatalf("no root finding")
			}
			if root.Rule != tc.rule || (tc.stage != "" && root.Stage != tc.stage) {
				t.Fatalf("root %s at %s (%s), want %s at %s", root.Rule, root.Stage, root.Cause, tc.rule, tc.stage)
			}
			for _, m := range tc.mentions {
				if !strings.Contains(root.Cause, m) {
					t.Errorf("cause %q does not name %q", root.Cause, m)
				}
			}
			var comps []string
			for _, c := range root.Catalog {
				comps = append(comps, c.Component)
				if c.PrintedBy == "" || c.Releases == "" || c.Template == "" {
					t.Errorf("catalog citation without where or when it is printed: %+v", c)
				}
			}
			for _, want := range tc.components {
				if !strings.Contains(strings.Join(comps, " "), want) {
					t.Errorf("cites components %v, want %s", comps, want)
				}
			}
			if tc.rule == analyze.UnexplainedRule && len(root.Catalog) > 0 {
				t.Errorf("an unexplained finding cites the catalog: %+v", root.Catalog)
			}
		})
	}
}
