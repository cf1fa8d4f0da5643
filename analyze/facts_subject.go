package analyze

import "strings"

// Typed facts: what the evidence says happened, computed once per graph from every
// source (object status, events, kubelet and runtime journals, CRI state, pasted
// fragments) and read by rules through the View. A fact keeps each piece of evidence
// it was built from, so a rule cites the same items whichever source it reads first,
// and a View hands a rule only the pieces from kinds it declared.

// PodSubject is what is known of the pod a fact is about: the object when the evidence
// holds it, else the namespace and name an event or journal line named, else nothing
// (a pasted line that names no pod).
type PodSubject struct {
	// Pod is the pod object, nil when the evidence holds none.
	Pod *Pod
	// Namespace and Name are the pod's, from the object or from the evidence that named
	// it; either may be empty.
	Namespace, Name string
	// Node is the node the pod runs on or the evidence came from, when known.
	Node string
}

// podSubject is the subject of a pod the graph holds.
func podSubject(p *Pod) PodSubject {
	return PodSubject{Pod: p, Namespace: p.meta.Namespace, Name: p.meta.Name, Node: p.Obj.Spec.NodeName}
}

// Known reports whether the pod object is in the evidence.
func (s PodSubject) Known() bool { return s.Pod != nil }

// Ref is the pod's reference: the object's, else a Pod reference with what is known, else
// the unknown pod.
func (s PodSubject) Ref() ObjectRef {
	if s.Pod != nil {
		return s.Pod.Ref()
	}
	if s.Name == "" {
		return ObjectRef{Kind: "Pod", Name: UnknownSubject}
	}
	return ObjectRef{Kind: "Pod", Namespace: s.Namespace, Name: s.Name}
}

// facts holds every typed fact of a graph.
type facts struct {
	pulls      []PullFailure
	waits      []ContainerWait
	sandboxes  []SandboxFailure
	scheduling []SchedulingFailure
	admission  []AdmissionRejection
	mounts     []MountFailure
	evictions  []Eviction
	agents     map[string]*NodeAgent
	warnings   map[*Pod]*Event
	runs       []ContainerRun
	runIndex   map[runID]podRuns
	// byPod finds a known pod's sandbox and scheduling facts for its timeline.
	sandboxByPod map[*Pod]*SandboxFailure
	schedByPod   map[*Pod]*SchedulingFailure
}

// Facts builds the graph's typed facts once.
func (g *Graph) buildFactsOnce() *facts {
	g.factsOnce.Do(func() {
		f := &facts{}
		f.waits = g.containerWaitFacts()
		f.pulls = g.pullFacts()
		f.sandboxes = g.sandboxFacts()
		f.scheduling = g.schedulingFacts()
		f.admission = g.admissionFacts()
		f.mounts = g.mountFacts()
		f.evictions = g.evictionFacts()
		f.agents = g.nodeAgentFacts()
		f.warnings = g.podWarnings()
		f.runs, f.runIndex = g.containerRunFacts()
		f.sandboxByPod, f.schedByPod = map[*Pod]*SandboxFailure{}, map[*Pod]*SchedulingFailure{}
		for i := range f.sandboxes {
			if p := f.sandboxes[i].Subject.Pod; p != nil {
				f.sandboxByPod[p] = &f.sandboxes[i]
			}
		}
		for i := range f.scheduling {
			if p := f.scheduling[i].Subject.Pod; p != nil {
				f.schedByPod[p] = &f.scheduling[i]
			}
		}
		g.facts = f
	})
	return g.facts
}

// podOfEvent is the pod an event is about: the object when the graph has it, else the
// namespace and name the event gives. ok is false for an event about something else.
func (g *Graph) podOfEvent(e *Event) (PodSubject, bool) {
	if e.Regarding.Kind != "Pod" {
		return PodSubject{}, false
	}
	if p := g.FindPod(e.Regarding.Namespace, e.Regarding.Name); p != nil {
		return podSubject(p), true
	}
	return PodSubject{Namespace: e.Regarding.Namespace, Name: e.Regarding.Name, Node: e.Host}, true
}

// eventOnlyFacts appends a fact for every pod known only from its events of reason
// (no object in the evidence), one per pod with its latest such event.
func eventOnlyFacts[T any](g *Graph, out []T, reason string, mk func(PodSubject, *Event) T, latest func(*T, *Event)) []T {
	seen := map[string]int{}
	for _, e := range g.events {
		if e.Reason != reason {
			continue
		}
		s, ok := g.podOfEvent(e)
		if !ok || s.Known() {
			continue
		}
		key := s.Namespace + "/" + s.Name
		if i, ok := seen[key]; ok {
			latest(&out[i], e)
			continue
		}
		seen[key] = len(out)
		out = append(out, mk(s, e))
	}
	return out
}

// visible reports whether a view may see a fact of a known pod, of an event-only pod or
// of a pasted fragment; stop is true when the view may see none at all (pods are not
// among its kinds).
func (ff factFilter) visible(v *View, known, event, fragment bool) (ok, stop bool) {
	switch {
	case known:
		if !v.allow(Pods) {
			return false, true
		}
	case event:
		return ff.events, false
	case fragment:
		return ff.fragments, false
	}
	return true, false
}

// newestFirst returns the events a keep accepts, newest first.
func newestFirst(events []*Event, keep func(*Event) bool) []*Event {
	var out []*Event
	for i := len(events) - 1; i >= 0; i-- {
		if keep(events[i]) {
			out = append(out, events[i])
		}
	}
	return out
}

// entriesNewestFirst returns the journal entries a keep accepts, newest first.
func entriesNewestFirst(entries []*JournalEntry, keep func(*JournalEntry) bool) []*JournalEntry {
	var out []*JournalEntry
	for i := len(entries) - 1; i >= 0; i-- {
		if keep(entries[i]) {
			out = append(out, entries[i])
		}
	}
	return out
}

// fragmentLines are the lines of pasted evidence no import could attribute that contain
// a needle, as the graph's lines of evidence text make them.
// They are made from the fragments alone: the graph's whole Lines, journals included,
// are built only when a signature or the unexplained check asks.
func (g *Graph) fragmentLines(needle string) []*Line {
	var out []*Line
	g.fragmentTextLines(func(in lineIn) {
		if l, ok := newLine(in); ok && strings.Contains(l.Text, needle) {
			out = append(out, &l)
		}
	})
	return out
}

// factFilter tells which sources a view may hand out: a rule sees a fact's event only
// when it declared events, its journal lines only when it declared the journal.
type factFilter struct {
	pods, events, journal, runtime, cri, logs, dmesg, fragments bool
}

func (v *View) factFilter() factFilter {
	return factFilter{pods: v.declared[Pods], events: v.declared[Events], journal: v.declared[KubeletJournal],
		runtime: v.declared[RuntimeJournal], cri: v.declared[CRI], logs: v.declared[ContainerLogs],
		dmesg: v.declared[Dmesg], fragments: v.declared[Fragments]}
}

// factsOf is the graph's facts; a view that asks for them needs no kind of its own.
func (v *View) factsOf() *facts { return v.g.buildFactsOnce() }
