package analyze

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"podflow.dev/podflow/internal/phrase"
)

// How a container's process ended: what an exit code means, which termination to explain,
// the evidence that cites it, and the notes a cause adds from the termination message and log.

// CrashTermination picks the termination to explain: the current one when the
// container is down, else the last one; with the matching log instance.
func (v *View) CrashTermination(p *Pod, c ContainerInfo) (*corev1.ContainerStateTerminated, Location, *ContainerLog) {
	st := c.Status
	r := runOf(v, p, c.Name)
	var logs []*ContainerLog
	t, loc := st.LastTerminationState.Terminated, c.StatusLoc().At("lastState", "terminated")
	switch {
	case st.State.Terminated != nil:
		t, loc = st.State.Terminated, c.StatusLoc().At("state", "terminated")
		logs = []*ContainerLog{r.Log, r.PreviousLog}
	case st.State.Waiting != nil:
		// While waiting to restart, the "current" log is the crashed instance's too.
		logs = []*ContainerLog{r.PreviousLog, r.Log}
	default:
		logs = []*ContainerLog{r.PreviousLog}
	}
	for _, l := range logs {
		if UsableLog(l) {
			return t, loc, l
		}
	}
	return t, loc, nil
}

// ExitNotes reads what a terminated instance left behind, as clauses to add to a cause:
// its termination message and its log's telling lines, or, when the bundle collected
// logs but not this one, that instance's (e.g. "the crashed instance") log is missing.
// It returns the log it read too.
func (v *View) ExitNotes(t *corev1.ContainerStateTerminated, log *ContainerLog, instance string) (string, CrashLog) {
	var note string
	if t.Message != "" {
		note += fmt.Sprintf("; termination message: %q", phrase.FirstLine(t.Message))
	}
	cl := ReadCrashLog(log, t.FinishedAt.Time)
	switch {
	case cl.Phrase() != "":
		note += "; " + cl.Phrase()
	case log == nil && v.Has(ContainerLogs):
		note += "; " + instance + "'s log is not in the bundle"
	case log == nil:
		// A paste of describe and events: the exit code is all there is.
		note += "; the evidence holds no container log, which would say why it exits (kubectl logs --previous)"
	}
	return note, cl
}
