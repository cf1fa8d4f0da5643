package analyze

import "strings"

// SandboxFailure is a failed pod sandbox creation: the kubelet's latest
// FailedCreatePodSandBox event, its "CreatePodSandbox for pod failed" journal line, the
// runtime's own "RunPodSandbox … failed" line, or a pasted line saying so.
type SandboxFailure struct {
	Subject PodSubject
	// Event is the pod's latest FailedCreatePodSandBox event.
	Event *Event
	// Line is the kubelet's latest "CreatePodSandbox for pod failed" line about the pod.
	Line *JournalEntry
	// Runtime is containerd's latest "RunPodSandbox for &PodSandboxMetadata{…} failed"
	// line for the pod, matched by its UID.
	Runtime *JournalEntry
	// NetworkEvent is the pod's latest NetworkNotReady event and NetworkLine the
	// kubelet's latest line whose err says "network is not ready: …": the kubelet did not
	// ask for a sandbox because the runtime reports the pod network down.
	NetworkEvent *Event
	NetworkLine  *JournalEntry
	// Fragment is a pasted line that reports the failure.
	Fragment *Line
}

// Message is the failure's message as the kubelet reports it: the event's, or the
// journal line's err when that line is newer (or there is no event).
func (f SandboxFailure) Message() string {
	msg, at := "", f.Event
	if f.Event != nil {
		msg = f.Event.Message
	}
	if f.Line != nil {
		if err, ok := f.Line.Field("err"); ok && (msg == "" || at == nil || f.Line.Time.After(at.LastTime)) {
			msg = err
		}
	}
	if msg == "" && f.Fragment != nil {
		msg = f.Fragment.Text
	}
	return msg
}

const (
	sandboxEventReason = "FailedCreatePodSandBox"
	sandboxKubeletLine = "CreatePodSandbox for pod failed"
	// NetworkNotReadyPrefix starts the kubelet's error and event (pkg/kubelet/errors.go
	// NetworkNotReadyErrorMsg).
	NetworkNotReadyPrefix = "network is not ready: "
)

// sandboxFacts lists the failed sandbox creations of the pods, then those of events about
// pods the evidence does not hold, then pasted lines.
func (g *Graph) sandboxFacts() []SandboxFailure {
	var out []SandboxFailure
	for _, p := range g.pods {
		events := g.eventsForIf(p, func(e *Event) bool { return e.Reason == sandboxEventReason || e.Reason == "NetworkNotReady" })
		f := SandboxFailure{Subject: podSubject(p), Event: LatestEvent(events, "", sandboxEventReason),
			NetworkEvent: LatestEvent(events, "", "NetworkNotReady")}
		entries := g.journalFor(p.Obj)
		for i := len(entries) - 1; i >= 0 && (f.Line == nil || f.NetworkLine == nil); i-- {
			e := entries[i]
			if e.Message == sandboxKubeletLine && f.Line == nil {
				f.Line = e
			}
			if err, ok := e.Field("err"); ok && f.NetworkLine == nil && strings.HasPrefix(err, NetworkNotReadyPrefix) {
				f.NetworkLine = e
			}
		}
		if f.Event == nil && f.Line == nil && f.NetworkEvent == nil && f.NetworkLine == nil {
			continue
		}
		if f.Event != nil || f.Line != nil {
			f.Runtime = g.runtimeSandboxLine(p)
		}
		out = append(out, f)
	}
	out = eventOnlyFacts(g, out, sandboxEventReason,
		func(s PodSubject, e *Event) SandboxFailure { return SandboxFailure{Subject: s, Event: e} },
		func(f *SandboxFailure, e *Event) { f.Event = e })
	for _, l := range g.fragmentLines("Failed to create pod sandbox") {
		out = append(out, SandboxFailure{Fragment: l})
	}
	return out
}

// runtimeSandboxLine is containerd's latest failed RunPodSandbox line for a pod.
func (g *Graph) runtimeSandboxLine(p *Pod) *JournalEntry {
	node, uid := p.Obj.Spec.NodeName, string(p.Obj.UID)
	if uid == "" {
		return nil
	}
	entries := g.runtimeJournal[node]
	for i := len(entries) - 1; i >= 0; i-- {
		m := entries[i].Message
		if strings.Contains(m, "RunPodSandbox for ") && strings.Contains(m, "Uid:"+uid+",") && strings.Contains(m, " failed") {
			return &entries[i]
		}
	}
	return nil
}

// SandboxFailures lists the failed sandbox creations the rule may see, with the evidence
// of the kinds it declared: a pod's needs pods, an event-only one events, a pasted one
// fragments.
func (v *View) SandboxFailures() []SandboxFailure {
	ff := v.factFilter()
	var out []SandboxFailure
	for _, f := range v.factsOf().sandboxes {
		ok, stop := ff.visible(v, f.Subject.Known(), f.Event != nil, f.Fragment != nil)
		if stop {
			return nil
		}
		if !ok {
			continue
		}
		if !ff.events {
			f.Event, f.NetworkEvent = nil, nil
		}
		if !ff.journal {
			f.Line, f.NetworkLine = nil, nil
		}
		if !ff.runtime {
			f.Runtime = nil
		}
		if f.Event == nil && f.Line == nil && f.NetworkEvent == nil && f.NetworkLine == nil && f.Fragment == nil {
			continue
		}
		out = append(out, f)
	}
	return out
}
