package rules

import (
	"fmt"
	"regexp"
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

func admissionPodSecurity(v *analyze.View) []analyze.Finding {
	owners := v.PodOwners()
	var out []analyze.Finding
	for _, g := range v.RefusalGroups(owners, rePodSecurity, "violates PodSecurity", func(m []string) string { return m[1] + "\x00" + m[2] }) {
		out = append(out, podSecurityFinding(v, owners, g))
	}
	return out
}

func podSecurityFinding(v *analyze.View, owners *analyze.PodOwners, g *analyze.RefusalGroup) analyze.Finding {
	ns := g.Owner.Namespace
	levelName, detail := g.Match[1], g.Match[2]
	evidence, who, tail, progressEv := g.Summary(owners)
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
	checks := splitChecks(detail)
	evidence = append(evidence, securityContextEvidence(owners, g.Owner, checks)...)
	if progressEv != nil {
		evidence = append(evidence, *progressEv)
	}
	level := fmt.Sprintf("%q", levelName)
	if enforced != "" {
		level += " (" + enforced + ")"
	}
	cause := fmt.Sprintf("namespace %s enforces Pod Security %s and refuses every pod of %s, which fails %d check(s): %s%s",
		ns, level, who, len(checks), detail, tail)
	var fixes []string
	for _, c := range checks {
		if c.detail != "" {
			fixes = append(fixes, c.detail)
		} else {
			fixes = append(fixes, "remove what fails "+c.reason)
		}
	}
	lvl, _, _ := strings.Cut(levelName, ":")
	return analyze.Finding{
		Subjects: []analyze.ObjectRef{g.Workload, owners.Ref(g.Owner), nsRef},
		Cause:    cause,
		Evidence: evidence,
		Remediation: fmt.Sprintf("Change the pod template of %s to meet %q: %s. Only if it truly needs these privileges, "+
			"run it in a namespace whose %s label allows them, after review.", g.Workload.String(), lvl, strings.Join(fixes, "; "), psaEnforceLabel),
		Confirm: []string{
			analyze.Command("kubectl get namespace %s --show-labels", ns),
			g.ConfirmEvents(),
		},
		GroupKey: g.Workload.String() + "\x00" + levelName + "\x00" + detail,
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
func securityContextEvidence(owners *analyze.PodOwners, owner analyze.ObjectRef, checks []securityCheck) []analyze.Evidence {
	tmpl, loc, ok := owners.Template(owner)
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
