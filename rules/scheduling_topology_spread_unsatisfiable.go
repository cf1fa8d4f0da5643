package rules

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"podflow.dev/podflow/analyze"
	"podflow.dev/podflow/internal/phrase"
)

// SchedulingTopologySpreadUnsatisfiable finds pending pods that no node can take without
// breaking a DoNotSchedule topology spread constraint.
var SchedulingTopologySpreadUnsatisfiable = &analyze.Rule{
	ID:       "scheduling-topology-spread-unsatisfiable",
	Stage:    analyze.StageScheduling,
	Title:    "no node satisfies the pod's topology spread constraints",
	Doc:      schedulingTopologySpreadUnsatisfiableDoc,
	Severity: analyze.SeverityError,
	Needs: analyze.Needs{
		Required: []analyze.Kind{analyze.Pods},
		Optional: []analyze.Kind{analyze.Events, analyze.Nodes, analyze.ReplicaSets, analyze.Jobs},
	},
	Run: schedulingTopologySpreadUnsatisfiable,
}

const schedulingTopologySpreadUnsatisfiableDoc = `A topology spread constraint with whenUnsatisfiable: DoNotSchedule lets the scheduler
place the pod only where the number of matching pods in the node's topology domain
stays within maxSkew of the emptiest domain. It fails a node for two reasons: the node
lacks the constraint's topologyKey label ("N node(s) didn't match pod topology spread
constraints (missing required label)"), typically a key with a typo or one the nodes
were never given, or placing the pod there would exceed maxSkew ("didn't match pod
topology spread constraints"), typically when the other domains are full, tainted or
excluded by the pod's node affinity.

podflow names the constraint and, per domain, how many matching pods it counted, or the
nodes that lack the label. ScheduleAnyway constraints never block scheduling.

## Confirm on a live cluster

    kubectl get pod -n NAMESPACE POD -o jsonpath='{.spec.topologySpreadConstraints}'
    kubectl get nodes -L TOPOLOGY_KEY
    kubectl get pods -n NAMESPACE -l SELECTOR -o wide

## Fix

Correct the topologyKey to a label the nodes carry (kubernetes.io/hostname,
topology.kubernetes.io/zone), label the nodes, add capacity in the emptiest domain,
raise maxSkew, or make the constraint whenUnsatisfiable: ScheduleAnyway.
`

// The PodTopologySpread filter's reasons
// (pkg/scheduler/framework/plugins/podtopologyspread/plugin.go ErrReasonConstraintsNotMatch
// and ErrReasonNodeLabelNotMatch).
const (
	spreadReason      = "didn't match pod topology spread constraints"
	spreadLabelReason = spreadReason + " (missing required label)"
)

func schedulingTopologySpreadUnsatisfiable(v *analyze.View) []analyze.Finding {
	var out []analyze.Finding
	nodes := v.SortedNodes()
	for _, u := range v.UnscheduledPods() {
		p, pod := u.Subject.Pod, u.Subject.Pod.Obj
		total, reasons := u.Nodes, u.Reasons
		var matched []string
		for _, r := range reasons {
			if strings.Contains(r, spreadReason) {
				matched = append(matched, r)
			}
		}
		if len(matched) == 0 {
			continue
		}
		evidence := u.SchedulerEvidence()
		var constraints, details []string
		for i, c := range pod.Spec.TopologySpreadConstraints {
			if c.WhenUnsatisfiable != corev1.DoNotSchedule {
				continue
			}
			text := spreadString(c)
			constraints = append(constraints, text)
			evidence = append(evidence, p.Loc.At("spec", "topologySpreadConstraints", i).Evidence(text, pod.CreationTimestamp.Time))
			if v.NodesKnown() {
				detail, nodeEvidence := spreadDomains(v, p, c, nodes)
				details = append(details, detail)
				evidence = append(evidence, nodeEvidence...)
			}
		}
		what := "the pod's topology spread constraints"
		if len(constraints) > 0 {
			what = "the pod's " + strings.Join(constraints, " and ")
		}
		cause := fmt.Sprintf("no node satisfies %s: 0/%s nodes are available: %s", what, total, strings.Join(reasons, ", "))
		if len(details) > 0 {
			cause += "; " + strings.Join(details, "; ")
		}
		subjects, group := v.PodAndWorkload(p)
		out = append(out, analyze.Finding{
			Subjects:    subjects,
			Cause:       cause,
			Evidence:    evidence,
			Remediation: spreadRemediation(group, matched),
			Confirm: []string{
				analyze.Command("kubectl get pod -n %s %s -o jsonpath='{.spec.topologySpreadConstraints}'", pod.Namespace, pod.Name),
				analyze.Command("kubectl get nodes -L %s", analyze.Value(strings.Join(spreadKeys(pod), ","))),
			},
			GroupKey: group + "\x00" + strings.Join(constraints, ",") + "\x00" + strings.Join(matched, ","),
		})
	}
	return out
}

// spreadString renders a constraint: "topology spread constraint (maxSkew 1 over
// podflow.test/rack, DoNotSchedule, pods app=worker)".
func spreadString(c corev1.TopologySpreadConstraint) string {
	sel := "no pods"
	if c.LabelSelector != nil {
		sel = "pods " + metav1.FormatLabelSelector(c.LabelSelector)
	}
	extra := ""
	if c.MinDomains != nil {
		extra = fmt.Sprintf(", minDomains %d", *c.MinDomains)
	}
	return fmt.Sprintf("topology spread constraint (maxSkew %d over %s, %s, %s%s)", c.MaxSkew, c.TopologyKey, c.WhenUnsatisfiable, sel, extra)
}

func spreadKeys(pod *corev1.Pod) []string {
	var keys []string
	for _, c := range pod.Spec.TopologySpreadConstraints {
		if c.WhenUnsatisfiable == corev1.DoNotSchedule && !slices.Contains(keys, c.TopologyKey) {
			keys = append(keys, c.TopologyKey)
		}
	}
	return keys
}

// spreadDomains describes a constraint against the nodes the pod may use (those its
// nodeSelector and required node affinity allow, as the default nodeAffinityPolicy
// Honor counts them): the nodes lacking the key, or the matching pods per domain.
func spreadDomains(v *analyze.View, p *analyze.Pod, c corev1.TopologySpreadConstraint, nodes []*analyze.Node) (string, []analyze.Evidence) {
	pod := p.Obj
	var missing []string
	var evidence []analyze.Evidence
	counts := map[string]int{}
	var sel labels.Selector
	if c.LabelSelector != nil {
		sel, _ = metav1.LabelSelectorAsSelector(c.LabelSelector)
	}
	for _, n := range nodes {
		if len(analyze.NodeMismatches(pod, n.Obj)) > 0 {
			continue
		}
		domain, ok := n.Obj.Labels[c.TopologyKey]
		if !ok {
			line := fmt.Sprintf("node %s has no %s label", n.Obj.Name, c.TopologyKey)
			missing = append(missing, line)
			evidence = append(evidence, analyze.NodeLabelsLoc(n).Evidence(line, v.CollectedAt()))
			continue
		}
		if _, seen := counts[domain]; !seen {
			counts[domain] = 0
		}
		for _, q := range v.PodsOnNode(n.Obj.Name) {
			if q.Obj.Namespace == pod.Namespace && !analyze.PodFinished(q) && sel != nil && sel.Matches(labels.Set(q.Obj.Labels)) {
				counts[domain]++
			}
		}
	}
	if len(counts) == 0 {
		if len(missing) == 0 {
			return fmt.Sprintf("no node the pod may use carries %s", c.TopologyKey), evidence
		}
		return fmt.Sprintf("no node the pod may use carries %s (%s)", c.TopologyKey, phrase.JoinCapped(missing, "node(s)")), evidence
	}
	domains := make([]string, 0, len(counts))
	for d := range counts {
		domains = append(domains, d)
	}
	sort.Strings(domains)
	lowest := -1
	parts := make([]string, 0, len(domains))
	for _, d := range domains {
		if lowest < 0 || counts[d] < lowest {
			lowest = counts[d]
		}
		parts = append(parts, fmt.Sprintf("%s=%s has %d", c.TopologyKey, d, counts[d]))
	}
	text := fmt.Sprintf("matching pods per domain: %s (the emptiest has %d, maxSkew %d)", strings.Join(parts, ", "), lowest, c.MaxSkew)
	if len(missing) > 0 {
		text += "; " + phrase.JoinCapped(missing, "node(s)")
	}
	return text, evidence
}

// spreadRemediation fits the fix to the failure: a missing label is a key to correct or
// nodes to label, a skew is capacity to add in the emptiest domain.
func spreadRemediation(group string, matched []string) string {
	for _, r := range matched {
		if strings.Contains(r, spreadLabelReason) {
			return fmt.Sprintf("Make the topologyKey of %s a label its nodes carry (kubernetes.io/hostname, topology.kubernetes.io/zone) or label the nodes; "+
				"whenUnsatisfiable: ScheduleAnyway turns the constraint into a preference.", group)
		}
	}
	return fmt.Sprintf("Make room for %s in the emptiest domain (its nodes may be full, tainted or excluded by the pod's node affinity), add a node there, "+
		"raise maxSkew, or use whenUnsatisfiable: ScheduleAnyway.", group)
}
