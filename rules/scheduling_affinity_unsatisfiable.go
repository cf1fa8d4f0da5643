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

// SchedulingAffinityUnsatisfiable finds pending pods whose required pod affinity or
// anti-affinity (or another pod's anti-affinity against them) rules out every node.
var SchedulingAffinityUnsatisfiable = &analyze.Rule{
	ID:       "scheduling-affinity-unsatisfiable",
	Stage:    analyze.StageScheduling,
	Title:    "the pod's required pod affinity or anti-affinity rules out every node",
	Doc:      schedulingAffinityUnsatisfiableDoc,
	Severity: analyze.SeverityError,
	Needs: analyze.Needs{
		Required: []analyze.Kind{analyze.Pods},
		Optional: []analyze.Kind{analyze.Events, analyze.Nodes, analyze.Namespaces, analyze.ReplicaSets, analyze.Jobs},
	},
	Run: schedulingAffinityUnsatisfiable,
	// The scheduler of 1.7 to 1.9 names the inter-pod affinity predicate's refusals by
	// reason (plugin/pkg/scheduler/algorithm/predicates/error.go ErrPodAffinityNotMatch,
	// ErrExistingPodsAntiAffinityRulesNotMatch) in its "0/%v nodes are available: %v"
	// summary (core/generic_scheduler.go FitError.Error).
	Examples: analyze.RuleExamples{
		Fires: []string{
			`0/3 nodes are available: 3 MatchInterPodAffinity.`,
			`0/3 nodes are available: 3 ExistingPodsAntiAffinityRulesNotMatch.`,
		},
	},
}

const schedulingAffinityUnsatisfiableDoc = `The pod has a required inter-pod rule (spec.affinity.podAffinity or podAntiAffinity,
requiredDuringSchedulingIgnoredDuringExecution) that no node satisfies, or pods already
running carry anti-affinity against it. Each term names a label selector and a
topologyKey: anti-affinity forbids a node whose topology domain (the node itself for
kubernetes.io/hostname, its zone for topology.kubernetes.io/zone) already runs a
matching pod; affinity requires one. The scheduler says "N node(s) didn't match pod
anti-affinity rules", "didn't match pod affinity rules" or "didn't satisfy existing pods
anti-affinity rules". The classic case is a Deployment with more replicas than nodes
and anti-affinity on the hostname: one replica per node, the rest stay Pending.

podflow names the term, and for each node the matching pods that keep the pod off it
(or, for affinity, that the node's domain has none). Required node affinity and
nodeSelector are another rule (scheduling-node-selector-mismatch), topology spread
constraints another (scheduling-topology-spread-unsatisfiable).

## Confirm on a live cluster

    kubectl get pod -n NAMESPACE POD -o jsonpath='{.spec.affinity}'
    kubectl get pods -n NAMESPACE -l SELECTOR -o wide      # where the matching pods run
    kubectl get nodes -L TOPOLOGY_KEY

## Fix

Add nodes (or domains) so every replica has one of its own, lower the replica count to
the number of domains, or relax the rule: preferredDuringScheduling instead of
required, or a wider topologyKey. For affinity, run the pods it must join first, or
correct its label selector. For another pod's anti-affinity, change that pod's rule.
`

// The InterPodAffinity filter's reasons
// (pkg/scheduler/framework/plugins/interpodaffinity/filtering.go).
const (
	antiAffinityReason     = "didn't match pod anti-affinity rules"
	affinityReason         = "didn't match pod affinity rules"
	existingAntiAffinityRe = "didn't satisfy existing pods anti-affinity rules"
)

// affinityTerm is one required term of a pod with its JSON location.
type affinityTerm struct {
	anti bool
	term corev1.PodAffinityTerm
	loc  analyze.Location
}

func schedulingAffinityUnsatisfiable(v *analyze.View) []analyze.Finding {
	var out []analyze.Finding
	nodes := v.SortedNodes()
	for _, u := range v.UnscheduledPods() {
		reasons := u.Reasons
		var matched []string
		for _, r := range reasons {
			if strings.Contains(r, antiAffinityReason) || strings.Contains(r, affinityReason) || strings.Contains(r, existingAntiAffinityRe) {
				matched = append(matched, r)
			}
		}
		if len(matched) == 0 || slices.ContainsFunc(reasons, func(r string) bool {
			return strings.Contains(r, "Insufficient ") || strings.Contains(r, "Too many pods")
		}) {
			// The nodes its affinity admits lack room: the shortage holds the pod, as it
			// does beside a node selector (scheduling-insufficient-resources).
			continue
		}
		out = append(out, affinityFinding(v, u, matched, nodes))
	}
	return out
}

func affinityFinding(v *analyze.View, u analyze.SchedulingFailure, matched []string, nodes []*analyze.Node) analyze.Finding {
	p, total, reasons := u.Subject.Pod, u.Nodes, u.Reasons
	pod := p.Obj
	evidence := u.SchedulerEvidence()
	subjects, group := v.PodAndWorkload(p)
	terms := requiredPodTerms(p)
	var termTexts, nodeTexts []string
	for _, t := range terms {
		text := podTermString(t)
		termTexts = append(termTexts, text)
		evidence = append(evidence, t.loc.Evidence(text, pod.CreationTimestamp.Time))
		if len(nodes) == 0 {
			continue
		}
		for _, n := range nodes {
			line, holders := termOnNode(v, pod, t, n, nodes)
			if line == "" {
				continue
			}
			nodeTexts = append(nodeTexts, line)
			if len(holders) > 0 {
				// The pods in the way are named, not listed as subjects: the report
				// counts a subject pod as affected, and they run fine.
				subjects = append(subjects, n.Ref())
			}
			for _, h := range holders {
				evidence = append(evidence, podLabelsLoc(h).Evidence(
					fmt.Sprintf("pod %s on node %s has labels %s", h.Obj.Name, h.Obj.Spec.NodeName, phrase.Selector(h.Obj.Labels)), h.Obj.CreationTimestamp.Time))
			}
		}
	}
	// Existing pods' anti-affinity against this pod.
	if slices.ContainsFunc(matched, func(r string) bool { return strings.Contains(r, existingAntiAffinityRe) }) {
		for _, h := range v.Pods() {
			if h.Obj.Spec.NodeName == "" || analyze.PodFinished(h) {
				continue
			}
			for _, t := range requiredPodTerms(h) {
				if !t.anti || !termSelects(v, h.Obj, t.term, pod) {
					continue
				}
				line := fmt.Sprintf("pod %s/%s on node %s forbids it: %s", h.Obj.Namespace, h.Obj.Name, h.Obj.Spec.NodeName, podTermString(t))
				nodeTexts = append(nodeTexts, line)
				subjects = append(subjects, analyze.NodeRef(h.Obj.Spec.NodeName))
				evidence = append(evidence, t.loc.Evidence(line, h.Obj.CreationTimestamp.Time))
			}
		}
	}
	cause := fmt.Sprintf("the required anti-affinity of pods already running keeps the pod off every node: 0/%s nodes are available: %s", total, strings.Join(reasons, ", "))
	if len(termTexts) > 0 {
		cause = fmt.Sprintf("no node satisfies the pod's %s: 0/%s nodes are available: %s", strings.Join(termTexts, " and "), total, strings.Join(reasons, ", "))
	}
	if len(nodeTexts) > 0 {
		cause += "; " + phrase.JoinCapped(phrase.Unique(nodeTexts), "node(s)")
	}
	return analyze.Finding{
		Subjects:    subjects,
		Cause:       cause,
		Evidence:    evidence,
		Remediation: affinityRemediation(group, terms, matched),
		Confirm: []string{
			analyze.Command("kubectl get pod -n %s %s -o jsonpath='{.spec.affinity}'", pod.Namespace, pod.Name),
			analyze.Command("kubectl get pods -n %s -o wide --show-labels", pod.Namespace),
		},
		GroupKey: group + "\x00" + strings.Join(termTexts, ",") + "\x00" + strings.Join(matched, ","),
	}
}

// requiredPodTerms lists a pod's required pod affinity and anti-affinity terms.
func requiredPodTerms(p *analyze.Pod) []affinityTerm {
	a := p.Obj.Spec.Affinity
	if a == nil {
		return nil
	}
	var out []affinityTerm
	if a.PodAffinity != nil {
		for i, t := range a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution {
			out = append(out, affinityTerm{term: t, loc: p.Loc.At("spec", "affinity", "podAffinity", "requiredDuringSchedulingIgnoredDuringExecution", i)})
		}
	}
	if a.PodAntiAffinity != nil {
		for i, t := range a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution {
			out = append(out, affinityTerm{anti: true, term: t, loc: p.Loc.At("spec", "affinity", "podAntiAffinity", "requiredDuringSchedulingIgnoredDuringExecution", i)})
		}
	}
	return out
}

// podTermString renders a term: "required pod anti-affinity (app=cache per kubernetes.io/hostname)".
func podTermString(t affinityTerm) string {
	kind := "required pod affinity"
	if t.anti {
		kind = "required pod anti-affinity"
	}
	sel := "all pods"
	if t.term.LabelSelector != nil {
		sel = metav1.FormatLabelSelector(t.term.LabelSelector)
	}
	where := ""
	switch {
	case len(t.term.Namespaces) > 0:
		where = " in namespaces " + strings.Join(t.term.Namespaces, ",")
	case t.term.NamespaceSelector != nil:
		where = " in namespaces " + metav1.FormatLabelSelector(t.term.NamespaceSelector)
	}
	return fmt.Sprintf("%s (%s%s per %s)", kind, sel, where, t.term.TopologyKey)
}

// termOnNode says why a node fails one term, and which running pods make it fail: for
// anti-affinity the matching pods in the node's topology domain, for affinity the
// absence of any. "" when the node does not fail the term.
func termOnNode(v *analyze.View, pod *corev1.Pod, t affinityTerm, n *analyze.Node, nodes []*analyze.Node) (string, []*analyze.Pod) {
	domain, ok := n.Obj.Labels[t.term.TopologyKey]
	if !ok {
		if t.anti {
			return "", nil // anti-affinity cannot be violated on a node without the key
		}
		return fmt.Sprintf("node %s has no %s label", n.Obj.Name, t.term.TopologyKey), nil
	}
	var matching []*analyze.Pod
	for _, other := range nodes {
		if other.Obj.Labels[t.term.TopologyKey] != domain {
			continue
		}
		for _, q := range v.PodsOnNode(other.Obj.Name) {
			if q.Obj.UID != pod.UID && !analyze.PodFinished(q) && termSelects(v, pod, t.term, q.Obj) {
				matching = append(matching, q)
			}
		}
	}
	sort.Slice(matching, func(i, j int) bool { return matching[i].Obj.Name < matching[j].Obj.Name })
	scope := fmt.Sprintf("node %s", n.Obj.Name)
	if t.term.TopologyKey != corev1.LabelHostname {
		scope = fmt.Sprintf("node %s (%s=%s)", n.Obj.Name, t.term.TopologyKey, domain)
	}
	if t.anti && len(matching) > 0 {
		names := make([]string, 0, len(matching))
		for _, q := range matching {
			names = append(names, q.Obj.Name)
		}
		return fmt.Sprintf("%s already runs %s", scope, phrase.JoinCapped(names, "pod(s)")), matching
	}
	if !t.anti && len(matching) == 0 {
		return fmt.Sprintf("%s runs no pod matching the affinity", scope), nil
	}
	return "", nil
}

// termSelects reports whether a term of owner's selects pod, in the namespaces the term
// names (its own namespace by default, as the scheduler reads it).
func termSelects(v *analyze.View, owner *corev1.Pod, t corev1.PodAffinityTerm, pod *corev1.Pod) bool {
	if !termNamespace(v, owner, t, pod.Namespace) {
		return false
	}
	if t.LabelSelector == nil {
		return false // a nil selector matches no pod
	}
	sel, err := metav1.LabelSelectorAsSelector(t.LabelSelector)
	if err != nil {
		return false
	}
	return sel.Matches(labels.Set(pod.Labels))
}

func termNamespace(v *analyze.View, owner *corev1.Pod, t corev1.PodAffinityTerm, ns string) bool {
	if slices.Contains(t.Namespaces, ns) {
		return true
	}
	if t.NamespaceSelector == nil {
		return len(t.Namespaces) == 0 && ns == owner.Namespace
	}
	sel, err := metav1.LabelSelectorAsSelector(t.NamespaceSelector)
	if err != nil {
		return false
	}
	if sel.Empty() {
		return true
	}
	if n := v.Namespace(ns); n != nil {
		return sel.Matches(labels.Set(n.Obj.Labels))
	}
	return false
}

// podLabelsLoc points at a pod's labels, or its metadata when it has none.
func podLabelsLoc(p *analyze.Pod) analyze.Location {
	if len(p.Obj.Labels) == 0 {
		return p.Loc.At("metadata")
	}
	return p.Loc.At("metadata", "labels")
}

// affinityRemediation fits the fix to the rule that failed: anti-affinity needs a
// domain per pod, affinity needs the pods it must join, another pod's anti-affinity is
// changed on that pod.
func affinityRemediation(group string, terms []affinityTerm, matched []string) string {
	anti := slices.ContainsFunc(terms, func(t affinityTerm) bool { return t.anti })
	switch {
	case anti && slices.ContainsFunc(matched, func(r string) bool { return strings.Contains(r, antiAffinityReason) }):
		return fmt.Sprintf("Give %s a topology domain per pod (add nodes, or lower its replicas to the domains available), "+
			"or relax the rule: preferredDuringSchedulingIgnoredDuringExecution instead of required, or a wider topologyKey.", group)
	case slices.ContainsFunc(matched, func(r string) bool { return strings.Contains(r, affinityReason) }):
		return fmt.Sprintf("Run the pods %s must be placed with first, or correct the affinity's label selector and namespaces to match them; "+
			"preferredDuringSchedulingIgnoredDuringExecution makes the rule a preference.", group)
	}
	return fmt.Sprintf("Pods already running forbid %s by their own anti-affinity: relax their rule, or run %s on other nodes.", group, group)
}
