package collect

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"podflow.dev/podflow/bundle"
)

// logTarget is one container whose logs are collected.
type logTarget struct {
	namespace, pod, container string
	// status is nil when the kubelet never reported the container.
	status *corev1.ContainerStatus
}

func (t logTarget) sourceName() string { return path.Join("logs", t.namespace, t.pod, t.container) }

// logTargets lists a pod's init, regular and ephemeral containers in spec order.
func logTargets(p *corev1.Pod) []logTarget {
	var out []logTarget
	add := func(name string, statuses []corev1.ContainerStatus) {
		t := logTarget{namespace: p.Namespace, pod: p.Name, container: name}
		for i := range statuses {
			if statuses[i].Name == name {
				t.status = &statuses[i]
			}
		}
		out = append(out, t)
	}
	for _, ct := range p.Spec.InitContainers {
		add(ct.Name, p.Status.InitContainerStatuses)
	}
	for _, ct := range p.Spec.Containers {
		add(ct.Name, p.Status.ContainerStatuses)
	}
	for _, ct := range p.Spec.EphemeralContainers {
		add(ct.Name, p.Status.EphemeralContainerStatuses)
	}
	return out
}

func (c *collector) logSteps(targets []logTarget) []func(context.Context) {
	steps := make([]func(context.Context), 0, len(targets))
	for _, t := range targets {
		slot := c.reserve(t.sourceName())
		steps = append(steps, func(ctx context.Context) {
			c.timed(ctx, slot, func(ctx context.Context) outcome { return c.collectLogs(ctx, t) })
		})
	}
	return steps
}

// notStarted says why a container has no log yet, or "" when it has run at some point.
func notStarted(st *corev1.ContainerStatus) string {
	if st == nil {
		return "the kubelet has not reported this container: it has never started"
	}
	if st.ContainerID != "" || st.State.Running != nil {
		return ""
	}
	if lt := st.LastTerminationState.Terminated; lt != nil && lt.ContainerID != "" {
		return ""
	}
	if w := st.State.Waiting; w != nil && w.Reason != "" {
		return fmt.Sprintf("container has never started (waiting: %s)", w.Reason)
	}
	return "container has never started"
}

// hasPrevious reports whether an earlier instance of the container may have left a log.
func hasPrevious(st *corev1.ContainerStatus) bool {
	return st.RestartCount > 0 || st.LastTerminationState.Terminated != nil
}

// errNoLog marks an answer that says there is no log to read, which is no evidence
// rather than a failure.
var errNoLog = errors.New("no log")

// collectLogs writes the current log and, when the container restarted, the previous
// one. A container that never started has no log and is skipped with the reason.
func (c *collector) collectLogs(ctx context.Context, t logTarget) outcome {
	if why := notStarted(t.status); why != "" {
		return outcome{status: bundle.StatusSkipped, err: errors.New(why)}
	}
	instances := []bool{false}
	if hasPrevious(t.status) {
		instances = append(instances, true)
	}
	var (
		files  []string
		failed []error
		noLog  []error
	)
	for _, previous := range instances {
		data, err := c.fetchLog(ctx, t, previous)
		if previous && errors.Is(err, errNoLog) && restartedLately(t.status, c.start) {
			data, err = c.fetchPreviousAgain(ctx, t, err)
		}
		switch {
		case errors.Is(err, errNoLog):
			c.log.WithField("source", t.sourceName()).WithField("previous", previous).Debug(err.Error())
			noLog = append(noLog, err)
			continue
		case err != nil:
			failed = append(failed, err)
			continue
		}
		p := bundle.LogPath(t.namespace, t.pod, t.container, previous)
		if err := c.w.HandOver(p, data); err != nil {
			failed = append(failed, err)
			continue
		}
		files = append(files, p)
	}
	switch {
	case len(failed) > 0 && len(files) > 0:
		return outcome{status: bundle.StatusPartial, err: errors.Join(failed...), files: files}
	case len(failed) > 0:
		return outcome{status: bundle.StatusFailed, err: errors.Join(failed...)}
	case len(files) == 0:
		return outcome{status: bundle.StatusSkipped, err: errors.Join(noLog...)}
	}
	return outcome{status: bundle.StatusOK, files: files}
}

// previousRetryWindow is how recently a container must have stopped for a missing
// previous log to be asked for again; wide, since the kubelet's clock may be off ours.
const previousRetryWindow = 2 * time.Minute

// restartedLately reports whether a container is stopped now or its last instance
// ended within previousRetryWindow of now: only then can the kubelet have been caught
// mid-restart. An older instance whose log is gone (a rebooted node, a collected
// container) stays gone, and asking again would only hold a slot for the wait.
func restartedLately(st *corev1.ContainerStatus, now time.Time) bool {
	if st == nil {
		return false
	}
	if st.State.Terminated != nil {
		return true
	}
	lt := st.LastTerminationState.Terminated
	return lt != nil && !lt.FinishedAt.IsZero() && now.Sub(lt.FinishedAt.Time) < previousRetryWindow
}

// previousLogTries is how many more times a missing previous log of a container that
// stopped lately is asked for: a busy kubelet can take several seconds to settle a
// restart, and each try waits PreviousLogRetry first.
const previousLogTries = 3

// fetchPreviousAgain asks again, after a short wait each time and at most
// previousLogTries times, for a previous instance's log the kubelet said it did not
// have (see DefaultPreviousLogRetry). The last answer stands when a wait is cut short.
func (c *collector) fetchPreviousAgain(ctx context.Context, t logTarget, first error) ([]byte, error) {
	err := first
	for range previousLogTries {
		timer := time.NewTimer(c.opts.PreviousLogRetry)
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil, err
		case <-timer.C:
		}
		var data []byte
		data, err = c.fetchLog(ctx, t, true)
		if !errors.Is(err, errNoLog) {
			return data, err
		}
	}
	return nil, err
}

func (c *collector) fetchLog(ctx context.Context, t logTarget, previous bool) ([]byte, error) {
	opts := &corev1.PodLogOptions{Container: t.container, Previous: previous, Timestamps: true}
	if c.opts.LogLines > 0 {
		lines := c.opts.LogLines
		opts.TailLines = &lines
	}
	if c.opts.Since > 0 {
		secs := int64(c.opts.Since.Seconds())
		if secs < 1 {
			secs = 1
		}
		opts.SinceSeconds = &secs
	}
	which := "current"
	if previous {
		which = "previous"
	}
	rc, err := c.client.Kube.CoreV1().Pods(t.namespace).GetLogs(t.pod, opts).Stream(ctx)
	if err != nil {
		// The kubelet answers 400 when the container has no log to give (not started,
		// previous instance already removed); the pod may also be gone since the list.
		if apierrors.IsBadRequest(err) || apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("%w for the %s instance: %w", errNoLog, which, err)
		}
		return nil, fmt.Errorf("get %s log of container %q in pod %s/%s: %w", which, t.container, t.namespace, t.pod, err)
	}
	defer rc.Close()
	data, err := readTail(rc, c.opts.LogBytes)
	if err != nil {
		return nil, fmt.Errorf("read %s log of container %q in pod %s/%s: %w", which, t.container, t.namespace, t.pod, err)
	}
	if msg, gone := kubeletLogGone(data); gone {
		return nil, fmt.Errorf("%w for the %s instance: the kubelet answered %q", errNoLog, which, msg)
	}
	return data, nil
}

// kubeletLogGone recognizes the body the kubelet streams, with status 200, when the
// container instance was already removed: its error text instead of a log
// (pkg/kubelet/kuberuntime/kuberuntime_container.go, GetContainerLogs). Saving that
// as the log would make it look like what the container printed.
func kubeletLogGone(data []byte) (string, bool) {
	const prefix = "unable to retrieve container logs for "
	msg := string(bytes.TrimSpace(data))
	id, ok := strings.CutPrefix(msg, prefix)
	if !ok || id == "" || strings.ContainsAny(id, " \t\n") {
		return "", false
	}
	return msg, true
}

// readChunks recycles read buffers across the many small logs of a collection.
var readChunks = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// readTail reads r to the end and keeps its last limit bytes, starting at a line
// boundary. The end of a log explains a crash, so the bound drops the oldest lines;
// asking the server for limitBytes would keep the oldest instead.
func readTail(r io.Reader, limit int64) ([]byte, error) {
	chunk := readChunks.Get().(*[]byte)
	defer readChunks.Put(chunk)
	var buf []byte
	truncated := false
	for {
		n, err := r.Read(*chunk)
		buf = append(buf, (*chunk)[:n]...)
		if limit > 0 && int64(len(buf)) > 2*limit {
			buf = append(buf[:0], buf[int64(len(buf))-limit:]...)
			truncated = true
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	if limit > 0 && int64(len(buf)) > limit {
		buf = buf[int64(len(buf))-limit:]
		truncated = true
	}
	if truncated {
		if i := bytes.IndexByte(buf, '\n'); i >= 0 && i+1 < len(buf) {
			buf = buf[i+1:]
		}
	}
	if buf == nil {
		buf = []byte{}
	}
	return buf, nil
}
