package importer

import (
	"encoding/json"
	"fmt"
	"path"
	"regexp"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"podflow.dev/podflow/bundle"
	"podflow.dev/podflow/logline"
)

// Kinds of block segment tells apart beyond whole outputs: evidence pasted without its
// header or its surroundings.
const (
	segEventRows    = "kubectl events rows without header"
	segPodRows      = "kubectl get pods rows without header"
	segDescribeFrag = "kubectl describe pod fragment"
	segNodeLog      = "node log lines"
	segStatus       = "systemctl status"
	segOtherTable   = "runtime table"
)

// reEventReason is an event's reason as the components write them (FailedScheduling,
// BackOff), and reEventSourceCell a describe's From cell: the scheduler, the kubelet (with
// its node before 1.16), a controller or a provisioner.
var (
	reEventReason     = regexp.MustCompile(`^[A-Z][a-z]+(?:[A-Z][A-Za-z]*)+$|^(?:Evicted|Pulling|Pulled|Created|Started|Killing|Scheduled|Unhealthy|Preempted|Failed|Provisioning)$`)
	reEventSourceCell = regexp.MustCompile(`^(?:default-scheduler|[a-z][a-z0-9-]*-scheduler|kubelet(?:, \S+)?|[a-z][a-z0-9-]*-controller|[a-z0-9.-]*provisioner[a-z0-9._/-]*|[a-z0-9.-]+\.csi\.[a-z0-9.-]+)$`)
	// reWarningReason are reasons the components record as Warning events.
	reWarningReason = regexp.MustCompile(`^(?:Failed|BackOff|Unhealthy|Evicted|Error|Err|Invalid|Insufficient|Exceeded|Preempt|Rebooted|NetworkNotReady|NodeNotReady|OOM|ProbeWarning|FreeDiskSpaceFailed|ImageGCFailed|ProvisioningFailed|TaintManagerEviction)|Failed|Error|Invalid`)
)

// typelessDescribeEvent reads a describe's event row copied from its Reason cell on:
// "FailedScheduling  2m21s (x42 over 60m)  default-scheduler  1 node(s) had untolerated
// taint …". The reason, an age and the From cell of a component must all be there; the
// type is the one the component records for that reason.
func typelessDescribeEvent(s string) (corev1.Event, bool) {
	cells := splitCells(s, 4)
	if len(cells) < 4 || !reEventReason.MatchString(cells[0]) || !isAgeInterval(cells[1]) || !reEventSourceCell.MatchString(cells[2]) {
		return corev1.Event{}, false
	}
	ev := corev1.Event{Type: "Normal", Reason: cells[0], Count: 1, Source: eventSource(cells[2]), Message: strings.TrimPrefix(cells[3], combinedPrefix)}
	if reWarningReason.MatchString(ev.Reason) {
		ev.Type = "Warning"
	}
	if m := reInterval.FindStringSubmatch(cells[1]); m != nil && m[2] != "" {
		if n, err := strconv.ParseInt(m[2], 10, 32); err == nil {
			ev.Count = int32(n)
		}
	}
	return ev, true
}

// combinedPrefix is what the kubelet's event aggregation puts before a message it
// merged from several similar events.
const combinedPrefix = "(combined from similar events): "

// headerlessEvent reads one event row as any kubectl version prints it, without the
// table's header: get events (current: [NAMESPACE] LAST SEEN TYPE REASON OBJECT MESSAGE;
// before 1.14: LASTSEEN FIRSTSEEN COUNT NAME KIND SUBOBJECT TYPE REASON SOURCE MESSAGE)
// and describe's Events table (Type Reason Age From Message; before 1.10: FirstSeen
// LastSeen Count From SubObjectPath Type Reason Message). known says the row names its
// object; describe rows do not.
func headerlessEvent(s string) (ev corev1.Event, known, nsKnown, ok bool) {
	if !strings.Contains(s, "Normal") && !strings.Contains(s, "Warning") {
		if ev, ok := typelessDescribeEvent(s); ok {
			return ev, false, false, true
		}
		return ev, false, false, false // no event type cell
	}
	cells := splitCells(s, -1)
	ti := -1
	for i, c := range cells {
		if i > 7 {
			break
		}
		if isEventType(c) {
			ti = i
			break
		}
	}
	if ti < 0 || len(cells) < ti+3 {
		return ev, false, false, false
	}
	before, after := cells[:ti], cells[ti+1:]
	ev = corev1.Event{Type: cells[ti], Count: 1}
	join := func(cs []string) string { return strings.Join(cs, "  ") }
	switch {
	case ti == 0:
		// describe: Reason Age From Message; From is empty for some events.
		if len(after) < 3 || !reInterval.MatchString(after[1]) || !isAgeInterval(after[1]) {
			return ev, false, false, false
		}
		ev.Reason = after[0]
		if m := reInterval.FindStringSubmatch(after[1]); m != nil && m[2] != "" {
			if n, err := strconv.ParseInt(m[2], 10, 32); err == nil {
				ev.Count = int32(n)
			}
		}
		if len(after) >= 4 {
			ev.Source, ev.Message = eventSource(after[2]), join(after[3:])
		} else {
			ev.Message = after[2]
		}
	case (len(before) == 1 || len(before) == 2) && isAgeInterval(before[len(before)-1]):
		// current get events: the object is kind/name. `kubectl events` (1.26 and
		// later) writes the count into LAST SEEN: "12s (x13 over 2m1s)".
		if !strings.Contains(after[1], "/") || len(after) < 3 {
			return ev, false, false, false
		}
		if m := reInterval.FindStringSubmatch(before[len(before)-1]); m != nil && m[2] != "" {
			if n, err := strconv.ParseInt(m[2], 10, 32); err == nil {
				ev.Count = int32(n)
			}
		}
		ev.Reason = after[0]
		kind, name, _ := strings.Cut(after[1], "/")
		if k, found := eventKinds[kind]; found {
			kind = k
		}
		ev.InvolvedObject = corev1.ObjectReference{Kind: kind, Name: name}
		ev.Message = join(after[2:])
		known = true
		if len(before) == 2 {
			ev.Namespace, nsKnown = before[0], true
		}
	case len(before) >= 3:
		// The old forms start with two ages and a count, after a namespace with -A.
		off := 0
		if !isAge(before[0]) && len(before) >= 4 && isAge(before[1]) {
			ev.Namespace, nsKnown, off = before[0], true, 1
		}
		b := before[off:]
		if len(b) < 3 || !isAge(b[0]) || !isAge(b[1]) || !isCount(b[2]) {
			return ev, false, false, false
		}
		if n, err := strconv.ParseInt(b[2], 10, 32); err == nil && n > 0 {
			ev.Count = int32(n)
		}
		ev.Reason = after[0]
		rest := b[3:]
		if len(rest) >= 2 && isKindWord(rest[1]) {
			// get events: NAME KIND [SUBOBJECT] … SOURCE MESSAGE
			ev.InvolvedObject = corev1.ObjectReference{Kind: rest[1], Name: rest[0]}
			if len(rest) >= 3 {
				ev.InvolvedObject.FieldPath = rest[2]
			}
			if len(after) < 3 {
				return ev, false, false, false
			}
			ev.Source = eventSource(after[1])
			ev.Message = join(after[2:])
			known = true
		} else {
			// describe: From [SubObjectPath] … MESSAGE
			if len(rest) >= 1 {
				ev.Source = eventSource(rest[0])
			}
			if len(rest) >= 2 {
				ev.InvolvedObject.FieldPath = rest[1]
			}
			ev.Message = join(after[1:])
		}
	default:
		return ev, false, false, false
	}
	ev.Message = strings.TrimPrefix(ev.Message, combinedPrefix)
	return ev, known, nsKnown, ev.Reason != "" && ev.Message != ""
}

// isAgeInterval tells describe's Age cell: "3m", "3m (x5 over 10m)", "<invalid>".
func isAgeInterval(s string) bool {
	m := reInterval.FindStringSubmatch(s)
	return m != nil && isAge(m[1])
}

func isAge(s string) bool { return reAge.MatchString(s) }

func isCount(s string) bool {
	_, err := strconv.ParseUint(s, 10, 32)
	return err == nil
}

// isKindWord tells an API kind as old get events printed it in KIND ("Pod", "Node").
func isKindWord(s string) bool {
	for _, k := range eventKinds {
		if s == k {
			return true
		}
	}
	return false
}

// eventSource reads the source column in every form kubectl printed it: "kubelet,
// node-1" (1.10 to 1.13), "{kubelet node-1}" (before), "default-scheduler".
func eventSource(s string) corev1.EventSource {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "{") && strings.HasSuffix(s, "}") {
		comp, host, _ := strings.Cut(strings.TrimSpace(s[1:len(s)-1]), " ")
		return corev1.EventSource{Component: comp, Host: strings.TrimSpace(host)}
	}
	comp, host, _ := strings.Cut(s, ", ")
	return corev1.EventSource{Component: comp, Host: host}
}

// reReady is the READY cell of get pods: ready/total containers.
var reReady = regexp.MustCompile(`^(\d+)/(\d+)$`)

// reStatusWord is a STATUS cell of get pods: a phase or a container reason.
var reStatusWord = regexp.MustCompile(`^[A-Za-z][A-Za-z:]*(?:\(\S+\))?$`)

// headerlessPod reads a `kubectl get pods` row without the header: [NAMESPACE] NAME
// READY STATUS [RESTARTS AGE [IP NODE NOMINATED-NODE READINESS-GATES]].
func headerlessPod(s string) (p corev1.Pod, nsKnown, ok bool) {
	if !strings.Contains(s, "/") {
		return p, false, false // no READY cell (1/2)
	}
	if p, nsKnown, ok = podRowCells(splitCells(s, -1)); ok {
		return p, nsKnown, ok
	}
	if cells, ok := singleSpacedPodRow(s); ok {
		return podRowCells(cells)
	}
	return p, false, false
}

// singleSpacedPodRow splits a pod row whose column gaps a paste squeezed to one space
// (a chat client, a grep'd line retyped): [NAMESPACE] NAME READY STATUS RESTARTS AGE,
// then with -o wide IP NODE [NOMINATED NODE [READINESS GATES]]. Single spaces also
// separate the words of prose, so the row must have exactly these cells, an age among
// them.
func singleSpacedPodRow(s string) ([]string, bool) {
	var f []string
	words := strings.Fields(detab(s))
	for i := 0; i < len(words); i++ {
		// RESTARTS since 1.22: "3 (2m ago)".
		if i+2 < len(words) && isCount(words[i]) && strings.HasPrefix(words[i+1], "(") && words[i+2] == "ago)" {
			f = append(f, words[i]+" "+words[i+1]+" "+words[i+2])
			i += 2
			continue
		}
		f = append(f, words[i])
	}
	for ri := 1; ri <= 2 && ri < len(f); ri++ {
		if !reReady.MatchString(f[ri]) {
			continue
		}
		switch len(f) - ri {
		case 4, 6, 7, 8:
			return f, isAge(f[ri+3])
		}
		return nil, false
	}
	return nil, false
}

// reLabelsCell is the LABELS cell `kubectl get pods --show-labels` adds last:
// key=value pairs joined by commas.
var reLabelsCell = regexp.MustCompile(`^[A-Za-z0-9][-A-Za-z0-9_./]*=[-A-Za-z0-9_.]*(?:,[A-Za-z0-9][-A-Za-z0-9_./]*=[-A-Za-z0-9_.]*)*$`)

// podRowCells reads the cells of a pod row without its header; a last cell of labels
// (--show-labels) gives the pod its labels.
func podRowCells(cells []string) (p corev1.Pod, nsKnown, ok bool) {
	var labels map[string]string
	if n := len(cells); n > 4 && reLabelsCell.MatchString(cells[n-1]) {
		labels = map[string]string{}
		for _, kv := range strings.Split(cells[n-1], ",") {
			k, v, _ := strings.Cut(kv, "=")
			labels[k] = v
		}
		cells = cells[:n-1]
	}
	defer func() {
		if ok {
			p.Labels = labels
		}
	}()
	ri := -1
	for i := 1; i <= 2 && i < len(cells); i++ {
		if reReady.MatchString(cells[i]) {
			ri = i
			break
		}
	}
	if ri < 0 || ri+1 >= len(cells) || !reStatusWord.MatchString(cells[ri+1]) || !isDNSName(cells[ri-1]) {
		return p, false, false
	}
	// A paste that dropped the RESTARTS column keeps the AGE last: NAME READY STATUS AGE.
	if ri+2 < len(cells) && !isRestarts(cells[ri+2]) && !(ri+3 == len(cells) && isAge(cells[ri+2])) {
		return p, false, false
	}
	p.APIVersion, p.Kind = "v1", "Pod"
	p.Name = strings.TrimPrefix(cells[ri-1], "pod/")
	if ri == 2 {
		if !isDNSName(cells[0]) {
			return p, false, false
		}
		p.Namespace, nsKnown = cells[0], true
	}
	p.Status.Phase, p.Status.Reason = statusPhase(cells[ri+1])
	markScheduled(&p, cells[ri+1])
	restarts := ""
	if ri+2 < len(cells) && isRestarts(cells[ri+2]) {
		restarts = cells[ri+2]
	}
	setRowReadiness(&p, cells[ri], restarts)
	keepRow(&p, cells[ri], cells[ri+1], restarts)
	if len(cells) >= ri+6 {
		if ip := cells[ri+4]; ip != "<none>" {
			p.Status.PodIP = ip
		}
		if node := cells[ri+5]; node != "<none>" {
			p.Spec.NodeName = node
		}
	}
	return p, nsKnown, true
}

// setRowReadiness records what a pod row's READY and RESTARTS cells say: all
// containers ready (n/n) makes the Ready condition true, fewer makes it false. A row
// with restarts gets no Ready=True, so the pod is never taken for positively healthy:
// the row does not say which container restarted or why.
func setRowReadiness(p *corev1.Pod, ready, restarts string) {
	m := reReady.FindStringSubmatch(ready)
	if m == nil || p.Status.Phase != corev1.PodRunning {
		return
	}
	n, _ := strconv.Atoi(m[1])
	of, _ := strconv.Atoi(m[2])
	restarted := restarts != "" && !strings.HasPrefix(restarts, "0")
	switch {
	case of > 0 && n == of && !restarted:
		p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionTrue})
	case n < of:
		p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionFalse,
			Reason: "ContainersNotReady", Message: fmt.Sprintf("%d of %d containers ready (kubectl get pods READY %s)", n, of, ready)})
	}
}

// keepRow records the row's READY, STATUS and RESTARTS cells on the pod
// (bundle.KubectlRowAnnotation), as pasted: the row names no container, so the pod
// gets none that analysis could take for evidence, and serve prints the row again from
// these cells.
func keepRow(p *corev1.Pod, ready, status, restarts string) {
	if !reReady.MatchString(ready) {
		return
	}
	data, err := json.Marshal(bundle.KubectlRow{Ready: ready, Status: status, Restarts: restarts})
	if err != nil {
		return
	}
	if p.Annotations == nil {
		p.Annotations = map[string]string{}
	}
	p.Annotations[bundle.KubectlRowAnnotation] = string(data)
}

// reRestarts is the RESTARTS cell: "3" or, since 1.22, "3 (2m ago)".
var reRestarts = regexp.MustCompile(`^\d+(?: \(\S+ ago\))?$`)

func isRestarts(s string) bool { return reRestarts.MatchString(s) }

// reDNSName is a Kubernetes object name.
var reDNSName = regexp.MustCompile(`^(?:pod/)?[a-z0-9]([-a-z0-9.]*[a-z0-9])?$`)

func isDNSName(s string) bool { return len(s) <= 253 && reDNSName.MatchString(s) }

// Describe keys that open a fragment of `kubectl describe pod` pasted without its Name:
// header: sections at the margin and the fields of one container.
var (
	describeSections  = []string{"Containers:", "Init Containers:", "Conditions:", "Volumes:", "Events:"}
	describeContainer = []string{"State:", "Last State:", "Restart Count:", "Container ID:", "Image ID:", "Ready:"}
)

// isDescribeFragStart tells whether lines[i] opens a describe fragment: a section
// heading, a container field that describe prints with its companions nearby, or the
// header of describe's Events table.
func isDescribeFragStart(lines []textLine, i int) bool {
	t := strings.TrimSpace(detab(lines[i].s))
	for _, k := range describeSections {
		if t == k || (k == "Events:" && t == "Events:  <none>") {
			return true
		}
	}
	if isDescribeEventsHeader(t) {
		return true
	}
	// The pod's own Status, with its Reason or Message at the margin under it, as
	// `kubectl describe pod … | grep -A3 Status` leaves it (an evicted pod's message).
	if strings.HasPrefix(lines[i].s, "Status:") {
		for j := i + 1; j < len(lines) && j <= i+3; j++ {
			if strings.HasPrefix(lines[j].s, "Reason:") || strings.HasPrefix(lines[j].s, "Message:") {
				return true
			}
		}
	}
	if m := reContainerName.FindStringSubmatch(t); m != nil && i+1 < len(lines) {
		next := strings.TrimSpace(lines[i+1].s)
		return strings.HasPrefix(next, "Container ID:") || strings.HasPrefix(next, "Image:")
	}
	for _, k := range describeContainer {
		if strings.HasPrefix(t, k) {
			// One key alone is prose; describe prints State with Ready or Restart Count
			// (or Reason under it) within a few lines.
			for j := i + 1; j < len(lines) && j <= i+6; j++ {
				n := strings.TrimSpace(lines[j].s)
				if strings.HasPrefix(n, "Ready:") || strings.HasPrefix(n, "Restart Count:") || strings.HasPrefix(n, "Reason:") ||
					strings.HasPrefix(n, "Exit Code:") || strings.HasPrefix(n, "Last State:") {
					return true
				}
			}
		}
	}
	return false
}

// isDescribeEventsHeader tells the header of describe's Events table, current or old.
func isDescribeEventsHeader(t string) bool {
	if !strings.HasPrefix(t, "Type") && !strings.HasPrefix(t, "FirstSeen") {
		return false
	}
	f := strings.Fields(t)
	if len(f) >= 5 && f[0] == "Type" && f[1] == "Reason" && f[2] == "Age" {
		return true
	}
	return len(f) >= 7 && f[0] == "FirstSeen" && f[1] == "LastSeen" && f[2] == "Count"
}

// describeFragKey tells a line that continues a describe fragment at the margin.
func describeFragKey(s string) bool {
	if m := reKey.FindStringSubmatch(strings.TrimSpace(detab(s))); m != nil {
		switch m[1] {
		case "Containers", "Init Containers", "Conditions", "Volumes", "Events", "QoS Class", "Node-Selectors",
			"Tolerations", "Status", "IP", "IPs", "Controlled By", "Labels", "Annotations", "Node", "Start Time",
			"Priority", "Service Account", "Reason", "Message", "Name", "Namespace":
			return true
		}
	}
	return false
}

// wrapFragment turns a describe fragment into a describe block the describe reader
// reads: sections go to the margin, container fields under a container heading. The
// lines added keep the line number of the fragment's first line.
func wrapFragment(lines []textLine, container string) []textLine {
	first := 0
	for first < len(lines) && strings.TrimSpace(lines[first].s) == "" {
		first++
	}
	if first == len(lines) {
		return nil
	}
	n := lines[first].n
	minIndent := -1
	for _, l := range lines[first:] {
		s := detab(l.s)
		if strings.TrimSpace(s) == "" {
			continue
		}
		if ind := len(s) - len(strings.TrimLeft(s, " ")); minIndent < 0 || ind < minIndent {
			minIndent = ind
		}
	}
	head := strings.TrimSpace(detab(lines[first].s))
	shift := func(to int) []textLine {
		out := make([]textLine, 0, len(lines)+3)
		for _, l := range lines[first:] {
			s := detab(l.s)
			if strings.TrimSpace(s) == "" {
				out = append(out, l)
				continue
			}
			s = strings.Repeat(" ", to) + s[min(minIndent, len(s)-len(strings.TrimLeft(s, " "))):]
			out = append(out, textLine{s: s, n: l.n})
		}
		return out
	}
	var out []textLine
	switch {
	case isDescribeEventsHeader(head):
		out = append([]textLine{{s: "Events:", n: n}}, shift(2)...)
	case reContainerName.MatchString(head):
		out = append([]textLine{{s: "Containers:", n: n}}, shift(2)...)
	case isSectionHead(head) || describeFragKey(head):
		out = shift(0)
	default:
		out = append([]textLine{{s: "Containers:", n: n}, {s: "  " + container + ":", n: n}}, shift(4)...)
	}
	return out
}

func isSectionHead(t string) bool {
	for _, k := range describeSections {
		if strings.HasPrefix(t, k) {
			return true
		}
	}
	return false
}

// isNodeLogLine tells a line logline reads that is not a kubelet journal line segment
// already takes: kernel lines, logrus and logfmt text, other programs' journal lines.
func isNodeLogLine(s string) bool {
	e, kind, problem := logline.Parse(s, time.Time{})
	return kind == logline.KindEntry && problem == nil && e.Format != logline.FormatStatus
}

// isStatusHeader tells the first line of `systemctl status UNIT`.
func isStatusHeader(s string) bool {
	e, kind, _ := logline.Parse(s, time.Time{})
	return kind == logline.KindEntry && e.Format == logline.FormatStatus && !strings.HasPrefix(s, " ")
}

// otherTableKind tells tables podflow keeps as text: docker ps, crictl images,
// kubectl get nodes.
func otherTableKind(line string) string {
	if !strings.Contains(line, "NAME") && !strings.Contains(line, "IMAGE") {
		return "" // every header below names one of these
	}
	f := splitCells(line, -1)
	has := func(names ...string) bool {
		for _, n := range names {
			found := false
			for _, c := range f {
				found = found || c == n
			}
			if !found {
				return false
			}
		}
		return true
	}
	switch {
	case has("CONTAINER ID", "IMAGE", "COMMAND", "STATUS"):
		return "docker ps table"
	case has("IMAGE", "TAG", "IMAGE ID"):
		return "crictl images table"
	case has("NAME", "STATUS", "ROLES", "AGE"):
		return "kubectl get nodes table"
	}
	return ""
}

// blockName is a fragment file's name: the input file and the first line of the block.
func blockName(file string, first int, ext string) string {
	base := strings.NewReplacer("/", "_", "\\", "_", " ", "_").Replace(file)
	return fmt.Sprintf("%s-L%d%s", base, first, ext)
}

// reNotLogName tells a file named for events or a describe: "events.txt",
// "describe-pod.txt", "kubectl-get-events.txt".
var reNotLogName = regexp.MustCompile(`(?i)(^|[-_.])(events?|describe)([-_.]|$)`)

// reLogName tells a file named like a log.
var reLogName = regexp.MustCompile(`(?i)(\.log|\.out|\.err|logs?\.txt|logs?)$`)

// errorWords are the words that make a line read as error output.
var errorWords = []string{"error", "fatal", "panic", "exception", "traceback", "failed", "denied", "refused", "killed", "cannot", "unable"}

// hasErrorWord reports whether a line holds one of errorWords as a word (a run of ASCII
// word characters, in any case), in one pass over the line.
func hasErrorWord(s string) bool {
	for i := 0; i < len(s); {
		if !isWordByte(s[i]) {
			i++
			continue
		}
		j := i + 1
		for j < len(s) && isWordByte(s[j]) {
			j++
		}
		if n := j - i; n >= 5 && n <= 9 {
			for _, w := range errorWords {
				if strings.EqualFold(s[i:j], w) {
					return true
				}
			}
		}
		i = j
	}
	return false
}

// isWordByte is a byte of a word as regexp's \b reads it: an ASCII letter, digit or '_'.
func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}

// looksLikeLog tells a block of text that is a program's output rather than prose: a
// file named like a log, a logs command, or lines that read as error output or as log
// lines.
func looksLikeLog(file, cmd string, lines []textLine) bool {
	if reLogName.MatchString(file) || strings.Contains(cmd, " logs") {
		return true
	}
	if reNotLogName.MatchString(path.Base(file)) {
		// A file named for kubectl's events or describe output: what it holds is
		// a component's report, not a program's own output.
		return false
	}
	for _, l := range lines {
		if hasErrorWord(l.s) {
			return true
		}
		if isNodeLogLine(l.s) {
			return true
		}
	}
	return false
}

// reNodeLogHint names node agents, runtimes and CNI plugins in a file name or command.
var reNodeLogHint = regexp.MustCompile(`(?i)(kubelet|containerd|crio|cri-o|docker|journal|dmesg|kern|syslog|messages|cni|calico|cilium|flannel|weave|kube-proxy|systemctl)`)

// nodeLogHint tells whether a file name or the command before a block names a node
// agent, a runtime or a CNI plugin.
func nodeLogHint(file, cmd string) bool {
	return reNodeLogHint.MatchString(file) || reNodeLogHint.MatchString(cmd)
}

// rowWaitingReasons are the STATUS values kubectl's printPod takes from a waiting
// container.
var rowWaitingReasons = map[string]bool{"CrashLoopBackOff": true, "ImagePullBackOff": true, "ErrImagePull": true,
	"CreateContainerConfigError": true, "CreateContainerError": true, "RunContainerError": true, "InvalidImageName": true,
	"ErrImageNeverPull": true}

// rowRestarts carries a `kubectl get pods` row's RESTARTS into the one container status
// a describe excerpt or a status fragment of the same pod brought without its
// "Restart Count" (or restartCount), and the row's STATUS into the status of a pod's
// one container a pasted manifest shows and no status does. kubectl's RESTARTS column
// is the sum of the containers' restart counts (printPod), so with one container it is
// that container's. A status that shows a count keeps it, and a pod of several
// containers keeps theirs: the sum does not say how it splits.
func (li *looseImport) rowRestarts() {
	for key, it := range li.byKey {
		if !strings.HasPrefix(key, "Pod/") || !strings.Contains(string(it.data), bundle.KubectlRowAnnotation) {
			continue
		}
		var p corev1.Pod
		if json.Unmarshal(it.data, &p) != nil {
			continue
		}
		var row bundle.KubectlRow
		if json.Unmarshal([]byte(p.Annotations[bundle.KubectlRowAnnotation]), &row) != nil {
			continue
		}
		if len(p.Status.ContainerStatuses) == 0 && len(p.Spec.Containers) == 1 && rowWaitingReasons[row.Status] {
			// A manifest and a get row of the same pod: its one container waits for
			// the reason the row's STATUS shows (printPod shows the waiting reason of
			// a container that is not running).
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: p.Spec.Containers[0].Name, Image: p.Spec.Containers[0].Image,
				State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: row.Status}}}}
		}
		if len(p.Status.ContainerStatuses) != 1 || p.Status.ContainerStatuses[0].RestartCount != 0 {
			continue
		}
		n, err := strconv.Atoi(strings.Fields(row.Restarts + " x")[0])
		if err != nil || n <= 0 {
			continue
		}
		p.Status.ContainerStatuses[0].RestartCount = int32(n)
		if data, err := json.Marshal(p); err == nil {
			it.data = data
		}
	}
}
