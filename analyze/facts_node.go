package analyze

import (
	"regexp"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Eviction is a pod the kubelet evicted: a Failed pod whose status reason is Evicted,
// with its latest Evicted event and the eviction manager's journal line, or an Evicted
// event about a pod the evidence does not hold.
type Eviction struct {
	Subject PodSubject
	// Event is the pod's latest Evicted event.
	Event *Event
	// Line is the kubelet's latest "Eviction manager: pod … evicted" line about the pod.
	Line *JournalEntry
	// Quoted is, for a pod whose status and events hold no eviction message, the
	// kubelet's eviction messages a pasted line no pod owns quotes (a ticket's "the pods
	// say The node was low on resource: ephemeral-storage."), when the evidence's
	// unattributed lines quote at most evictionQuotesMax of them; QuotedLine is the
	// first line that does.
	Quoted     string
	QuotedLine *Line
}

// reEvictionMessage is a message of the kubelet's eviction manager
// (k8s.io/kubernetes pkg/kubelet/eviction/helpers.go nodeLowMessageFmt "The node was
// low on resource: %v. " with its threshold and usage details, nodeConditionMessageFmt
// "The node had condition: %v. ").
var reEvictionMessage = regexp.MustCompile(`The node was low on resource: \[?[\w./-]+\]?\.(?: Threshold quantity: [^,]+, available: [^.\s]+\.)?|The node had condition: \[[^\]]*\]\.`)

// evictionQuotesMax is how many distinct eviction messages unattributed lines may quote
// for them to be read as what the evicted pods say.
const evictionQuotesMax = 3

// quotedEvictions is what the evidence's lines that no pod owns quote of the eviction
// manager's messages: the distinct messages, joined, and the first line; "" when they
// quote none, or more than evictionQuotesMax.
func (g *Graph) quotedEvictions() (string, *Line) {
	var seen []string
	var first *Line
	lines := g.Lines()
	for i := range lines {
		l := &lines[i]
		if l.Pod != nil || !strings.Contains(l.Text, "The node ") {
			continue
		}
		for _, m := range reEvictionMessage.FindAllString(l.Text, -1) {
			if !slices.Contains(seen, m) {
				seen = append(seen, m)
			}
			if first == nil {
				first = l
			}
		}
	}
	if len(seen) == 0 || len(seen) > evictionQuotesMax {
		return "", nil
	}
	return strings.Join(seen, " "), first
}

const evictedReason = "Evicted"

func (g *Graph) evictionFacts() []Eviction {
	var out []Eviction
	for _, p := range g.pods {
		if p.Obj.Status.Phase != corev1.PodFailed || p.Obj.Status.Reason != evictedReason {
			continue
		}
		f := Eviction{Subject: podSubject(p), Event: LatestEvent(g.eventsFor(p.Ref()), "", evictedReason)}
		entries := g.journalFor(p.Obj)
		for i := len(entries) - 1; i >= 0; i-- {
			if strings.HasPrefix(entries[i].Message, "Eviction manager: pod ") {
				f.Line = entries[i]
				break
			}
		}
		out = append(out, f)
	}
	out = eventOnlyFacts(g, out, evictedReason,
		func(s PodSubject, e *Event) Eviction { return Eviction{Subject: s, Event: e} },
		func(f *Eviction, e *Event) { f.Event = e })
	var quoted string
	var quotedLine *Line
	for i := range out {
		f := &out[i]
		if f.Event != nil || f.Subject.Pod == nil || strings.TrimSpace(f.Subject.Pod.Obj.Status.Message) != "" {
			continue
		}
		if quotedLine == nil {
			if quoted, quotedLine = g.quotedEvictions(); quotedLine == nil {
				break
			}
		}
		f.Quoted, f.QuotedLine = quoted, quotedLine
	}
	return out
}

// Evictions lists the evicted pods the rule may see, with the evidence of the kinds it
// declared; one known only from an event needs events declared.
func (v *View) Evictions() []Eviction {
	ff := v.factFilter()
	var out []Eviction
	for _, f := range v.factsOf().evictions {
		if f.Subject.Known() {
			if !v.allow(Pods) {
				return nil
			}
		} else if !ff.events {
			continue
		}
		if !ff.events {
			f.Event = nil
		}
		if !ff.journal {
			f.Line = nil
		}
		out = append(out, f)
	}
	return out
}

// NodeAgent is what a node's kubelet journal says of the kubelet's last run: its last
// entry and the entries of that run (those of the last entry's process, or since the
// last "Kubelet version" line when the journal gives no process IDs), with the node's
// latest NodeNotReady event.
type NodeAgent struct {
	Node string
	// Last is the journal's last entry, nil when the bundle has no journal for the node.
	Last *JournalEntry
	// LastRun are the entries of the kubelet's last run, in file order.
	LastRun []*JournalEntry
	// NotReady is the node's latest NodeNotReady event.
	NotReady *Event
	// PodNotReady is the latest NodeNotReady event the node controller recorded on a pod
	// bound to the node ("Node is not ready"): what shows a node known only by name not
	// Ready.
	PodNotReady *Event
}

func (g *Graph) nodeAgentFacts() map[string]*NodeAgent {
	out := map[string]*NodeAgent{}
	get := func(node string) *NodeAgent {
		if out[node] == nil {
			out[node] = &NodeAgent{Node: node}
		}
		return out[node]
	}
	for node, idx := range g.journalByNode {
		if len(idx) == 0 {
			continue
		}
		entries := g.entries(idx)
		a := get(node)
		last := entries[len(entries)-1]
		start := len(entries) - 1
		for start > 0 {
			prev := entries[start-1]
			if last.PID != 0 && prev.PID != last.PID || last.PID == 0 && entries[start].Message == "Kubelet version" {
				break
			}
			start--
		}
		a.Last, a.LastRun = last, entries[start:]
	}
	for _, n := range g.nodes {
		if e := LatestEvent(g.eventsFor(n.Ref()), "", "NodeNotReady"); e != nil {
			get(n.meta.Name).NotReady = e
		}
		var latest *Event
		for _, p := range g.podsByNode[n.meta.Name] {
			if e := LatestEvent(g.eventsForIf(p, func(e *Event) bool { return e.Reason == "NodeNotReady" }), "", "NodeNotReady"); e != nil && (latest == nil || e.LastTime.After(latest.LastTime)) {
				latest = e
			}
		}
		if latest != nil {
			get(n.meta.Name).PodNotReady = latest
		}
	}
	return out
}

// NodeAgent returns what the evidence says of a node's kubelet, with the pieces of the
// kinds the rule declared.
func (v *View) NodeAgent(node string) NodeAgent {
	a := v.factsOf().agents[node]
	if a == nil {
		return NodeAgent{Node: node}
	}
	out := *a
	ff := v.factFilter()
	if !ff.journal {
		out.Last, out.LastRun = nil, nil
	}
	if !ff.events {
		out.NotReady, out.PodNotReady = nil, nil
	}
	return out
}

// PodWarning is a pod's latest Warning event: what a controller's troubled pod says of
// itself when no container status does.
func (v *View) PodWarning(p *Pod) *Event {
	if !v.factFilter().events {
		return nil
	}
	f := v.factsOf()
	e, ok := f.warnings[p]
	if ok && e == nil {
		e = v.g.latestWarning(p)
	}
	return e
}

// podWarnings maps each pod to its latest Warning event. A pod whose events are kept
// compact (quietLatest) maps to nil, and its event is made again when asked
// (latestWarning): at 80k pods, most of them quiet with a Warning event of their
// past, the events made for the map were 16 MB held while the rules ran, for the few
// pods PodWarning's readers ask about. Its readers keep what the event says.
func (g *Graph) podWarnings() map[*Pod]*Event {
	out := map[*Pod]*Event{}
	for _, p := range g.pods {
		if has, quiet := g.quietHas(p, isWarningEvent); quiet {
			if has {
				out[p] = nil
			}
			continue
		}
		if e := g.latestWarning(p); e != nil {
			out[p] = e
		}
	}
	return out
}

func isWarningEvent(e *Event) bool { return e.Type == corev1.EventTypeWarning }

// latestWarning is p's latest Warning event in eventsFor's order, made for the caller
// alone while p's events are kept compact.
func (g *Graph) latestWarning(p *Pod) *Event {
	if e, quiet := g.quietLatest(p, isWarningEvent); quiet {
		return e
	}
	events := g.eventsFor(p.Ref())
	for i := len(events) - 1; i >= 0; i-- {
		if events[i].Type == corev1.EventTypeWarning {
			return events[i]
		}
	}
	return nil
}
