package analyze

import (
	"runtime"
	"strings"
	"testing"
	"weak"

	"podflow.dev/podflow/bundle"
)

// A report keeps nothing of the graph it was made from but the nodes' health, which
// the node stage of a pod's chain reads: the graph, most of an analysis's memory, can
// go while the report is rendered. The node stage still reads the pod's node.
func TestAReportLetsItsGraphGo(t *testing.T) {
	files := map[string][]byte{
		bundle.ClusterResourcePath(bundle.KindNodes): []byte(`{"kind":"NodeList","items":[{"metadata":{"name":"n1"},"status":{"conditions":[
{"type":"Ready","status":"False","reason":"KubeletNotReady","message":"PLEG is not healthy","lastTransitionTime":"2026-11-29T20:00:00Z"}]}}]}`),
		bundle.NamespacedResourcePath(bundle.KindPods, "shop"): []byte(`{"kind":"PodList","items":[{"metadata":{"name":"web","namespace":"shop","uid":"u1"},
"spec":{"nodeName":"n1","containers":[{"name":"app","image":"web:1"}]},"status":{"phase":"Pending"}}]}`),
	}
	b, err := bundle.New("mem", files)
	if err != nil {
		t.Fatal(err)
	}
	g := Load([]*bundle.Bundle{b}, nil)
	graph := weak.Make(g)
	r := Run(g, nil, Options{Timelines: true})
	g = nil //nolint:ineffassign,wastedassign // nothing but the report may hold it now
	runtime.GC()
	if graph.Value() != nil {
		t.Errorf("the report holds the graph it was made from")
	}
	if len(r.Pods) != 1 {
		t.Fatalf("report of %d pods", len(r.Pods))
	}
	var node *Verdict
	verdicts := podVerdicts(r, &r.Pods[0])
	for i := range verdicts {
		if verdicts[i].Stage == StageNode {
			node = &verdicts[i]
		}
	}
	if node == nil || node.Status != VerdictBroken || !strings.Contains(node.Summary, "node n1 is not Ready (KubeletNotReady: PLEG is not healthy)") {
		t.Errorf("node stage %+v, want n1 not Ready from its condition", node)
	}
}
