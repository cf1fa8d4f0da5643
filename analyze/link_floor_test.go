package analyze

import "testing"

// A finding of the floor (a line no rule explains) at an earlier stage is no cause of
// a rule's finding about the same subject: both stay root causes. Between two rules'
// findings the earlier stage still explains the later.
func TestTheFloorExplainsNoRulesFinding(t *testing.T) {
	node := ObjectRef{Kind: "Node", Name: UnknownSubject}
	floor := &Finding{ID: "unexplained#1", Rule: UnexplainedRule, Stage: StageRuntime, Subjects: []ObjectRef{node}}
	proxy := &Finding{ID: "service-kube-proxy-iptables-failed#1", Rule: "service-kube-proxy-iptables-failed", Stage: StageService, Subjects: []ObjectRef{node}}
	link([]*Finding{floor, proxy})
	if !floor.Root || !proxy.Root || len(proxy.ExplainedBy) != 0 {
		t.Errorf("floor root %v, rule root %v explained by %v: want both roots", floor.Root, proxy.Root, proxy.ExplainedBy)
	}

	notReady := &Finding{ID: "node-not-ready#1", Rule: "node-not-ready", Stage: StageNode, Subjects: []ObjectRef{node}}
	proxy = &Finding{ID: "service-kube-proxy-iptables-failed#1", Rule: "service-kube-proxy-iptables-failed", Stage: StageService, Subjects: []ObjectRef{node}}
	link([]*Finding{notReady, proxy})
	if proxy.Root || len(proxy.ExplainedBy) != 1 {
		t.Errorf("rule root %v explained by %v: want the node's finding to explain it", proxy.Root, proxy.ExplainedBy)
	}
}
