package e2e

import (
	"bytes"
	"fmt"
	"net/url"
	"regexp"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// compareLog: a log read while it grows is a prefix of the later read, so serve's must
// lie between the two live reads. restarted says the container started a new instance
// between the first live read and the last (restartDuring): then the log serve holds
// may be another instance's than either live read's (see restartedLog).
func compareLog(l1, l2, s []byte, restarted bool) string {
	switch {
	case bytes.Equal(s, l1) || bytes.Equal(s, l2):
		return ""
	case bytes.HasPrefix(s, l1) && bytes.HasPrefix(l2, s):
		return ""
	}
	_, gone1 := removedInstance(l1)
	_, gone2 := removedInstance(l2)
	if gone1 && gone2 {
		// Neither live read had a log to compare with: the kubelet had already removed
		// the instance it was asked for, while the collector, between the reads, met one
		// it still had.
		return fmt.Sprintf("unreadable: both live reads met an instance the kubelet had removed; serve holds %d bytes the collector read", len(s))
	}
	if restarted {
		if d := restartedLog(l1, l2, s); d != "" {
			return d
		}
	}
	for _, l := range [][]byte{l1, l2} {
		if n := redactedLines(l, s); n > 0 {
			return fmt.Sprintf("redacted: %d secret(s) of the log replaced", n)
		}
	}
	return fmt.Sprintf("body: live %d bytes %q, serve %d bytes %q", len(l1), clip(l1), len(s), clip(s))
}

// restartedLog says how a container that started again between the reads explains
// serve's log s against the live reads l1 and l2, or "" when it does not. A new
// instance's log begins again: collected early in its life, serve's is a prefix of a
// live read (empty when it had printed nothing yet); read after the collection, a live
// log may be a new instance's prefix of serve's. And once a later instance has ended,
// the kubelet removes the one before it: asked for that instance's log, it answers
// "unable to retrieve container logs for ID" (serve says the same when the collector
// met that answer).
func restartedLog(l1, l2, s []byte) string {
	if id, ok := removedInstance(s); ok {
		return fmt.Sprintf("restarted: the kubelet had removed instance %s when the collector asked for its log", id)
	}
	for _, l := range [][]byte{l1, l2} {
		if _, gone := removedInstance(l); gone {
			continue
		}
		switch {
		case bytes.HasPrefix(l, s):
			return fmt.Sprintf("restarted: serve's log is the first %d of a live read's %d bytes, a new instance's", len(s), len(l))
		case bytes.HasPrefix(s, l):
			return fmt.Sprintf("restarted: a live read of %d bytes is a new instance's beginning of serve's %d", len(l), len(s))
		}
	}
	return ""
}

// removedInstance recognizes the kubelet's answer, with status 200, for the log of a
// container instance it no longer has, and returns the instance's ID.
func removedInstance(b []byte) (string, bool) {
	id, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "unable to retrieve container logs for ")
	if !ok || id == "" || strings.ContainsAny(id, " \t\n") {
		return "", false
	}
	return id, true
}

// restartCounts are the restart counts of every container of a pod list ("pod/container").
func restartCounts(pods []corev1.Pod) map[string]int32 {
	out := map[string]int32{}
	for _, p := range pods {
		for _, list := range [][]corev1.ContainerStatus{p.Status.InitContainerStatuses, p.Status.ContainerStatuses} {
			for _, st := range list {
				out[p.Name+"/"+st.Name] = st.RestartCount
			}
		}
	}
	return out
}

// restartedDuring reports whether the container a log request names ("GET
// /api/v1/namespaces/NS/pods/POD/log?container=C...") started a new instance between
// first, the counts the first live read began with, and last, counts read after
// serve's answers: restart counts only grow, so a container whose count is the same in
// both ran one instance throughout. The last read is taken well after the live reads
// because the API server learns of a restart from the kubelet a moment after the
// kubelet's log endpoint does. A container first does not know about (a pod created
// in between) counts as restarted only when last says it restarted.
func restartedDuring(key string, first, last map[string]int32) bool {
	_, rest, ok := strings.Cut(key, "/pods/")
	if !ok {
		return false
	}
	pod, query, ok := strings.Cut(rest, "/log?")
	if !ok {
		return false
	}
	q, err := url.ParseQuery(query)
	if err != nil {
		return false
	}
	c := pod + "/" + q.Get("container")
	return last[c] > first[c]
}

func clip(b []byte) string {
	if len(b) > 60 {
		return string(b[:60]) + "…"
	}
	return string(b)
}

// redactedLines counts the redaction marks of a served log that differs from the live
// one only where collection redacted it: the served text with each mark standing for
// live text (a private key's block is several lines, its mark one) matches the
// whole live log. 0 when the logs differ otherwise.
func redactedLines(live, served []byte) int {
	marks := reRedactionMark.FindAllIndex(served, -1)
	if len(marks) == 0 {
		return 0
	}
	var pat strings.Builder
	pat.WriteString(`\A`)
	last := 0
	for _, m := range marks {
		pat.WriteString(regexp.QuoteMeta(string(served[last:m[0]])))
		// A key or certificate block is several lines under one mark; any other secret
		// stays within its line.
		if kind := string(served[m[0]:m[1]]); strings.Contains(kind, "private-key") || strings.Contains(kind, "certificate") {
			pat.WriteString(`(?s:.+?)`)
		} else {
			pat.WriteString(`[^\n]+?`)
		}
		last = m[1]
	}
	pat.WriteString(regexp.QuoteMeta(string(served[last:])))
	pat.WriteString(`\z`)
	re, err := regexp.Compile(pat.String())
	if err != nil || !re.Match(live) {
		return 0
	}
	return len(marks)
}

var reRedactionMark = regexp.MustCompile(`<redacted:[a-z0-9-]+:[0-9a-f]+>`)

// restartWindow holds the restart counts that bound the live reads and the collection:
// first, as the first live read began; last, read after serve's answers.
type restartWindow struct{ first, last map[string]int32 }

// rowRestarted says, for the rows of a table request, whether a container the row's
// object depends on started again in the window: for a pod ("namespace/name"), one of
// its own; for anything else (the workloads and services over the pods), any.
func (w restartWindow) rowRestarted(key string) func(row string) bool {
	pods := strings.HasSuffix(strings.TrimSuffix(key, " (table)"), "/pods")
	return func(row string) bool {
		_, pod, _ := strings.Cut(row, "/")
		for c, n := range w.last {
			if n > w.first[c] && (!pods || strings.HasPrefix(c, pod+"/")) {
				return true
			}
		}
		return false
	}
}
