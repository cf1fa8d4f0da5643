package rules

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"podflow.dev/podflow/analyze"
)

// AdmissionPodSecurity finds workloads whose pods the namespace's Pod Security level
// refuses.
var AdmissionPodSecurity = &analyze.Rule{
	ID:       "admission-pod-security",
	Stage:    analyze.StageAdmission,
	Title:    "Pod Security admission refuses the workload's pods",
	Doc:      admissionPodSecurityDoc,
	Severity: analyze.SeverityError,
	Needs: analyze.Needs{
		Required: []analyze.Kind{analyze.Events},
		Optional: []analyze.Kind{analyze.Namespaces, analyze.ReplicaSets, analyze.Jobs, analyze.StatefulSets, analyze.DaemonSets},
	},
	Run: admissionPodSecurity,
}

const admissionPodSecurityDoc = `The namespace enforces a Pod Security Standard (label
pod-security.kubernetes.io/enforce: baseline or restricted) and the workload's pod
template breaks it, so the API server refuses every pod: the controller records
FailedCreate "pods ... is forbidden: violates PodSecurity "restricted:latest":
privileged (container "app" must not set securityContext.privileged=true), ...". No pod
exists to inspect; the message lists each failed check and the field to change.

## Confirm on a live cluster

    kubectl get namespace NAMESPACE --show-labels
    kubectl get events -n NAMESPACE --field-selector reason=FailedCreate
    kubectl label --dry-run=server --overwrite namespace NAMESPACE pod-security.kubernetes.io/enforce=LEVEL

## Fix

Change the pod template to meet the level: each check in the message names the field
and the value it needs (for "restricted": allowPrivilegeEscalation=false,
capabilities.drop=["ALL"], runAsNonRoot=true, seccompProfile.type RuntimeDefault, no
privileged containers or host namespaces). Only if the workload truly needs the
privileges, run it in a namespace whose enforce label allows them, after review.
`

// The Pod Security admission error (staging/src/k8s.io/pod-security-admission/
// admission/admission.go, EvaluatePod: "violates PodSecurity %q: %s" with the level
// "restricted:latest" and policy.AggregateCheckResult.ForbiddenDetail's
// "reason (detail), reason (detail)" list).
var rePodSecurity = regexp.MustCompile(`violates PodSecurity "([^"]+)": (.+)$`)

// The namespace labels that set the enforced level and version
// (k8s.io/pod-security-admission/api/constants.go).
const (
	psaEnforceLabel        = "pod-security.kubernetes.io/enforce"
	psaEnforceVersionLabel = "pod-security.kubernetes.io/enforce-version"
)

// reNamedContainers finds the containers a check detail names: `container "app"`,
// `containers "a", "b"`, `pod or container "app"`.
var (
	reNamedContainers = regexp.MustCompile(`containers? ((?:"[^"]+"(?:, | and )?)+)`)
	reQuoted          = regexp.MustCompile(`"([^"]+)"`)
)

// podSecurityRefusal gathers one owner's refusals for one level and set of checks.
type podSecurityRefusal struct {
	owner, workload      analyze.ObjectRef
	level, detail        string
	refusals             int
	lastEvent, condition *analyze.Evidence
}

func admissionPodSecurity(v *analyze.View) []analyze.Finding {
	owners := indexPodOwners(v)
	groups := map[string]*podSecurityRefusal{}
	var keys []string
	for _, r := range podCreateRefusals(v) {
		m := rePodSecurity.FindStringSubmatch(r.message)
		if m == nil || owners.satisfied(r.owner) {
			continue
		}
		key := r.owner.String() + "\x00" + m[1] + "\x00" + m[2]
		g, ok := groups[key]
		if !ok {
			g = &podSecurityRefusal{owner: r.owner, workload: owners.workload(r.owner), level: m[1], detail: m[2]}
			groups[key] = g
			keys = append(keys, key)
		}
		ev := r.evidence("violates PodSecurity")
		if r.event == nil {
			g.condition = &ev
			continue
		}
		g.refusals += r.count
		g.lastEvent = &ev
	}
	sort.Strings(keys)
	var out []analyze.Finding
	for _, k := range keys {
		out = append(out, podSecurityFinding(v, owners, groups[k]))
	}
	return out
}

func podSecurityFinding(v *analyze.View, owners *podOwners, g *podSecurityRefusal) analyze.Finding {
	ns := g.owner.Namespace
	var evidence []analyze.Evidence
	for _, e := range []*analyze.Evidence{g.lastEvent, g.condition} {
		if e != nil {
			evidence = append(evidence, *e)
		}
	}
	enforced := ""
	nsRef := analyze.ObjectRef{Kind: "Namespace", Name: ns}
	if n := v.Namespace(ns); n != nil {
		nsRef = n.Ref()
		for _, label := range []string{psaEnforceLabel, psaEnforceVersionLabel} {
			if val, ok := n.Obj.Labels[label]; ok {
				evidence = append(evidence, n.Loc.At("metadata", "labels", label).Evidence(label+"="+val, n.Obj.CreationTimestamp.Time))
				if enforced != "" {
					enforced += ", "
				}
				enforced += label + "=" + val
			}
		}
	}
	checks := splitChecks(g.detail)
	evidence = append(evidence, securityContextEvidence(owners, g.owner, checks)...)
	progress, progressEv := owners.progress(g.owner)
	if progressEv != nil {
		evidence = append(evidence, *progressEv)
	}
	level := fmt.Sprintf("%q", g.level)
	if enforced != "" {
		level += " (" + enforced + ")"
	}
	who := ownerText(g.owner, g.workload)
	if progress != "" {
		who = g.workload.String()
	}
	cause := fmt.Sprintf("namespace %s enforces Pod Security %s and refuses every pod of %s, which fails %d check(s): %s",
		ns, level, who, len(checks), g.detail)
	if progress != "" {
		cause += "; " + progress
	}
	if g.refusals > 0 {
		cause += fmt.Sprintf(" (%d creation(s) refused)", g.refusals)
	}
	var fixes []string
	for _, c := range checks {
		if c.detail != "" {
			fixes = append(fixes, c.detail)
		} else {
			fixes = append(fixes, "remove what fails "+c.reason)
		}
	}
	lvl, _, _ := strings.Cut(g.level, ":")
	return analyze.Finding{
		Subjects: []analyze.ObjectRef{g.workload, owners.ref(g.owner), nsRef},
		Cause:    cause,
		Evidence: evidence,
		Remediation: fmt.Sprintf("Change the pod template of %s to meet %q: %s. Only if it truly needs these privileges, "+
			"run it in a namespace whose %s label allows them, after review.", g.workload.String(), lvl, strings.Join(fixes, "; "), psaEnforceLabel),
		Confirm: []string{
			fmt.Sprintf("kubectl get namespace %s --show-labels", ns),
			fmt.Sprintf("kubectl get events -n %s --field-selector involvedObject.name=%s,reason=FailedCreate", ns, g.owner.Name),
		},
		GroupKey: g.workload.String() + "\x00" + g.level + "\x00" + g.detail,
	}
}

// securityCheck is one failed check of a Pod Security level: its reason
// ("allowPrivilegeEscalation != false") and detail, which names the containers and
// the field they must set.
type securityCheck struct {
	reason, detail string
}

// splitChecks parses ForbiddenDetail's "reason (detail), reason, reason (detail)";
// details hold commas and quotes of their own, so it splits only outside them.
func splitChecks(s string) []securityCheck {
	var out []securityCheck
	var cur strings.Builder
	depth, quoted := 0, false
	flush := func() {
		item := strings.TrimSpace(cur.String())
		cur.Reset()
		if item == "" {
			return
		}
		c := securityCheck{reason: item}
		if i := strings.Index(item, " ("); i > 0 && strings.HasSuffix(item, ")") {
			c.reason, c.detail = item[:i], item[i+2:len(item)-1]
		}
		out = append(out, c)
	}
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case ch == '"':
			quoted = !quoted
		case quoted:
		case ch == '(':
			depth++
		case ch == ')':
			if depth > 0 {
				depth--
			}
		case ch == ',' && depth == 0 && i+1 < len(s) && s[i+1] == ' ':
			flush()
			continue
		}
		cur.WriteByte(ch)
	}
	flush()
	return out
}

// securityContextEvidence cites, in the owner's pod template, the security context of
// each container the checks name (or the container itself when it sets none).
func securityContextEvidence(owners *podOwners, owner analyze.ObjectRef, checks []securityCheck) []analyze.Evidence {
	tmpl, loc, ok := owners.template(owner)
	if !ok {
		return nil
	}
	named := map[string][]string{}
	for _, c := range checks {
		for _, m := range reNamedContainers.FindAllStringSubmatch(c.detail, -1) {
			for _, q := range reQuoted.FindAllStringSubmatch(m[1], -1) {
				named[q[1]] = append(named[q[1]], c.reason)
			}
		}
	}
	var out []analyze.Evidence
	cite := func(field string, i int, name string) {
		reasons, ok := named[name]
		if !ok {
			return
		}
		at := loc.At("spec", field, i)
		text := "container " + name + " sets no securityContext"
		containers := tmpl.Spec.Containers
		if field == "initContainers" {
			containers = tmpl.Spec.InitContainers
		}
		if containers[i].SecurityContext != nil {
			at = at.At("securityContext")
			text = "container " + name + " securityContext"
		}
		out = append(out, at.Evidence(text+" fails: "+strings.Join(reasons, ", "), tmpl.CreationTimestamp.Time))
	}
	for i, c := range tmpl.Spec.InitContainers {
		cite("initContainers", i, c.Name)
	}
	for i, c := range tmpl.Spec.Containers {
		cite("containers", i, c.Name)
	}
	return out
}
