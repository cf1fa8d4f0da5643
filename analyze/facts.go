package analyze

import (
	"maps"

	"podflow.dev/podflow/logline"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unsafe"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
)

// TextKind says where a line of evidence text came from. Signatures name the kinds
// they are tried on.
type TextKind string

// Kinds of text.
const (
	// TextEvent is an event's message (its reason is in Line.Reason).
	TextEvent TextKind = "event"
	// TextStatus is a container's waiting or terminated message, or a pod condition's.
	TextStatus TextKind = "status"
	// TextJournal is a node agent's line: kubelet, container runtime, CNI, kernel.
	TextJournal TextKind = "journal"
	// TextLog is a container's log line.
	TextLog TextKind = "log"
	// TextText is a pasted line podflow could not place.
	TextText TextKind = "text"
)

// TextKinds lists every kind, in the order signatures document them.
var TextKinds = []TextKind{TextEvent, TextStatus, TextJournal, TextLog, TextText}

// Line is one line of evidence text with what is known of its subject: the unit that
// signatures match and that the unexplained check reads. Lines are computed once per
// graph from every source (events, pod status, journals, container logs, fragments),
// except what is about a pod that positively shows health.
type Line struct {
	// Text is the message: an event's message, a status message (or reason), a journal
	// entry's message with its err= value, a log line.
	Text string
	// Pod is the pod the line is about, or nil when it is not known.
	Pod *Pod
	// A journal entry's line keeps only the entry, and an event's line only the event,
	// and reads its node, container and citation from it when asked: journals and
	// events make most lines, and few are ever cited. Any other line keeps what it
	// knows in a lineMore. src is the one of them from says it is: one pointer and a
	// byte beside the flags rather than three pointers, 16 bytes of each of the
	// 200k lines of 20k pods, held while the rules run.
	src unsafe.Pointer
	// kind is the line's TextKind (Kind) as its place in TextKinds and one, a byte
	// beside the flags rather than a string's 16 bytes (at 80k pods, 14 MB of lines).
	kind textKindCode
	// Warning is true for Warning events and for lines whose severity is W, E or F.
	Warning bool
	// Fragment is true for a line from evidence an import could not attribute.
	Fragment bool
	from     lineSource
	// qi is, for a line of a workload's compact event (fromQuiet, src its
	// quietEvents), the event's index in the list: it fills the 4 bytes the fields
	// above leave before the next line.
	qi int32
}

// textKindCode is a TextKind as its place in TextKinds and one; 0 is none.
type textKindCode uint8

// textKindOf is k's code: the kinds are those of TextKinds.
func textKindOf(k TextKind) textKindCode {
	for i, v := range TextKinds {
		if v == k {
			return textKindCode(i + 1)
		}
	}
	return 0
}

// Kind says where the line came from.
func (l *Line) Kind() TextKind {
	if l.kind == 0 {
		return ""
	}
	return TextKinds[l.kind-1]
}

// lineSource says what a line's src points to.
type lineSource uint8

const (
	fromNothing lineSource = iota
	fromEntry
	fromEvent
	fromMore
	fromQuiet
)

// entry is the journal entry the line was read from, or nil.
func (l *Line) entry() *JournalEntry {
	if l.from != fromEntry {
		return nil
	}
	return (*JournalEntry)(l.src)
}

// event is the event the line was read from, or nil.
func (l *Line) event() *Event {
	if l.from != fromEvent {
		return nil
	}
	return (*Event)(l.src)
}

// more is what a line read from neither knows, or nil.
func (l *Line) more() *lineMore {
	if l.from != fromMore {
		return nil
	}
	return (*lineMore)(l.src)
}

// withMore is l knowing what m says.
func (l Line) withMore(m *lineMore) Line {
	l.from, l.src = fromMore, unsafe.Pointer(m)
	return l
}

// lineMore is what a line that is not a journal entry's knows besides its text.
type lineMore struct {
	reason string
	// object is the object an event is about when it is not a pod.
	object          ObjectRef
	node, container string
	count           int32
	ev              Evidence
}

// lineIn is a line as buildLines puts it together, before it is stored compactly.
type lineIn struct {
	Kind              TextKind
	Text, Reason      string
	Warning, Fragment bool
	Pod               *Pod
	Object            ObjectRef
	Node, Container   string
	Count             int32
	ev                *Evidence
	entry             *JournalEntry
	event             *Event
	// quiet and qi are a workload's compact event (Line.qi).
	quiet *quietEvents
	qi    int32
}

// Reason is the event or status reason ("FailedMount", "CrashLoopBackOff").
func (l *Line) Reason() string {
	switch l.from {
	case fromEvent:
		return l.event().Reason
	case fromQuiet:
		q := (*quietEvents)(l.src)
		return q.w.t.shapes[q.list[l.qi].shape].reason
	case fromMore:
		return l.more().reason
	}
	return ""
}

// Object is the object an event is about when it is not a pod (a ReplicaSet's
// FailedCreate, a Node's NodeNotReady).
func (l *Line) Object() ObjectRef {
	switch l.from {
	case fromEvent:
		if l.Pod == nil {
			return l.event().Regarding
		}
	case fromQuiet:
		return l.quietEvent().Regarding
	case fromMore:
		return l.more().object
	}
	return ObjectRef{}
}

// Node is the node the line is about, when known.
func (l *Line) Node() string {
	switch l.from {
	case fromEntry:
		return l.entry().Node()
	case fromEvent:
		return eventNode(l.event(), l.Pod)
	case fromQuiet:
		return eventNode(l.quietEvent(), l.Pod)
	case fromMore:
		return l.more().node
	}
	return ""
}

// Container is the container the line is about, when known.
func (l *Line) Container() string {
	switch l.from {
	case fromEntry:
		c, _ := l.entry().Field("containerName")
		return c
	case fromEvent:
		return l.event().Container()
	case fromQuiet:
		return l.quietEvent().Container()
	case fromMore:
		return l.more().container
	}
	return ""
}

// Count is how often an event was seen (0 for other lines).
func (l *Line) Count() int32 {
	switch l.from {
	case fromEvent:
		return l.event().Count
	case fromQuiet:
		q := (*quietEvents)(l.src)
		return q.list[l.qi].count
	case fromMore:
		return l.more().count
	}
	return 0
}

// Evidence cites the line.
func (l *Line) Evidence() Evidence {
	switch l.from {
	case fromEntry:
		return l.entry().Evidence()
	case fromEvent:
		return l.event().Evidence()
	case fromQuiet:
		return l.quietEvent().Evidence()
	case fromMore:
		return l.more().ev
	}
	return Evidence{}
}

// source is the bundle and path of the file the line comes from.
func (l *Line) source() (string, string) {
	switch l.from {
	case fromEntry:
		if e := l.entry(); e.file != nil {
			return e.file.at.Bundle, e.file.path
		}
	case fromEvent:
		return l.event().Loc.Bundle, l.event().Loc.inBundle().Path
	case fromQuiet:
		e := l.quietEvent()
		return e.Loc.Bundle, e.Loc.inBundle().Path
	case fromMore:
		return l.more().ev.Bundle, l.more().ev.inBundle().Path
	}
	return "", ""
}

func evidencePtr(e Evidence) *Evidence { return &e }

// Subjects are the objects a finding about the line names: its pod, else the object
// an event is about, else its node, else the unknown container or node a fragment came
// from.
func (l *Line) Subjects() []ObjectRef {
	var out []ObjectRef
	switch {
	case l.Pod != nil:
		out = append(out, l.Pod.Ref())
		if l.Pod.Obj.Spec.NodeName != "" {
			out = append(out, NodeRef(l.Pod.Obj.Spec.NodeName))
		}
	case l.Object().Kind != "":
		out = append(out, l.Object())
	case l.Node() != "":
		out = append(out, NodeRef(l.Node()))
	case l.Kind() == TextLog:
		out = append(out, ObjectRef{Kind: "Container", Name: UnknownSubject})
	default:
		out = append(out, ObjectRef{Kind: "Node", Name: UnknownSubject})
	}
	return out
}

// UnknownSubject names a subject the evidence does not identify: "the container whose
// log this is", "the node this journal came from".
const UnknownSubject = "(unknown)"

// logTailLines caps how much of each container log is read for lines: what explains
// an exit is at the end.
const logTailLines = 400

// Lines returns every line of evidence text, computed once.
func (g *Graph) Lines() []Line {
	g.linesOnce.Do(func() { g.lines = g.buildLines() })
	return g.lines
}

// letLinesGo drops the lines and what was found in them: the signatures' index of
// them, the catalog's ties and the pasted paragraphs. Each is made again if asked for.
// At 20k pods the lines alone are about 20 MB, held until the report is built. Another
// analysis of the graph must not be running.
func (g *Graph) letLinesGo() {
	g.sigIndex.mu.Lock()
	g.sigIndex.lines = nil
	g.sigIndex.mu.Unlock()
	g.sigTies.mu.Lock()
	g.sigTies.done, g.sigTies.lines = nil, nil
	g.sigTies.mu.Unlock()
	g.ruleTies.mu.Lock()
	g.ruleTies.done, g.ruleTies.lines = false, nil
	g.ruleTies.mu.Unlock()
	g.paragraphsOnce, g.paragraphOf = sync.Once{}, nil
	g.linesOnce, g.lines = sync.Once{}, nil
}

func (g *Graph) buildLines() []Line {
	// A pod that runs, is ready and never restarted (positivelyHealthy): what it logged
	// or once reported is history, not its cause of trouble. Neither signatures nor the
	// unexplained check read it, so its lines are not made: in a big cluster they are
	// most of them.
	healthy := g.healthyPods()
	// Sized once: journals make this slice hundreds of megabytes, and growing it by
	// appends would hold two copies at a time.
	out := make([]Line, 0, g.linesEstimate(healthy))
	add := func(in lineIn) {
		if in.Pod != nil && healthy[in.Pod] {
			return
		}
		if l, ok := newLine(in); ok {
			out = append(out, l)
		}
	}
	// The lines of the workloads' compact events go where their events were in the
	// sorted list (quietenWorkloads): the events left fill the other places in order.
	quiet := g.quietLines()
	next, at := 0, int32(0)
	addQuiet := func() {
		for ; next < len(quiet) && quiet[next].rank == at; next, at = next+1, at+1 {
			ql := quiet[next]
			c := ql.q.list[ql.i]
			sh := ql.q.w.t.shapes[c.shape]
			add(lineIn{Kind: TextEvent, Text: c.message, Reason: sh.reason,
				Warning: sh.typ == corev1.EventTypeWarning || stuck(sh.reason, c.count), quiet: ql.q, qi: ql.i})
		}
	}
	for _, e := range g.events {
		addQuiet()
		at++
		var pod *Pod
		if e.Regarding.Kind == "Pod" {
			if pod = g.FindPod(e.Regarding.Namespace, e.Regarding.Name); pod != nil && healthy[pod] {
				continue
			}
		}
		// The line reads its reason, subject, node, count and citation from the event
		// when asked (Line.event).
		add(lineIn{Kind: TextEvent, Text: e.Message, Reason: e.Reason,
			Warning: e.Type == corev1.EventTypeWarning || stuck(e.Reason, e.Count), Pod: pod, event: e})
	}
	addQuiet()
	for _, p := range g.pods {
		if !healthy[p] {
			g.statusLines(p, add)
		}
	}
	g.workloadConditionLines(add)
	podOf := make([]*Pod, g.journal.len())
	for _, p := range g.pods {
		for _, i := range g.journalIndexFor(p.Obj) {
			podOf[i] = p
		}
	}
	texts := entryTexts{}
	for i := range g.journal.len() {
		add(journalLine(g.journal.at(i), podOf[i], texts))
	}
	for _, node := range sortedKeys(g.runtimeJournal) {
		entries := g.runtimeJournal[node]
		for i := range entries {
			add(journalLine(&entries[i], nil, texts))
		}
	}
	for _, u := range g.unparsed {
		l := lineIn{Kind: TextJournal, Text: u.text, Node: u.node, Warning: looksLikeError(u.text), ev: evidencePtr(u.loc.Evidence(u.text, time.Time{}))}
		if e, k, _ := logline.Parse(u.text, g.collectedAt); k == logline.KindEntry && e.Message != "" {
			l.Text = entryText(&e)
			l.Warning = l.Warning || e.Severity == 'W' || e.Severity == 'E' || e.Severity == 'F'
		}
		add(l)
	}
	for _, o := range g.ooms {
		l := lineIn{Kind: TextJournal, Text: o.Text, Node: o.Node, Warning: true, ev: evidencePtr(o.Loc.Evidence(o.Text, o.Time))}
		if o.PodUID != "" {
			l.Pod, _ = g.byUID[o.PodUID].(*Pod)
		}
		add(l)
	}
	for _, key := range sortedKeys(g.logs) {
		c := g.logs[key]
		p := g.FindPod(c.Namespace, c.Pod)
		if p != nil && healthy[p] {
			continue
		}
		lines, loc := c.Tail(logTailLines)
		for i, s := range lines {
			// A line the program wrote at its error level is trouble whatever its words
			// ("E20221021 … dfly_main.cc:127] Max memory is less than 256MB per thread.
			// Exiting...").
			l := lineIn{Kind: TextLog, Text: s, Pod: p, Container: c.Container, Warning: looksLikeError(s) || programLevelLine(s)}
			l.ev = evidencePtr(loc.lineBelow(i).Evidence(s, time.Time{}))
			if p != nil {
				l.Node = p.Obj.Spec.NodeName
			}
			add(l)
		}
	}
	g.fragmentTextLines(add)
	return out
}

// eventNode is the node an event's line is about: the node that reported it, else its
// pod's node, else the node it is about.
func eventNode(e *Event, pod *Pod) string {
	switch {
	case e.Host != "":
		return e.Host
	case pod != nil:
		return pod.Obj.Spec.NodeName
	case e.Regarding.Kind == "Node":
		return e.Regarding.Name
	}
	return ""
}

// healthyPods are the pods that positively show health (positivelyHealthy).
func (g *Graph) healthyPods() map[*Pod]bool {
	out := map[*Pod]bool{}
	for _, p := range g.pods {
		if positivelyHealthy(p) {
			out[p] = true
		}
	}
	return out
}

// newLine makes a Line of what a source says; false for a line with no text.
func newLine(in lineIn) (Line, bool) {
	// Signatures and the catalog read the message as its component printed it: the
	// typographic quotes, no-break spaces and UI borders a paste brings are undone
	// (the evidence still cites the line where it was given).
	text := strings.TrimSpace(logline.Plain(in.Text))
	if j, ok := jsonLogText(text); ok {
		// A structured log record: its message and error, their quotes unescaped
		// (jsonLogText).
		text = j
	}
	if text == "" && in.Reason == "" {
		return Line{}, false
	}
	l := Line{kind: textKindOf(in.Kind), Text: text, Pod: in.Pod, Warning: in.Warning, Fragment: in.Fragment}
	switch {
	case in.entry != nil:
		l.from, l.src = fromEntry, unsafe.Pointer(in.entry)
	case in.event != nil:
		l.from, l.src = fromEvent, unsafe.Pointer(in.event)
	case in.quiet != nil:
		l.from, l.src, l.qi = fromQuiet, unsafe.Pointer(in.quiet), in.qi
	default:
		m := &lineMore{reason: in.Reason, object: in.Object, node: in.Node, container: in.Container, count: in.Count}
		if in.ev != nil {
			m.ev = *in.ev
		}
		l = l.withMore(m)
	}
	return l, true
}

// reMarkdownHeading is a ticket's heading ("### Logs and Errors", "## Error
// messages"): a title of what follows, no trouble of its own.
var reMarkdownHeading = regexp.MustCompile(`^\s{0,3}#{1,6}\s+\S[^\n]{0,60}$`)

// reMarkupLine is a line of an HTML page a paste quotes (what curl printed: "<title>403
// Forbidden</title>", "<h1>Not Found</h1>"): a page's markup, which a web server sends
// whatever its status, not a program's error line.
var reMarkupLine = regexp.MustCompile(`^\s*<(?:!DOCTYPE|/?[a-zA-Z][a-zA-Z0-9]*)(?:\s[^>]*)?>`)

// fragmentTextLines adds the lines of pasted evidence no import could attribute, each
// line and each wrapped paragraph.
func (g *Graph) fragmentTextLines(add func(lineIn)) {
	crashed := g.loneCrashedPod()
	for _, f := range g.fragments {
		kind := f.kind
		if kind == TextLog && mostlyNodeAgent(f.lines) {
			// A "log" whose lines are a node agent's journal: its subject is the node.
			kind = TextJournal
		}
		about := f.aboutRef()
		var pod *Pod
		switch {
		case kind == TextLog && about.Kind == "":
			// A container log nobody named, pasted next to the one pod of the
			// evidence, whose container crashed or could not start: the log is
			// that container's (what a reader of the ticket takes it for).
			pod = crashed
		case kind == TextLog && about.Kind == "Pod":
			// `kubectl logs POD` of a pod whose containers the paste does not list:
			// the log is one of that pod's containers'.
			pod = g.FindPod(about.Namespace, about.Name)
		}
		for i, s := range f.lines {
			l := lineIn{Kind: kind, Text: s, Fragment: true, Warning: (looksLikeError(s) || kind == TextLog && programLevelLine(s)) && !reMarkdownHeading.MatchString(s) && !reMarkupLine.MatchString(s), Object: about, Pod: pod}
			if kind == TextJournal {
				if e, k, _ := ParseJournalLine(s, g.collectedAt); k == LineEntry {
					l.Text = entryText(&e.Entry)
					l.Warning = l.Warning || e.Severity == 'W' || e.Severity == 'E' || e.Severity == 'F'
				}
			}
			if a, ok := auditRequestText(s); ok {
				// An API server audit event of a refused or failed request: read as
				// who asked what and how the API server answered.
				l.Text, l.Warning = a, true
			}
			l.ev = evidencePtr(f.loc.Lines(i+1, 0).Evidence(s, time.Time{}))
			add(l)
		}
		// A message wrapped over several lines (a terminal's width, YAML folding) is
		// also tried whole.
		width := terminalWidth(f.lines)
		for _, p := range paragraphs(f.lines) {
			text := joinParagraph(f.lines[p[0]:p[1]], width)
			// A manifest's or a configuration's nested keys (a probe's settings quoted
			// whole) are read together, but say no trouble of their own.
			warn := looksLikeError(text) && !yamlBlock(f.lines[p[0]:p[1]])
			add(lineIn{Kind: kind, Text: text, Fragment: true, Warning: warn, Object: about, Pod: pod, ev: evidencePtr(f.loc.Lines(p[0]+1, p[1]).Evidence(text, time.Time{}))})
		}
	}
}

// ClientKind is the kind of the subject of lines a client printed as its own output
// (kubectl's "error: …", docker's "Error response from daemon: …"): its name is the
// client's.
const ClientKind = "Client"

// aboutRef is the subject the import found a fragment's lines to be about: the object
// (its name UnknownSubject when the evidence does not give it) or the client that
// printed them; the zero ref when it could not tell.
func (f *fragmentFile) aboutRef() ObjectRef {
	a := f.about
	switch {
	case a == nil:
		return ObjectRef{}
	case a.Client != "":
		return ObjectRef{Kind: ClientKind, Name: a.Client}
	case a.Kind == "":
		return ObjectRef{}
	}
	name := a.Name
	if name == "" {
		name = UnknownSubject
	}
	return ObjectRef{Kind: a.Kind, Namespace: a.Namespace, Name: name}
}

// loneCrashedPod is the evidence's only pod when one of its containers crashed or
// could not start (waiting to restart or with a start error, terminated with a
// non-zero exit code, restarted, or the pod Failed); nil when the evidence holds
// another pod, or none.
func (g *Graph) loneCrashedPod() *Pod {
	if len(g.pods) != 1 {
		return nil
	}
	if p := g.pods[0]; podCrashed(p) {
		return p
	}
	return nil
}

// podCrashed reports whether one of the pod's containers crashed or could not start.
func podCrashed(p *Pod) bool {
	st := &p.Obj.Status
	if st.Phase == corev1.PodFailed || crashWaitingReasons[st.Reason] {
		// A row of "kubectl get pods" gives the status column as the pod's reason.
		return true
	}
	for _, c := range append(slices.Clone(st.InitContainerStatuses), st.ContainerStatuses...) {
		switch {
		case c.RestartCount > 0,
			c.State.Terminated != nil && c.State.Terminated.ExitCode != 0,
			c.LastTerminationState.Terminated != nil && c.LastTerminationState.Terminated.ExitCode != 0,
			c.State.Waiting != nil && crashWaitingReasons[c.State.Waiting.Reason]:
			return true
		}
	}
	return false
}

// reProseDying is a ticket's sentence that says its pods die or will not start: how it
// says a crash (reProseCrash's words), or a pod, container or daemon that crashes,
// restarts or fails ("the calico pods will fail").
var reProseDying = regexp.MustCompile(reProseLoops + `|` + reProseStartFails +
	`|(?i)\b(?:pods?|containers?|daemon\w*|agents?|controllers?|operators?|[a-z0-9]+-node)\b[^.\n]{0,40}\b(?:crash(?:es|ed|ing)?|restart(?:s|ed|ing)|fail(?:s|ed|ing)?)\b`)

// podsDying reports whether the evidence shows a pod's program dying: a container that
// crashed or could not start (loneCrashedPod's signs, on any pod), or a ticket's
// sentence saying so. A refusal in a program's own log is then why it dies.
func (g *Graph) podsDying() bool {
	g.dyingOnce.Do(func() {
		for _, p := range g.pods {
			if podCrashed(p) {
				g.dying = true
				return
			}
		}
		for _, f := range g.fragments {
			if f.kind != TextText {
				continue
			}
			for _, l := range f.lines {
				if reProseDying.MatchString(l) {
					g.dying = true
					return
				}
			}
		}
	})
	return g.dying
}

// crashWaitingReasons are the waiting reasons of a container that ran and crashed, or
// that the runtime could not start (kubelet's container states).
var crashWaitingReasons = map[string]bool{
	"CrashLoopBackOff": true, "RunContainerError": true, "CreateContainerError": true,
	"StartError": true, "Error": true, "ContainerCannotRun": true,
}

// linesEstimate is about how many lines buildLines adds: exact for journals, an upper
// bound for the rest but fragment paragraphs.
func (g *Graph) linesEstimate(healthy map[*Pod]bool) int {
	n := g.journal.len() + len(g.unparsed) + len(g.ooms)
	for _, q := range g.quietWorkloads {
		n += len(q.list)
	}
	for _, e := range g.events {
		// Most events of a big cluster are about healthy pods, which make no line.
		if e.Regarding.Kind != "Pod" || !healthy[g.FindPod(e.Regarding.Namespace, e.Regarding.Name)] {
			n++
		}
	}
	for _, entries := range g.runtimeJournal {
		n += len(entries)
	}
	for _, p := range g.pods {
		if healthy[p] {
			continue
		}
		st := &p.Obj.Status
		n += 1 + len(st.Conditions) + 2*(len(st.InitContainerStatuses)+len(st.ContainerStatuses))
	}
	for _, c := range g.logs {
		if p := g.FindPod(c.Namespace, c.Pod); p != nil && healthy[p] {
			continue
		}
		n += min(strings.Count(c.text, "\n")+1, logTailLines)
	}
	// Only the failures among the workloads' conditions make lines
	// (workloadConditionLines): counted whole, a Deployment's Available and Progressing
	// were room for 80k lines never made at 80k pods, held to the report.
	g.workloadConditionLines(func(lineIn) { n++ })
	for _, f := range g.fragments {
		n += len(f.lines)
	}
	return n
}

// paragraphs returns [start, end) ranges of runs of two or more lines in which every
// line after the first is indented, follows a line that ends with a colon (a message
// wrapped after "valid:") or follows a line that ends with a space (an editor's soft
// wrap keeps the space it broke at): the shapes of a wrapped message.
func paragraphs(lines []string) [][2]int {
	var out [][2]int
	width := terminalWidth(lines)
	wrap := wrapWidth(lines)
	start := -1
	flush := func(end int) {
		if start >= 0 && end-start >= 2 {
			out = append(out, [2]int{start, end})
		}
		start = -1
	}
	for i, s := range lines {
		switch {
		case strings.TrimSpace(s) == "":
			flush(i)
		case start < 0:
			start = i
		case !strings.HasPrefix(s, " ") && !strings.HasPrefix(s, "\t") && !leadsOn(lines[i-1]) &&
			!softWrapped(lines[i-1]) && !hardWrapped(lines[i-1], width) && !wordWrapped(lines[i-1], s, wrap) &&
			!closesValue(s) && !opensQuote(lines[i-1]) && !quotedValueGoesOn(lines[i-1], s):
			flush(i)
			start = i
		}
	}
	flush(len(lines))
	return out
}

// leadsOn reports whether a line ends where its text cannot: after a colon (a label, a
// wrapped error chain) or a comma ("image has non-numeric user (flight)," / "cannot
// verify user is non-root").
func leadsOn(line string) bool {
	line = strings.TrimRight(line, " \t\r")
	return strings.HasSuffix(line, ":") || strings.HasSuffix(line, ",")
}

// opensQuote reports whether a line leaves a Markdown code span open: an odd number of
// single backticks, outside a fence, so the quoted message goes on on the next line
// ("… is forbidden: unable to validate against" / "any security context constraint: …`").
func opensQuote(line string) bool {
	if strings.HasPrefix(strings.TrimSpace(line), "```") {
		return false
	}
	return strings.Count(strings.ReplaceAll(line, "```", ""), "`")%2 == 1
}

// closesValue reports whether a line starts by closing a bracket: the end of a value a
// message printed over several lines (a Go struct printed with %#v and re-indented,
// "}: field is immutable"), so it continues the paragraph above.
func closesValue(line string) bool {
	return line != "" && strings.ContainsRune("}])", rune(line[0]))
}

// reYAMLKeyLine is a line of a YAML mapping or list: "key: value", "key:", "- key: value".
var reYAMLKeyLine = regexp.MustCompile(`^\s*(?:- )?[\w./-]+:(?:\s|$)|^\s*- \S`)

// yamlBlock reports whether lines are three or more lines of YAML keys and items, each
// of them: a manifest's or a configuration's block.
func yamlBlock(lines []string) bool {
	if len(lines) < 3 {
		return false
	}
	for _, l := range lines {
		if !reYAMLKeyLine.MatchString(l) {
			return false
		}
	}
	return true
}

// quotedValueGoesOn reports whether a line goes on with the quoted value its last word
// introduces: "failed calling webhook" / "\"policy.example.com\": … deadline exceeded",
// a message a reporter broke before its long value.
func quotedValueGoesOn(prev, line string) bool {
	prev = strings.TrimRight(prev, " \t\r")
	if prev == "" || !isASCIILetter(prev[len(prev)-1]) {
		return false
	}
	return len(line) > 1 && line[0] == '"' && line[1] != ' ' && line[1] != '"'
}

// softWrapped reports whether a line ends with the space an editor or a chat client
// broke a long line at (not a line of only spaces, nor a carriage return's line end).
func softWrapped(line string) bool {
	line = strings.TrimSuffix(line, "\r")
	return strings.HasSuffix(line, " ") && strings.TrimSpace(line) != ""
}

// minTerminalWidth is the least width at which lines of one length are taken for a
// terminal's hard wrap.
const minTerminalWidth = 64

// terminalWidth is the width a terminal (or a tool that cuts at a width) broke a
// paste's long lines at: the length of its longest lines, when two or more share it
// and it is minTerminalWidth or more; else 0.
func terminalWidth(lines []string) int {
	width, n := 0, 0
	for _, l := range lines {
		switch w := len(strings.TrimSuffix(l, "\r")); {
		case w > width:
			width, n = w, 1
		case w == width:
			n++
		}
	}
	if width < minTerminalWidth || n < 2 {
		return 0
	}
	return width
}

// maxWrapWidth is the widest column an editor, a mail client or a reporter wraps prose
// at; a file with longer lines was not wrapped by words.
const maxWrapWidth = 132

// wrapWidth is the column a paste was wrapped at by words (an editor's or a mail
// client's fill, a reporter breaking a long message by hand): the length of its longest
// line, when that is between minTerminalWidth and maxWrapWidth; else 0.
func wrapWidth(lines []string) int {
	width := 0
	for _, l := range lines {
		width = max(width, len(strings.TrimRight(l, " \t\r")))
	}
	if width < minTerminalWidth || width > maxWrapWidth {
		return 0
	}
	return width
}

// wordWrapped reports whether line was broken before next's first word because that
// word did not fit in the width: the line is nearly as long as the widest, ends inside
// a sentence (a word, not a full stop), and with the next word it would pass the width.
// "… is forbidden: unable to validate against" / "any security context constraint: …"
func wordWrapped(line, next string, width int) bool {
	line = strings.TrimRight(line, " \t\r")
	word, _, _ := strings.Cut(strings.TrimSpace(next), " ")
	if width == 0 || word == "" || len(line) < width*4/5 || len(line)+1+len(word) <= width {
		return false
	}
	last := line[len(line)-1]
	return isASCIILetter(last) || last >= '0' && last <= '9'
}

// hardWrapped reports whether a line was cut at the terminal's width: the cut may fall
// inside a word, so the next line continues it without a space.
func hardWrapped(line string, width int) bool {
	return width > 0 && len(strings.TrimSuffix(line, "\r")) == width
}

// joinParagraph is a wrapped message's lines as one text: lines cut at the terminal's
// width joined as they were before the cut, the others with a space; runs of spaces
// become one.
func joinParagraph(lines []string, width int) string {
	var b strings.Builder
	for i, l := range lines {
		l = strings.TrimSuffix(l, "\r")
		if i > 0 && !hardWrapped(lines[i-1], width) {
			b.WriteByte(' ')
		}
		b.WriteString(l)
	}
	return strings.Join(strings.Fields(b.String()), " ")
}

// reAgentPrefix is a node agent's syslog identifier at the start of a line whose time
// and host were cut: "kubelet[3268]: E0315 ...".
var reAgentPrefix = regexp.MustCompile(`^\s*(kubelet|containerd|dockerd|crio|k3s|kernel|kube-proxy)(\[\d+\])?: `)

// nodeAgents are the journal identifiers of what runs a node.
var nodeAgents = map[string]bool{"kubelet": true, "containerd": true, "dockerd": true, "crio": true, "systemd": true,
	"kernel": true, "k3s": true, "microk8s": true, "kube-proxy": true, "flanneld": true}

// mostlyNodeAgent reports whether most lines of a block are journal lines of a node agent.
func mostlyNodeAgent(lines []string) bool {
	agent, all := 0, 0
	for _, s := range lines {
		if strings.TrimSpace(s) == "" {
			continue
		}
		all++
		if e, k, _ := ParseJournalLine(s, time.Time{}); k == LineEntry && nodeAgents[e.Program] || reAgentPrefix.MatchString(s) {
			agent++
		}
	}
	return all > 0 && 2*agent > all
}

// entryTexts are the texts of the structured entries whose lines are made, by message
// and fields: a kubelet repeats an error word for word ("Error syncing pod, skipping"
// with the same err= for a pod's every retry), and a line's text that joins the two
// is made once for all of them rather than once per entry, held until the report.
type entryTexts map[[2]string]string

// of is entryText(e), made once for each message and fields.
func (t entryTexts) of(e *logline.Entry) string {
	if e.FieldText == "" {
		return entryText(e) // the message itself
	}
	k := [2]string{e.Message, e.FieldText}
	if s, ok := t[k]; ok {
		return s
	}
	s := entryText(e)
	if unsafe.StringData(s) != unsafe.StringData(e.Message) {
		t[k] = s // made of the message and a field: worth keeping for the next
	}
	return s
}

func journalLine(e *JournalEntry, p *Pod, texts entryTexts) lineIn {
	text := texts.of(&e.Entry)
	// Node and container are read from the entry when asked (Line.Node, Line.Container).
	return lineIn{Kind: TextJournal, Text: text, Pod: p, entry: e,
		Warning: e.Severity == 'W' || e.Severity == 'E' || e.Severity == 'F' || (e.Severity == 0 && looksLikeError(text))}
}

// statusLines adds what a pod's status says in words: container waiting and terminated
// states (current and last), the pod's own reason and message, and conditions that
// are False with a message.
func (g *Graph) statusLines(p *Pod, add func(lineIn)) {
	node := p.Obj.Spec.NodeName
	// Statuses are read directly, not through the spec: a pod an import built from a
	// pasted status block has statuses and no spec.
	for _, fl := range []struct {
		field string
		list  []corev1.ContainerStatus
	}{{"initContainerStatuses", p.Obj.Status.InitContainerStatuses}, {"containerStatuses", p.Obj.Status.ContainerStatuses}} {
		field, list := fl.field, fl.list
		for i := range list {
			cs := &list[i]
			loc := p.Loc.At("status", field, i)
			state := func(s corev1.ContainerState, loc Location) {
				switch {
				case s.Waiting != nil:
					add(lineIn{Kind: TextStatus, Text: s.Waiting.Message, Reason: s.Waiting.Reason, Pod: p, Node: node, Container: cs.Name,
						Warning: s.Waiting.Reason != "ContainerCreating" && s.Waiting.Reason != "PodInitializing",
						ev:      evidencePtr(loc.At("waiting").Evidence(joinNonEmpty(s.Waiting.Reason, s.Waiting.Message), time.Time{}))})
				case s.Terminated != nil:
					t := s.Terminated
					text := t.Message
					if text == "" {
						// Reason is kept apart; the exit code is what the status says.
						text = "exit code " + strconv.Itoa(int(t.ExitCode))
						if t.Signal != 0 {
							text += ", signal " + strconv.Itoa(int(t.Signal))
						}
					}
					add(lineIn{Kind: TextStatus, Text: text, Reason: t.Reason, Pod: p, Node: node, Container: cs.Name,
						Warning: t.ExitCode != 0,
						ev:      evidencePtr(loc.At("terminated").Evidence(joinNonEmpty(t.Reason, "exit code "+strconv.Itoa(int(t.ExitCode)), t.Message), t.FinishedAt.Time))})
				}
			}
			state(cs.State, loc.At("state"))
			state(cs.LastTerminationState, loc.At("lastState"))
		}
	}
	st := p.Obj.Status
	if st.Reason != "" || st.Message != "" {
		add(lineIn{Kind: TextStatus, Text: st.Message, Reason: st.Reason, Pod: p, Node: node, Warning: true,
			ev: evidencePtr(p.Loc.At("status").Evidence(joinNonEmpty(st.Reason, st.Message), time.Time{}))})
	}
	for i, c := range st.Conditions {
		if c.Status != corev1.ConditionFalse || c.Message == "" {
			continue
		}
		add(lineIn{Kind: TextStatus, Text: c.Message, Reason: c.Reason, Pod: p, Node: node, Warning: true,
			ev: evidencePtr(p.Loc.At("status", "conditions", i).Evidence(joinNonEmpty(string(c.Type)+" "+c.Reason, c.Message), c.LastTransitionTime.Time))})
	}
}

// workloadConditionLines adds the failure conditions of ReplicaSets, Deployments and
// Jobs: a ReplicaFailure condition carries the API server's refusal of the pods the
// controller tried to create (quota, webhook, policy) after its events are gone, and a
// Job's Failed condition says why it gave up.
func (g *Graph) workloadConditionLines(add func(lineIn)) {
	cond := func(ref ObjectRef, loc Location, i int, typ, reason, msg string, at time.Time) {
		add(lineIn{Kind: TextStatus, Text: msg, Reason: reason, Object: ref, Warning: true,
			ev: evidencePtr(loc.At("status", "conditions", i).Evidence(joinNonEmpty(typ+" "+reason, msg), at))})
	}
	for _, rs := range g.replicaSets {
		for i, c := range rs.Obj.Status.Conditions {
			if c.Type == appsv1.ReplicaSetReplicaFailure && c.Status == corev1.ConditionTrue {
				cond(rs.Ref(), rs.Loc, i, string(c.Type), c.Reason, c.Message, c.LastTransitionTime.Time)
			}
		}
	}
	for _, d := range g.deployments {
		for i, c := range d.Obj.Status.Conditions {
			if c.Type == appsv1.DeploymentReplicaFailure && c.Status == corev1.ConditionTrue {
				cond(d.Ref(), d.Loc, i, string(c.Type), c.Reason, c.Message, c.LastTransitionTime.Time)
			}
		}
	}
	for _, j := range g.jobs {
		for i, c := range j.Obj.Status.Conditions {
			if c.Type == batchv1.JobFailed && c.Status == corev1.ConditionTrue {
				cond(j.Ref(), j.Loc, i, string(c.Type), c.Reason, c.Message, c.LastTransitionTime.Time)
			}
		}
	}
}

// joinNonEmpty joins the parts that are not empty with ": ".
func joinNonEmpty(parts ...string) string {
	var kept []string
	for _, p := range parts {
		if p != "" {
			kept = append(kept, p)
		}
	}
	return strings.Join(kept, ": ")
}

// errorWords are what a line that reports a failure says, in any component's voice;
// they mark a line without a severity (a container log, a pasted line) as an error.
var errorWords = []string{"error", "fail", "fatal", "panic", "exception", "denied", "refused", "unable to",
	"cannot", "can't", "couldn't", "could not", "timed out", "timeout", "invalid", "not found", "no such",
	"forbidden", "unauthorized", "killed", "out of memory", "oom", "exceeded", "traceback", "segmentation fault",
	"crash", "back-off", "backoff", "unhealthy", "not healthy", "nodelost", "evicted", "oomkilled", "crashloopbackoff", "nodes are available", "didn't tolerate", "didn't match", "insufficient",
	"unbound", "oom-killer", "expired", "avc:  denied", "avc: denied", "not ready", "notready", "deadline", "x509", "unreachable", "illegal instruction",
	// a program's own refusal to go on: "Multiple plugin prerequisites not met:"
	"prerequisites not met", "requirements not met", "dependencies not met",
	// and its request to the reader: "/runner should be an emptyDir mount. Please fix
	// the pod spec."
	"please fix"}

// looksLikeError reports whether a line without a severity reads as a failure report.
// It runs on every journal line without a severity and every log line, so ASCII text
// (nearly all of it) is scanned once for all words, case-folded in place; other text
// is lowered first, as strings.ToLower folds more than ASCII.
func looksLikeError(s string) bool {
	return hasErrorWord(s) && !bareWord(s)
}

// bareWord reports whether the line is one word of small letters and nothing else: a
// configuration's directive a log echoes ("errors", CoreDNS's plugin, in a Corefile the
// program prints as it starts), no program's message.
func bareWord(s string) bool {
	t := strings.TrimSpace(s)
	if t == "" {
		return false
	}
	for i := 0; i < len(t); i++ {
		if c := t[i]; c < 'a' || c > 'z' {
			return false
		}
	}
	return true
}

// hasErrorWord reports whether the line holds one of errorWords, in any case.
func hasErrorWord(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			low := strings.ToLower(s)
			for _, w := range errorWords {
				if strings.Contains(low, w) {
					return true
				}
			}
			return false
		}
	}
	for i := 0; i+1 < len(s); i++ {
		a, b := lowerASCII(s[i]), lowerASCII(s[i+1])
		if !errorPairs[a][b] {
			continue
		}
		for _, w := range errorWordsByFirst[a] {
			if len(s)-i >= len(w) && hasPrefixFoldASCII(s[i:], w) {
				return true
			}
		}
	}
	return false
}

// errorWordsByFirst lists errorWords by first byte; errorPairs marks the first two
// bytes of any of them, so most positions of a line are passed over at one look-up.
var errorWordsByFirst, errorPairs = func() (by [256][]string, pairs [256][256]bool) {
	for _, w := range errorWords {
		by[w[0]] = append(by[w[0]], w)
		pairs[w[0]][w[1]] = true
	}
	return by, pairs
}()

// hasPrefixFoldASCII reports whether s starts with the lower-case ASCII word w, ignoring
// the case of s.
func hasPrefixFoldASCII(s, w string) bool {
	for j := 0; j < len(w); j++ {
		if lowerASCII(s[j]) != w[j] {
			return false
		}
	}
	return true
}

func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}

// stuckReasons are Normal events that, seen again and again, say a step never
// finishes: a volume no provisioner creates.
var stuckReasons = map[string]bool{"ExternalProvisioning": true, "Provisioning": true}

// stuck reports whether a Normal event repeats enough to be trouble.
func stuck(reason string, count int32) bool { return stuckReasons[reason] && count >= 5 }
