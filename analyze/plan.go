package analyze

import (
	"fmt"
	"strings"
)

// Plan is what to do about a root cause, for a person who acts on the report during an
// incident: which object owns the fix, what deleting the pods would do, which evidence a
// restart or deletion would lose and how to save it first, and which permissions the
// confirm commands need. podflow applies nothing: every command is for a person to
// review and run.
type Plan struct {
	Change     Change       `json:"change"`
	DeleteRisk DeleteRisk   `json:"deleteRisk"`
	KeepFirst  []KeepStep   `json:"keepFirst,omitempty"`
	Needs      []Permission `json:"needs,omitempty"`
}

// Change names the object whose edit fixes the cause: the top of the pods' owner chain
// (a Deployment's template, not the Pod) or a cluster object (a ResourceQuota, a node, a
// webhook configuration, the image registry).
type Change struct {
	// Target is the object to edit. Its Kind is an API kind, or ImageRegistry for a
	// registry outside the cluster; Name is empty when the evidence does not name it.
	Target ObjectRef `json:"target"`
	// Fields are the field paths of Target to change, e.g.
	// .spec.template.spec.containers[app].resources.limits.memory.
	Fields []string `json:"fields,omitempty"`
	// Suggest is a command or patch for a person to review before running it.
	Suggest string `json:"suggest,omitempty"`
	// Also names other objects whose edit fixes the cause instead (the workload's
	// requests rather than the quota).
	Also []ChangeRef `json:"also,omitempty"`
	// Note says what the target's edit does not do by itself, or what the evidence does
	// not show (a Job's template cannot be edited; the owner is not in the evidence).
	Note string `json:"note,omitempty"`
}

// ChangeRef is another object whose edit fixes the cause, with its field paths.
type ChangeRef struct {
	Target ObjectRef `json:"target"`
	Fields []string  `json:"fields,omitempty"`
}

// DeleteOutcome is what `kubectl delete pod` does to a pod, read from its owner.
type DeleteOutcome string

// The delete outcomes.
const (
	// DeleteRecreated: a ReplicaSet, DaemonSet or Job controller makes a new pod.
	DeleteRecreated DeleteOutcome = "recreated"
	// DeleteReattached: the StatefulSet makes a pod of the same name that mounts the
	// same claims.
	DeleteReattached DeleteOutcome = "recreated-same-claim"
	// DeleteBackoff: the Job counts the deleted pod as a failure toward backoffLimit.
	DeleteBackoff DeleteOutcome = "counted-against-backoff"
	// DeleteGone: nothing owns the pod; deleted, it is gone for good.
	DeleteGone DeleteOutcome = "gone"
	// DeleteNoPod: the cause keeps the pods from being created; there is nothing to delete.
	DeleteNoPod DeleteOutcome = "no-pod"
	// DeleteDrain: the cause is a node; a drain would move its pods.
	DeleteDrain DeleteOutcome = "drain"
	// DeleteUnknown: the evidence does not show the pod's owner.
	DeleteUnknown DeleteOutcome = "owner-unknown"
)

// SameCause says whether a replacement pod meets the cause again.
type SameCause string

// The SameCause values.
const (
	SameCauseYes   SameCause = "yes"
	SameCauseNo    SameCause = "no"
	SameCauseMaybe SameCause = "maybe"
)

// DeleteRisk is what `kubectl delete pod` would do to the finding's pods.
type DeleteRisk struct {
	Outcome DeleteOutcome `json:"outcome"`
	// SameCause says whether a replacement meets the same cause; empty when no
	// replacement is made.
	SameCause SameCause `json:"sameCause,omitempty"`
	// Summary is one sentence a table can show.
	Summary string `json:"summary"`
	// Details add what else a deletion changes: emptyDir data lost, claims kept,
	// disruption budgets, pods with another owner.
	Details []string `json:"details,omitempty"`
}

// KeepStep is one piece of evidence a restart or deletion would lose, with the
// read-only command that saves it. Steps are in the order to run them.
type KeepStep struct {
	What    string `json:"what"`
	Command string `json:"command"`
	// NodeLevel marks a command run on the node (or through nodes/proxy), not with
	// namespace-scoped access.
	NodeLevel bool `json:"nodeLevel,omitempty"`
}

// Permission is one grant the confirm and keep-first commands need.
type Permission struct {
	Verb     string `json:"verb"`
	Resource string `json:"resource"`
	// Namespace is the namespace the grant is needed in; empty for a cluster-scoped
	// resource.
	Namespace string `json:"namespace,omitempty"`
	// NodeLevel marks access beyond the API's namespaced reads: nodes/proxy, a shell on
	// the node.
	NodeLevel bool `json:"nodeLevel,omitempty"`
}

// String renders a permission as RBAC reads it: "get pods/log in shop".
func (p Permission) String() string {
	if p.Verb == "shell" {
		return "a shell on the node (node-level)"
	}
	s := p.Verb + " " + p.Resource
	switch p.Namespace {
	case "":
	case "*":
		s += " in all namespaces"
	default:
		s += " in " + p.Namespace
	}
	if p.NodeLevel {
		s += " (node-level)"
	}
	return s
}

// addPlans gives every root finding its plan.
func addPlans(g *Graph, fs []*Finding) {
	for _, f := range fs {
		if f.Root {
			f.Plan = g.plan(f)
		}
	}
}

// plan derives a root finding's plan from the structure the graph holds (owner chains,
// volumes, restart policies) and the change table for its rule.
func (g *Graph) plan(f *Finding) *Plan {
	pods := g.planPods(f)
	spec := changeSpecFor(f)
	p := &Plan{}
	p.Change = g.change(f, spec, pods)
	p.DeleteRisk = g.deleteRisk(f, spec, pods)
	p.KeepFirst = g.keepFirst(f, pods)
	p.Needs = needsFor(f, p.KeepFirst)
	return p
}

// planPod is one of a finding's pods as the plan sees it: the object when the graph
// holds it, its top workload and the container the finding is about.
type planPod struct {
	ref ObjectRef
	pod *Pod // nil when the evidence names the pod only
	// ownerKnown is false when the evidence cannot show the pod's owner (a pod known
	// from an event row or a journal line).
	ownerKnown bool
	// controller is the pod's direct controller, workload the top of its chain; nil
	// for a bare pod.
	controller, workload *ObjectRef
	// container is the container the finding is about, "" when not known; init marks
	// an init container.
	container string
	init      bool
}

func (g *Graph) planPods(f *Finding) []planPod {
	var out []planPod
	for _, s := range f.Pods() {
		pp := planPod{ref: s}
		if o, ok := g.byKey[s.key()].(*Pod); ok {
			pp.pod = o
			pp.ownerKnown = !Partial(*o.meta, "spec") && !Partial(*o.meta, "metadata")
			pp.controller = controllerOf(o.meta)
			pp.workload = g.topOwner(pp.controller)
			pp.container, pp.init = findingContainer(f, o)
		}
		out = append(out, pp)
	}
	return out
}

// topOwner climbs a controller chain: a ReplicaSet to its Deployment, a Job to its
// CronJob. An owner the graph does not hold ends the climb.
func (g *Graph) topOwner(ref *ObjectRef) *ObjectRef {
	for hops := 0; ref != nil && hops < 4; hops++ {
		if ref.Kind != "ReplicaSet" && ref.Kind != "Job" {
			return ref
		}
		o, ok := g.byKey[ref.key()]
		if !ok {
			return ref
		}
		up := controllerOf(metaOf(o))
		if up == nil {
			return ref
		}
		ref = up
	}
	return ref
}

// findingContainer finds the container a finding is about: from the pod's container
// fields its evidence cites, else from a container the cause names.
func findingContainer(f *Finding, p *Pod) (string, bool) {
	for _, e := range f.Evidence {
		if e.Path != p.Loc.Path || !strings.HasPrefix(e.Pointer, p.Loc.Pointer+"/") {
			continue
		}
		rest := strings.TrimPrefix(e.Pointer, p.Loc.Pointer)
		for _, c := range []struct {
			prefix string
			init   bool
		}{{"/spec/containers/", false}, {"/status/containerStatuses/", false},
			{"/spec/initContainers/", true}, {"/status/initContainerStatuses/", true}} {
			if !strings.HasPrefix(rest, c.prefix) {
				continue
			}
			var i int
			if _, err := fmt.Sscanf(strings.TrimPrefix(rest, c.prefix), "%d", &i); err != nil {
				continue
			}
			if name := containerAt(p, c.prefix, i); name != "" {
				return name, c.init
			}
		}
	}
	for _, c := range p.Obj.Spec.InitContainers {
		if strings.Contains(f.Cause, "container "+c.Name+" ") || strings.Contains(f.Cause, "container "+c.Name+":") {
			return c.Name, true
		}
	}
	for _, c := range p.Obj.Spec.Containers {
		if strings.Contains(f.Cause, "container "+c.Name) {
			return c.Name, false
		}
	}
	if len(p.Obj.Spec.Containers) == 1 && len(p.Obj.Spec.InitContainers) == 0 {
		return p.Obj.Spec.Containers[0].Name, false
	}
	return "", false
}

func containerAt(p *Pod, prefix string, i int) string {
	s := p.Obj.Spec
	st := p.Obj.Status
	switch prefix {
	case "/spec/containers/":
		if i < len(s.Containers) {
			return s.Containers[i].Name
		}
	case "/status/containerStatuses/":
		if i < len(st.ContainerStatuses) {
			return st.ContainerStatuses[i].Name
		}
	case "/spec/initContainers/":
		if i < len(s.InitContainers) {
			return s.InitContainers[i].Name
		}
	case "/status/initContainerStatuses/":
		if i < len(st.InitContainerStatuses) {
			return st.InitContainerStatuses[i].Name
		}
	}
	return ""
}
