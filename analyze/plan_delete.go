package analyze

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// deleteRisk says what `kubectl delete pod` would do to the finding's pods, from the
// first pod whose owner the evidence shows; a node cause says what a drain would move.
func (g *Graph) deleteRisk(f *Finding, spec *ChangeSpec, pods []planPod) DeleteRisk {
	if len(pods) == 0 {
		nodeCause := spec.Target == changeNode || f.Stage == StageNode
		for _, s := range f.Subjects {
			if s.Kind == "Node" && nodeCause {
				return g.drainRisk(s.Name)
			}
		}
		wl, _ := g.findingWorkload(f, nil)
		switch {
		case f.Stage == StageService:
			return DeleteRisk{Outcome: DeleteNoPod, Summary: "no pod to delete: the cause is in the Service, and deleting pods changes nothing about it"}
		case nodeCause:
			return DeleteRisk{Outcome: DeleteDrain, Summary: "the cause is the node's and the evidence does not name the node: " +
				"draining it (kubectl drain NODE --ignore-daemonsets) evicts its pods to other nodes; evictions wait for PodDisruptionBudgets"}
		case wl == nil && f.Stage != StageAdmission && f.Stage != StageController:
			return DeleteRisk{Outcome: DeleteUnknown, Summary: "the evidence names no pod: find the pod and its owner " +
				"(kubectl get pods -A -o wide, then its ownerReferences) before deleting anything"}
		}
		what := "the pods"
		if wl != nil {
			what = wl.String() + "'s pods"
		}
		return DeleteRisk{Outcome: DeleteNoPod,
			Summary: "no pod to delete: " + what + " are not created while the cause lasts; the controller retries on its own once it is fixed"}
	}
	var first *planPod
	for i := range pods {
		if pods[i].pod != nil && pods[i].ownerKnown {
			first = &pods[i]
			break
		}
	}
	if first == nil {
		return DeleteRisk{Outcome: DeleteUnknown, Summary: ownerUnknownNote(pods[0])}
	}
	r := g.podDeleteRisk(first, spec)
	r.Details = append(r.Details, volumeDetails(first.pod)...)
	if n := otherOwners(pods, first); n > 0 {
		r.Details = append(r.Details, fmt.Sprintf("%d more pod(s) of this finding have another owner: check each before deleting", n))
	}
	if spec.Target == changeNode || f.Stage == StageNode {
		if node := first.pod.Obj.Spec.NodeName; node != "" {
			r.Details = append(r.Details, g.drainRisk(node).Summary)
		}
	}
	return r
}

func (g *Graph) podDeleteRisk(p *planPod, spec *ChangeSpec) DeleteRisk {
	same := sameCause(spec, p)
	same3 := map[SameCause]string{SameCauseYes: "the replacement meets the same cause",
		SameCauseMaybe: "the replacement may meet the same cause",
		SameCauseNo:    "the replacement may land on another node and escape the cause"}[same]
	c := p.controller
	if c == nil {
		return DeleteRisk{Outcome: DeleteGone,
			Summary: "gone for good: nothing owns " + p.ref.String() + ", so nothing recreates it; recreate it from its manifest"}
	}
	switch c.Kind {
	case "StatefulSet":
		var claims []string
		for _, v := range p.pod.Obj.Spec.Volumes {
			if v.PersistentVolumeClaim != nil {
				claims = append(claims, v.PersistentVolumeClaim.ClaimName)
			}
		}
		if len(claims) > 0 {
			return DeleteRisk{Outcome: DeleteReattached, SameCause: same,
				Summary: fmt.Sprintf("recreated as %s by %s with the same claim %s (its data stays); %s",
					p.ref.Name, c.String(), strings.Join(claims, ", "), same3)}
		}
		return DeleteRisk{Outcome: DeleteRecreated, SameCause: same,
			Summary: fmt.Sprintf("recreated as %s by %s; %s", p.ref.Name, c.String(), same3)}
	case "Job":
		return g.jobDeleteRisk(p, c, same, same3)
	case "DaemonSet":
		return DeleteRisk{Outcome: DeleteRecreated, SameCause: same,
			Summary: fmt.Sprintf("recreated on the same node by %s; %s", c.String(), same3)}
	}
	by := c.String()
	if p.workload != nil && p.workload.key() != c.key() {
		by += " (" + p.workload.String() + ")"
	}
	return DeleteRisk{Outcome: DeleteRecreated, SameCause: same, Summary: fmt.Sprintf("recreated by %s; %s", by, same3)}
}

// jobDeleteRisk: the Job controller counts a pod deleted before it finished as failed
// (k8s.io/kubernetes pkg/controller/job, pods tracked with finalizers since 1.26), and
// replaces it only while the failures stay within backoffLimit.
func (g *Graph) jobDeleteRisk(p *planPod, c *ObjectRef, same SameCause, same3 string) DeleteRisk {
	limit, failed, done := int32(6), int32(-1), ""
	if o, ok := g.byKey[c.key()].(*Job); ok {
		if o.Obj.Spec.BackoffLimit != nil {
			limit = *o.Obj.Spec.BackoffLimit
		}
		failed = o.Obj.Status.Failed
		for _, cond := range o.Obj.Status.Conditions {
			if (cond.Type == "Failed" || cond.Type == "Complete") && cond.Status == corev1.ConditionTrue {
				done = string(cond.Type) + cmpOr(" ("+cond.Reason+")", "")
			}
		}
	}
	if done != "" {
		return DeleteRisk{Outcome: DeleteGone,
			Summary: fmt.Sprintf("not replaced: %s is finished, %s; deleting its pod loses the pod's logs and status for good", c.String(), strings.TrimSuffix(done, " ()"))}
	}
	counts := fmt.Sprintf("backoffLimit %d", limit)
	if failed >= 0 {
		counts = fmt.Sprintf("%d failed so far, backoffLimit %d", failed, limit)
	}
	sum := fmt.Sprintf("%s counts the deleted pod as a failure (%s) and replaces it only while within the limit; %s", c.String(), counts, same3)
	if restartPolicy(p.pod) == corev1.RestartPolicyNever {
		sum += "; with restartPolicy Never each failed pod keeps its own logs until deleted"
	}
	return DeleteRisk{Outcome: DeleteBackoff, SameCause: same, Summary: sum}
}

// sameCause reads the spec's recurs for this pod: a cause tied to the node recurs for
// a DaemonSet's pod or a pod pinned to the node, and maybe not for others.
func sameCause(spec *ChangeSpec, p *planPod) SameCause {
	switch spec.Recurs {
	case recursMaybe:
		return SameCauseMaybe
	case recursNode:
		if p.controller != nil && p.controller.Kind == "DaemonSet" {
			return SameCauseYes
		}
		if p.pod != nil && (len(p.pod.Obj.Spec.NodeSelector) > 0 && p.pod.Obj.Spec.NodeSelector["kubernetes.io/hostname"] != "") {
			return SameCauseYes
		}
		return SameCauseNo
	}
	return SameCauseYes
}

// volumeDetails names the data a deletion loses or keeps.
func volumeDetails(p *Pod) []string {
	var empty, claims []string
	for _, v := range p.Obj.Spec.Volumes {
		switch {
		case v.EmptyDir != nil:
			empty = append(empty, v.Name)
		case v.PersistentVolumeClaim != nil:
			claims = append(claims, v.PersistentVolumeClaim.ClaimName)
		}
	}
	var out []string
	if len(empty) > 0 {
		out = append(out, "emptyDir data is lost: "+strings.Join(empty, ", "))
	}
	if len(claims) > 0 && controllerKind(p) != "StatefulSet" {
		out = append(out, "claim(s) "+strings.Join(claims, ", ")+" stay bound; the replacement mounts them again")
	}
	return out
}

func controllerKind(p *Pod) string {
	if c := controllerOf(p.meta); c != nil {
		return c.Kind
	}
	return ""
}

func otherOwners(pods []planPod, first *planPod) int {
	n := 0
	for _, p := range pods {
		if p.ref.key() == first.ref.key() {
			continue
		}
		a, b := "", ""
		if p.workload != nil {
			a = p.workload.key()
		}
		if first.workload != nil {
			b = first.workload.key()
		}
		if !p.ownerKnown || a != b {
			n++
		}
	}
	return n
}

// drainRisk says what `kubectl drain` of a node would move.
func (g *Graph) drainRisk(node string) DeleteRisk {
	var moved, daemon, bare, empty int
	for _, p := range g.podsByNode[node] {
		if p.Obj.Status.Phase == corev1.PodSucceeded || p.Obj.Status.Phase == corev1.PodFailed {
			continue
		}
		switch c := controllerOf(p.meta); {
		case c == nil:
			bare++
		case c.Kind == "DaemonSet":
			daemon++
			continue
		default:
			moved++
		}
		if slices.ContainsFunc(p.Obj.Spec.Volumes, func(v corev1.Volume) bool { return v.EmptyDir != nil }) {
			empty++
		}
	}
	s := fmt.Sprintf("kubectl drain %s would evict %d pod(s) to other nodes", node, moved)
	if bare > 0 {
		s += fmt.Sprintf(", and %d pod(s) nothing owns only with --force, gone for good", bare)
	}
	if daemon > 0 {
		s += fmt.Sprintf("; %d DaemonSet pod(s) stay (--ignore-daemonsets)", daemon)
	}
	if empty > 0 {
		s += fmt.Sprintf("; %d pod(s) lose emptyDir data (--delete-emptydir-data)", empty)
	}
	s += "; evictions wait for PodDisruptionBudgets"
	return DeleteRisk{Outcome: DeleteDrain, Summary: s}
}

// keepFirst lists, in order, the evidence a restart or deletion would lose and the
// read-only commands that save it: previous container logs, the events (the API server
// keeps them about an hour, --event-ttl), the node's journal.
func (g *Graph) keepFirst(f *Finding, pods []planPod) []KeepStep {
	var out []KeepStep
	seen := map[string]bool{}
	add := func(s KeepStep) {
		if !seen[s.Command] {
			seen[s.Command] = true
			out = append(out, s)
		}
	}
	const maxPods = 3
	var nodes []string
	for i, p := range pods {
		if i == maxPods {
			break
		}
		ns, name := p.nsArg(), p.nameArg()
		if p.pod == nil {
			add(KeepStep{What: "logs of the previous containers of " + p.label(),
				Command: Command("kubectl logs %s -n %s --all-containers --previous > %s-previous.log", name, ns, name)})
			continue
		}
		for _, st := range append(slices.Clone(p.pod.Obj.Status.InitContainerStatuses), p.pod.Obj.Status.ContainerStatuses...) {
			if p.container != "" && st.Name != p.container {
				continue
			}
			if st.RestartCount > 0 || st.LastTerminationState.Terminated != nil {
				add(KeepStep{What: "log of the previous run of container " + st.Name + " of " + p.label() + " (a restart replaces it, a deletion loses it)",
					Command: Command("kubectl logs %s -n %s -c %s --previous > %s-%s-previous.log", name, ns, st.Name, name, st.Name)})
			}
			if st.State.Terminated != nil {
				add(KeepStep{What: "log of container " + st.Name + " of " + p.label() + " (it has exited; a deletion loses it)",
					Command: Command("kubectl logs %s -n %s -c %s > %s-%s.log", name, ns, st.Name, name, st.Name)})
			}
		}
		if n := p.pod.Obj.Spec.NodeName; n != "" && !slices.Contains(nodes, n) {
			nodes = append(nodes, n)
		}
	}
	// Events: of the pods, else of the objects the finding names.
	evNS := map[string]bool{}
	for i, p := range pods {
		if i == maxPods {
			break
		}
		add(KeepStep{What: "events of " + p.label() + " (kept about an hour)",
			Command: p.eventsCommand()})
		evNS[p.ref.Namespace] = true
	}
	if len(pods) == 0 {
		for _, s := range f.Subjects {
			if s.Namespace != "" && !evNS[s.Namespace] {
				evNS[s.Namespace] = true
				add(KeepStep{What: "events of namespace " + s.Namespace + " (kept about an hour)",
					Command: Command("kubectl get events -n %s -o yaml > %s-events.yaml", s.Namespace, s.Namespace)})
			}
		}
		for _, s := range f.Subjects {
			if s.Kind == "Node" {
				add(KeepStep{What: "events of node " + s.Name + " (kept about an hour)",
					Command: Command("kubectl get events -A --field-selector %s -o yaml > %s-events.yaml", Value("involvedObject.name="+s.Name), s.Name)})
			}
		}
	}
	for _, s := range f.Subjects {
		if s.Kind == "Node" && !slices.Contains(nodes, s.Name) {
			nodes = append(nodes, s.Name)
		}
	}
	for _, n := range nodes {
		add(KeepStep{What: "the kubelet and runtime journal of node " + n + " (rotated, and lost with the machine)",
			Command:   Command("journalctl -u kubelet -u containerd --since %s --no-pager > %s-journal.log   # on node %s", Value("-2h"), n, n),
			NodeLevel: true})
	}
	return out
}

// needsFor lists the permissions the confirm and keep-first commands need, read from
// the commands themselves.
func needsFor(f *Finding, keep []KeepStep) []Permission {
	var out []Permission
	seen := map[string]bool{}
	add := func(p Permission) {
		if k := p.String(); !seen[k] {
			seen[k] = true
			out = append(out, p)
		}
	}
	cmds := slices.Clone(f.Confirm)
	for _, k := range keep {
		cmds = append(cmds, k.Command)
	}
	for _, c := range cmds {
		for _, p := range commandPermissions(c) {
			add(p)
		}
	}
	return out
}

// resourceNames maps kubectl's resource words to their API resource names.
var resourceNames = map[string]string{
	"pod": "pods", "pods": "pods", "po": "pods", "node": "nodes", "nodes": "nodes", "no": "nodes",
	"events": "events", "event": "events", "ev": "events", "deployment": "deployments", "deployments": "deployments", "deploy": "deployments",
	"replicaset": "replicasets", "replicasets": "replicasets", "rs": "replicasets", "statefulset": "statefulsets", "statefulsets": "statefulsets", "sts": "statefulsets",
	"daemonset": "daemonsets", "daemonsets": "daemonsets", "ds": "daemonsets", "job": "jobs", "jobs": "jobs", "cronjob": "cronjobs", "cronjobs": "cronjobs", "cj": "cronjobs",
	"service": "services", "services": "services", "svc": "services", "endpointslices": "endpointslices", "endpointslice": "endpointslices", "endpoints": "endpoints", "ep": "endpoints",
	"pvc": "persistentvolumeclaims", "persistentvolumeclaim": "persistentvolumeclaims", "persistentvolumeclaims": "persistentvolumeclaims",
	"pv": "persistentvolumes", "persistentvolume": "persistentvolumes", "persistentvolumes": "persistentvolumes",
	"storageclass": "storageclasses", "storageclasses": "storageclasses", "sc": "storageclasses",
	"resourcequota": "resourcequotas", "resourcequotas": "resourcequotas", "quota": "resourcequotas", "limitrange": "limitranges", "limitranges": "limitranges", "limits": "limitranges",
	"serviceaccount": "serviceaccounts", "serviceaccounts": "serviceaccounts", "sa": "serviceaccounts", "configmap": "configmaps", "configmaps": "configmaps", "cm": "configmaps",
	"secret": "secrets", "secrets": "secrets", "namespace": "namespaces", "namespaces": "namespaces", "ns": "namespaces",
	"priorityclass": "priorityclasses", "priorityclasses": "priorityclasses", "pc": "priorityclasses",
	"validatingwebhookconfiguration": "validatingwebhookconfigurations", "validatingwebhookconfigurations": "validatingwebhookconfigurations",
	"mutatingwebhookconfiguration": "mutatingwebhookconfigurations", "mutatingwebhookconfigurations": "mutatingwebhookconfigurations",
	"runtimeclass": "runtimeclasses", "runtimeclasses": "runtimeclasses", "csidriver": "csidrivers", "csidrivers": "csidrivers", "lease": "leases", "leases": "leases",
}

var clusterResources = map[string]bool{"nodes": true, "persistentvolumes": true, "storageclasses": true, "namespaces": true, "priorityclasses": true,
	"validatingwebhookconfigurations": true, "mutatingwebhookconfigurations": true, "runtimeclasses": true, "csidrivers": true}

// commandPermissions reads the grants one command needs: kubectl's verb and resource
// and its -n, or a node-level tool.
func commandPermissions(cmd string) []Permission {
	cmd, _, _ = strings.Cut(cmd, "#")
	var out []Permission
	for _, part := range strings.FieldsFunc(cmd, func(r rune) bool { return r == ';' || r == '|' || r == '&' }) {
		words := strings.Fields(part)
		if len(words) == 0 {
			continue
		}
		switch words[0] {
		case "kubectl":
			out = append(out, kubectlPermissions(words[1:])...)
		case "journalctl", "crictl", "systemctl", "dmesg", "grep", "cat", "ls", "ip", "iptables", "ctr", "nsenter", "mount", "findmnt", "ss", "stat", "sysctl":
			out = append(out, Permission{Verb: "shell", Resource: "node", NodeLevel: true})
		}
	}
	return out
}

func kubectlPermissions(args []string) []Permission {
	if i := slices.Index(args, ">"); i >= 0 {
		args = args[:i]
	}
	ns, all := "", false
	var pos []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-n" || a == "--namespace":
			if i+1 < len(args) {
				ns = args[i+1]
				i++
			}
		case strings.HasPrefix(a, "--namespace="):
			ns = strings.TrimPrefix(a, "--namespace=")
		case a == "-A" || a == "--all-namespaces":
			all = true
		case a == "-o" || a == "-c" || a == "--field-selector" || a == "-l" || a == "--selector" || a == "--tail" || a == "--since" || a == "--container":
			i++
		case strings.HasPrefix(a, "-"):
		default:
			pos = append(pos, a)
		}
	}
	if all {
		ns = "*"
	}
	if len(pos) == 0 {
		return nil
	}
	perm := func(verb, res string) Permission {
		p := Permission{Verb: verb, Resource: res}
		base, _, _ := strings.Cut(res, "/")
		if !clusterResources[base] {
			p.Namespace = cmpOr(ns, "default")
		}
		if res == "nodes/proxy" {
			p.NodeLevel = true
		}
		return p
	}
	verb := pos[0]
	resource := func() string {
		if len(pos) < 2 {
			return ""
		}
		kind, _, _ := strings.Cut(pos[1], "/")
		kind, _, _ = strings.Cut(kind, ".")
		return resourceNames[strings.ToLower(kind)]
	}
	switch verb {
	case "logs":
		return []Permission{perm("get", "pods/log")}
	case "get":
		if len(pos) >= 2 && pos[1] == "--raw" || slices.Contains(args, "--raw") {
			for _, a := range args {
				if strings.Contains(a, "/proxy") {
					return []Permission{perm("get", "nodes/proxy")}
				}
			}
			return nil
		}
		if r := resource(); r != "" {
			v := "get"
			if len(pos) < 3 && !strings.Contains(pos[1], "/") {
				v = "list"
			}
			return []Permission{perm(v, r)}
		}
	case "describe":
		if r := resource(); r != "" {
			ev := perm("list", "events")
			if clusterResources[r] {
				// kubectl describe looks up a cluster object's events in every namespace.
				ev.Namespace = "*"
			}
			return []Permission{perm("get", r), ev}
		}
	case "top":
		if r := resource(); r != "" {
			return []Permission{perm("get", "metrics.k8s.io "+r)}
		}
	case "auth", "explain", "version", "api-resources":
		return nil
	case "debug":
		return []Permission{perm("create", "pods/ephemeralcontainers"), {Verb: "debug", Resource: "node", NodeLevel: true}}
	case "exec":
		return []Permission{perm("create", "pods/exec")}
	}
	return nil
}
