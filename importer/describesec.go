package importer

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"podflow.dev/podflow/logline"
)

// httpProbe reads describe's http-get target, scheme://host:port/path, where the port
// may be a container port's name ("http://:http/healthz", which url.Parse refuses).
func httpProbe(target string) *corev1.HTTPGetAction {
	a := &corev1.HTTPGetAction{}
	scheme, rest, ok := strings.Cut(target, "://")
	if !ok {
		return a
	}
	hostPort, path, slash := strings.Cut(rest, "/")
	host, port, _ := cutLast(hostPort, ":")
	if strings.HasPrefix(hostPort, "[") {
		// An IPv6 host, [::1]:8080.
		if i := strings.LastIndex(hostPort, "]"); i >= 0 {
			host, port = strings.Trim(hostPort[:i+1], "[]"), strings.TrimPrefix(hostPort[i+1:], ":")
		}
	}
	a.Scheme = corev1.URIScheme(strings.ToUpper(scheme))
	a.Host = host
	if slash {
		a.Path = "/" + path
	}
	if port != "" {
		a.Port = intOrString(port)
	}
	return a
}

func intOrString(s string) intstr.IntOrString {
	if n, err := strconv.ParseInt(s, 10, 32); err == nil {
		return intstr.FromInt32(int32(n))
	}
	return intstr.FromString(s)
}

// conditionLine reads a row of the Conditions table ("Type  Status"); describe prints
// neither reason nor message, so only the status is known.
func (p *describeParser) conditionLine(body string) {
	f := strings.Fields(body)
	if len(f) != 2 || f[0] == "Type" {
		return
	}
	switch corev1.ConditionStatus(f[1]) {
	case corev1.ConditionTrue, corev1.ConditionFalse, corev1.ConditionUnknown:
		p.d.pod.Status.Conditions = append(p.d.pod.Status.Conditions,
			corev1.PodCondition{Type: corev1.PodConditionType(f[0]), Status: corev1.ConditionStatus(f[1])})
	}
}

// volumeLine reads the Volumes section: a volume name, then its Type and source fields.
func (p *describeParser) volumeLine(body string) {
	spec := &p.d.pod.Spec
	if m := reContainerName.FindStringSubmatch(body); m != nil {
		spec.Volumes = append(spec.Volumes, corev1.Volume{Name: m[1]})
		p.vol = &spec.Volumes[len(spec.Volumes)-1]
		return
	}
	if p.vol == nil || len(spec.Volumes) == 0 {
		return
	}
	p.vol = &spec.Volumes[len(spec.Volumes)-1]
	key, val, ok := strings.Cut(body, ":")
	if !ok {
		return
	}
	val = strings.TrimSpace(val)
	src := &p.vol.VolumeSource
	switch key {
	case "Type":
		kind, _, _ := strings.Cut(val, " ")
		switch kind {
		case "Secret":
			src.Secret = &corev1.SecretVolumeSource{}
		case "ConfigMap":
			src.ConfigMap = &corev1.ConfigMapVolumeSource{}
		case "PersistentVolumeClaim":
			src.PersistentVolumeClaim = &corev1.PersistentVolumeClaimVolumeSource{}
		case "EmptyDir":
			src.EmptyDir = &corev1.EmptyDirVolumeSource{}
		case "HostPath":
			src.HostPath = &corev1.HostPathVolumeSource{}
		}
	case "SecretName":
		if src.Secret != nil {
			src.Secret.SecretName = val
		}
	case "Name":
		if src.ConfigMap != nil {
			src.ConfigMap.Name = val
		}
	case "ClaimName":
		if src.PersistentVolumeClaim != nil {
			src.PersistentVolumeClaim.ClaimName = val
		}
	case "ReadOnly":
		if src.PersistentVolumeClaim != nil {
			src.PersistentVolumeClaim.ReadOnly = val == "true"
		}
	case "Path":
		if src.HostPath != nil {
			src.HostPath.Path = val
		}
	case "Optional":
		v := val == "true"
		switch {
		case src.Secret != nil:
			src.Secret.Optional = &v
		case src.ConfigMap != nil:
			src.ConfigMap.Optional = &v
		}
	}
}

// describeEventTable reads the Events table that ends a kubectl describe block.
type describeEventTable struct {
	cols []int        // column starts from the header, nil before it
	last *parsedEvent // the row a line that is no row continues
	// prev is the line read before, width the widest so far (joinContinuation).
	prev  string
	width int
	// atWidth counts the lines as wide as width (widestLine: one line of an uncommon
	// width is no terminal's cut).
	atWidth int
}

// row reads a line of the table: Type, Reason, Age, From, Message. It returns the event
// of a row, its count taken from the Age interval, and true. A header, a rule, or a line
// that continues the previous message (kubectl prints one holding a newline as is) gives
// false; a line that is none of these gives false and a problem. The caller sets last
// once it has kept the event.
func (t *describeEventTable) row(s string) (ev corev1.Event, ok bool, problem string) {
	body := strings.TrimSpace(s)
	prev := t.prev
	t.prev = s
	switch c := utf8.RuneCountInString(s); {
	case c > t.width:
		t.width, t.atWidth = c, 1
	case c == t.width:
		t.atWidth++
	}
	if strings.HasPrefix(body, "Type ") && strings.Contains(body, "Reason") {
		t.cols = headerColumns(s)
		return ev, false, ""
	}
	if strings.Trim(body, "- ") == "" {
		return ev, false, ""
	}
	if strings.HasPrefix(body, "FirstSeen") && strings.Contains(body, "Count") {
		// The Events table of Kubernetes 1.2 to 1.9 (tab-separated, aligned or not).
		return ev, false, ""
	}
	if ev, ok := oldDescribeEventRow(s); ok {
		return ev, true, ""
	}
	cells, ok := describeEventCells(s, t.cols)
	if !ok {
		if t.last != nil {
			width := t.width
			if t.atWidth < 2 && !logline.CommonTerminalWidth(width) {
				width = 0
			}
			t.last.ev.Message = joinContinuation(t.last.ev.Message, prev, s, width)
			return ev, false, ""
		}
		return ev, false, fmt.Sprintf("not an event row: %q", body)
	}
	ev = corev1.Event{Type: cells[0], Reason: cells[1], Message: cells[4], Count: 1}
	ev.Source = eventSource(cells[3]) // "kubelet, node-1" before 1.14, "{kubelet node-1}" before 1.6
	if m := reInterval.FindStringSubmatch(cells[2]); m != nil && m[2] != "" {
		n, _ := strconv.ParseInt(m[2], 10, 32)
		ev.Count = int32(n)
	}
	return ev, true, ""
}

// addRow reads a line of a describe block's Events table as an event about obj in
// namespace ns and appends it to events; a line that is no row and continues none adds a
// problem. Node, Service and claim blocks read their tables through it.
func (t *describeEventTable) addRow(s string, l textLine, obj corev1.ObjectReference, ns string, events *[]parsedEvent, problems *[]string) {
	if strings.TrimSpace(s) == "<none>" {
		return
	}
	ev, ok, problem := t.row(s)
	if problem != "" {
		*problems = append(*problems, fmt.Sprintf("line %d: %s", l.n, problem))
	}
	if !ok {
		return
	}
	ev.Namespace, ev.InvolvedObject = ns, obj
	*events = append(*events, parsedEvent{ev: ev, line: l.n})
	t.last = &(*events)[len(*events)-1]
}

// eventLine reads a line of the pod's Events table; events name the pod and the
// container field path their message starts with.
func (p *describeParser) eventLine(s string, l textLine) {
	ev, ok, problem := p.events.row(s)
	if problem != "" {
		p.problem(l, "%s", problem)
	}
	if !ok {
		return
	}
	pod := &p.d.pod
	fieldPath := ev.InvolvedObject.FieldPath
	ev.InvolvedObject = corev1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: pod.Namespace, Name: pod.Name}
	ev.InvolvedObject.FieldPath, ev.Message = splitFieldPath(ev.Message)
	if fieldPath != "" {
		ev.InvolvedObject.FieldPath = fieldPath
	}
	ev.Namespace = pod.Namespace
	p.d.events = append(p.d.events, parsedEvent{ev: ev, line: l.n})
	p.events.last = &p.d.events[len(p.d.events)-1]
}

// describeEventCells splits an event row by the header's columns when the row lines up
// with them, and by gaps of two or more spaces when paste damage broke the alignment.
func describeEventCells(s string, cols []int) ([]string, bool) {
	s = detab(s)
	if len(cols) == 5 {
		if cells, ok := cutColumns(s, cols); ok && isEventType(cells[0]) && reInterval.MatchString(cells[2]) && cells[4] != "" {
			return cells, true
		}
	}
	cells := splitCells(s, 5)
	if len(cells) == 5 && isEventType(cells[0]) && reInterval.MatchString(cells[2]) {
		return cells, true
	}
	// A row without a source ("From" empty) has one gap less.
	if len(cells) == 4 && isEventType(cells[0]) && reInterval.MatchString(cells[2]) {
		return []string{cells[0], cells[1], cells[2], "", cells[3]}, true
	}
	return nil, false
}

// reOldDescribeEvent reads a row of the Events table kubectl describe printed up to
// Kubernetes 1.9: FirstSeen, LastSeen, Count, From, SubObjectPath, Type, Reason,
// Message (1.2 has no Type), tab-separated, so a paste rarely keeps its alignment. From
// is "{component host}" up to 1.5 and "component, host" after; SubObjectPath may be
// empty.
var reOldDescribeEvent = regexp.MustCompile(`^\s*(?P<first>` + ageExpr + `)\s+(?P<last>` + ageExpr + `)\s+(?P<count>\d+)\s+` +
	`(?P<from>\{[^}]*\}|\S(?:[^\t]*?\S)?)\s+(?:(?P<sub>spec\.[A-Za-z]+\{[^}]*\}|[a-z]+\.[A-Za-z.]+\{[^}]*\})\s+)?` +
	`(?:(?P<type>Normal|Warning)\s+)?(?P<reason>[A-Z][A-Za-z]+)\s+(?P<msg>\S.*)$`)

// ageExpr is the body of reAge: a human duration or a placeholder for a missing time.
const ageExpr = `\d+[smhdy](?:\d+[smhd])?|<unknown>|<invalid>|unknown`

// oldDescribeEventRow reads a row of the old Events table into an event with its count,
// source and the container field path.
func oldDescribeEventRow(s string) (corev1.Event, bool) {
	m := reOldDescribeEvent.FindStringSubmatch(s)
	if m == nil {
		return corev1.Event{}, false
	}
	g := func(name string) string { return strings.TrimSpace(m[reOldDescribeEvent.SubexpIndex(name)]) }
	ev := corev1.Event{Type: g("type"), Reason: g("reason"), Message: g("msg"), Count: 1}
	if ev.Type == "" {
		ev.Type = "Normal"
		if strings.HasPrefix(ev.Reason, "Failed") || strings.HasPrefix(ev.Reason, "Error") || strings.Contains(ev.Reason, "BackOff") {
			ev.Type = "Warning"
		}
	}
	if n, err := strconv.ParseInt(g("count"), 10, 32); err == nil && n > 0 {
		ev.Count = int32(n)
	}
	ev.Source = eventSource(g("from"))
	ev.InvolvedObject.FieldPath = g("sub")
	return ev, true
}

func isEventType(s string) bool { return s == "Normal" || s == "Warning" }

// splitFieldPath separates the "spec.containers{app}: " prefix describe puts before the
// message of an event about one container.
func splitFieldPath(msg string) (string, string) {
	for _, p := range []string{"spec.containers{", "spec.initContainers{", "spec.ephemeralContainers{"} {
		if !strings.HasPrefix(msg, p) {
			continue
		}
		end := strings.Index(msg, "}: ")
		if end < 0 {
			return "", msg
		}
		return msg[:end+1], msg[end+3:]
	}
	return "", msg
}

// headerColumns returns where each column of a table header starts: header names are
// separated by two or more spaces, and names like "LAST SEEN" hold one.
func headerColumns(header string) []int {
	header = detab(header)
	var cols []int
	for i := 0; i < len(header); i++ {
		if header[i] == ' ' {
			continue
		}
		if i == 0 || (i >= 2 && header[i-1] == ' ' && header[i-2] == ' ') || (i == 1 && header[0] == ' ') {
			cols = append(cols, i)
		} else if len(cols) == 0 {
			cols = append(cols, i)
		}
	}
	return cols
}

// cutColumns cuts a row at the header's column starts; false when a cell boundary falls
// inside a word, which means the row does not line up with the header.
func cutColumns(s string, cols []int) ([]string, bool) {
	cells := make([]string, len(cols))
	for i, start := range cols {
		if start >= len(s) {
			if i < len(cols)-1 {
				return nil, false
			}
			break
		}
		if start > 0 && s[start-1] != ' ' {
			return nil, false
		}
		end := len(s)
		if i+1 < len(cols) && cols[i+1] < len(s) {
			end = cols[i+1]
		}
		cells[i] = strings.TrimSpace(s[start:end])
	}
	return cells, true
}
