package importer

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"podflow.dev/podflow/bundle"
)

// A reporter often names the pod only in their own words, above an excerpt cut below
// its Name line: "my pod web-1 in namespace shop keeps restarting". When the file's
// prose names exactly one pod, the excerpt is that pod's. A word is taken for a pod's
// name only when it reads like one (a DNS subdomain with a dash or a digit: "the pod is
// pending" names none), and the namespace only when the same phrase gives it.
var reProsePod = regexp.MustCompile("(?i)\\bpods?\\s+(?:named\\s+|called\\s+)?[`'\"]?([a-z0-9](?:[a-z0-9.-]*[a-z0-9])?)[`'\"]?" +
	"(?:\\s+(?:in|from)\\s+(?:the\\s+)?(?:namespace\\s+)?[`'\"]?([a-z0-9](?:[a-z0-9-]*[a-z0-9])?)[`'\"]?)?")

// prosePod is the one pod a file's text names, and its namespace when the same phrase
// gives it; "" when it names none or more than one.
func prosePod(lines []textLine) (name, ns string) {
	names := map[string]string{}
	for _, l := range lines {
		if len(l.s) > 400 || !strings.Contains(strings.ToLower(l.s), "pod") {
			continue
		}
		for _, m := range reProsePod.FindAllStringSubmatch(l.s, -1) {
			n := strings.ToLower(m[1])
			if len(n) < 3 || !strings.ContainsAny(n, "-0123456789") {
				continue
			}
			space := strings.ToLower(m[2])
			if space == "namespace" || space == "the" || space == "default" && m[2] != "default" {
				space = ""
			}
			if old, ok := names[n]; !ok || old == "" {
				names[n] = space
			}
		}
	}
	if len(names) != 1 {
		return "", ""
	}
	for n, s := range names {
		return n, s
	}
	return "", ""
}

// reProseStatus is a STATUS word of kubectl the reporter writes as the state a pod is in
// ("the first mon pod gets into Init:CrashLoopBackOff", "stuck in ContainerCreating"):
// only kubectl's own spellings, after a word that puts a pod in it.
var reProseStatus = regexp.MustCompile("(?i:\\b(?:in|into|to|with|shows?|showing|status(?: is)?|state(?: is)?|stays?|stuck)\\s+(?:(?:the|an?)\\s+)?)[`'\"]?" +
	`(Init:(?:CrashLoopBackOff|Error|OOMKilled|ImagePullBackOff|ErrImagePull|CreateContainerConfigError)|CrashLoopBackOff|ImagePullBackOff|ErrImagePull|` +
	`CreateContainerConfigError|CreateContainerError|RunContainerError|ContainerCreating|PodInitializing|InvalidImageName)\b`)

// proseStatuses are the STATUS words the reporter's sentences put a pod in.
func proseStatuses(lines []textLine) []string {
	var out []string
	for _, l := range lines {
		if len(l.s) > 400 || isHeaderlessPod(l.s) || isHeaderlessEvent(l.s) {
			continue
		}
		for _, m := range reProseStatus.FindAllStringSubmatch(l.s, -1) {
			if !slices.Contains(out, m[1]) {
				out = append(out, m[1])
			}
		}
	}
	return out
}

// proseStatus gives the one pod whose status the paste does not show the STATUS the
// reporter's words put it in, when they name one and only one pod lacks it: kubectl
// would have shown it so in the row the reporter read.
func (li *looseImport) proseStatus() {
	if len(li.proseWords) != 1 {
		return
	}
	var only *looseItem
	var pod corev1.Pod
	for k, it := range li.byKey {
		if !strings.HasPrefix(k, "Pod/") {
			continue
		}
		var p corev1.Pod
		if json.Unmarshal(it.data, &p) != nil || p.Status.Phase != "" || p.Status.Reason != "" ||
			len(p.Status.ContainerStatuses)+len(p.Status.InitContainerStatuses) > 0 {
			continue
		}
		if only != nil {
			return
		}
		only, pod = it, p
	}
	if only == nil {
		return
	}
	word := li.proseWords[0]
	pod.Status.Phase, pod.Status.Reason = statusPhase(word)
	if pastScheduling(word) {
		pod.Status.Conditions = append(pod.Status.Conditions, corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionTrue,
			Message: "the ticket's text shows the pod in " + word + ", past scheduling"})
	}
	if marks := pod.Annotations[bundle.PartialAnnotation]; marks != "" {
		kept := slices.DeleteFunc(strings.Split(marks, ","), func(m string) bool { return m == partialStatus })
		pod.Annotations[bundle.PartialAnnotation] = strings.Join(kept, ",")
		if len(kept) == 0 {
			delete(pod.Annotations, bundle.PartialAnnotation)
		}
	}
	if data, err := json.Marshal(pod); err == nil {
		only.data = data
	}
}
