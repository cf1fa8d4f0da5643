package e2e

import (
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// The cells of a server-side Table (what kubectl get prints) are compared row by row:
// for each object both live reads list, every cell serve prints must be the live one,
// or lie between the two reads (a count that grew), or differ in a way cellAllowed
// names with its reason. Anything else is a difference of serve's printers.

// cellAllowed are the ways a served cell may differ from both live reads.
var cellAllowed = []struct {
	kind, reason string
}{
	{"age", "a time relative to the moment of asking (AGE, LAST SEEN, DURATION, LAST SCHEDULE, the \"(… ago)\" of RESTARTS): serve is asked after both live reads, so its duration is at least the later read's"},
	{"changed", "the cell changed between the two live reads: the collection took the object at a moment in between, in a state neither read may have seen (a crash loop passes through Running, Error and CrashLoopBackOff)"},
	{"redacted", "collection replaced a secret the cell quotes (an event message with a token or an Authorization header) with a redaction mark, where the live server prints the secret"},
	{"restarted", "a container started again between the live reads and the collection (its restart count grew): READY and STATUS of its pod, and the ready counts and endpoints of the workloads and services over it, are those at collection, which a crash loop or a liveness kill changes and changes back"},
	{"pull retried", pullRetriedReason},
}

// pullRetriedReason says why a pod's STATUS, or the refusal of its container's log, may
// name the other phase of an image pull that keeps failing than both live reads do.
const pullRetriedReason = "the kubelet retries a failing image pull with a back-off: the container waits as ImagePullBackOff between tries and as ErrImagePull from a failed try to the next sync, so the collection can take the pod in the phase neither live read saw, and its STATUS (and the refusal of its log) names that phase"

// pullPhases are the waiting reasons of an image pull that keeps failing, as a pod's
// STATUS cell prints them, and the kubelet's words for them in the refusal of a
// waiting container's log ("… is waiting to start: WORDS").
var pullPhases = map[string]string{
	"ErrImagePull":     "image can't be pulled",
	"ImagePullBackOff": "trying and failing to pull image",
}

// pullRetried reports whether two cells, or two refusals of a log, differ only in the
// phase of one failing image pull they name.
func pullRetried(a, b string) bool {
	if a == b {
		return false
	}
	if _, ok := pullPhases[a]; ok {
		_, ok = pullPhases[b]
		return ok
	}
	for _, wa := range pullPhases {
		for _, wb := range pullPhases {
			if wa != wb && strings.HasSuffix(a, ": "+wa) && strings.HasSuffix(b, ": "+wb) &&
				strings.TrimSuffix(a, wa) == strings.TrimSuffix(b, wb) {
				return true
			}
		}
	}
	return false
}

// timeColumns are the columns the API server prints relative to the time of asking.
var timeColumns = map[string]bool{"Age": true, "Last Seen": true, "First Seen": true, "Duration": true, "Last Schedule": true}

// restartColumns are the columns a container restart changes: its pod's READY and
// STATUS, and the ready counts and endpoints of what selects the pod.
var restartColumns = map[string]bool{"Ready": true, "Status": true, "Available": true, "Endpoints": true}

type table struct {
	ColumnDefinitions []struct {
		Name string `json:"name"`
	} `json:"columnDefinitions"`
	Rows []struct {
		Cells  []any `json:"cells"`
		Object struct {
			Metadata struct{ Namespace, Name string }
		} `json:"object"`
	} `json:"rows"`
}

func (t *table) columns() []string {
	var out []string
	for _, c := range t.ColumnDefinitions {
		out = append(out, c.Name)
	}
	return out
}

// rows are the table's cells by object ("namespace/name", or the first cell when the
// row carries no object).
func (t *table) rows() map[string][]any {
	out := map[string][]any{}
	for _, r := range t.Rows {
		key := strings.TrimPrefix(r.Object.Metadata.Namespace+"/"+r.Object.Metadata.Name, "/")
		if key == "" && len(r.Cells) > 0 {
			key = fmt.Sprint(r.Cells[0])
		}
		out[key] = r.Cells
	}
	return out
}

// compareTable compares serve's table s with the live ones l1 and l2 of the same
// request: the same columns, then every cell of the rows all three hold. restarted
// says whether a container the row's object ("namespace/name") depends on started
// again between the reads (for a pod, its own). It returns the difference ("" for none)
// and how many cells it compared.
func compareTable(l1, l2, s []byte, restarted func(row string) bool) (string, int) {
	var t1, t2, ts table
	for _, x := range []struct {
		b []byte
		t *table
	}{{l1, &t1}, {l2, &t2}, {s, &ts}} {
		if err := json.Unmarshal(x.b, x.t); err != nil {
			return fmt.Sprintf("table: %v", err), 0
		}
	}
	cols := ts.columns()
	if l, c := strings.Join(t1.columns(), ","), strings.Join(cols, ","); l != c {
		return fmt.Sprintf("columns: live %s, serve %s", l, c), 0
	}
	same := strings.Join(t2.columns(), ",") == strings.Join(cols, ",")
	r1, r2, rs := t1.rows(), t2.rows(), ts.rows()
	names := make([]string, 0, len(rs))
	for n := range rs {
		names = append(names, n)
	}
	sort.Strings(names)
	compared := 0
	var wrong []string
	allowed := map[string][]string{}
	for _, n := range names {
		c1, ok1 := r1[n]
		c2, ok2 := r2[n]
		if !ok1 || !ok2 || !same {
			// A row only one read has is the list comparison's (items).
			continue
		}
		cs := rs[n]
		if len(cs) != len(cols) || len(c1) != len(cols) || len(c2) != len(cols) {
			wrong = append(wrong, fmt.Sprintf("%s: live %d cells, serve %d for %d columns", n, len(c1), len(cs), len(cols)))
			continue
		}
		for i, col := range cols {
			compared++
			kind := cellDiff(col, c1[i], c2[i], cs[i])
			switch {
			case kind == "":
			case kind == "restarted?" && restarted(n):
				allowed["restarted"] = appendNew(allowed["restarted"], col)
			case kind == "restarted?":
				wrong = append(wrong, fmt.Sprintf("%s %s: live %v, serve %v", n, col, c1[i], cs[i]))
			case kind == "different":
				wrong = append(wrong, fmt.Sprintf("%s %s: live %v, serve %v", n, col, c1[i], cs[i]))
			default:
				allowed[kind] = appendNew(allowed[kind], col)
			}
		}
	}
	if len(wrong) > 0 {
		return "cell: " + abbreviateList(wrong), compared
	}
	if len(allowed) == 0 {
		return "", compared
	}
	var parts []string
	for _, a := range cellAllowed {
		if cols := allowed[a.kind]; len(cols) > 0 {
			parts = append(parts, fmt.Sprintf("%s in %s", a.kind, strings.Join(cols, ", ")))
		}
	}
	return "cells: " + strings.Join(parts, "; "), compared
}

func appendNew(l []string, s string) []string {
	for _, v := range l {
		if v == s {
			return l
		}
	}
	return append(l, s)
}

// cellDiff classifies how the served cell cs of column col differs from the live
// cells c1 (before the collection) and c2 (after): "" when it is one of them or a
// count between them, a kind of cellAllowed, "restarted?" when only a restart of the
// row's pod explains it, or "different".
func cellDiff(col string, c1, c2, cs any) string {
	if reflect.DeepEqual(cs, c1) || reflect.DeepEqual(cs, c2) {
		return ""
	}
	if n, ok := cs.(float64); ok {
		a, ok1 := c1.(float64)
		b, ok2 := c2.(float64)
		switch {
		case ok1 && ok2 && min(a, b) <= n && n <= max(a, b):
			return ""
		case ok1 && ok2 && restartColumns[col]:
			return "restarted?"
		}
		return "different"
	}
	s, ok := cs.(string)
	a, ok1 := c1.(string)
	b, ok2 := c2.(string)
	if !ok || !ok1 || !ok2 {
		return "different"
	}
	if col == "Ready" && !sameTotal(a, b, s) {
		// READY counts ready containers of all: a restart changes the first only.
		return "different"
	}
	if timeColumns[col] {
		if later(s, b) {
			return "age"
		}
		return "different"
	}
	if col == "Restarts" {
		return restartsDiff(a, b, s)
	}
	if redactedLines([]byte(a), []byte(s)) > 0 || redactedLines([]byte(b), []byte(s)) > 0 {
		return "redacted"
	}
	if a != b {
		return "changed"
	}
	if col == "Status" && pullRetried(a, s) {
		return "pull retried"
	}
	if restartColumns[col] {
		return "restarted?"
	}
	return "different"
}

// restartsDiff compares a pod's RESTARTS cells, "N" or "N (AGE ago)": the count
// serve prints lies between the live ones, and its age, the time since the last
// restart, is at least the later read's.
func restartsDiff(a, b, s string) string {
	na, _, okA := splitRestarts(a)
	nb, agoB, okB := splitRestarts(b)
	ns, agoS, okS := splitRestarts(s)
	if !okA || !okB || !okS || ns < min(na, nb) || ns > max(na, nb) {
		return "different"
	}
	if agoS == "" || agoB == "" {
		// The count alone differs: it lies between the reads.
		return ""
	}
	if later(agoS, agoB) {
		return "age"
	}
	return "different"
}

var reRestarts = regexp.MustCompile(`^(\d+)(?: \((\S+) ago\))?$`)

func splitRestarts(c string) (int, string, bool) {
	m := reRestarts.FindStringSubmatch(c)
	if m == nil {
		return 0, "", false
	}
	n, err := strconv.Atoi(m[1])
	return n, m[2], err == nil
}

// later reports whether the duration s, printed as the API server prints ages
// ("45s", "3m20s", "5h", "2d3h", "1y10d"), is at least b: asked later, an age can only
// have grown. A cell that is no such duration is not later.
func later(s, b string) bool {
	ds, ok1 := humanDuration(s)
	db, ok2 := humanDuration(b)
	return ok1 && ok2 && ds >= db
}

var reHumanDuration = regexp.MustCompile(`^(?:(\d+)y)?(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$`)

// humanDuration parses an age as k8s.io/apimachinery/pkg/util/duration.HumanDuration
// prints it, in seconds.
func humanDuration(s string) (int64, bool) {
	m := reHumanDuration.FindStringSubmatch(s)
	if m == nil || s == "" {
		return 0, false
	}
	var total int64
	for i, unit := range []int64{365 * 86400, 86400, 3600, 60, 1} {
		if m[i+1] == "" {
			continue
		}
		n, err := strconv.ParseInt(m[i+1], 10, 64)
		if err != nil {
			return 0, false
		}
		total += n * unit
	}
	return total, true
}

// cellsReason is the allow-list's reason for a table's "cells: KIND in COLUMNS; ..."
// difference: the reasons of its kinds, or "" when one is not in cellAllowed.
func cellsReason(diff string) string {
	rest, ok := strings.CutPrefix(diff, "cells: ")
	if !ok {
		return ""
	}
	var reasons []string
	for _, part := range strings.Split(rest, "; ") {
		kind, _, _ := strings.Cut(part, " in ")
		reason := ""
		for _, a := range cellAllowed {
			if a.kind == kind {
				reason = a.reason
			}
		}
		if reason == "" {
			return ""
		}
		reasons = append(reasons, kind+": "+reason)
	}
	return strings.Join(reasons, "; ")
}

// sameTotal reports whether READY cells ("1/2") all count the same containers.
func sameTotal(cells ...string) bool {
	_, total, _ := strings.Cut(cells[0], "/")
	for _, c := range cells[1:] {
		if _, t, _ := strings.Cut(c, "/"); t != total {
			return false
		}
	}
	return true
}

func abbreviateList(l []string) string {
	if len(l) > 4 {
		return strings.Join(l[:4], ", ") + fmt.Sprintf(", … %d more", len(l)-4)
	}
	return strings.Join(l, ", ")
}
