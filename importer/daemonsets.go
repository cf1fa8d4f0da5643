package importer

import (
	"encoding/json"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"podflow.dev/podflow/bundle"
)

// tableDaemonSets is `kubectl get daemonsets` (k8s.io/kubernetes pkg/printers/internalversion
// printDaemonSet): NAME, DESIRED, CURRENT, READY, UP-TO-DATE, AVAILABLE, NODE SELECTOR, AGE.
const tableDaemonSets = "kubectl get daemonsets table"

// isDaemonSetsHeader tells the header of `kubectl get daemonsets`: its NODE SELECTOR
// column sets it apart from the Deployments and ReplicaSets of old kubectl releases.
func isDaemonSetsHeader(cells []string) bool {
	want := map[string]bool{"NAME": true, "DESIRED": true, "CURRENT": true, "NODE SELECTOR": true}
	for _, c := range cells {
		delete(want, c)
	}
	return len(want) == 0
}

// daemonSetCounts are the counts kubectl prints of a DaemonSet's status.
type daemonSetCounts struct {
	desired, current, ready, updated, available int32
}

// parseDaemonSetsTable reads `kubectl get daemonsets` (-A too) into DaemonSets that hold
// what a row shows: the status counts and the node selector, marked partial (a row shows
// no template).
func parseDaemonSetsTable(lines []textLine, namespace string, nsShown bool) ([]rawObject, []string) {
	nsShown = nsShown || newTable(lines[0].s).index("NAMESPACE") >= 0
	return tableObjects(lines, "daemonset", func(cells map[string]string) (rawObject, error) {
		name := cells["NAME"]
		desired, err1 := strconv.ParseInt(cells["DESIRED"], 10, 32)
		current, err2 := strconv.ParseInt(cells["CURRENT"], 10, 32)
		if !isDNSName(name) || err1 != nil || err2 != nil {
			return rawObject{}, errNotARow
		}
		ns := namespace
		if v, ok := cells["NAMESPACE"]; ok && v != "" {
			ns = v
		}
		c := daemonSetCounts{desired: int32(desired), current: int32(current)}
		c.ready, c.updated, c.available = atoi32(cells["READY"]), atoi32(cells["UP-TO-DATE"]), atoi32(cells["AVAILABLE"])
		missing := []string{partialSpec}
		if !nsShown {
			// Without -n or a NAMESPACE column kubectl printed its context's namespace,
			// which the paste does not say.
			missing = append([]string{partialNamespace}, missing...)
		}
		return daemonSetObject(ns, name, nil, selectorValue(cells["NODE SELECTOR"]), c, "kubectl get daemonsets", missing)
	})
}

// describeDaemonSet reads `kubectl describe daemonset` (k8s.io/kubectl pkg/describe
// DaemonSetDescriber): its name, namespace, selectors and the counts of its nodes.
func describeDaemonSet(lines []textLine, namespace string) (rawObject, bool) {
	var name, ns string
	var sel, nodeSel map[string]string
	var c daemonSetCounts
	counted := false
	marginKeys(lines, func(key, val string) {
		switch key {
		case "Name":
			name = val
		case "Namespace":
			ns = val
		case "Selector":
			sel = selectorValue(val)
		case "Node-Selector":
			nodeSel = selectorValue(val)
		case "Desired Number of Nodes Scheduled":
			c.desired, counted = atoi32(val), true
		case "Current Number of Nodes Scheduled":
			c.current = atoi32(val)
		case "Number of Nodes Scheduled with Up-to-date Pods":
			c.updated = atoi32(val)
		case "Number of Nodes Scheduled with Available Pods":
			c.available = atoi32(val)
		case "Number of Nodes Misscheduled":
		case "Pods Status":
			// "0 Running / 0 Waiting / 0 Succeeded / 0 Failed"
			if n, _, ok := strings.Cut(val, " Running"); ok {
				c.ready = atoi32(strings.TrimSpace(n))
			}
		}
	})
	if ns == "" {
		ns = namespace
	}
	if !isDNSName(name) || !counted {
		return rawObject{}, false
	}
	o, err := daemonSetObject(ns, name, sel, nodeSel, c, "kubectl describe daemonset", []string{partialSpec})
	if err != nil {
		return rawObject{}, false
	}
	o.line = lines[0].n
	return o, true
}

// daemonSetObject builds the DaemonSet an output shows: what it printed, marked partial
// (no template beyond the node selector) and converted from that output.
func daemonSetObject(ns, name string, sel, nodeSel map[string]string, c daemonSetCounts, from string, missing []string) (rawObject, error) {
	ds := appsv1.DaemonSet{
		TypeMeta: metav1.TypeMeta{Kind: "DaemonSet", APIVersion: "apps/v1"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Annotations: map[string]string{
			"podflow.dev/converted-from": from, bundle.PartialAnnotation: strings.Join(missing, ",")}},
		Status: appsv1.DaemonSetStatus{DesiredNumberScheduled: c.desired, CurrentNumberScheduled: c.current,
			NumberReady: c.ready, UpdatedNumberScheduled: c.updated, NumberAvailable: c.available},
	}
	if len(sel) > 0 {
		ds.Spec.Selector = &metav1.LabelSelector{MatchLabels: sel}
	}
	ds.Spec.Template.Spec.NodeSelector = nodeSel
	data, err := json.Marshal(ds)
	if err != nil {
		return rawObject{}, err
	}
	return rawObject{kind: "DaemonSet", namespace: ns, name: name, data: data}, nil
}

// selectorValue reads kubectl's printing of a label map ("k=v,k2=v2", "<none>").
func selectorValue(s string) map[string]string {
	s = strings.TrimSpace(s)
	if s == "" || s == "<none>" {
		return nil
	}
	out := map[string]string{}
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if ok && k != "" {
			out[k] = v
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// atoi32 is a count kubectl printed, or 0.
func atoi32(s string) int32 {
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 32)
	if err != nil {
		return 0
	}
	return int32(n)
}

// marginKeys calls fn with the key and value of each "Key: value" line a describe block
// prints at its margin, in order.
func marginKeys(lines []textLine, fn func(key, val string)) {
	for _, l := range lines {
		if strings.HasPrefix(l.s, " ") || strings.HasPrefix(l.s, "\t") {
			continue
		}
		if key, val, ok := strings.Cut(strings.TrimRight(l.s, " \r"), ":"); ok {
			fn(key, strings.TrimSpace(val))
		}
	}
}
