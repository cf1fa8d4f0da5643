package importer

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"

	"podflow.dev/podflow/bundle"
	"podflow.dev/podflow/logline"
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
	r      *Report
	lists  map[string][]*looseItem // produced list path -> items
	byKey  map[string]*looseItem
	events map[string][]parsedEventAt // namespace -> events in input order
	// eventIndex maps eventKey to the indexes in events[namespace] that share it.
	eventIndex map[string][]int
	// eventOps counts event comparisons, so a test can tell linear from quadratic.
	eventOps int
	journals []journalBlock
	found    map[string]bool
	// files are produced bundle files that are not lists (logs, node evidence).
	files map[string][]byte
	// crictl and logs wait for every file to be read: their node and container come
	// from pods other files show.
	crictl []*crictlPaste
	logs   []pastedLog
	// guessedNS marks pods (namespace/name) whose namespace is kubectl's default, taken
	// because the output named none.
	guessedNS map[string]bool
	// guessedPods are the pods a file names only with a guessed namespace.
	guessedPods map[string]bool
	// fragments are blocks kept as they were pasted, for the analysis to cite.
	fragments []fragment
	// nodeFrags are describe node fragments, given their node once every file is read.
	nodeFrags []pendingNode
	// journalPods are the pods (namespace/name) known only from node log lines.
	journalPodSet map[string]bool
	// pastePods are the pods (namespace/name) the files of the paste name; unnamed are
	// the fragments of files that name none, resolved against them at the end.
	pastePods map[string]bool
	unnamed   []*fileCtx
	// proseWords are the STATUS words the reporter's sentences put a pod in.
	proseWords []string
	// pasteStatus is the STATUS cell a pods table shows for a pod (namespace/name).
	pasteStatus map[string]string
}

func newLooseImport(r *Report) *looseImport {
	return &looseImport{r: r, lists: map[string][]*looseItem{}, byKey: map[string]*looseItem{},
		events: map[string][]parsedEventAt{}, eventIndex: map[string][]int{}, found: map[string]bool{}, files: map[string][]byte{},
		guessedNS: map[string]bool{}, guessedPods: map[string]bool{}, journalPodSet: map[string]bool{}, pastePods: map[string]bool{}, pasteStatus: map[string]string{}}
}

type parsedEventAt struct {
	parsedEvent
	path string
}

type journalBlock struct {
	path  string
	lines []textLine
	// status marks a systemctl status block: kept as a journal fragment, as it is no
	// journal a node file holds.
	status bool
}

// importLoose reads a directory, archive or standard input of pasted command output.
func importLoose(src *bundle.Bundle, r *Report) map[string][]byte {
	li := newLooseImport(r)
	for _, name := range src.Names() {
		data, _ := src.ReadFile(name) // listed by Names, so present
		li.file(name, decodeText(data))
	}
	files := li.files
	li.resolveUnnamed()
	li.adoptWorkloadStatus()
	li.podsFromOwners()
	li.rowRestarts()
	li.eventPods()
	li.resolveNodeFrags()
	li.journalPods()
	li.logPods()
	li.proseStatus()
	li.notReadyNodes()
	li.layoutEvents()
	li.layoutLists(files)
	li.layoutJournals(files)
	li.layoutCrictl(files)
	li.layoutLogs(files)
	li.layoutFragments(files)
	li.notCarried()
	return files
}

// file sniffs every output a file holds, block by block; one output that cannot be read
// never stops the others, and every block is listed in the report with what it was read
// as. Blocks nothing reads are kept as fragments: a container's log when they read as a
// program's output, text otherwise.
func (li *looseImport) file(name string, data []byte) {
	var detected, problems []string
	used := false
	if pod, ok := podLogFile(name, data); ok {
		li.logs = append(li.logs, pod)
		li.r.add(FileReport{Path: name, Detected: "container log file of pod " + pod.cmd.namespace + "/" + pod.cmd.pod, Status: StatusUsed})
		return
	}
	ctx := &fileCtx{name: name, pods: map[string]bool{}}
	all := fileLines(data)
	ctx.prosePod, ctx.proseNS = prosePod(all)
	for _, w := range proseStatuses(all) {
		if !slices.Contains(li.proseWords, w) {
			li.proseWords = append(li.proseWords, w)
		}
	}
	var blocks []BlockReport
	for _, c := range splitChunks(data) {
		if logs := prefixedLogs(name, c); len(logs) > 0 {
			li.logs = append(li.logs, logs...)
			detected = append(detected, "kubectl logs --prefix output")
			if first, last := blockRange(segmentBlock{lines: c.lines}); first > 0 {
				blocks = append(blocks, BlockReport{First: first, Last: last, What: "kubectl logs --prefix output", Used: true})
			}
			used = true
			continue
		}
		if runsContainer(c.cmd) {
			// `docker run IMAGE` in the foreground prints the container's own output:
			// a reproduction of the pod's failure, read as its container's log.
			if br, ok := li.podlessLog(name, c.lines, "a container's output (run by a container CLI)"); ok {
				blocks = append(blocks, br)
				detected = append(detected, "a container's output")
				used = true
			}
			continue
		}
		if lc, ok := parseLogsCommand(c.cmd); ok {
			if lc.pod == "" {
				lc.pod = logPodNamed(c.lines)
			}
			if lc.pod == "" {
				// The log of a workload's pod kubectl chose without naming it: a
				// container's log whose pod is not known.
				if br, ok := li.podlessLog(name, c.lines, "kubectl logs output (pod not named)"); ok {
					blocks = append(blocks, br)
					detected = append(detected, "kubectl logs output")
					used = true
				}
				continue
			}
			li.logs = append(li.logs, pastedLog{path: name, cmd: lc, lines: trimBlank(c.lines)})
			detected = append(detected, "kubectl logs output")
			if first, last := blockRange(segmentBlock{lines: c.lines}); first > 0 {
				blocks = append(blocks, BlockReport{First: first, Last: last, What: "kubectl logs output", Used: true})
			}
			used = true
			continue
		}
		ns := commandNamespace(c.cmd)
		for _, b := range segment(c.lines) {
			first, last := blockRange(b)
			if first == 0 {
				continue
			}
			what, ok, probs := li.block(ctx, name, b, ns, c.cmd)
			br := BlockReport{First: first, Last: last, What: what, Used: ok}
			if !ok {
				kind := bundle.FragmentText
				// A client's own output or an object's describe is not a container's
				// log, whatever error words it holds.
				about := fragmentAbout(name, c.cmd, b.lines)
				switch {
				case what == "" && about == nil && looksLikeLog(name, c.cmd, b.lines):
					kind, br.What, br.Used = bundle.FragmentLog, "a container's log (pod not known)", true
					li.found["logs"] = true
				case what == "" && about != nil && about.Client != "":
					br.What = about.Client + " output"
				case what == "":
					br.What = "text"
				}
				br.Fragment = li.keepFragmentAbout(kind, name, b.lines, about)
				if kind == bundle.FragmentLog {
					detected = append(detected, br.What)
					used = true
					probs = nil
				}
			}
			blocks = append(blocks, br)
			if what != "" {
				detected = append(detected, what)
			}
			used = used || ok
			problems = append(problems, probs...)
		}
	}
	li.resolve(ctx)
	if len(blocks) == 0 && isText(data) {
		// Text no block holds (a command line alone): its lines stay available.
		lines := trimBlank(all)
		if len(lines) > 0 {
			blocks = append(blocks, BlockReport{First: lines[0].n, Last: lines[len(lines)-1].n, What: "text",
				Fragment: li.keepFragment(bundle.FragmentText, name, lines)})
		}
	}
	rep := FileReport{Path: name, Detected: strings.Join(dedupe(detected), ", "), Reason: strings.Join(problems, "; "), Blocks: blocks}
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
		if len(blocks) > 0 {
			rep.Reason = joinReason(rep.Reason, "no kubectl, crictl or node log output recognised; its lines are kept as text")
		} else {
			rep.Reason = joinReason(rep.Reason, "empty: no lines to read")
		}
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
// a table header, JSON or YAML at the margin, runs of journal lines, and evidence pasted
// without its header: event and pod rows, describe fragments, node log lines, systemctl
// status. Lines that continue none of these form text blocks.
func segment(lines []textLine) []segmentBlock {
	if looksLikeObjects(lines) {
		return []segmentBlock{{kind: segObjects, lines: lines}}
	}
	var out []segmentBlock
	cur := segmentBlock{}
	// Every line goes to the block open when it is read, so a block is the run of
	// lines from its first (from) to the line read last (pos): a subslice, not a copy.
	from, pos := 0, 0
	// objIndent is the indentation of an object's YAML found among text (-1 for none
	// open), objKeys the keys its document has at that indentation.
	objIndent, objKeys := -1, map[string]bool(nil)
	start := func(kind string) {
		if len(cur.lines) > 0 {
			out = append(out, cur)
		}
		cur = segmentBlock{kind: kind}
		from = pos
		objIndent = -1
	}
	into := func(kind string) {
		if cur.kind != kind {
			start(kind)
		}
	}
	// valueEnd is the line after the klog multi-line value the last line opened: its
	// lines stay in that line's block whatever they look like, a paste having often lost
	// their indentation.
	valueEnd := 0
	var strs []string
	// cut is the width a terminal cut the lines at, read once the first line as wide as
	// a terminal is (minTerminalWidth): a log entry it cut goes on at the margin on the
	// lines below ("…error=clusterinform" / "ations.crd… not found"), which belong to
	// the entry's block however they read.
	var cut *logline.Wrap
	lineAt := func(k int) string { return lines[k].s }
	for i, l := range lines {
		pos = i
		if i < valueEnd {
			cur.lines = lines[from : i+1 : i+1]
			continue
		}
		if len(l.s) >= minTerminalWidth && i+1 < len(lines) {
			if cut == nil {
				w := logline.TerminalWrapOf(len(lines), lineAt)
				cut = &w
			}
			if cut.Cuts() {
				valueEnd = max(valueEnd, cut.EntryEnd(len(lines), lineAt, i))
			}
		}
		if strings.Contains(l.s, "=<") || logline.IsKlogHeader(l.s) {
			if strs == nil {
				strs = make([]string, len(lines))
				for k, x := range lines {
					strs[k] = x.s
				}
			}
			if strings.Contains(l.s, "=<") {
				valueEnd = logline.ValueEnd(strs, i)
			}
			if logline.IsKlogHeader(l.s) {
				// A klog message that holds newlines: its rest at the margin is the
				// entry's, not an output of its own.
				valueEnd = max(valueEnd, i+1+logline.KlogRest(strs, i+1))
			}
		}
		blank := strings.TrimSpace(l.s) == ""
		indented := strings.HasPrefix(l.s, " ") || strings.HasPrefix(l.s, "\t")
		inDescribe := cur.kind == segDescribe || cur.kind == segDescribeNode || cur.kind == segDescribePVC || cur.kind == segDescribeService || cur.kind == segDescribeStorageClass
		k := ""
		if !strings.HasPrefix(l.s, "  ") {
			k = tableKind(l.s)
		}
		switch {
		case isDescribePVCStart(lines, i):
			start(segDescribePVC)
		case isDescribeServiceStart(lines, i):
			start(segDescribeService)
		case isDescribeStorageClassStart(lines, i):
			start(segDescribeStorageClass)
		case isDescribeStart(lines, i):
			start(segDescribe)
		case isDescribeNodeStart(lines, i):
			start(segDescribeNode)
		case inDescribe && (blank || indented):
		case objectStartsAt(lines, i, openObject(cur.kind, objIndent), objKeys):
			// An object's YAML pasted among sentences, without a fence around it.
			start(segObjects)
			objIndent, objKeys = indentOf(l.s), map[string]bool{}
			objKeys[yamlTopKey(l.s)] = true
		case cur.kind == segObjects && objIndent >= 0 && yamlGoesOn(lines, i, objIndent):
			if indentOf(l.s) == objIndent {
				objKeys[yamlTopKey(l.s)] = true
			}
		case k != "":
			start(k)
		case isJournalLine(l.s):
			into(segJournal)
		case inDescribe && !isHeaderlessEvent(l.s) && !isHeaderlessPod(l.s) && !isNodeLine(l.s):
			// A describe's own lines at the margin: keys, and messages that wrapped.
		case cur.kind == segJournal && (blank || indented):
		case (cur.kind == segEventRows || cur.kind == tableEvents || cur.kind == segDescribeFrag || inDescribe) && reMountOutputLine.MatchString(l.s):
			// The lines of a mount error's message (k8s.io/mount-utils): an event's
			// message holding newlines continues at the margin.
		case isStatusHeader(l.s):
			start(segStatus)
		case cur.kind == segStatus && (indented || blank && i+1 < len(lines) && strings.HasPrefix(lines[i+1].s, " ")):
		case isYAMLFragStart(lines, i) && cur.kind != segYAMLFrag:
			start(segYAMLFrag)
		case isJSONFragStart(l.s) && cur.kind != segJSONFrag && cur.kind != segYAMLFrag:
			start(segJSONFrag)
		case cur.kind == segJSONFrag && (blank || reJSONFragLine.MatchString(l.s)):
		case cur.kind == segYAMLFrag && (blank || reYAMLLine.MatchString(l.s)):
		case isDescribeNodeFragStart(lines, i) && cur.kind != segDescribeNodeFrag:
			start(segDescribeNodeFrag)
		case cur.kind == segDescribeNodeFrag && (indented || isNodeFragKey(l.s) ||
			blank && i+1 < len(lines) && (strings.HasPrefix(lines[i+1].s, " ") || isNodeFragKey(lines[i+1].s))):
		case isDescribeFragStart(lines, i) && cur.kind != segDescribeFrag:
			start(segDescribeFrag)
		case cur.kind == segDescribeFrag && (indented || describeFragKey(l.s) ||
			blank && i+1 < len(lines) && (strings.HasPrefix(lines[i+1].s, " ") || describeFragKey(lines[i+1].s))):
			// A blank line inside the fragment is its own when the fragment goes on after
			// it: describe prints a command argument that ends in a newline as an empty
			// line, which a paste keeps without its indentation.
		case cur.kind == tablePods && !blank && i > 0 && strings.TrimSpace(lines[i-1].s) == "" && !isHeaderlessPod(l.s) && !indented:
			// A paragraph after a pods table and a blank line (the message the reporter
			// found next) is not one of its rows: it is text of its own.
			start(segText)
		case cur.kind == tableEvents || cur.kind == tablePods || cur.kind == tableCRIPods || cur.kind == tableCRIContainers ||
			(cur.kind == tableEndpoints || cur.kind == tablePVCs || cur.kind == tablePVs || cur.kind == tableNodes || cur.kind == tableDaemonSets || cur.kind == tableStorageClasses) && !blank:
			// Rows, wrapped messages and blank lines of a table with its header.
		case isHeaderlessEvent(l.s):
			into(segEventRows)
		case cur.kind == segEventRows && !blank && !isHeaderlessPod(l.s) && !isNodeLine(l.s) && otherTableKind(l.s) == "":
			// A message that wrapped onto the next line.
		case isHeaderlessPod(l.s):
			into(segPodRows)
		case isNodeLine(l.s):
			into(segNodeLog)
		case cur.kind == segNodeLog && indented:
		case otherTableKind(l.s) != "":
			start(segOtherTable)
		case cur.kind == segOtherTable && !blank:
		case blank && cur.kind == segText:
		default:
			into(segText)
		}
		cur.lines = lines[from : i+1 : i+1]
	}
	start(segText)
	return out
}

// openObject is the indentation of the object's YAML a block found among text holds,
// -1 when the block is no such object.
func openObject(kind string, indent int) int {
	if kind != segObjects {
		return -1
	}
	return indent
}

// reMountOutputLine is a line of the message k8s.io/mount-utils returns for a failed
// mount or unmount ("mount failed: %v\nMounting command: %s\nMounting arguments:
// %s\nOutput: %s"), which kubelet events carry as is.
var reMountOutputLine = regexp.MustCompile(`^(?:Mounting command|Mounting arguments|Unmounting arguments|Output): `)

func isHeaderlessEvent(s string) bool {
	_, _, _, ok := headerlessEvent(s)
	return ok
}

func isHeaderlessPod(s string) bool {
	_, _, ok := headerlessPod(s)
	return ok
}

func isNodeLine(s string) bool {
	return isNodeLogLine(s)
}

func isJournalLine(s string) bool {
	e, kind, problem := logline.ParseJournal(s, time.Time{})
	if kind == logline.KindEntry && problem == nil && (e.Severity != 0 || e.Program == "kubelet") {
		return true
	}
	// Other programs' journal lines (systemd, containerd, the kernel) and dmesg lines
	// belong to the same node log, and so do a CNI plugin's "[INFO][4035] ipam.go 121:"
	// lines; a time and a "[error]:" alone is any program's log (fluentd's, an app's).
	e, kind, problem = logline.Parse(s, time.Time{})
	return kind == logline.KindEntry && problem == nil &&
		(e.Format == logline.FormatJournal || e.Format == logline.FormatKlog || e.Format == logline.FormatKernel ||
			e.Format == logline.FormatBracket && (e.PID != 0 || e.Source != ""))
}

// block maps one output; it returns what it was detected as, whether it gave evidence,
// and the problems met.
func (li *looseImport) block(ctx *fileCtx, name string, b segmentBlock, ns, cmd string) (string, bool, []string) {
	switch b.kind {
	case segEventRows:
		return segEventRows, li.eventRows(ctx, name, b, cmd), nil
	case segPodRows:
		return segPodRows, li.podRows(ctx, name, b, cmd), nil
	case segDescribeNodeFrag:
		ok, probs := li.describeNodeFragment(name, b, cmd)
		return segDescribeNodeFrag, ok, probs
	case segDescribeFrag:
		ok, probs := li.describeFragment(ctx, b, cmd)
		return segDescribeFrag, ok, probs
	case segYAMLFrag:
		if !li.yamlFrag(ctx, b, cmd) {
			return "", false, nil
		}
		return segYAMLFrag, true, nil
	case segJSONFrag:
		y, ok := jsonFragmentAsYAML(b.lines)
		if !ok || !li.yamlFrag(ctx, segmentBlock{kind: segYAMLFrag, lines: y}, cmd) {
			return "", false, nil
		}
		return segJSONFrag, true, nil
	case segStatus:
		li.journals = append(li.journals, journalBlock{path: name, lines: b.lines, status: true})
		return b.kind, true, nil
	case segNodeLog:
		// logrus and logfmt lines without a journal prefix: a runtime's or a node agent's
		// log when the file or the command says so, else a program's output.
		if !nodeLogHint(name, cmd) {
			return "", false, nil
		}
		li.journals = append(li.journals, journalBlock{path: name, lines: b.lines})
		return b.kind, true, nil
	case segOtherTable:
		return otherTableKind(b.lines[0].s), false, nil
	case segDescribe:
		if kind := describedNonPod(b.lines); kind != "" {
			// A controller's or an autoscaler's describe: no pod, its lines stay text
			// (its events are read by the signatures). A DaemonSet's counts say how
			// many nodes it places pods on, so it is kept as an object too.
			if o, ok := describeDaemonSet(b.lines, nsOr(ns)); ok && kind == "daemonset" {
				li.addObject(name, o)
			}
			return "kubectl describe " + kind, false, nil
		}
		d := parseDescribe(b.lines)
		if d.pod.Name == "" || d.pod.Namespace == "" {
			return segDescribe, false, append(d.problems, fmt.Sprintf("line %d: describe output without Name and Namespace", b.lines[0].n))
		}
		li.addPod(name, d.pod, d.line, rankDescribe)
		ctx.pods[d.pod.Namespace+"/"+d.pod.Name] = true
		for _, e := range d.events {
			li.addEvent(name, e)
		}
		li.found["pods"], li.found["events"] = true, true
		return segDescribe, true, d.problems
	case segDescribePVC:
		d := parseDescribePVC(b.lines)
		if d.pvc.Name == "" || d.pvc.Namespace == "" {
			return segDescribePVC, false, append(d.problems, fmt.Sprintf("line %d: describe pvc output without Name and Namespace", b.lines[0].n))
		}
		li.addPVC(name, &d.pvc, d.line, d.events)
		return segDescribePVC, true, d.problems
	case tablePVCs:
		pvcs, at, probs := parsePVCTable(b.lines, nsOr(ns))
		for i, c := range pvcs {
			li.addPVC(name, c, at[i], nil)
		}
		return tablePVCs, len(pvcs) > 0, probs
	case tablePVs, tableStorageClasses, tableDaemonSets:
		var objs []rawObject
		var probs []string
		switch b.kind {
		case tablePVs:
			objs, probs = parsePVTable(b.lines)
		case tableStorageClasses:
			objs, probs = parseStorageClassesTable(b.lines)
		default:
			objs, probs = parseDaemonSetsTable(b.lines, nsOr(ns), ns != "")
		}
		for _, o := range objs {
			li.addObject(name, o)
		}
		return b.kind, len(objs) > 0, probs
	case segDescribeService:
		d := parseDescribeService(b.lines)
		if d.svc.Name == "" || d.svc.Namespace == "" {
			return segDescribeService, false, append(d.problems, fmt.Sprintf("line %d: describe service output without Name and Namespace", b.lines[0].n))
		}
		li.addService(name, d)
		return segDescribeService, true, d.problems
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
		objs, err := parseObjects(dedentBlock(b.lines))
		if len(objs) == 0 && errors.Is(err, errNoKind) && startsKindless(b.lines) {
			if k := kindlessObjects(name, cmd, b.lines); len(k) > 0 {
				objs, err = k, nil
			}
		}
		added, analyzed := 0, 0
		for _, o := range objs {
			if li.addObject(name, o) {
				added++
				if k, ok := bundle.ListOfKind(o.kind); o.kind == "Event" || (ok && k.Use == bundle.ReadByAnalyze) {
					analyzed++
				}
			}
		}
		if added > 0 && analyzed == 0 {
			// Objects of kinds the bundle keeps but analysis does not read (a
			// HorizontalPodAutoscaler, an Ingress): their status messages are still what
			// the user pasted them for, so their lines also stay available as text.
			li.keepFragment(bundle.FragmentText, name, b.lines)
		}
		var probs []string
		if err != nil {
			probs = append(probs, err.Error())
		}
		logLines := added == 0 && jsonLines(b.lines)
		if logLines {
			unwrapJSONLog(b.lines)
		}
		if added == 0 && (err == nil || errors.Is(err, errNoKind) || logLines) {
			// JSON or YAML of no kind podflow reads (an API Status, a values file), or
			// a program's JSON log lines, one of them broken by a terminal's wrap (a
			// Docker json-file log, zap's JSON): its lines stay available as text.
			return "", false, nil
		}
		return segObjects, added > 0, probs
	case tableEvents:
		evs, probs := parseEventsTable(b.lines, nsOr(ns))
		guessed := ns == "" && !strings.Contains(b.lines[0].s, "NAMESPACE")
		for _, e := range evs {
			if o := e.ev.InvolvedObject; o.Kind == "Pod" {
				ctx.pods[o.Namespace+"/"+o.Name] = true
				li.guessedNS[o.Namespace+"/"+o.Name] = guessed
				li.guessedPods[o.Namespace+"/"+o.Name] = guessed
			}
			li.addEvent(name, e)
		}
		li.found["events"] = li.found["events"] || len(evs) > 0
		return tableEvents, len(evs) > 0, probs
	case segDescribeStorageClass:
		o, probs := describeStorageClass(b.lines)
		if o.name == "" {
			return segDescribeStorageClass, false, probs
		}
		return segDescribeStorageClass, li.addObject(name, o), probs
	case tableEndpoints:
		objs, probs := parseEndpointsTable(b.lines, nsOr(ns))
		for _, o := range objs {
			li.addObject(name, o)
		}
		return tableEndpoints, len(objs) > 0, probs
	case tablePods:
		pods, probs := parsePodsTable(b.lines, nsOr(ns))
		nsShown := ns != "" || newTable(b.lines[0].s).index("NAMESPACE") >= 0
		for _, p := range pods {
			key := p.pod.Namespace + "/" + p.pod.Name
			ctx.pods[key] = true
			// A row shows no spec; and without -n or a NAMESPACE column, kubectl
			// printed the pods of its context's namespace, which the paste does not say.
			missing := []string{partialSpec}
			if !nsShown {
				missing = append([]string{partialNamespace}, missing...)
				li.guessedPods[key] = true
			}
			li.pasteStatus[key] = statusCell(p.pod)
			li.addPartialPod(name, p.pod, p.line, rankTable, missing)
		}
		li.found["pods"] = li.found["pods"] || len(pods) > 0
		return tablePods, len(pods) > 0, probs
	case tableNodes:
		nodes, probs := parseNodesTable(b.lines)
		for _, n := range nodes {
			data, err := json.Marshal(n.node)
			if err != nil {
				continue
			}
			li.put(bundle.ClusterResourcePath(bundle.KindNodes), &looseItem{data: data, path: name, line: n.line, rank: rankTable, key: "Node//" + n.node.Name})
		}
		return tableNodes, len(nodes) > 0, probs
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

// podlessLog keeps a container's log whose pod the paste does not name as a log
// fragment, and the report of its block; false when the lines are blank.
func (li *looseImport) podlessLog(name string, lines []textLine, what string) (BlockReport, bool) {
	lines = trimBlank(lines)
	first, last := blockRange(segmentBlock{lines: lines})
	if first == 0 {
		return BlockReport{}, false
	}
	li.found["logs"] = true
	return BlockReport{First: first, Last: last, What: what, Used: true,
		Fragment: li.keepFragmentAbout(bundle.FragmentLog, name, lines, nil)}, true
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
		switch {
		case strings.HasPrefix(it.key, "Pod/") && (old.rank <= rankPartial+1 || it.rank <= rankPartial+1):
			// A pod known from a fragment fills in, or is filled in by, a fuller reading.
			mergeInto(old, it.data, it.rank, it.path, it.line)
		case it.rank > old.rank:
			*old = *it
		}
		return
	}
	li.byKey[it.key] = it
	li.lists[list] = append(li.lists[list], it)
}

func (li *looseImport) addObject(path string, o rawObject) bool {
	if o.kind == "Endpoints" && o.name != "" {
		// The v1 Endpoints of older clusters (and of `kubectl get endpoints -o yaml`)
		// carry what the bundle keeps as EndpointSlices.
		if conv, ok := endpointsAsSlice(o); ok {
			o = conv
		}
	}
	if o.kind == "Pod" && o.name == "" {
		return li.unnamedPodObject(path, o)
	}
	k, ok := bundle.ListOfKind(o.kind)
	if !ok || o.name == "" {
		return false
	}
	if o.kind == "Event" {
		var ev corev1.Event
		if json.Unmarshal(o.data, &ev) == nil {
			li.addEvent(path, parsedEvent{ev: ev, line: o.line})
		}
		return true
	}
	data := o.data
	if o.kind == "Secret" {
		data = withoutSecretValues(data)
	}
	if isWorkloadKind(o.kind) && !showsStatus(data) {
		// A workload's manifest, as applied, shows no status: zero counts read from it
		// would say its controller placed no pod.
		if d, ok := withPartial(data, partialStatus); ok {
			data = d
		}
	}
	if k.Namespaced && o.namespace == "" {
		// A manifest without a namespace is applied to the client's current one,
		// most often default; kept there (marked as not knowing it), it meets the
		// other readings of the same object: a get row, a describe, its events.
		if d, ok := inNamespace(data, "default"); ok {
			data, o.namespace = d, "default"
		}
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
	return true
}

// addEvent keeps events in input order; the same event from two outputs (a describe and
// a get events) is kept once, with the larger count. Two named events (API objects) are
// the same only by name: the scheduler records a new event with the same message. Events
// are looked up by what must be equal (namespace, object, reason, message), so import
// stays linear in the number of rows.
func (li *looseImport) addEvent(path string, e parsedEvent) {
	ns := e.ev.Namespace
	if ns == "" {
		ns = e.ev.InvolvedObject.Namespace
	}
	e.ev.Namespace = ns
	key := eventKey(e.ev)
	for _, i := range li.eventIndex[key] {
		li.eventOps++
		o := li.events[ns][i].ev
		if o.Name != "" && e.ev.Name != "" && o.Name != e.ev.Name {
			continue
		}
		if o.InvolvedObject.FieldPath == e.ev.InvolvedObject.FieldPath || o.InvolvedObject.FieldPath == "" || e.ev.InvolvedObject.FieldPath == "" {
			if e.ev.Count > o.Count || (o.InvolvedObject.FieldPath == "" && e.ev.InvolvedObject.FieldPath != "") {
				li.events[ns][i] = parsedEventAt{parsedEvent: e, path: path}
			}
			return
		}
	}
	li.eventOps++
	li.eventIndex[key] = append(li.eventIndex[key], len(li.events[ns]))
	li.events[ns] = append(li.events[ns], parsedEventAt{parsedEvent: e, path: path})
}

// unnamedPodObject keeps a pasted Pod object whose name the paste cut (only its
// generateName, or neither, shows): it is named after its generateName or the file and
// marked as not knowing its name, and its namespace when that is cut too.
func (li *looseImport) unnamedPodObject(path string, o rawObject) bool {
	var pod corev1.Pod
	if json.Unmarshal(o.data, &pod) != nil {
		return false
	}
	missing := []string{partialName}
	if g := strings.TrimRight(pod.GenerateName, "-"); g != "" && isDNSName(g) {
		pod.Name = g + "-unnamed" // analyze shows it as "GENERATENAME-… (unnamed in FILE)"
	} else {
		pod.Name = placeholderPod(path)
	}
	if pod.Namespace == "" {
		pod.Namespace = "default"
		missing = append(missing, partialNamespace)
	}
	if len(pod.Spec.Containers) == 0 {
		missing = append(missing, partialSpec)
	}
	if pod.Status.Phase == "" && len(pod.Status.ContainerStatuses) == 0 {
		missing = append(missing, partialStatus)
	}
	li.addPartialPod(path, pod, o.line, rankPartial+1, missing)
	li.found["pods"] = true
	return true
}

// eventKey is what two rows of the same event share.
func eventKey(ev corev1.Event) string {
	o := ev.InvolvedObject
	return ev.Namespace + "\x00" + o.Kind + "\x00" + o.Name + "\x00" + ev.Reason + "\x00" + ev.Message
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

// layoutJournals places each block of node log lines at its node: the node the pods it
// names are bound to, else the host its journal prefix names, else the only node the pods
// name. Kernel lines go to the node's dmesg, others to its kubelet journal. A block whose
// node is unknown, or whose node already has a journal from another block, is kept as a
// journal fragment.
func (li *looseImport) layoutJournals(files map[string][]byte) {
	podNodes := li.podNodes()
	for p := range li.journalPodSet {
		// Bound to the node their own block was placed at: they vote for nothing else.
		delete(podNodes, p)
	}
	nodes := map[string]bool{}
	for _, n := range podNodes {
		nodes[n] = true
	}
	for _, j := range li.journals {
		lines := trimBlank(j.lines)
		if len(lines) == 0 {
			continue
		}
		lines = joinContinuations(lines)
		data := joinLines(lines)
		node, kernel := journalBlockNode(data, lines, podNodes, nodes)
		f := li.r.File(j.path)
		out := bundle.NodePath(node, bundle.NodeKubeletLog)
		if kernel {
			out = bundle.NodePath(node, bundle.NodeDmesg)
		}
		if _, dup := files[out]; node == "" || dup || j.status {
			frag := li.keepFragment(bundle.FragmentJournal, j.path, lines)
			setBlockFragment(f, lines[0].n, frag)
			li.found["journal"] = true
			continue
		}
		files[out] = data
		li.r.Origins[out] = Origin{Path: j.path, LineOffset: lines[0].n - 1}
		f.Produced = append(f.Produced, out)
		setBlockFragment(f, lines[0].n, out)
		li.found["journal"] = true
	}
}

// joinContinuations joins the lines that continue a message into the message's first
// line (logline.JoinMessages: klog multi-line values, journal continuations, wrapped
// systemctl status lines) and leaves the continuation lines blank, so the message reads
// whole and every line keeps its number.
func joinContinuations(lines []textLine) []textLine {
	strs := make([]string, len(lines))
	for i, l := range lines {
		strs[i] = l.s
	}
	ms := logline.Joined(strs)
	if len(ms) == 0 {
		return lines
	}
	out := slices.Clone(lines)
	for _, m := range ms {
		out[m.First].s = m.Text
		for k := m.First + 1; k <= m.Last; k++ {
			out[k].s = ""
		}
	}
	return out
}

func joinLines(lines []textLine) []byte {
	var buf strings.Builder
	for _, l := range lines {
		buf.WriteString(l.s)
		buf.WriteByte('\n')
	}
	return []byte(buf.String())
}

// journalBlockNode is the node a block of node log lines belongs to: the node the pods it
// names are bound to, else the host its journal prefix names, else the only node the
// pods name; and whether every line is a kernel line.
func journalBlockNode(data []byte, lines []textLine, podNodes map[string]string, nodes map[string]bool) (string, bool) {
	host, kernel := blockHost(lines)
	node := journalNode(data, podNodes)
	if node == "" {
		node = host
	}
	if node == "" && len(nodes) == 1 {
		for n := range nodes {
			node = n
		}
	}
	return node, kernel
}

// reJournalPod is the kubelet's structured pod="namespace/name" (klog.KObj).
var reJournalPod = regexp.MustCompile(`(?:^|[\s"])pod="([a-z0-9][-a-z0-9.]*)/([a-z0-9][-a-z0-9.]*)"`)

// journalPods adds a partial pod for every pod a node log line names as pod="ns/name"
// (the kubelet's structured logging) and no output shows: its namespace and name are
// known, bound to the node the block's lines are placed at; its spec and status are not.
func (li *looseImport) journalPods() {
	podNodes := li.podNodes()
	nodes := map[string]bool{}
	for _, n := range podNodes {
		nodes[n] = true
	}
	for _, j := range li.journals {
		lines := trimBlank(j.lines)
		if len(lines) == 0 {
			continue
		}
		node := ""
		nodeKnown := false
		for _, l := range lines {
			// Read from the text, as journalNode does: a pasted line whose quoting broke
			// still names its pod.
			m := reJournalPod.FindStringSubmatch(l.s)
			if m == nil || !isDNSName(m[1]) || !isDNSName(m[2]) {
				continue
			}
			ns, name := m[1], m[2]
			if _, ok := li.byKey["Pod/"+ns+"/"+name]; ok {
				continue
			}
			if !nodeKnown {
				node, _ = journalBlockNode(joinLines(lines), lines, podNodes, nodes)
				nodeKnown = true
			}
			var p corev1.Pod
			p.APIVersion, p.Kind = "v1", "Pod"
			p.Name, p.Namespace, p.Spec.NodeName = name, ns, node
			li.addPartialPod(j.path, p, l.n, rankPartial, []string{partialSpec, partialStatus})
			li.journalPodSet[ns+"/"+name] = true
			li.found["pods"] = true
		}
	}
}

// logPods adds the pods known only from the `kubectl logs POD -c CONTAINER` commands
// pasted: a log is evidence about its pod's container, which the paste shows nowhere
// else. A pod of that name imported from any namespace is the log's.
func (li *looseImport) logPods() {
	for _, l := range li.logs {
		c := l.cmd
		if c.pod == "" || c.container == "" || len(l.lines) == 0 || li.podNamed(c.pod) {
			continue
		}
		var p corev1.Pod
		p.APIVersion, p.Kind = "v1", "Pod"
		p.Name, p.Namespace = c.pod, c.namespace
		p.Spec.Containers = []corev1.Container{{Name: c.container}}
		missing := []string{partialSpec, partialStatus}
		if c.nsGuessed {
			missing = append([]string{partialNamespace}, missing...)
			li.guessedPods[c.namespace+"/"+c.pod] = true
		}
		li.addPartialPod(l.path, p, l.lines[0].n, rankPartial, missing)
		li.found["pods"] = true
	}
}

// podNamed reports whether a pod of that name was imported, in any namespace.
func (li *looseImport) podNamed(name string) bool {
	for k := range li.byKey {
		if rest, ok := strings.CutPrefix(k, "Pod/"); ok {
			if _, n, _ := strings.Cut(rest, "/"); n == name {
				return true
			}
		}
	}
	return false
}

// blockHost returns the one host a block's journal prefixes name, and whether every
// line is a kernel line.
func blockHost(lines []textLine) (string, bool) {
	host, kernel, n := "", true, 0
	for _, l := range lines {
		e, kind, _ := logline.Parse(l.s, time.Time{})
		if kind != logline.KindEntry {
			continue
		}
		n++
		if e.Program != "kernel" {
			kernel = false
		}
		if e.Host == "" {
			continue
		}
		if host != "" && host != e.Host {
			return "", kernel && n > 0
		}
		host = e.Host
	}
	return host, kernel && n > 0
}

// setBlockFragment records where the block starting at first went.
func setBlockFragment(f *FileReport, first int, out string) {
	if f == nil {
		return
	}
	for i := range f.Blocks {
		if f.Blocks[i].First == first {
			f.Blocks[i].Fragment = out
		}
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

// isLoose accepts inputs where some file holds text: pasted output in any shape is read
// block by block, and what is not recognised is kept as text.
func isLoose(src *bundle.Bundle) bool {
	for _, name := range src.Names() {
		data, _ := src.ReadFile(name) // listed by Names, so present
		if isText(data) {
			return true
		}
	}
	return false
}

// isText tells text from empty or binary data: once decoded (decodeText), no NUL
// byte and mostly valid UTF-8 in the first 8 KiB.
func isText(data []byte) bool {
	data = decodeText(data[:min(len(data), 8192)])
	head := data
	if len(bytes.TrimSpace(head)) == 0 || bytes.IndexByte(head, 0) >= 0 {
		return false
	}
	bad := 0
	for len(head) > 0 {
		r, size := utf8.DecodeRune(head)
		if r == utf8.RuneError && size <= 1 && len(head) >= utf8.UTFMax {
			bad++
		}
		head = head[size:]
	}
	return bad*20 < len(data[:min(len(data), 8192)])
}

// unusable says, per file, why nothing in it could be read.
func unusable(src *bundle.Bundle) []string {
	var out []string
	for _, name := range src.Names() {
		data, _ := src.ReadFile(name) // listed by Names, so present
		switch {
		case len(bytes.TrimSpace(data)) == 0:
			out = append(out, name+": empty")
		case !isText(data):
			out = append(out, fmt.Sprintf("%s: binary data (%d bytes), not text", name, len(data)))
		}
	}
	if len(out) == 0 {
		out = append(out, "no files")
	}
	return out
}

// openInput reads standard input for "-" and a single text file as loose evidence;
// anything else as a bundle.
func openInput(ctx context.Context, input string, opts Options) (*bundle.Bundle, error) {
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
		return bundle.New(input, map[string][]byte{StdinName: decodeText(data)})
	}
	if st, err := os.Stat(input); err == nil && bundle.IsStream(st) {
		return openStream(ctx, input, opts, limits)
	}
	if st, err := os.Stat(input); err == nil && st.Mode().IsRegular() && isTextFile(input) {
		if st.Size() > limits.MaxFileSize {
			return nil, fmt.Errorf("read %q: %d bytes is over the %d byte limit", input, st.Size(), limits.MaxFileSize)
		}
		data, err := os.ReadFile(input)
		if err != nil {
			return nil, fmt.Errorf("read %q: %w", input, err)
		}
		return bundle.New(input, map[string][]byte{filepath.Base(input): decodeText(data)})
	}
	// Other tools' outputs hold links (a sosreport links its top-level files into
	// sos_commands/): they are left out and listed in the import report.
	limits.SkipLinks, limits.SkipUnreadable = true, true
	if opts.ReadOnce {
		return bundle.OpenReadOnce(ctx, input, limits)
	}
	return bundle.OpenContext(ctx, input, limits)
}

// openStream reads a stream input (a FIFO, `<(cmd)`, /dev/stdin, a terminal) once: an
// archive is read as it comes, anything else is pasted text, like standard input. A
// Ctrl-C ends the wait for a writer or for more input.
func openStream(ctx context.Context, input string, opts Options, limits bundle.Limits) (*bundle.Bundle, error) {
	s, err := bundle.OpenStream(ctx, input)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	head, err := s.Peek(512)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
		return nil, fmt.Errorf("read %q: %w", input, err)
	}
	if bundle.SniffArchive(head) != "" {
		limits.SkipLinks, limits.SkipUnreadable = true, true
		return bundle.OpenArchiveStream(ctx, input, s, limits, opts.ReadOnce)
	}
	data, err := io.ReadAll(io.LimitReader(s, limits.MaxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("read %q: %w", input, err)
	}
	if int64(len(data)) > limits.MaxFileSize {
		return nil, fmt.Errorf("read %q: more than %d bytes", input, limits.MaxFileSize)
	}
	name := filepath.Base(input)
	if name == "stdin" || strings.Trim(name, "0123456789") == "" {
		name = StdinName // /dev/stdin, or the /dev/fd/63 of `<(cmd)`: no name of its own
	}
	return bundle.New(input, map[string][]byte{name: decodeText(data)})
}

// isTextFile tells pasted text from an archive by its content, whatever its name: a
// paste saved without an extension is still text, and a damaged .tar.gz still an archive.
func isTextFile(p string) bool {
	archive, err := bundle.IsArchiveFile(p)
	return err == nil && !archive // an unreadable file is left to the bundle reader to report
}

// inNamespace sets an object's namespace, which it did not show, and marks it as not
// known.
func inNamespace(data json.RawMessage, ns string) (json.RawMessage, bool) {
	return withMetadata(data, func(meta map[string]any) {
		meta["namespace"] = ns
		markPartial(meta, partialNamespace)
	})
}

// withPartial adds what to an object's partial mark: the object does not show it.
func withPartial(data json.RawMessage, what string) (json.RawMessage, bool) {
	return withMetadata(data, func(meta map[string]any) { markPartial(meta, what) })
}

// withMetadata is an object's document with its metadata edited.
func withMetadata(data json.RawMessage, edit func(meta map[string]any)) (json.RawMessage, bool) {
	var obj map[string]any
	if json.Unmarshal(data, &obj) != nil {
		return nil, false
	}
	meta, _ := obj["metadata"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
		obj["metadata"] = meta
	}
	edit(meta)
	out, err := json.Marshal(obj)
	if err != nil {
		return nil, false
	}
	return out, true
}

// markPartial adds what to the partial mark of an object's metadata.
func markPartial(meta map[string]any, what string) {
	ann, _ := meta["annotations"].(map[string]any)
	if ann == nil {
		ann = map[string]any{}
		meta["annotations"] = ann
	}
	marks := what
	if v, ok := ann[bundle.PartialAnnotation].(string); ok && v != "" {
		if slices.Contains(strings.Split(v, ","), what) {
			marks = v
		} else {
			marks = v + "," + what
		}
	}
	ann[bundle.PartialAnnotation] = marks
}

// isWorkloadKind reports whether kind is a workload whose status its controller writes.
func isWorkloadKind(kind string) bool {
	return slices.ContainsFunc(workloadKindFields, func(k workloadKind) bool { return k.kind == kind })
}

// showsStatus reports whether an object's document has a status with anything in it.
func showsStatus(data json.RawMessage) bool {
	var o struct {
		Status map[string]json.RawMessage `json:"status"`
	}
	return json.Unmarshal(data, &o) == nil && len(o.Status) > 0
}
