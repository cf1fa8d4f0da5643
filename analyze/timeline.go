package analyze

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// Step is one step of a pod's timeline with what the evidence says about it.
type Step struct {
	// Step is created, admitted, scheduled, sandbox, pull, create, start, terminated,
	// ready, endpoint or deleting.
	Step      string `json:"step"`
	Stage     Stage  `json:"stage"`
	Container string `json:"container,omitempty"`
	// Status is ok, failed or pending.
	Status   string     `json:"status"`
	Time     *time.Time `json:"time,omitempty"`
	Detail   string     `json:"detail"`
	Evidence []Evidence `json:"evidence,omitempty"`
}

// Step statuses.
const (
	StepOK      = "ok"
	StepFailed  = "failed"
	StepPending = "pending"
)

// podFacts gathers what the graph knows about one pod, looked up once: its raw
// evidence and the typed facts the rules read (sandbox, scheduling), so the timeline
// and the findings read a failure the same way.
type podFacts struct {
	p       *Pod
	sandbox *SandboxFailure
	sched   *SchedulingFailure
	// events are the pod's events (allEvents); for a pod whose events the load kept
	// compact, quiet is how many there are and they are made when a step reads them.
	events   []*Event
	quiet    int
	g        *Graph
	journal  []*JournalEntry
	sbs      []*CRISandbox
	conts    []*CRIContainer
	services []*Service
	eps      []podEndpoint
}

func (g *Graph) factsFor(p *Pod) *podFacts {
	f := &podFacts{p: p, g: g, journal: g.journalFor(p.Obj),
		sbs: g.sandboxesOf(string(p.meta.UID)), conts: g.containersOf(string(p.meta.UID)), eps: g.endpointsFor(p)}
	// Coverage asks only whether a pod has events: a quiet pod's are made only for
	// its timeline.
	if f.quiet = g.quietLen(p); f.quiet == 0 {
		f.events = g.eventsFor(p.Ref())
	}
	facts := g.buildFactsOnce()
	f.sandbox, f.sched = facts.sandboxByPod[p], facts.schedByPod[p]
	for _, s := range g.servicesByNS[p.meta.Namespace] {
		sel := s.Obj.Spec.Selector
		if len(sel) > 0 && setSelects(sel, p.meta.Labels) {
			f.services = append(f.services, s)
		}
	}
	return f
}

// allEvents are the pod's events, oldest last-seen first.
func (f *podFacts) allEvents() []*Event {
	if f.quiet > 0 {
		f.events, f.quiet = f.g.eventsFor(f.p.Ref()), 0
	}
	return f.events
}

// hasEvents reports whether the pod has an event.
func (f *podFacts) hasEvents() bool { return f.quiet > 0 || len(f.events) > 0 }

func (f *podFacts) eventsWith(container string, reasons ...string) []*Event {
	var out []*Event
	for _, e := range f.allEvents() {
		if container != "" && e.Container() != container {
			continue
		}
		for _, r := range reasons {
			if e.Reason == r {
				out = append(out, e)
				break
			}
		}
	}
	return out
}

func eventEvidence(es []*Event, max int) []Evidence {
	if len(es) > max {
		es = es[len(es)-max:]
	}
	out := make([]Evidence, 0, len(es))
	for _, e := range es {
		out = append(out, e.Evidence())
	}
	return out
}

// Timeline replays a pod's chain: created, admitted, scheduled, sandbox, then per
// container pull, create, start (and the last termination), ready, endpoint.
func (g *Graph) timeline(f *podFacts) []Step {
	p := f.p
	pod := p.Obj
	created := Step{Step: "created", Stage: StageAdmission, Status: StepOK, Time: timePtr(pod.CreationTimestamp.Time), Detail: "pod object created"}
	if pod.CreationTimestamp.IsZero() {
		created.Detail = "pod object created (when is not in the evidence)"
	} else {
		created.Evidence = []Evidence{p.Loc.At("metadata", "creationTimestamp").Evidence(pod.CreationTimestamp.UTC().Format(time.RFC3339), pod.CreationTimestamp.Time)}
	}
	steps := []Step{created}
	steps = append(steps, g.admittedStep(p))
	sched := scheduledStep(f)
	steps = append(steps, sched)
	if sched.Status != StepOK {
		return append(steps, deletingSteps(p)...)
	}
	steps = append(steps, sandboxStep(f))
	for _, c := range containersOf(pod) {
		steps = append(steps, containerSteps(f, c)...)
	}
	steps = append(steps, readyStep(f))
	steps = append(steps, endpointSteps(f)...)
	return append(steps, deletingSteps(p)...)
}

func (g *Graph) admittedStep(p *Pod) Step {
	s := Step{Step: "admitted", Stage: StageAdmission, Status: StepOK, Time: timePtr(p.meta.CreationTimestamp.Time),
		Detail: "the API server accepted the pod (it exists)", Evidence: []Evidence{p.Loc.Evidence("pod "+p.Ref().NamespacedName()+" exists", time.Time{})}}
	if ref := controllerRef(p); ref != nil {
		for _, e := range g.eventsFor(*ref) {
			if e.Reason == "SuccessfulCreate" && strings.HasSuffix(e.Message, ": "+p.meta.Name) {
				s.Detail = fmt.Sprintf("%s %s created it", ref.Kind, ref.Name)
				s.Evidence = append(s.Evidence, e.Evidence())
				break
			}
		}
	}
	return s
}

func controllerRef(p *Pod) *ObjectRef {
	for _, o := range p.meta.OwnerReferences {
		if o.Controller != nil && *o.Controller {
			return &ObjectRef{Kind: o.Kind, Namespace: p.meta.Namespace, Name: o.Name, UID: string(o.UID)}
		}
	}
	return nil
}

func condition(pod *corev1.Pod, t corev1.PodConditionType) (int, *corev1.PodCondition) {
	for i := range pod.Status.Conditions {
		if pod.Status.Conditions[i].Type == t {
			return i, &pod.Status.Conditions[i]
		}
	}
	return -1, nil
}

func scheduledStep(f *podFacts) Step {
	p, pod := f.p, f.p.Obj
	s := Step{Step: "scheduled", Stage: StageScheduling}
	i, c := condition(pod, corev1.PodScheduled)
	switch {
	case c != nil && c.Status == corev1.ConditionTrue:
		s.Status, s.Time = StepOK, timePtr(c.LastTransitionTime.Time)
		s.Detail = "assigned to node " + pod.Spec.NodeName
		if pod.Spec.NodeName == "" {
			s.Detail = "assigned to a node the evidence does not name"
		}
		s.Evidence = append(s.Evidence, p.Loc.At("status", "conditions", i).Evidence(strings.TrimSuffix("PodScheduled=True, node "+pod.Spec.NodeName, ", node "), c.LastTransitionTime.Time))
		s.Evidence = append(s.Evidence, eventEvidence(f.eventsWith("", "Scheduled"), 1)...)
	case c != nil:
		s.Status, s.Time = StepFailed, timePtr(c.LastTransitionTime.Time)
		s.Detail = strings.TrimSpace(c.Reason + ": " + c.Message)
		s.Evidence = append(s.Evidence, p.Loc.At("status", "conditions", i).Evidence("PodScheduled=False "+c.Reason+": "+c.Message, c.LastTransitionTime.Time))
		s.Evidence = append(s.Evidence, f.schedulingEvent()...)
	case pod.Spec.NodeName != "":
		s.Status, s.Detail = StepOK, "bound to node "+pod.Spec.NodeName
		s.Evidence = append(s.Evidence, p.Loc.At("spec", "nodeName").Evidence(pod.Spec.NodeName, time.Time{}))
	case anyContainerStarted(pod) || pastSandbox(pod):
		// A pasted excerpt often shows the containers' states but neither the node
		// nor the PodScheduled condition: a container that ran, or waits for a reason
		// the kubelet only gives on a node, says the pod was scheduled.
		s.Status, s.Detail = StepOK, "scheduled to a node the evidence does not name (its containers are on one)"
		for _, c := range containersOf(pod) {
			if c.status != nil {
				s.Evidence = append(s.Evidence, p.Loc.At(c.statusPtr...).Evidence("container "+c.name+" has a state on a node", time.Time{}))
				break
			}
		}
	default:
		s.Status, s.Detail = StepPending, "not scheduled yet"
		s.Evidence = append(s.Evidence, f.schedulingEvent()...)
	}
	return s
}

// schedulingEvent cites the pod's latest FailedScheduling event: the scheduling fact's,
// which the scheduling rules cite, for a Pending pod without a node (the only pods that
// have one).
func (f *podFacts) schedulingEvent() []Evidence {
	if f.sched == nil {
		return eventEvidence(f.eventsWith("", "FailedScheduling"), 1)
	}
	if f.sched.Event == nil {
		return nil
	}
	return []Evidence{f.sched.Event.Evidence()}
}

func sandboxStep(f *podFacts) Step {
	p, pod := f.p, f.p.Obj
	s := Step{Step: "sandbox", Stage: StageSandbox, Status: StepPending, Detail: "no sandbox seen yet"}
	var latest *CRISandbox
	for _, sb := range f.sbs {
		if latest == nil || sb.Attempt > latest.Attempt || (sb.Attempt == latest.Attempt && sb.CreatedAt.After(latest.CreatedAt)) {
			latest = sb
		}
	}
	if latest != nil {
		s.Evidence = append(s.Evidence, latest.Loc.Evidence(fmt.Sprintf("sandbox %s %s attempt %d", short(latest.ID), latest.State, latest.Attempt), latest.CreatedAt))
		s.Time = timePtr(latest.CreatedAt)
	}
	started := pod.Status.PodIP != "" || (latest != nil && latest.State == "SANDBOX_READY") || anyContainerStarted(pod) ||
		pastSandbox(pod) || len(f.eventsWith("", "Pulling", "Pulled")) > 0
	switch {
	case started:
		s.Status, s.Detail = StepOK, "sandbox running"
		if pod.Status.PodIP != "" {
			s.Detail += ", pod IP " + pod.Status.PodIP
			s.Evidence = append(s.Evidence, p.Loc.At("status", "podIP").Evidence(pod.Status.PodIP, time.Time{}))
		}
	case f.sandbox != nil && f.sandbox.Event != nil:
		last := f.sandbox.Event
		s.Status, s.Detail, s.Time = StepFailed, last.Message, timePtr(last.LastTime)
		s.Evidence = append(s.Evidence, last.Evidence())
	case f.sandbox != nil && f.sandbox.Line != nil && f.sandbox.Message() != "":
		// The kubelet's journal line alone says it, as the sandbox rules read it.
		s.Status, s.Detail, s.Time = StepFailed, f.sandbox.Message(), timePtr(f.sandbox.Line.Time)
	}
	for _, e := range f.journal {
		if e.Severity == 'E' && strings.Contains(e.Message, "PodSandbox") {
			s.Evidence = append(s.Evidence, e.Evidence())
			break
		}
	}
	return s
}

func anyContainerStarted(pod *corev1.Pod) bool {
	for _, cs := range append(append([]corev1.ContainerStatus{}, pod.Status.InitContainerStatuses...), pod.Status.ContainerStatuses...) {
		if cs.State.Running != nil || cs.State.Terminated != nil || cs.LastTerminationState.Terminated != nil {
			return true
		}
	}
	return false
}

// pastSandbox reports whether a container waits for a reason the kubelet only reaches
// after the sandbox exists (it pulls images into a running sandbox).
func pastSandbox(pod *corev1.Pod) bool {
	for _, cs := range append(append([]corev1.ContainerStatus{}, pod.Status.InitContainerStatuses...), pod.Status.ContainerStatuses...) {
		if w := cs.State.Waiting; w != nil && w.Reason != "ContainerCreating" && w.Reason != "PodInitializing" {
			return true
		}
	}
	return false
}

// containerRef locates one container and its status in the pod.
type containerRef struct {
	name      string
	image     string
	init      bool
	status    *corev1.ContainerStatus
	statusPtr []any
}

func containersOf(pod *corev1.Pod) []containerRef {
	var out []containerRef
	add := func(specs []corev1.Container, statuses []corev1.ContainerStatus, field string, init bool) {
		for _, c := range specs {
			r := containerRef{name: c.Name, image: c.Image, init: init}
			for i := range statuses {
				if statuses[i].Name == c.Name {
					r.status, r.statusPtr = &statuses[i], []any{"status", field, i}
				}
			}
			out = append(out, r)
		}
	}
	add(pod.Spec.InitContainers, pod.Status.InitContainerStatuses, "initContainerStatuses", true)
	add(pod.Spec.Containers, pod.Status.ContainerStatuses, "containerStatuses", false)
	return out
}

var (
	pullFailures   = []string{"ErrImagePull", "ImagePullBackOff", "InvalidImageName", "ErrImageNeverPull", "ImageInspectError", "RegistryUnavailable", "SignatureValidationFailed"}
	createFailures = []string{"CreateContainerConfigError", "CreateContainerError", "PreCreateHookError", "PostStartHookError"}
	startFailures  = []string{"RunContainerError", "StartError", "ContainerCannotRun"}
)

func containsStr(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func containerSteps(f *podFacts, c containerRef) []Step {
	p := f.p
	pull := Step{Step: "pull", Stage: StageImage, Container: c.name, Status: StepPending, Detail: "image " + c.image + " not pulled yet"}
	create := Step{Step: "create", Stage: StageConfig, Container: c.name, Status: StepPending, Detail: "not created yet"}
	start := Step{Step: "start", Stage: StageStart, Container: c.name, Status: StepPending, Detail: "not started yet"}
	steps := []Step{}
	cs := c.status
	var statusLoc Location
	if cs != nil {
		statusLoc = p.Loc.At(c.statusPtr...)
	}
	pullEvents := f.eventsWith(c.name, "Pulling", "Pulled", "Failed", "BackOff")
	for _, e := range pullEvents {
		if e.Reason == "BackOff" && !strings.Contains(e.Message, "image") {
			continue
		}
		if e.Reason == "Failed" && !strings.Contains(e.Message, "image") && !containsStr(pullFailures, strings.TrimPrefix(e.Message, "Error: ")) {
			continue
		}
		pull.Evidence = append(pull.Evidence, e.Evidence())
		pull.Time = timePtr(e.LastTime)
	}
	if len(pull.Evidence) > 3 {
		pull.Evidence = pull.Evidence[len(pull.Evidence)-3:]
	}
	if cs != nil && cs.State.Waiting != nil {
		w := cs.State.Waiting
		ev := statusLoc.At("state", "waiting").Evidence(w.Reason+": "+w.Message, time.Time{})
		switch {
		case containsStr(pullFailures, w.Reason):
			pull.Status, pull.Detail = StepFailed, w.Reason+": "+w.Message
			pull.Evidence = append([]Evidence{ev}, pull.Evidence...)
			return append(steps, pull)
		case containsStr(createFailures, w.Reason):
			pull.Status, pull.Detail = StepOK, "image "+c.image+" present"
			create.Status, create.Detail = StepFailed, w.Reason+": "+w.Message
			create.Evidence = append(create.Evidence, ev)
			create.Evidence = append(create.Evidence, eventEvidence(f.eventsWith(c.name, "Failed"), 1)...)
			return append(steps, pull, create)
		case containsStr(startFailures, w.Reason):
			pull.Status, pull.Detail = StepOK, "image "+c.image+" present"
			create.Status, create.Detail = StepOK, "container created"
			start.Status, start.Detail = StepFailed, w.Reason+": "+w.Message
			start.Evidence = append(start.Evidence, ev)
			return append(steps, pull, create, start)
		}
	}
	if cs == nil || (cs.ImageID == "" && cs.State.Running == nil && cs.State.Terminated == nil && cs.LastTerminationState.Terminated == nil) {
		return append(steps, pull)
	}
	pull.Status, pull.Detail = StepOK, "image "+c.image+" present"
	pull.Evidence = append(pull.Evidence, statusLoc.At("imageID").Evidence(cs.ImageID, time.Time{}))
	create.Status, create.Detail = StepOK, "container created"
	create.Evidence = append(create.Evidence, eventEvidence(f.eventsWith(c.name, "Created"), 1)...)
	for _, cc := range f.conts {
		if cc.Name == c.name && int32(cc.Attempt) == cs.RestartCount {
			create.Evidence = append(create.Evidence, cc.Loc.Evidence(fmt.Sprintf("container %s %s attempt %d", short(cc.ID), cc.State, cc.Attempt), cc.CreatedAt))
			create.Time = timePtr(cc.CreatedAt)
		}
	}
	steps = append(steps, pull, create)
	switch {
	case cs.State.Running != nil:
		start.Status, start.Time = StepOK, timePtr(cs.State.Running.StartedAt.Time)
		start.Detail = "running"
		start.Evidence = append(start.Evidence, statusLoc.At("state", "running").Evidence("running since "+cs.State.Running.StartedAt.UTC().Format(time.RFC3339), cs.State.Running.StartedAt.Time))
	case cs.State.Terminated != nil:
		t := cs.State.Terminated
		start.Status, start.Time = StepOK, timePtr(t.StartedAt.Time)
		start.Detail = fmt.Sprintf("ran and exited with code %d (%s)", t.ExitCode, t.Reason)
		if containsStr(startFailures, t.Reason) {
			start.Status, start.Detail = StepFailed, t.Reason+": "+t.Message
		}
		start.Evidence = append(start.Evidence, statusLoc.At("state", "terminated").Evidence(fmt.Sprintf("terminated %s exit code %d %s", t.Reason, t.ExitCode, t.Message), t.FinishedAt.Time))
	case cs.LastTerminationState.Terminated != nil:
		start.Status, start.Detail = StepOK, "started before (see the last termination)"
	}
	steps = append(steps, start)
	if t := cs.LastTerminationState.Terminated; t != nil {
		steps = append(steps, Step{Step: "terminated", Stage: StageRuntime, Container: c.name, Status: StepFailed,
			Time:   timePtr(t.FinishedAt.Time),
			Detail: fmt.Sprintf("last instance ended %s with exit code %d; %d restart(s)", t.Reason, t.ExitCode, cs.RestartCount),
			Evidence: []Evidence{statusLoc.At("lastState", "terminated").Evidence(
				fmt.Sprintf("%s exit code %d", t.Reason, t.ExitCode)+when(" at ", t.FinishedAt.Time), t.FinishedAt.Time)}})
	}
	return steps
}

func readyStep(f *podFacts) Step {
	p, pod := f.p, f.p.Obj
	s := Step{Step: "ready", Stage: StageProbe, Status: StepPending, Detail: "no Ready condition"}
	i, c := condition(pod, corev1.PodReady)
	if c != nil {
		s.Time = timePtr(c.LastTransitionTime.Time)
		text := fmt.Sprintf("Ready=%s %s %s", c.Status, c.Reason, c.Message)
		s.Evidence = append(s.Evidence, p.Loc.At("status", "conditions", i).Evidence(text, c.LastTransitionTime.Time))
		if c.Status == corev1.ConditionTrue {
			s.Status, s.Detail = StepOK, "ready"
		} else {
			s.Detail = strings.TrimSpace("not ready: " + c.Reason + " " + c.Message)
		}
	}
	if unhealthy := f.eventsWith("", "Unhealthy"); len(unhealthy) > 0 && s.Status != StepOK {
		s.Status = StepFailed
		s.Evidence = append(s.Evidence, eventEvidence(unhealthy, 2)...)
	}
	return s
}

func endpointSteps(f *podFacts) []Step {
	if len(f.services) == 0 {
		return nil
	}
	names := make([]string, 0, len(f.services))
	for _, s := range f.services {
		names = append(names, s.meta.Name)
	}
	s := Step{Step: "endpoint", Stage: StageService, Status: StepPending,
		Detail: "not an endpoint of service " + strings.Join(names, ", ")}
	for _, ep := range f.eps {
		if ep.ready() {
			s.Status, s.Detail = StepOK, "ready endpoint of service "+strings.Join(names, ", ")
		} else if s.Status != StepOK {
			s.Detail = "not-ready endpoint of service " + strings.Join(names, ", ")
		}
		s.Evidence = append(s.Evidence, ep.loc().Evidence(fmt.Sprintf("endpoint ready=%t in %s", ep.ready(), ep.slice.meta.Name), time.Time{}))
	}
	return []Step{s}
}

func deletingSteps(p *Pod) []Step {
	if p.meta.DeletionTimestamp == nil {
		return nil
	}
	detail := "deletion requested"
	if len(p.meta.Finalizers) > 0 {
		detail += ", waiting on finalizers " + strings.Join(p.meta.Finalizers, ", ")
	}
	return []Step{{Step: "deleting", Stage: StageTermination, Status: StepPending, Time: timePtr(p.meta.DeletionTimestamp.Time),
		Detail: detail, Evidence: []Evidence{p.Loc.At("metadata", "deletionTimestamp").Evidence(detail, p.meta.DeletionTimestamp.Time)}}}
}

// short trims a runtime ID to the 13 characters crictl shows.
func short(id string) string {
	if len(id) > 13 {
		return id[:13]
	}
	return id
}
