package rules

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"podflow.dev/podflow/analyze"
)

// ConfigRunAsNonRoot finds containers the kubelet refuses to create because they must
// run as non-root and would not.
var ConfigRunAsNonRoot = &analyze.Rule{
	ID:       "config-run-as-non-root",
	Stage:    analyze.StageConfig,
	Title:    "runAsNonRoot is set but the container would run as root",
	Doc:      configRunAsNonRootDoc,
	Severity: analyze.SeverityError,
	Needs: analyze.Needs{
		Required: []analyze.Kind{analyze.Pods},
		Optional: []analyze.Kind{analyze.Events, analyze.ReplicaSets, analyze.Jobs},
	},
	Run: configRunAsNonRoot,
}

const configRunAsNonRootDoc = `The pod or container securityContext sets runAsNonRoot: true, so before creating the
container the kubelet checks the user it will run as: runAsUser when set, else the
image's USER. When that user is root (the image sets no USER, or USER 0 or root), the
kubelet refuses: the container waits in CreateContainerConfigError with the message
"container has runAsNonRoot and image will run as root", and a Failed event "Error: …"
is recorded on every retry. An image whose USER is a name rather than a number cannot be
verified ("image has non-numeric user (app), cannot verify user is non-root"), and
runAsUser: 0 contradicts runAsNonRoot ("container's runAsUser breaks non-root policy").

## Confirm on a live cluster

    kubectl get pod -n NAMESPACE POD -o jsonpath='{.status.containerStatuses[*].state.waiting}'
    kubectl get pod -n NAMESPACE POD -o jsonpath='{.spec.securityContext}{"\n"}{.spec.containers[*].securityContext}'

## Fix

Set runAsUser (pod or container securityContext) to a non-zero UID the image can run
as, or build the image with a numeric non-root USER (USER 10001, not USER app). Do not
drop runAsNonRoot to make the error go away unless the workload really needs root.
`

var (
	// pkg/kubelet/kuberuntime/security_context_others.go, verifyRunAsNonRoot.
	reNonRootImageRoot   = regexp.MustCompile(`container has runAsNonRoot and image will run as root`)
	reNonRootNonNumeric  = regexp.MustCompile(`container has runAsNonRoot and image has non-numeric user \(([^)]*)\), cannot verify user is non-root`)
	reNonRootUserIsRoot  = regexp.MustCompile(`container's runAsUser breaks non-root policy`)
	reNonRootInvalidUser = regexp.MustCompile(`container has runAsNonRoot and image has an invalid user id \((-?\d+)\)`)
)

// nonRootProblem is which of the kubelet's non-root checks failed.
type nonRootProblem struct {
	kind string // "root", "name", "runAsUser" or "invalid"
	user string
	said string
}

func parseNonRoot(msg string) (nonRootProblem, bool) {
	switch {
	case reNonRootImageRoot.MatchString(msg):
		return nonRootProblem{kind: "root", said: reNonRootImageRoot.FindString(msg)}, true
	case reNonRootNonNumeric.MatchString(msg):
		m := reNonRootNonNumeric.FindStringSubmatch(msg)
		return nonRootProblem{kind: "name", user: m[1], said: m[0]}, true
	case reNonRootUserIsRoot.MatchString(msg):
		return nonRootProblem{kind: "runAsUser", user: "0", said: reNonRootUserIsRoot.FindString(msg)}, true
	case reNonRootInvalidUser.MatchString(msg):
		m := reNonRootInvalidUser.FindStringSubmatch(msg)
		return nonRootProblem{kind: "invalid", user: m[1], said: m[0]}, true
	}
	return nonRootProblem{}, false
}

func configRunAsNonRoot(v *analyze.View) []analyze.Finding {
	var out []analyze.Finding
	for pc := range v.LiveContainers() {
		p, c := pc.Pod, pc.Container
		msg, event, ok := v.ConfigError(p, c)
		if !ok {
			continue
		}
		prob, ok := parseNonRoot(msg)
		if !ok {
			continue
		}
		out = append(out, nonRootFinding(v, p, c, prob, event))
	}
	return out
}

// securitySetting is where the effective runAsNonRoot or runAsUser of a container comes
// from: the container's securityContext overrides the pod's.
type securitySetting struct {
	where string
	loc   analyze.Location
}

func effectiveNonRoot(p *analyze.Pod, c analyze.ContainerInfo) (nonRoot, user *securitySetting, uid int64) {
	if sc := c.Spec.SecurityContext; sc != nil {
		if sc.RunAsNonRoot != nil {
			nonRoot = &securitySetting{"securityContext of " + c.Noun(), c.SpecLoc().At("securityContext", "runAsNonRoot")}
		}
		if sc.RunAsUser != nil {
			user, uid = &securitySetting{"securityContext of " + c.Noun(), c.SpecLoc().At("securityContext", "runAsUser")}, *sc.RunAsUser
		}
	}
	if psc := p.Obj.Spec.SecurityContext; psc != nil {
		if nonRoot == nil && psc.RunAsNonRoot != nil {
			nonRoot = &securitySetting{"pod securityContext", p.Loc.At("spec", "securityContext", "runAsNonRoot")}
		}
		if user == nil && psc.RunAsUser != nil {
			user, uid = &securitySetting{"pod securityContext", p.Loc.At("spec", "securityContext", "runAsUser")}, *psc.RunAsUser
		}
	}
	return nonRoot, user, uid
}

func nonRootFinding(v *analyze.View, p *analyze.Pod, c analyze.ContainerInfo, prob nonRootProblem, event *analyze.Event) analyze.Finding {
	pod := p.Obj
	w := c.Status.State.Waiting
	evidence := []analyze.Evidence{c.StatusLoc().At("state", "waiting").Evidence(w.Reason+": "+w.Message, time.Time{})}
	if event != nil {
		evidence = append(evidence, event.Evidence())
	}
	nonRoot, user, uid := effectiveNonRoot(p, c)
	set := "runAsNonRoot is true"
	if nonRoot != nil {
		set = "runAsNonRoot is true in the " + nonRoot.where
		evidence = append(evidence, nonRoot.loc.Evidence("runAsNonRoot: true", pod.CreationTimestamp.Time))
	}
	if user != nil {
		evidence = append(evidence, user.loc.Evidence(fmt.Sprintf("runAsUser: %d", uid), pod.CreationTimestamp.Time))
	}
	image := c.Spec.Image
	var why, fix string
	switch prob.kind {
	case "root":
		why = fmt.Sprintf("no runAsUser is set and image %s runs as root (its USER is unset, 0 or root)", image)
		fix = fmt.Sprintf("Set runAsUser to a non-zero UID the image can run as in the securityContext of %s or the pod, "+
			"or build image %s with a numeric non-root USER", c.Noun(), image)
	case "name":
		why = fmt.Sprintf("image %s names its user %q, not a number, so the kubelet cannot verify it is not root", image, prob.user)
		fix = fmt.Sprintf("Set runAsUser to the numeric UID of user %s, or build image %s with a numeric USER", prob.user, image)
	case "runAsUser":
		why = "runAsUser is 0 (root)"
		if user != nil {
			why += " in the " + user.where
		}
		fix = "Set runAsUser to a non-zero UID, or drop runAsNonRoot only if the workload really needs root"
	default:
		why = fmt.Sprintf("image %s has user id %s, outside the valid range", image, prob.user)
		fix = fmt.Sprintf("Set runAsUser to a valid non-zero UID, or fix the USER of image %s", image)
	}
	cause := fmt.Sprintf("%s cannot be created (CreateContainerConfigError): %s but %s (%q)", c.Noun(), set, why, prob.said)
	subjects, group := v.PodAndWorkload(p)
	return analyze.Finding{
		Subjects:    subjects,
		Cause:       cause,
		Evidence:    evidence,
		Remediation: fix + ". A Pod's securityContext cannot change in place: change the workload's pod template, or recreate the Pod.",
		Confirm: []string{
			analyze.Command("kubectl get pod -n %s %s -o jsonpath='{.status.%s[?(@.name==\"%s\")].state.waiting.message}'", pod.Namespace, pod.Name, analyze.Literal(c.StatusField()), c.Name),
			analyze.Command("kubectl get pod -n %s %s -o jsonpath='{.spec.securityContext}{\"\\n\"}{.spec.%s[?(@.name==\"%s\")].securityContext}'",
				pod.Namespace, pod.Name, specField(c), c.Name),
		},
		GroupKey: strings.Join([]string{group, c.Name, prob.kind}, "\x00"),
	}
}

// specField is the pod spec list that holds the container.
func specField(c analyze.ContainerInfo) string {
	if c.Init {
		return "initContainers"
	}
	return "containers"
}
