package analyze

import "sort"

// TableInitFailure is a pod that kubectl shows with a failing init container
// (Init:CrashLoopBackOff, Init:Error in a get pods row) while the evidence holds no
// status of its containers, and the one container whose log the evidence holds for it
// (`kubectl logs POD -c NAME`): the app containers never ran, so that container is the
// failing init container.
type TableInitFailure struct {
	Pod       *Pod
	Container string
	// Reason is kubectl's STATUS word.
	Reason string
	// Log is the container's previous instance's log when the evidence has it, else its
	// current one.
	Log *ContainerLog
}

// TableInitFailures lists the pods whose failing init container is known only from a
// kubectl row and one container's log. A pod with logs of two or more such containers
// is left out: the evidence does not say which one fails.
func (v *View) TableInitFailures() []TableInitFailure {
	if !v.allow(Pods) || !v.allow(ContainerLogs) {
		return nil
	}
	var pods []*Pod
	for _, p := range v.g.pods {
		reason := p.Obj.Status.Reason
		if (reason == "Init:CrashLoopBackOff" || reason == "Init:Error") && len(p.Obj.Status.InitContainerStatuses) == 0 && p.Obj.DeletionTimestamp == nil {
			pods = append(pods, p)
		}
	}
	if len(pods) == 0 {
		// The usual bundle: the logs are not walked.
		return nil
	}
	byPod := map[string][]*ContainerLog{}
	for _, l := range v.g.logs {
		k := l.Namespace + "/" + l.Pod
		byPod[k] = append(byPod[k], l)
	}
	var out []TableInitFailure
	for _, p := range pods {
		reason := p.Obj.Status.Reason
		// A spec the import built from the evidence lists the containers whose logs it
		// saw, init or not: it says nothing of which ones are the app's.
		app := map[string]bool{}
		for _, c := range Containers(p) {
			if !c.Init && !Partial(*p.meta, "spec") {
				app[c.Name] = true
			}
		}
		names := map[string]bool{}
		for _, l := range byPod[p.meta.Namespace+"/"+p.meta.Name] {
			if !app[l.Container] && UsableLog(l) {
				names[l.Container] = true
			}
		}
		if len(names) != 1 {
			continue
		}
		var name string
		for n := range names {
			name = n
		}
		log := v.Log(p, name, true)
		if !UsableLog(log) {
			log = v.Log(p, name, false)
		}
		out = append(out, TableInitFailure{Pod: p, Container: name, Reason: reason, Log: log})
	}
	sort.Slice(out, func(i, j int) bool {
		return out[i].Pod.meta.Namespace+"/"+out[i].Pod.meta.Name < out[j].Pod.meta.Namespace+"/"+out[j].Pod.meta.Name
	})
	return out
}
