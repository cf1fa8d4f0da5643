package analyze

import (
	"slices"
	"strconv"

	"podflow.dev/podflow/internal/phrase"
)

// A root cause names whose chain broke. Many rules and signatures read one message and
// say what it means ("the liveness probe fails ..., so the kubelet kills the
// container"); the pod it is about is a subject of the finding, but a reader who takes
// the sentence alone (a ticket's answer, an index of causes, a chat message) does not
// know which pod. nameSubjects closes the sentence with the pods it is about when it
// names none of them nor their workload: in parentheses, so the index's cause template
// (which drops parenthesized parts) keys the same cause the same way for every pod.

// nameSubjects adds the subject clause to every finding whose cause names none of its
// pods (by a name the evidence shows) nor a workload among its subjects, nor, at the
// node stage, the node.
func nameSubjects(all []*Finding) {
	for _, f := range all {
		if clause := subjectClause(f); clause != "" {
			f.Cause += " (" + clause + ")"
		}
	}
}

// subjectClause is "pod NS/NAME", "3 pods of Deployment NS/NAME" or "pod NS/NAME and 2
// more" for the finding's named pods, or "" when the cause already names one of them
// or their workload, or the evidence names none.
func subjectClause(f *Finding) string {
	var pods []ObjectRef
	var workload *ObjectRef
	for i, s := range f.Subjects {
		switch {
		case s.Kind == "Pod" && s.UnnamedIn == "" && s.Name != "" && s.Name != UnknownSubject:
			pods = append(pods, s)
		case s.Kind == "Node" && f.Stage == StageNode && s.Name != UnknownSubject && names(f.Cause, s.Name):
			// A node's trouble named by its node: the pods are the ones it affects,
			// not where the chain broke.
			return ""
		case isWorkload(s.Kind) && s.UnnamedIn == "" && s.Name != "":
			// The top owner is what a user names: a Deployment before its ReplicaSet.
			if workload == nil || slices.Index(workloadKinds, s.Kind) < slices.Index(workloadKinds, workload.Kind) {
				workload = &f.Subjects[i]
			}
			if names(f.Cause, s.Name) {
				return ""
			}
		}
	}
	if len(pods) == 0 {
		return ""
	}
	for _, p := range pods {
		if names(f.Cause, p.Name) {
			return ""
		}
	}
	name := func(p ObjectRef) string {
		if p.NamespaceUnknown || p.Namespace == "" {
			return p.Name
		}
		return p.Namespace + "/" + p.Name
	}
	switch {
	case len(pods) == 1:
		return "pod " + name(pods[0])
	case workload != nil:
		return strconv.Itoa(len(pods)) + " pods of " + workload.Kind + " " + name(*workload)
	}
	return "pod " + name(pods[0]) + " and " + strconv.Itoa(len(pods)-1) + " more"
}

// names reports whether the sentence names name as a name of its own (not inside a
// longer one: "db" is not named by "db-0").
func names(sentence, name string) bool {
	return name != "" && phrase.ReplaceName(sentence, name, "\x00") != sentence
}
