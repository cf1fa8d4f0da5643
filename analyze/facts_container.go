package analyze

import (
	"iter"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// ContainerRun is what the evidence holds about one container of a pod: its spec and
// status, and, gathered once, the pod's events and kubelet journal lines, the runtime's
// attempts at the container, its current and previous logs and the kernel's OOM kills in
// the pod's cgroup. The start, config, crash, probe and OOM rules read their waits and
// exits from it.
type ContainerRun struct {
	Subject   PodSubject
	Container ContainerInfo
	// events are the pod's events (Events); for a pod whose events the load kept
	// compact (quietenEvents), quiet is the pod and they are made when asked.
	events []*Event
	quiet  *Pod
	g      *Graph
	// Journal is the pod's kubelet journal lines, in file order.
	Journal []*JournalEntry
	// Attempts are crictl's records of the container, one per attempt the runtime kept.
	Attempts []*CRIContainer
	// Log is the current instance's log and PreviousLog the one before the last restart.
	Log, PreviousLog *ContainerLog
	// OOMKills are the kernel's OOM kills in the pod's cgroup.
	OOMKills []*OOMKill
	// RuntimeLines are the container runtime's journal lines on the pod's node that name
	// the container's current ID (its status's containerID), in file order.
	RuntimeLines []*JournalEntry
	// probeOutputs holds the output of the kubelet's "Probe failed" lines about the
	// container whose output="<" value continues on the following journal lines.
	probeOutputs map[*JournalEntry]string
}

// Events are the pod's events, oldest last-seen first (LatestEvent picks from them).
func (r ContainerRun) Events() []*Event {
	if r.quiet != nil {
		return r.g.eventsFor(r.quiet.Ref())
	}
	return r.events
}

// eventsIf is Events for a reader that reads only the events for which wanted is
// true (Graph.eventsForIf).
func (r ContainerRun) eventsIf(wanted func(*Event) bool) []*Event {
	if r.quiet != nil {
		return r.g.eventsForIf(r.quiet, wanted)
	}
	return r.events
}

// ProbeOutput is the output="…" of a kubelet "Probe failed" line. klog writes a
// multi-line value as output=<, the lines indented, then " >"; the journal gives each
// its own entry, and the fact joins them back.
func (r ContainerRun) ProbeOutput(e *JournalEntry) string {
	out, _ := e.Field("output")
	if out != "<" {
		return out
	}
	return r.probeOutputs[e]
}

// probeOutputs joins the continuation lines of the multi-line outputs of a container's
// "Probe failed" lines, read from the node's journal after each.
func (g *Graph) probeOutputs(idx []int32, container string) map[*JournalEntry]string {
	var out map[*JournalEntry]string
	for _, j := range idx {
		e := g.journal.at(int(j))
		if e.Message != "Probe failed" {
			continue
		}
		if name, _ := e.Field("containerName"); name != container {
			continue
		}
		if o, _ := e.Field("output"); o != "<" {
			continue
		}
		node := g.journalByNode[e.Node()]
		pos, ok := slices.BinarySearch(node, j)
		if !ok {
			continue
		}
		var lines []string
		for _, k := range node[pos+1:] {
			y := g.journal.at(int(k))
			if y.Severity != 0 || len(lines) > 20 {
				break
			}
			text := strings.TrimSpace(y.Message)
			if text == ">" {
				break
			}
			lines = append(lines, text)
		}
		if out == nil {
			out = map[*JournalEntry]string{}
		}
		out[e] = strings.Join(lines, " ")
	}
	return out
}

// containerRunFacts lists every container of every pod, in pod then Containers order,
// but those of a quiet pod (isQuiet) none of whose containers the runtime's journal
// names: those are made again, equal, when asked (ContainerRuns, ContainerRun). A
// quiet pod's run says little (its events are made when asked, its journal lines and
// logs were left out), and at 80k pods the runs of quiet pods were 20 MB held while
// the rules ran.
func (g *Graph) containerRunFacts() ([]ContainerRun, map[runID]podRuns) {
	runtimeByID := g.runtimeLinesByID()
	// Sized once: grown by appends, a big cluster's runs were copied over and over
	// (several times their final size as garbage where the heap peaks) and left a
	// quarter of the list unused.
	n := 0
	kept := make([]bool, len(g.pods))
	for i, p := range g.pods {
		if k := len(p.Obj.Spec.InitContainers) + len(p.Obj.Spec.Containers); k > 0 && !g.runsMadeAgain(p, runtimeByID) {
			kept[i] = true
			n += k
		}
	}
	out := make([]ContainerRun, 0, n)
	index := make(map[runID]podRuns)
	for i, p := range g.pods {
		if !kept[i] {
			continue
		}
		cs := Containers(p)
		if len(cs) == 0 {
			continue
		}
		index[runKey(p)] = podRuns{start: int32(len(out)), n: int32(len(cs))}
		out = g.appendRuns(out, p, cs, runtimeByID)
	}
	return out, index
}

// runsMadeAgain reports whether p's runs are left out of the list of runs and made
// when asked: p is quiet and the runtime's journal names none of its containers.
func (g *Graph) runsMadeAgain(p *Pod, runtimeByID map[string]map[string][]*JournalEntry) bool {
	if g.isQuiet(p) == nil {
		return false
	}
	st := &p.Obj.Status
	for _, list := range [][]corev1.ContainerStatus{st.InitContainerStatuses, st.ContainerStatuses} {
		for i := range list {
			if id := ContainerID(list[i].ContainerID); id != "" && len(g.runtimeLinesNaming(runtimeByID, p.Obj.Spec.NodeName, id)) > 0 {
				return false
			}
		}
	}
	return true
}

// appendRuns appends the runs of p's containers cs to out. With runtimeByID nil it
// makes them again for a pod runsMadeAgain left out, whose runtime lines are none.
func (g *Graph) appendRuns(out []ContainerRun, p *Pod, cs []ContainerInfo, runtimeByID map[string]map[string][]*JournalEntry) []ContainerRun {
	return g.appendRunsOf(out, p, cs, runtimeByID, true)
}

// appendRunsOf is appendRuns that gives the runs their CRI attempts only when cri is
// set: the pod's CRI containers are made from their records (containersOf) for a
// rule that reads them, not for every run of every rule that iterates the runs.
func (g *Graph) appendRunsOf(out []ContainerRun, p *Pod, cs []ContainerInfo, runtimeByID map[string]map[string][]*JournalEntry, cri bool) []ContainerRun {
	uid := string(p.meta.UID)
	var conts []*CRIContainer
	if cri {
		conts = g.containersOf(uid)
	}
	idx := g.journalIndexFor(p.Obj)
	// A quiet pod's events are made only if a rule asks for them.
	var events []*Event
	quiet := g.isQuiet(p)
	if quiet == nil {
		events = g.eventsFor(p.Ref())
	}
	journal := g.entries(idx)
	for _, c := range cs {
		r := ContainerRun{Subject: podSubject(p), Container: c, events: events, quiet: quiet, g: g, Journal: journal, OOMKills: g.oomsByUID[uid],
			Log:         g.logOf(p.meta.Namespace, p.meta.Name, c.Name, false),
			PreviousLog: g.logOf(p.meta.Namespace, p.meta.Name, c.Name, true)}
		for _, cc := range conts {
			if cc.Name == c.Name {
				r.Attempts = append(r.Attempts, cc)
			}
		}
		r.probeOutputs = g.probeOutputs(idx, c.Name)
		if c.Status != nil && runtimeByID != nil {
			if id := ContainerID(c.Status.ContainerID); id != "" {
				r.RuntimeLines = g.runtimeLinesNaming(runtimeByID, p.Obj.Spec.NodeName, id)
			}
		}
		out = append(out, r)
	}
	return out
}

// runID names a pod in the index of runs: its UID, namespace and name, compared as
// they are rather than joined into a new string per pod.
type runID struct {
	uid, namespace, name string
}

func runKey(p *Pod) runID {
	return runID{uid: string(p.meta.UID), namespace: p.meta.Namespace, name: p.meta.Name}
}

// podRuns are where a pod's runs are in the list of runs: they follow one another, in
// Containers order. One entry per pod rather than one per container: at 80k pods the
// index by container was 11 MB held while the rules run.
type podRuns struct {
	start, n int32
}

// run is the index in runs of the pod's container named container: the last of that
// name, as an index by container name kept the last one it was given.
func (r podRuns) run(runs []ContainerRun, container string) (int, bool) {
	for i := r.start + r.n - 1; i >= r.start; i-- {
		if runs[i].Container.Name == container {
			return int(i), true
		}
	}
	return 0, false
}

// filter drops the pieces of kinds the rule did not declare.
func (r ContainerRun) filter(ff factFilter) ContainerRun {
	if !ff.events {
		r.events, r.quiet = nil, nil
	}
	if !ff.journal {
		r.Journal, r.probeOutputs = nil, nil
	}
	if !ff.cri {
		r.Attempts = nil
	}
	if !ff.logs {
		r.Log, r.PreviousLog = nil, nil
	}
	if !ff.dmesg {
		r.OOMKills = nil
	}
	if !ff.runtime {
		r.RuntimeLines = nil
	}
	return r
}

// ContainerRuns yields every container of every pod with the evidence of the kinds the
// rule declared. It yields them one at a time rather than returning a list: a list was
// a copy of every run of the cluster per rule that asked, tens of megabytes on a big
// cluster while several rules ran.
func (v *View) ContainerRuns() iter.Seq[ContainerRun] {
	return func(yield func(ContainerRun) bool) {
		if !v.allow(Pods) {
			return
		}
		ff := v.factFilter()
		runs := v.factsOf().runs
		i := 0
		// The runs made again are yielded as copies, so one list of them, and of their
		// containers, serves every pod: made anew per pod, they were most of what the
		// rules allocated on a big cluster, whose pods are mostly quiet.
		var cs []ContainerInfo
		var made []ContainerRun
		for _, p := range v.g.pods {
			if i < len(runs) && runs[i].Subject.Pod == p {
				for ; i < len(runs) && runs[i].Subject.Pod == p; i++ {
					if !yield(runs[i].filter(ff)) {
						return
					}
				}
				continue
			}
			// A pod whose runs are made when asked (runsMadeAgain), or that has none.
			cs = appendContainers(cs[:0], p)
			if len(cs) == 0 {
				continue
			}
			clear(made)
			made = v.g.appendRunsOf(made[:0], p, cs, nil, ff.cri)
			for _, r := range made {
				if !yield(r.filter(ff)) {
					return
				}
			}
		}
	}
}

// ContainerRun returns the run of a pod's container, with the evidence of the kinds the
// rule declared; false when the pod has no such container.
func (v *View) ContainerRun(p *Pod, container string) (ContainerRun, bool) {
	if !v.allow(Pods) {
		return ContainerRun{}, false
	}
	f := v.factsOf()
	if pr, ok := f.runIndex[runKey(p)]; ok {
		i, ok := pr.run(f.runs, container)
		if !ok {
			return ContainerRun{}, false
		}
		return f.runs[i].filter(v.factFilter()), true
	}
	// The graph's pod of p's UID, namespace and name, whose runs are made when asked
	// (runsMadeAgain), if it has any.
	gp := v.g.FindPod(p.meta.Namespace, p.meta.Name)
	if gp == nil || gp.meta.UID != p.meta.UID {
		return ContainerRun{}, false
	}
	var room [8]ContainerInfo
	cs := appendContainers(room[:0], gp)
	for i := len(cs) - 1; i >= 0; i-- {
		if cs[i].Name == container {
			var one [1]ContainerRun
			return v.g.appendRuns(one[:0], gp, cs[i:i+1], nil)[0].filter(v.factFilter()), true
		}
	}
	return ContainerRun{}, false
}

// runtimeLinesByID indexes, per node, the runtime journal lines by the 64-hex-digit
// container and sandbox IDs their messages name, in one pass.
func (g *Graph) runtimeLinesByID() map[string]map[string][]*JournalEntry {
	out := map[string]map[string][]*JournalEntry{}
	for node, entries := range g.runtimeJournal {
		byID := map[string][]*JournalEntry{}
		for i := range entries {
			e := &entries[i]
			for _, id := range hexIDsIn(e.Message) {
				if l := byID[id]; len(l) == 0 || l[len(l)-1] != e {
					byID[id] = append(byID[id], e)
				}
			}
		}
		out[node] = byID
	}
	return out
}

// runtimeLinesNaming lists a node's runtime lines that name id: from the index for a
// full ID, by a scan for any other (a shortened ID the index cannot hold).
func (g *Graph) runtimeLinesNaming(byID map[string]map[string][]*JournalEntry, node, id string) []*JournalEntry {
	if len(id) == 64 && isHexString(id) {
		return byID[node][id]
	}
	var out []*JournalEntry
	entries := g.runtimeJournal[node]
	for i := range entries {
		if strings.Contains(entries[i].Message, id) {
			out = append(out, &entries[i])
		}
	}
	return out
}

// hexIDsIn lists the runs of exactly 64 hexadecimal digits a text holds.
func hexIDsIn(s string) []string {
	var out []string
	for id, at := nextHexID(s, 0); id != ""; id, at = nextHexID(s, at) {
		out = append(out, id)
	}
	return out
}

// hexIDLen is the length of a container or sandbox ID.
const hexIDLen = 64

// nextHexID finds the first run of exactly 64 hexadecimal digits in s at or after from
// (0, or the next of an earlier call), and where to look for the one after; "" when
// there is none. The container runtime's every line is asked this, so it looks at about
// one byte in 64 of a text without IDs: a run of 64 that starts in s[i:i+64] holds
// s[i+63], so when that byte is not a digit the search moves past it.
func nextHexID(s string, from int) (id string, next int) {
	i := from
	for i+hexIDLen <= len(s) {
		j := i + hexIDLen - 1
		if !isHex(s[j]) {
			i = j + 1
			continue
		}
		start, end := j, j+1
		for start > 0 && isHex(s[start-1]) {
			start--
		}
		for end < len(s) && isHex(s[end]) {
			end++
		}
		if end-start == hexIDLen {
			return s[start:end], end
		}
		i = end
	}
	return "", len(s)
}

func isHexString(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isHex(s[i]) {
			return false
		}
	}
	return true
}
