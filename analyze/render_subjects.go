package analyze

import (
	"fmt"
	"slices"
	"strings"
)

// workloadKinds are the owners a reader counts pods by; any other non-pod subject (a
// quota, a node, a Service, a claim) is part of the cause, not among the affected.
var workloadKinds = []string{"Deployment", "StatefulSet", "DaemonSet", "CronJob", "Job", "ReplicaSet"}

func isWorkload(kind string) bool {
	return slices.Contains(workloadKinds, kind)
}

// SubjectLines names what a finding affects for a report's subjects column: its pods
// first (compactly, as PodsLabel does), then each workload with the number of the
// finding's pods it owns ("Deployment shop/web: 3 pods"). A ReplicaSet of a listed
// Deployment, or a Job of a listed CronJob, is left out: the top owner is what a user
// names. Lines are raw bundle text; renderers escape them.
func SubjectLines(f *Finding) []string {
	var lines []string
	pods := f.Pods()
	if len(pods) > 0 {
		lines = append(lines, PodsLabel(f))
	}
	var workloads []ObjectRef
	for _, s := range f.Subjects {
		if isWorkload(s.Kind) {
			workloads = append(workloads, s)
		}
	}
	for _, w := range workloads {
		if ownedByListed(w, workloads) {
			continue
		}
		n := 0
		for _, p := range pods {
			if p.Namespace == w.Namespace && strings.HasPrefix(p.Name, w.Name+"-") {
				n++
			}
		}
		line := w.Kind + " " + w.NamespacedName()
		if n > 0 {
			line += fmt.Sprintf(": %d %s", n, plural(n, "pod", "pods"))
		}
		lines = append(lines, line)
	}
	if len(lines) == 0 {
		// Nothing but cause objects (a node finding with no pods bound): name them here,
		// or the row would have no subject at all.
		for _, s := range f.Subjects {
			lines = append(lines, s.String())
		}
	}
	return lines
}

// ownedByListed reports whether w is the generated child of another listed workload: a
// ReplicaSet named after its Deployment (web-7d9f8b6c5d), a Job after its CronJob.
func ownedByListed(w ObjectRef, listed []ObjectRef) bool {
	parent := map[string]string{"ReplicaSet": "Deployment", "Job": "CronJob"}[w.Kind]
	for _, o := range listed {
		if o.Kind == parent && o.Namespace == w.Namespace && strings.HasPrefix(w.Name, o.Name+"-") {
			return true
		}
	}
	return false
}

// Involved lists the finding's other objects (quota, node, Service, claim) that its cause
// does not already name, so the cause column can mention them. Raw bundle text.
func Involved(f *Finding) []string {
	lines := SubjectLines(f)
	var out []string
	for _, s := range f.Subjects {
		if s.Kind == "Pod" || isWorkload(s.Kind) {
			continue
		}
		if strings.Contains(f.Cause, s.Name) || slices.Contains(lines, s.String()) {
			continue
		}
		out = append(out, s.String())
	}
	return out
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// podNamesText renders a gap's pod names: "1 pod: shop/a", "5 pods: shop/a, shop/b,
// shop/c and 2 more". names may be a capped sample of n.
func podNamesText(n int, names []string) string {
	s := fmt.Sprintf("%d %s", n, plural(n, "pod", "pods"))
	if len(names) == 0 {
		return s
	}
	shown := names[:min(len(names), 3)]
	s += ": " + strings.Join(shown, ", ")
	if rest := n - len(shown); rest > 0 {
		s += fmt.Sprintf(" and %d more", rest)
	}
	return s
}
