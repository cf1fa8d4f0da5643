package analyze

import (
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
	"unsafe"

	corev1 "k8s.io/api/core/v1"

	"podflow.dev/podflow/bundle"
	"podflow.dev/podflow/logline"
	"podflow.dev/podflow/untrusted/yamlbudget"
)

// KubeletConfig is a node's effective kubelet configuration, as collected.
type KubeletConfig struct {
	Node string
	Loc  Location
	// Config is the decoded document; kubelet /configz wraps it in "kubeletconfig".
	Config map[string]any
}

// ContainerLog is the log of one container instance, current or previous.
type ContainerLog struct {
	Namespace string
	Pod       string
	Container string
	Previous  bool
	Loc       Location
	text      string
	// lineBase is the number of lines before text: a log larger than what is read of
	// it (bundle.LogTailBytes) is kept to its tail, and its lines are cited by their
	// place in the whole file.
	lineBase int
}

// Text is the whole log, or its newest bundle.LogTailBytes.
func (c *ContainerLog) Text() string { return c.text }

// Tail returns the last n lines, with the location of that range.
func (c *ContainerLog) Tail(n int) ([]string, Location) {
	text := strings.TrimRight(c.text, "\n")
	if text == "" {
		return nil, c.Loc
	}
	lines := strings.Split(text, "\n")
	first := 0
	if len(lines) > n {
		first = len(lines) - n
	}
	return lines[first:], c.Loc.Lines(c.lineBase+first+1, c.lineBase+len(lines))
}

// Find returns the first line containing substr, with its location.
func (c *ContainerLog) Find(substr string) (string, Location, bool) {
	i := strings.Index(c.text, substr)
	if i < 0 {
		return "", Location{}, false
	}
	start := strings.LastIndexByte(c.text[:i], '\n') + 1
	end := strings.IndexByte(c.text[i:], '\n')
	if end < 0 {
		end = len(c.text)
	} else {
		end += i
	}
	return c.text[start:end], c.Loc.Lines(c.lineBase+strings.Count(c.text[:start], "\n")+1, 0), true
}

// unparsedLine is a journal line no journal format reads (a calico agent's, one cut by
// a paste), kept for the facts layer.
type unparsedLine struct {
	node string
	loc  Location
	text string
}

// fragmentFile is one block of evidence an import could not attribute, line by line.
type fragmentFile struct {
	kind  TextKind
	loc   Location
	lines []string
	// about is what the import found the lines to be about, nil when it could not tell.
	about *bundle.FragmentAbout
}

func logKey(ns, pod, container string, previous bool) string {
	return ns + "/" + pod + "/" + container + "/" + strconv.FormatBool(previous)
}

// logOf is g.logs[logKey(...)] without making the key: the rules ask it of every
// container of every pod, and the keys were a tenth of what they allocated.
func (g *Graph) logOf(ns, pod, container string, previous bool) *ContainerLog {
	if len(g.logs) == 0 {
		return nil
	}
	var b [keyRoom]byte
	return g.logs[string(joinedKey(b[:0], ns, pod, container, strconv.FormatBool(previous)))]
}

// keyRoom is the room on the stack for a key joinedKey builds; a longer one goes to
// the heap, as it did before.
const keyRoom = 192

// joinedKey appends parts joined with '/' to buf. A map indexed with
// string(joinedKey(...)) reads the key in place, where a key joined with + is a new
// string of its own when longer than a few words.
func joinedKey(buf []byte, parts ...string) []byte {
	for i, p := range parts {
		if i > 0 {
			buf = append(buf, '/')
		}
		buf = append(buf, p...)
	}
	return buf
}

// bytesString views immutable bundle bytes as a string without copying: journals run to
// hundreds of megabytes, and every entry's message and fields point into them. Bundle
// contents are never modified after loading.
func bytesString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

func (l *loader) loadNodeAndLogs(lb *loadedBundle) {
	// Journals, most of a bundle's bytes, are parsed on every core a few files ahead;
	// everything is added to the graph in file order, as if read one by one.
	// An item keeps only its name: its path is parsed again when it is added. Parsed
	// once for all (eight strings each, and the node file's path joined anew), the
	// items of 80k pods' logs and CRI files were about 60 MB held through the whole
	// node load, where a large bundle's load peaks.
	type nodeItem struct {
		name string
		job  *journalJob
	}
	var items []nodeItem
	var jobs []*journalJob
	if l.cri == nil {
		l.cri = newCRIMerge()
	}
	for _, name := range lb.b.Names() {
		info := bundle.ParsePath(name)
		if info.Area != "log" && info.Area != "node" && info.Area != "fragment" {
			continue
		}
		it := nodeItem{name: name}
		if info.Area == "node" && (info.NodeFile == bundle.NodeKubeletLog || info.NodeFile == bundle.NodeRuntimeLog) {
			it.job = &journalJob{name: name, kubelet: info.NodeFile == bundle.NodeKubeletLog, done: make(chan struct{}),
				src: &sourceFile{at: l.loc(lb, name), path: name, node: info.Node}}
			jobs = append(jobs, it.job)
		}
		items = append(items, it)
	}
	l.parseJournals(lb, jobs)
	for _, it := range items {
		if l.ctx.Err() != nil {
			return
		}
		info := bundle.ParsePath(it.name)
		switch info.Area {
		case "log":
			l.g.present[ContainerLogs] = true
			pk := info.Namespace + "/" + info.Pod
			if p := l.g.FindPod(info.Namespace, info.Pod); p != nil {
				l.g.podsWithLogs[p] = true
			}
			if l.healthyPods[pk] || l.scope != nil && info.Namespace != l.scope.namespace {
				// A healthy pod's log explains nothing (LoadOptions.TroubleOnly), nor does
				// a log of another namespace than a scoped load's: its bytes are let go
				// of unread.
				l.drop(lb, it.name)
				l.g.logsSkipped++
				continue
			}
			data, _ := l.take(lb, it.name) // listed by Names, so present; read once
			c := &ContainerLog{Namespace: info.Namespace, Pod: info.Pod, Container: info.Container,
				Previous: info.Previous, Loc: l.loc(lb, it.name), text: bytesString(data)}
			if t, ok := lb.b.Trimmed(it.name); ok {
				c.lineBase = t.Lines
			}
			l.g.logs[logKey(c.Namespace, c.Pod, c.Container, c.Previous)] = c
		case "node":
			if it.job != nil {
				select {
				case <-it.job.done:
				case <-l.ctx.Done():
					return
				}
				l.addJournal(lb, it.job)
				continue
			}
			l.loadNodeFile(lb, it.name, info)
		case "fragment":
			data, _ := l.take(lb, it.name) // listed by Names, so present; read once
			l.g.present[Fragments] = true
			kind := map[string]TextKind{bundle.FragmentLog: TextLog, bundle.FragmentJournal: TextJournal, bundle.FragmentText: TextText}[info.Fragment]
			text := strings.TrimRight(strings.ReplaceAll(bytesString(data), "\r\n", "\n"), "\n")
			var about *bundle.FragmentAbout
			if o := l.g.origins[lb.label][it.name]; o != nil {
				about = o.About
			}
			l.g.fragments = append(l.g.fragments, &fragmentFile{kind: kind, loc: l.loc(lb, it.name),
				lines: strings.Split(text, "\n"), about: about})
		}
	}
}

// take takes a file out of the bundle; the journal parsers take theirs at the same time.
func (l *loader) take(lb *loadedBundle, name string) ([]byte, error) {
	return l.takeInto(lb, name, nil)
}

// drop lets go of a file unread (Bundle.Drop).
func (l *loader) drop(lb *loadedBundle, name string) {
	l.takeMu.Lock()
	defer l.takeMu.Unlock()
	lb.b.Drop(name)
}

// takeInto is take decoding into buf where it can (Bundle.TakeInto).
func (l *loader) takeInto(lb *loadedBundle, name string, buf []byte) ([]byte, error) {
	l.takeMu.Lock()
	defer l.takeMu.Unlock()
	return lb.b.TakeInto(name, buf)
}

func (l *loader) loadNodeFile(lb *loadedBundle, name string, info bundle.PathInfo) {
	// What is decoded from CRI state and kubelet configs is copied out of the file's
	// bytes, so one buffer holds each such file in turn; dmesg's entries point into
	// their file.
	reuse := lb.b.ReadsOnce() && info.NodeFile != bundle.NodeDmesg
	var buf []byte
	if reuse {
		buf = l.nodeBuf
	}
	data, _ := l.takeInto(lb, name, buf) // listed by Names, so present; read once
	if reuse {
		defer func() { l.nodeBuf = data[:0] }()
	}
	src := &sourceFile{at: l.loc(lb, name), path: name, node: info.Node}
	l.log.WithField("file", name).Trace("loading node evidence")
	switch {
	case info.NodeFile == bundle.NodeCRIPods:
		l.g.present[CRI] = true
		l.g.criNodes[info.Node] = true
		l.loadCRIPods(lb, src, data)
	case info.NodeFile == bundle.NodeCRIContainers:
		l.g.present[CRI] = true
		l.g.criNodes[info.Node] = true
		l.loadCRIContainers(lb, src, data)
	case name == bundle.NodeCRIInspectPath(info.Node, criIDFromPath(name)):
		l.loadCRIInspect(lb, src, data)
	case name == bundle.NodeCRIInspectPodPath(info.Node, criIDFromPath(name)):
		l.loadCRIInspectPod(lb, src, data)
	case info.NodeFile == bundle.NodeDmesg:
		l.g.present[Dmesg] = true
		l.g.dmesgNode[info.Node] = true
		l.loadDmesg(src, data)
	case info.NodeFile == bundle.NodeKubeletConfig:
		l.g.present[KubeletConfigs] = true
		var cfg map[string]any
		if err := yamlbudget.Unmarshal(data, &cfg); err != nil {
			l.warn(lb, name, 0, "", "not a readable kubelet config: %v", err)
			return
		}
		if inner, ok := cfg["kubeletconfig"].(map[string]any); ok {
			cfg = inner
		}
		l.g.kubeletConfigs[info.Node] = &KubeletConfig{Node: info.Node, Loc: l.loc(lb, name), Config: cfg}
	}
}

func criIDFromPath(name string) string {
	base := name[strings.LastIndexByte(name, '/')+1:]
	return strings.TrimSuffix(base, ".json")
}

// journalJob is one journal file parsed off the loader's goroutine.
type journalJob struct {
	name    string
	src     *sourceFile
	kubelet bool
	done    chan struct{}

	entries  []JournalEntry
	unparsed []unparsedLine
	// bad counts unreadable lines; firstBad and firstProblem say where the first is.
	// skipped counts the lines left out as history of healthy pods.
	bad, firstBad, skipped int
	firstProblem           string
	// healthySandboxes are the sandbox IDs of healthy pods a runtime journal names,
	// while it is parsed: the IDs point into the file's buffer.
	healthySandboxes map[string]bool
}

// parseJournals starts parsing jobs in order on every core, a few files ahead of the
// loader; each job's done closes when it is parsed (or could not be read).
func (l *loader) parseJournals(lb *loadedBundle, jobs []*journalJob) {
	if len(jobs) == 0 {
		return
	}
	// A bundle read once hands over its only copy of each journal: entries then keep
	// their text in a parser's blocks and the file's bytes go once parsed. Otherwise
	// the bundle keeps the bytes anyway and entries point into them.
	compact := lb.b.ReadsOnce()
	workers := min(runtime.GOMAXPROCS(0), len(jobs))
	queue := make(chan *journalJob, workers)
	go func() {
		defer close(queue)
		for _, j := range jobs {
			if l.ctx.Err() != nil {
				return
			}
			queue <- j
		}
	}()
	for range workers {
		// Each parser keeps its own text blocks across the files it parses, so at
		// most one partly filled block per core is left over.
		text := &journalText{}
		go func() {
			// Entries of a bundle read once keep copies of their text, so one buffer
			// per parser holds each file in turn (Bundle.TakeInto).
			var buf []byte
			for j := range queue {
				data, err := l.takeInto(lb, j.name, buf) // listed by Names, so present; read once
				if err == nil {
					l.parseJournal(j, data, compact, text)
					if compact {
						buf = data[:0]
					}
				}
				close(j.done)
			}
		}()
	}
}

// parseJournal parses a journal line by line into j. Unreadable lines are counted for
// one warning per file.
func (l *loader) parseJournal(j *journalJob, data []byte, compact bool, keep *journalText) {
	text := bytesString(data)
	ref := l.g.collectedAt
	src := j.src
	// Sized from the line count: growing by appends would copy a node's whole journal
	// over and over. When healthy pods' lines are left out, few are kept, and the
	// entries grow as they come instead.
	var entries []JournalEntry
	if l.healthyPods == nil {
		entries = make([]JournalEntry, 0, strings.Count(text, "\n")+1)
	}
	if l.healthyPods != nil && !j.kubelet {
		l.learnHealthySandboxes(j, text, ref)
	}
	lineNo := int32(0)
	// skipped says the last entry was left out, and so are its continuation lines;
	// held is that entry: when it is the journal's last, it is kept after all, since
	// when the kubelet last logged is evidence of the node (NodeAgent).
	skipped := false
	var held JournalEntry
	var heldLine string
	for len(text) > 0 {
		nl := strings.IndexByte(text, '\n')
		var line string
		if nl < 0 {
			line, text = text, ""
		} else {
			line, text = text[:nl], text[nl+1:]
		}
		lineNo++
		// The message stays quoted until the entry is known to be kept: most lines of a
		// big cluster's kubelet are left out from their fields alone.
		ent, kind, problem := logline.ParseJournalQuoted(line, ref)
		e := JournalEntry{Entry: ent}
		switch kind {
		case LineContinuation:
			if skipped {
				held.endLine = lineNo
			} else if n := len(entries); n > 0 {
				entries[n-1].endLine = lineNo
			}
			continue
		case LineMarker:
			continue
		}
		skipped = false
		if kind == LineEntry && problem == nil && l.healthyPods != nil && l.routineOfHealthy(j, &e.Entry) {
			// An informational line about pods that run, are ready and never
			// restarted is history no rule reads: it is not kept (LoadOptions),
			// unless it is the journal's last (held, below).
			skipped = true
			j.skipped++
			held, heldLine = e, line
			held.file, held.line = src, lineNo
			continue
		}
		e.UnquoteMessage()
		if problem != nil {
			j.bad++
			if j.firstBad == 0 {
				j.firstBad, j.firstProblem = int(lineNo), problem.Error()
			}
		}
		if kind == LineGarbage {
			// The rules cannot read it, but it is still evidence of its node: the facts
			// layer keeps it as text.
			kept := line
			if compact {
				kept = keep.copy(line)
			}
			j.unparsed = append(j.unparsed, unparsedLine{node: src.node, loc: src.at.Lines(int(lineNo), 0), text: kept})
			continue
		}
		if compact {
			keep.keep(&e.Entry, line)
		}
		e.file, e.line = src, lineNo
		entries = append(entries, e)
	}
	if skipped {
		held.UnquoteMessage()
		if compact {
			keep.keep(&held.Entry, heldLine)
		}
		entries = append(entries, held)
		j.skipped--
	}
	j.entries = entries
	j.healthySandboxes = nil // its keys would hold the buffer the next file is read into
}

// routineOfHealthy reports whether an informational entry is only about healthy pods:
// for the kubelet, by the pods its fields name; for the container runtime, by the
// container and sandbox IDs it names (a healthy pod's sandbox is learned from the
// runtime's own RunPodSandbox line, which names the pod's UID).
func (l *loader) routineOfHealthy(j *journalJob, e *logline.Entry) bool {
	if j.kubelet {
		return e.Severity == 'I' && l.aboutHealthyPodsOnly(e.FieldText)
	}
	e.UnquoteMessage()
	m := e.Message
	// containerd and CRI-O log through logrus: the journal line's message is the
	// whole "time=... level=info msg=..." text.
	if e.Severity != 'I' && (e.Severity != 0 || !strings.HasPrefix(m, "level=info ") && !strings.Contains(m, " level=info ")) {
		return false
	}
	if strings.Contains(m, "RunPodSandbox for ") {
		uid, ok := sandboxUID(m)
		if !ok || !l.healthyPods[uid] {
			return false
		}
		for _, id := range hexIDsIn(m) {
			if j.healthySandboxes == nil {
				j.healthySandboxes = map[string]bool{}
			}
			j.healthySandboxes[id] = true
		}
		return true
	}
	named := false
	for _, s := range [2]string{m, e.FieldText} {
		for id, at := nextHexID(s, 0); id != ""; id, at = nextHexID(s, at) {
			if !l.healthyContainers[id] && !j.healthySandboxes[id] {
				return false
			}
			named = true
		}
	}
	return named
}

// runPodSandbox starts the container runtime's lines about creating a sandbox, the
// last of which returns its ID.
const runPodSandbox = "RunPodSandbox for "

// learnHealthySandboxes reads a runtime journal's RunPodSandbox lines before any of its
// lines is kept or left out, so that the sandboxes of healthy pods are known from its
// first line on (routineOfHealthy). The runtime logs a sandbox's shim starting ("starting
// signal loop" under the sandbox's ID) before the line that returns the ID: learned as
// the lines came, every healthy pod's was kept, a third of the runtime entries an
// analysis of 20k pods held.
func (l *loader) learnHealthySandboxes(j *journalJob, text string, ref time.Time) {
	for from := 0; ; {
		at := strings.Index(text[from:], runPodSandbox)
		if at < 0 {
			return
		}
		at += from
		start := strings.LastIndexByte(text[:at], '\n') + 1
		end := len(text)
		if nl := strings.IndexByte(text[at:], '\n'); nl >= 0 {
			end = at + nl
		}
		// As the parse reads the line: only an entry read without a problem is asked.
		if e, kind, problem := logline.ParseJournalQuoted(text[start:end], ref); kind == LineEntry && problem == nil {
			l.routineOfHealthy(j, &e)
		}
		from = end
	}
}

// sandboxUID is the pod UID a runtime's "RunPodSandbox for &PodSandboxMetadata{...,
// Uid:UID,...}" line names.
func sandboxUID(m string) (string, bool) {
	i := strings.Index(m, "Uid:")
	if i < 0 {
		return "", false
	}
	rest := m[i+len("Uid:"):]
	end := strings.IndexAny(rest, ",}")
	if end <= 0 {
		return "", false
	}
	return rest[:end], true
}

// aboutHealthyPodsOnly reports whether a journal entry's fields name pods (pod=,
// pods=[...], podUID=) and every one is a pod the loader was told to leave out.
func (l *loader) aboutHealthyPodsOnly(fields string) bool {
	if l.healthyPods == nil || fields == "" {
		return false
	}
	named, all := false, true
	scanFields(fields, func(k, raw string) bool {
		switch k {
		case "pod", "podUID":
			named = true
			all = l.healthyPods[fieldValue(raw)]
		case "pods":
			for _, v := range ListValue(raw) {
				named = true
				if all = l.healthyPods[v]; !all {
					break
				}
			}
		}
		return all
	})
	return named && all
}

// noteHealthyPods records the pods whose journal history Load may leave out: those
// that positively show health (positivelyHealthy), by namespace/name and by UID, and
// the IDs of their containers.
func (l *loader) noteHealthyPods() {
	l.healthyPods, l.healthyContainers = map[string]bool{}, map[string]bool{}
	for _, p := range l.g.pods {
		if !positivelyHealthy(p) {
			continue
		}
		l.healthyPods[p.meta.Namespace+"/"+p.meta.Name] = true
		if p.meta.UID != "" {
			l.healthyPods[string(p.meta.UID)] = true
		}
		st := &p.Obj.Status
		for _, list := range [][]corev1.ContainerStatus{st.InitContainerStatuses, st.ContainerStatuses, st.EphemeralContainerStatuses} {
			for _, c := range list {
				if id := ContainerID(c.ContainerID); id != "" {
					l.healthyContainers[id] = true
				}
			}
		}
	}
}

// addJournal adds a parsed journal to the graph.
func (l *loader) addJournal(lb *loadedBundle, j *journalJob) {
	if j.kubelet {
		l.g.present[KubeletJournal] = true
	} else {
		l.g.present[RuntimeJournal] = true
	}
	l.log.WithField("file", j.name).Trace("loading node evidence")
	if j.bad > 0 {
		msg := fmt.Sprintf("%d unreadable line(s), first at line %d: %s", j.bad, j.firstBad, j.firstProblem)
		l.warn(lb, j.src.path, j.firstBad, "", "%s", msg)
	}
	l.g.unparsed = append(l.g.unparsed, j.unparsed...)
	l.g.journalSkipped += j.skipped
	if j.kubelet {
		l.g.journal.add(j.entries)
	} else {
		node := j.src.node
		entries := j.entries
		if prev := l.g.runtimeJournal[node]; len(prev) > 0 {
			entries = append(prev, j.entries...)
		}
		l.g.runtimeJournal[node] = exactEntries(entries)
	}
	j.entries, j.unparsed = nil, nil
}

// exactEntries is a journal's entries in room of about their own size. When healthy
// pods' lines are left out the parser grows the entries by appends, and a runtime
// journal's are kept as they are: an exact copy lets the spare room go (at 20k pods,
// room for 82k runtime entries held 61k). Nothing points into them yet.
func exactEntries(entries []JournalEntry) []JournalEntry {
	if cap(entries) > len(entries)+len(entries)/8 {
		return slices.Clone(entries)
	}
	return entries
}

// indexJournal links kubelet journal entries to pods by pod="ns/name", pods=[...] and
// podUID=, in one pass.
func (g *Graph) indexJournal() {
	for i := range g.journal.len() {
		e := g.journal.at(i)
		idx := int32(i)
		g.journalByNode[e.file.node] = append(g.journalByNode[e.file.node], idx)
		if e.FieldText == "" {
			continue
		}
		scanFields(e.FieldText, func(k, raw string) bool {
			switch k {
			case "pod":
				v := fieldValue(raw)
				g.journalByPod[v] = append(g.journalByPod[v], idx)
			case "pods":
				for _, v := range ListValue(raw) {
					g.journalByPod[v] = append(g.journalByPod[v], idx)
				}
			case "podUID":
				v := fieldValue(raw)
				g.journalByUID[v] = append(g.journalByUID[v], idx)
			}
			return true
		})
	}
}
