package importer

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"podflow.dev/podflow/analyze"
	"podflow.dev/podflow/bundle"
)

// StdinName is the file name standard input is reported and cited under.
const StdinName = "stdin"

// Pod sources, richest last: a fuller source replaces a poorer one for the same pod.
const (
	rankTable = iota + 1
	rankDescribe
	rankObject
)

// looseItem is one object for a produced list, with where it came from.
type looseItem struct {
	data json.RawMessage
	path string
	line int
	rank int
	key  string
}

// looseImport gathers what every file of loose evidence yields before it is laid out.
type looseImport struct {
	r        *Report
	lists    map[string][]*looseItem // produced list path -> items
	byKey    map[string]*looseItem
	events   map[string][]parsedEventAt // namespace -> events in input order
	journals []journalBlock
	found    map[string]bool
	// files are produced bundle files that are not lists (logs, node evidence).
	files map[string][]byte
	// crictl and logs wait for every file to be read: their node and container come
	// from pods other files show.
	crictl []*crictlPaste
	logs   []pastedLog
}

func newLooseImport(r *Report) *looseImport {
	return &looseImport{r: r, lists: map[string][]*looseItem{}, byKey: map[string]*looseItem{},
		events: map[string][]parsedEventAt{}, found: map[string]bool{}, files: map[string][]byte{}}
}

type parsedEventAt struct {
	parsedEvent
	path string
}

type journalBlock struct {
	path  string
	lines []textLine
}

// importLoose reads a directory, archive or standard input of pasted command output.
func importLoose(src *bundle.Bundle, r *Report) map[string][]byte {
	li := newLooseImport(r)
	for _, name := range src.Names() {
		data, _ := src.ReadFile(name) // listed by Names, so present
		li.file(name, data)
	}
	files := li.files
	li.layoutEvents()
	li.layoutLists(files)
	li.layoutJournals(files)
	li.layoutCrictl(files)
	li.layoutLogs(files)
	li.notCarried()
	return files
}

// file sniffs every output a file holds; one output that cannot be read never stops
// the others.
func (li *looseImport) file(name string, data []byte) {
	var detected, problems []string
	used := false
	if pod, ok := podLogFile(name, data); ok {
		li.logs = append(li.logs, pod)
		li.r.add(FileReport{Path: name, Detected: "container log file of pod " + pod.cmd.namespace + "/" + pod.cmd.pod, Status: StatusUsed})
		return
	}
	for _, c := range splitChunks(data) {
		if lc, ok := parseLogsCommand(c.cmd); ok {
			li.logs = append(li.logs, pastedLog{path: name, cmd: lc, lines: trimBlank(c.lines)})
			detected = append(detected, "kubectl logs output")
			used = true
			continue
		}
		ns := commandNamespace(c.cmd)
		for _, b := range segment(c.lines) {
			what, ok, probs := li.block(name, b, ns)
			if what != "" {
				detected = append(detected, what)
			}
			used = used || ok
			problems = append(problems, probs...)
		}
	}
	rep := FileReport{Path: name, Detected: strings.Join(dedupe(detected), ", "), Reason: strings.Join(problems, "; ")}
	switch {
	case used:
		rep.Status = StatusUsed
	case len(detected) > 0 && len(problems) > 0:
		rep.Status = StatusUnreadable
	default:
		rep.Status = StatusIgnored
	}
	if rep.Detected == "" {
		rep.Detected = describeOther(name)
		rep.Reason = joinReason(rep.Reason, "no kubectl, crictl or kubelet output recognised; a container log is used when it starts with the command that printed it ($ kubectl logs -n NAMESPACE POD -c CONTAINER), which names its pod and container")
	}
	li.r.add(rep)
}

func dedupe(ss []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range ss {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// Kinds of output segment tells apart.
const (
	segDescribe = "kubectl describe pod"
	segObjects  = "kubectl get -o json/yaml"
	segJournal  = "kubelet journal"
	segText     = ""
)

type segmentBlock struct {
	kind  string
	lines []textLine
}

// segment splits a chunk into outputs at the lines that start one: a describe "Name:",
// a table header, JSON or YAML at the margin, and runs of journal lines.
func segment(lines []textLine) []segmentBlock {
	if looksLikeObjects(lines) {
		return []segmentBlock{{kind: segObjects, lines: lines}}
	}
	var out []segmentBlock
	cur := segmentBlock{}
	start := func(kind string) {
		if len(cur.lines) > 0 {
			out = append(out, cur)
		}
		cur = segmentBlock{kind: kind}
	}
	for i, l := range lines {
		switch {
		case isDescribeStart(lines, i):
			start(segDescribe)
		case isDescribeNodeStart(lines, i):
			start(segDescribeNode)
		case cur.kind != segDescribe && cur.kind != segDescribeNode || strings.TrimSpace(l.s) != "" && !strings.HasPrefix(l.s, " "):
			if k := tableKind(l.s); k != "" && !strings.HasPrefix(l.s, "  ") {
				start(k)
			} else if isJournalLine(l.s) && cur.kind != segJournal {
				start(segJournal)
			} else if cur.kind == segJournal && !isJournalLine(l.s) && strings.TrimSpace(l.s) != "" && !strings.HasPrefix(l.s, " ") {
				start(segText)
			}
		}
		cur.lines = append(cur.lines, l)
	}
	start(segText)
	return out
}

func isJournalLine(s string) bool {
	e, kind, problem := analyze.ParseJournalLine(s, time.Time{})
	return kind == analyze.LineEntry && problem == nil && (e.Severity != 0 || e.Program == "kubelet")
}

// block maps one output; it returns what it was detected as, whether it gave evidence,
// and the problems met.
func (li *looseImport) block(name string, b segmentBlock, ns string) (string, bool, []string) {
	switch b.kind {
	case segDescribe:
		d := parseDescribe(b.lines)
		if d.pod.Name == "" || d.pod.Namespace == "" {
			return segDescribe, false, append(d.problems, fmt.Sprintf("line %d: describe output without Name and Namespace", b.lines[0].n))
		}
		li.addPod(name, d.pod, d.line, rankDescribe)
		for _, e := range d.events {
			li.addEvent(name, e)
		}
		li.found["pods"], li.found["events"] = true, true
		return segDescribe, true, d.problems
	case segDescribeNode:
		d := parseDescribeNode(b.lines)
		if d.node.Name == "" {
			return segDescribeNode, false, append(d.problems, fmt.Sprintf("line %d: describe node output without Name", b.lines[0].n))
		}
		li.addNode(name, d)
		return segDescribeNode, true, d.problems
	case segObjects:
		if li.crictlInspect(name, b.lines) {
			return "crictl inspect", true, nil
		}
		objs, err := parseObjects(b.lines)
		for _, o := range objs {
			li.addObject(name, o)
		}
		var probs []string
		if err != nil {
			probs = append(probs, err.Error())
		}
		return segObjects, len(objs) > 0, probs
	case tableEvents:
		evs, probs := parseEventsTable(b.lines, nsOr(ns))
		for _, e := range evs {
			li.addEvent(name, e)
		}
		li.found["events"] = li.found["events"] || len(evs) > 0
		return tableEvents, len(evs) > 0, probs
	case tablePods:
		pods, probs := parsePodsTable(b.lines, nsOr(ns))
		for _, p := range pods {
			li.addPod(name, p.pod, p.line, rankTable)
		}
		li.found["pods"] = li.found["pods"] || len(pods) > 0
		return tablePods, len(pods) > 0, probs
	case segJournal:
		li.journals = append(li.journals, journalBlock{path: name, lines: b.lines})
		return segJournal, true, nil
	case tableCRIPods, tableCRIContainers:
		ok, probs := li.crictlBlock(name, b)
		return b.kind, ok, probs
	}
	for _, l := range b.lines {
		if strings.TrimSpace(l.s) != "" {
			return "", false, []string{fmt.Sprintf("lines %d-%d: not recognised", b.lines[0].n, b.lines[len(b.lines)-1].n)}
		}
	}
	return "", false, nil
}

// nsOr is the namespace of a table that shows none: the one its command named, else
// kubectl's default.
func nsOr(ns string) string {
	if ns == "" {
		return "default"
	}
	return ns
}

func (li *looseImport) addPod(path string, pod corev1.Pod, line, rank int) {
	data, err := json.Marshal(pod)
	if err != nil {
		return
	}
	li.put(bundle.NamespacedResourcePath(bundle.KindPods, pod.Namespace), &looseItem{data: data, path: path, line: line, rank: rank,
		key: "Pod/" + pod.Namespace + "/" + pod.Name})
}

// put adds an item to a produced list; the same object seen twice keeps its richer form.
func (li *looseImport) put(list string, it *looseItem) {
	if old, ok := li.byKey[it.key]; ok {
		if it.rank > old.rank {
			*old = *it
		}
		return
	}
	li.byKey[it.key] = it
	li.lists[list] = append(li.lists[list], it)
}

func (li *looseImport) addObject(path string, o rawObject) {
	k, ok := bundle.ListOfKind(o.kind)
	if !ok || o.name == "" {
		return
	}
	if o.kind == "Event" {
		var ev corev1.Event
		if json.Unmarshal(o.data, &ev) == nil {
			li.addEvent(path, parsedEvent{ev: ev, line: o.line})
		}
		return
	}
	data := o.data
	if o.kind == "Secret" {
		data = withoutSecretValues(data)
	}
	list := bundle.ClusterResourcePath(k.Name)
	if k.Namespaced {
		list = bundle.NamespacedResourcePath(k.Name, o.namespace)
	}
	if o.kind == "Lease" && o.namespace == bundle.NodeLeaseNamespace {
		list = bundle.ClusterResourcePath(bundle.KindNodeLeases)
	}
	li.found[k.Name] = true
	if o.kind == "Pod" {
		li.found["pod-objects"] = true
	}
	li.put(list, &looseItem{data: data, path: path, line: o.line, rank: rankObject, key: o.kind + "/" + o.namespace + "/" + o.name})
}

// addEvent keeps events in input order; the same event from two outputs (a describe and
// a get events) is kept once, with the larger count. Two named events (API objects) are
// the same only by name: the scheduler records a new event with the same message.
func (li *looseImport) addEvent(path string, e parsedEvent) {
	ns := e.ev.Namespace
	if ns == "" {
		ns = e.ev.InvolvedObject.Namespace
	}
	e.ev.Namespace = ns
	for i, old := range li.events[ns] {
		o := old.ev
		if o.Name != "" && e.ev.Name != "" && o.Name != e.ev.Name {
			continue
		}
		if o.InvolvedObject.Kind == e.ev.InvolvedObject.Kind && o.InvolvedObject.Name == e.ev.InvolvedObject.Name &&
			o.Reason == e.ev.Reason && o.Message == e.ev.Message &&
			(o.InvolvedObject.FieldPath == e.ev.InvolvedObject.FieldPath || o.InvolvedObject.FieldPath == "" || e.ev.InvolvedObject.FieldPath == "") {
			if e.ev.Count > o.Count || (o.InvolvedObject.FieldPath == "" && e.ev.InvolvedObject.FieldPath != "") {
				li.events[ns][i] = parsedEventAt{parsedEvent: e, path: path}
			}
			return
		}
	}
	li.events[ns] = append(li.events[ns], parsedEventAt{parsedEvent: e, path: path})
}

// layoutEvents writes each namespace's events. Pasted events carry no times, and
// podflow orders events of equal time by their JSON pointer, compared as text
// (/items/10 before /items/2): items are placed so that this order is the input order.
func (li *looseImport) layoutEvents() {
	for ns, evs := range li.events {
		slots := make([]int, len(evs))
		for i := range slots {
			slots[i] = i
		}
		sort.Slice(slots, func(a, b int) bool { return strconv.Itoa(slots[a]) < strconv.Itoa(slots[b]) })
		items := make([]*looseItem, len(evs))
		for k, e := range evs {
			ev := e.ev
			ev.APIVersion, ev.Kind = "v1", "Event"
			if ev.Name == "" {
				// Describe shows no event names; the loader needs one to keep the event.
				ev.Name = fmt.Sprintf("%s.imported-%d", ev.InvolvedObject.Name, k)
			}
			data, err := json.Marshal(ev)
			if err != nil {
				continue
			}
			items[slots[k]] = &looseItem{data: data, path: e.path, line: e.line, key: "Event/" + ns + "/" + ev.Name}
		}
		var kept []*looseItem
		for _, it := range items {
			if it != nil {
				kept = append(kept, it)
			}
		}
		li.lists[bundle.NamespacedResourcePath(bundle.KindEvents, ns)] = kept
	}
}

// layoutLists writes every produced list, with the original file and line of each item.
func (li *looseImport) layoutLists(files map[string][]byte) {
	for list, items := range li.lists {
		raws := make([]json.RawMessage, len(items))
		o := Origin{ItemLines: make([]int, len(items)), ItemPaths: make([]string, len(items))}
		for i, it := range items {
			raws[i] = it.data
			o.ItemLines[i], o.ItemPaths[i] = it.line, it.path
		}
		o.Path = items[0].path
		data, err := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "List", "items": raws})
		if err != nil {
			continue
		}
		files[list] = append(data, '\n')
		li.r.Origins[list] = o
		for i := range li.r.Files {
			f := &li.r.Files[i]
			for _, it := range items {
				if it.path == f.Path && !contains(f.Produced, list) {
					f.Produced = append(f.Produced, list)
				}
			}
		}
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// layoutJournals places each kubelet journal at its node. The node comes from the only
// node the pods name, or from the pods the journal names most often.
func (li *looseImport) layoutJournals(files map[string][]byte) {
	podNodes := li.podNodes()
	nodes := map[string]bool{}
	for _, n := range podNodes {
		nodes[n] = true
	}
	for _, j := range li.journals {
		var buf strings.Builder
		for _, l := range j.lines {
			buf.WriteString(l.s)
			buf.WriteByte('\n')
		}
		data := []byte(buf.String())
		node := journalNode(data, podNodes)
		if node == "" && len(nodes) == 1 {
			for n := range nodes {
				node = n
			}
		}
		f := li.r.File(j.path)
		if node == "" {
			f.Reason = joinReason(f.Reason, fmt.Sprintf("lines %d-%d: kubelet journal not used: no pod in the input tells which node it is from", j.lines[0].n, j.lines[len(j.lines)-1].n))
			continue
		}
		out := bundle.NodePath(node, bundle.NodeKubeletLog)
		if _, dup := files[out]; dup {
			f.Reason = joinReason(f.Reason, fmt.Sprintf("lines %d-%d: node %s already has a kubelet journal from another output", j.lines[0].n, j.lines[len(j.lines)-1].n, node))
			continue
		}
		files[out] = data
		li.r.Origins[out] = Origin{Path: j.path, LineOffset: j.lines[0].n - 1}
		f.Produced = append(f.Produced, out)
		li.found["journal"] = true
	}
}

func joinReason(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// notCarried says what a paste of command output cannot hold, so the coverage of the
// analysis reads as a property of the paste.
func (li *looseImport) notCarried() {
	r := li.r
	r.NotCarried = append(r.NotCarried, "event times: kubectl prints ages relative to when it ran, so imported events keep their order but carry no timestamps")
	if !li.found["journal"] {
		r.NotCarried = append(r.NotCarried, "kubelet journals")
	}
	if !li.found["cri"] {
		r.NotCarried = append(r.NotCarried, "CRI state (crictl pods, ps, inspect)")
	}
	r.NotCarried = append(r.NotCarried, "kubelet configuration", "kernel OOM lines")
	if !li.found["logs"] {
		r.NotCarried = append(r.NotCarried, "container logs")
	}
	if !li.found[bundle.KindNodes] {
		r.NotCarried = append(r.NotCarried, "nodes (allocatable, taints, conditions)")
	}
	for _, k := range []struct{ list, what string }{
		{bundle.KindReplicaSets, "owners (ReplicaSets, Deployments, Jobs)"},
		{bundle.KindServices, "services and endpointslices"},
		{bundle.KindPVCs, "persistent volume claims"},
		{bundle.KindSecrets, "secrets and configmaps (keys)"},
		{bundle.KindResourceQuotas, "resource quotas and limit ranges"},
	} {
		if !li.found[k.list] {
			r.NotCarried = append(r.NotCarried, k.what)
		}
	}
	if li.found["node-describe"] {
		r.NotCarried = append(r.NotCarried, "from describe node: the requests of the pods it lists (it prints per-pod totals, not containers) and its annotations")
	}
	if li.found["pods"] && !li.found["pod-objects"] {
		r.NotCarried = append(r.NotCarried, "from describe and get pods: container waiting messages, condition reasons and messages, tolerations and affinity")
	}
}

// isLoose accepts inputs where some file holds output podflow reads as loose evidence.
func isLoose(src *bundle.Bundle) bool {
	for _, name := range src.Names() {
		data, _ := src.ReadFile(name) // listed by Names, so present
		for _, c := range splitChunks(data) {
			for _, b := range segment(c.lines) {
				if b.kind != segText {
					return true
				}
			}
		}
	}
	return false
}

// openInput reads standard input for "-" and a single text file as loose evidence;
// anything else as a bundle.
func openInput(input string, opts Options) (*bundle.Bundle, error) {
	limits := opts.Limits
	if limits.MaxFileSize <= 0 || limits.MaxTotalSize <= 0 {
		limits = bundle.DefaultLimits()
	}
	if input == "-" {
		if opts.Stdin == nil {
			return nil, errors.New("read standard input: no input stream")
		}
		data, err := io.ReadAll(io.LimitReader(opts.Stdin, limits.MaxFileSize+1))
		if err != nil {
			return nil, fmt.Errorf("read standard input: %w", err)
		}
		if int64(len(data)) > limits.MaxFileSize {
			return nil, fmt.Errorf("read standard input: more than %d bytes", limits.MaxFileSize)
		}
		return bundle.New(input, map[string][]byte{StdinName: data})
	}
	if st, err := os.Stat(input); err == nil && st.Mode().IsRegular() && isTextName(input) {
		if st.Size() > limits.MaxFileSize {
			return nil, fmt.Errorf("read %q: %d bytes is over the %d byte limit", input, st.Size(), limits.MaxFileSize)
		}
		data, err := os.ReadFile(input)
		if err != nil {
			return nil, fmt.Errorf("read %q: %w", input, err)
		}
		return bundle.New(input, map[string][]byte{filepath.Base(input): data})
	}
	// Other tools' outputs hold links (a sosreport links its top-level files into
	// sos_commands/): they are left out and listed in the import report.
	limits.SkipLinks = true
	return bundle.Open(input, limits)
}

// isTextName tells a pasted text file from an archive by its name.
func isTextName(p string) bool {
	for _, ext := range []string{".txt", ".log", ".md", ".yaml", ".yml", ".json", ".out"} {
		if strings.HasSuffix(strings.ToLower(p), ext) {
			return true
		}
	}
	return false
}
