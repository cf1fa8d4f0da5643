package rules

import (
	"fmt"
	"regexp"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"podflow.dev/podflow/analyze"
)

// AdmissionLimitRangeViolated finds workloads whose pods a LimitRange refuses.
var AdmissionLimitRangeViolated = &analyze.Rule{
	ID:       "admission-limitrange-violated",
	Stage:    analyze.StageAdmission,
	Title:    "a LimitRange refuses the workload's pods",
	Doc:      admissionLimitRangeViolatedDoc,
	Severity: analyze.SeverityError,
	Needs: analyze.Needs{
		Required: []analyze.Kind{analyze.Events},
		Optional: []analyze.Kind{analyze.ReplicaSets, analyze.Jobs, analyze.StatefulSets, analyze.DaemonSets, analyze.LimitRanges},
	},
	Run: admissionLimitRangeViolated,
}

const admissionLimitRangeViolatedDoc = `A LimitRange in the namespace bounds what each container (or pod) may request or
limit, and the workload's template asks for more than its max, less than its min, or a
limit too many times its request. The LimitRanger admission plugin refuses every pod, so
none exists: the controller records FailedCreate "pods ... is forbidden: maximum cpu
usage per Container is 500m, but limit is 1" (several violations come as a bracketed
list) and, on a ReplicaSet, the ReplicaFailure condition. The message does not name the
LimitRange or the container; the LimitRange's spec.limits and the template's resources
do.

## Confirm on a live cluster

    kubectl get events -n NAMESPACE --field-selector reason=FailedCreate
    kubectl describe limitrange -n NAMESPACE

## Fix

Bring the template's requests and limits within the LimitRange's bounds, or, if the
workload truly needs more, raise the LimitRange's max (or lower its min) after checking
what the namespace's owners meant it to allow.
`

// The LimitRanger errors (plugin/pkg/admission/limitranger/admission.go, minConstraint,
// maxConstraint, maxRequestConstraint and limitRequestRatioConstraint, joined by
// utilerrors.NewAggregate as "[a, b]" when there are several).
var (
	reLimitRangeRefusal = regexp.MustCompile(`is forbidden: (\[?(?:(?:minimum|maximum) \S+ usage per \S+ is |\S+ max limit to request ratio per ).*)$`)
	reLimitBound        = regexp.MustCompile(`(minimum|maximum) (\S+) usage per (\S+) is ([^\s,]+?)(?:, but (request|limit) is ([^\s,\]]+)|\.  No (request|limit) is specified)`)
	reLimitRatio        = regexp.MustCompile(`(\S+) max limit to request ratio per (\S+) is ([^\s,]+), but (?:provided ratio is ([^\s,\]]+)|no (request|limit) is specified or (?:request|limit) is 0)`)
)

// limitViolation is one bound a pod breaks.
type limitViolation struct {
	// field is the LimitRange field: min, max or maxLimitRequestRatio.
	field, resource, limitType, enforced string
	text                                 string
}

func parseLimitViolations(msg string) []limitViolation {
	var out []limitViolation
	for _, m := range reLimitBound.FindAllStringSubmatch(msg, -1) {
		field := "max"
		if m[1] == "minimum" {
			field = "min"
		}
		out = append(out, limitViolation{field: field, resource: m[2], limitType: m[3], enforced: m[4], text: m[0]})
	}
	for _, m := range reLimitRatio.FindAllStringSubmatch(msg, -1) {
		out = append(out, limitViolation{field: "maxLimitRequestRatio", resource: m[1], limitType: m[2], enforced: m[3], text: m[0]})
	}
	return out
}

func admissionLimitRangeViolated(v *analyze.View) []analyze.Finding {
	owners := v.PodOwners()
	var out []analyze.Finding
	for _, g := range v.RefusalGroups(owners, reLimitRangeRefusal, "usage per", analyze.WholeMatch) {
		ns := g.Owner.Namespace
		violations := parseLimitViolations(g.Match[1])
		if len(violations) == 0 {
			continue
		}
		subjects := []analyze.ObjectRef{g.Workload, owners.Ref(g.Owner)}
		var texts, ranges []string
		var bounds []analyze.Evidence
		seen := map[string]bool{}
		for _, lv := range violations {
			texts = append(texts, lv.text)
			lr, ev := findLimitBound(v, ns, lv)
			// One bound cites one item of the LimitRange: its excerpt names them all.
			if lr == nil || seen[ev.Excerpt] {
				continue
			}
			seen[ev.Excerpt] = true
			bounds = append(bounds, ev)
			if !seen[lr.Obj.Name] {
				seen[lr.Obj.Name] = true
				subjects = append(subjects, lr.Ref())
				ranges = append(ranges, lr.Obj.Name)
			}
		}
		if len(bounds) == 0 && v.Has(analyze.LimitRanges) {
			// No LimitRange sets these bounds any more: they were changed after the
			// refusals, and the controller's next attempt meets the new ones.
			continue
		}
		evidence, who, tail, progressEv := g.Summary(owners)
		evidence = append(evidence, bounds...)
		evidence = append(evidence, owners.TemplateResourceEvidence(g.Owner)...)
		if progressEv != nil {
			evidence = append(evidence, *progressEv)
		}
		by := "a LimitRange in namespace " + ns
		edit := analyze.Command("kubectl describe limitrange -n %s", ns)
		if len(ranges) > 0 {
			by = fmt.Sprintf("LimitRange %s/%s", ns, strings.Join(ranges, ", "))
			edit = analyze.Command("kubectl describe limitrange -n %s %s", ns, analyze.Names(ranges))
		}
		out = append(out, analyze.Finding{
			Subjects: subjects,
			Cause:    fmt.Sprintf("%s refuses every pod of %s: %s%s", by, who, strings.Join(texts, "; "), tail),
			Evidence: evidence,
			Remediation: fmt.Sprintf("Bring the requests and limits in the template of %s within the bounds of %s (%s), "+
				"or, if the workload truly needs them, change the LimitRange after review; the controller retries on its own once pods fit.",
				g.Workload.String(), by, strings.Join(texts, "; ")),
			Confirm:  []string{g.ConfirmEvents(), edit},
			GroupKey: g.Workload.String() + "\x00" + g.Match[1],
		})
	}
	return out
}

// findLimitBound finds the LimitRange item that sets a violated bound and cites it.
func findLimitBound(v *analyze.View, ns string, lv limitViolation) (*analyze.LimitRange, analyze.Evidence) {
	for _, lr := range v.LimitRanges() {
		if lr.Obj.Namespace != ns {
			continue
		}
		for i, item := range lr.Obj.Spec.Limits {
			if string(item.Type) != lv.limitType {
				continue
			}
			list := map[string]corev1.ResourceList{"min": item.Min, "max": item.Max, "maxLimitRequestRatio": item.MaxLimitRequestRatio}[lv.field]
			q, ok := list[corev1.ResourceName(lv.resource)]
			if !ok || q.String() != lv.enforced {
				continue
			}
			return lr, lr.Loc.At("spec", "limits", i, lv.field, lv.resource).Evidence(
				fmt.Sprintf("LimitRange %s: %s %s per %s %s", lr.Obj.Name, lv.field, lv.resource, lv.limitType, lv.enforced), lr.Obj.CreationTimestamp.Time)
		}
	}
	return nil, analyze.Evidence{}
}
