package serve

import (
	"bytes"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// logs answers GET .../namespaces/NS/pods/NAME/log from the container logs of the
// bundle. The bundle's logs were collected with timestamps: they are kept with
// ?timestamps=true and taken off otherwise, as kubelet would.
func (s *Server) logs(w http.ResponseWriter, r *http.Request, pods *resource, namespace, pod string) {
	q := r.URL.Query()
	container := q.Get("container")
	previous := q.Get("previous") == "true" || q.Get("previous") == "1"
	o := pods.byKey[namespace+"/"+pod]
	names := s.containers(o, namespace, pod)
	if o == nil && len(names) == 0 {
		writeStatus(w, apierrors.NewNotFound(schema.GroupResource{Resource: "pods"}, pod))
		return
	}
	if container == "" {
		if len(names) != 1 {
			writeStatus(w, apierrors.NewBadRequest(fmt.Sprintf("a container name must be specified for pod %s, choose one of: %v", pod, names)))
			return
		}
		container = names[0]
	}
	data, ok := s.ix.logs[logKey{namespace, pod, container, previous}]
	if !ok {
		if !slices.Contains(names, container) {
			writeStatus(w, apierrors.NewBadRequest(fmt.Sprintf("container %q is not valid for pod %q", container, pod)))
			return
		}
		if o != nil {
			p := typed[corev1.Pod](o)
			if p.Spec.NodeName == "" {
				// The API server has no kubelet to ask for a pod no node runs yet: it
				// answers 204 No Content.
				w.WriteHeader(http.StatusNoContent)
				return
			}
			if msg := kubeletLogRefusal(p, container, previous); msg != "" {
				writeStatus(w, apierrors.NewBadRequest(msg))
				return
			}
			if id := instanceID(p, container, previous); id != "" {
				// The collector asks for an instance's log whenever the status names
				// one; without it in the bundle, the kubelet had removed that container
				// (a terminating pod's, a crash loop's previous one), and says so with
				// 200 and this text instead of a log, as the test bed measured.
				w.Header().Set("Content-Type", "text/plain")
				_, _ = fmt.Fprintf(w, "unable to retrieve container logs for %s", id)
				return
			}
		}
		switch {
		case previous:
			writeStatus(w, apierrors.NewBadRequest(fmt.Sprintf("previous terminated container %q in pod %q not found in the bundle", container, pod)))
		default:
			writeStatus(w, apierrors.NewNotFound(schema.GroupResource{Resource: "pods/log"}, pod+"/"+container))
		}
		return
	}
	opts, err := parseLogOptions(q.Get, s.ix.now())
	if err != nil {
		writeStatus(w, err)
		return
	}
	w.Header().Set("Content-Type", "text/plain")
	_, _ = w.Write(opts.apply(data))
}

// kubeletLogRefusal is what the kubelet answers, from the pod's status, when asked for
// the log of a container that has none to give: one that never started, or a previous
// run that never was. "" when the status says there is a log.
func kubeletLogRefusal(p *corev1.Pod, container string, previous bool) string {
	var st *corev1.ContainerStatus
	for _, list := range [][]corev1.ContainerStatus{p.Status.ContainerStatuses, p.Status.InitContainerStatuses, p.Status.EphemeralContainerStatuses} {
		for i := range list {
			if list[i].Name == container && st == nil {
				st = &list[i]
			}
		}
	}
	if st == nil {
		return fmt.Sprintf("container %q in pod %q is not available", container, p.Name)
	}
	last := st.LastTerminationState.Terminated
	switch {
	case previous:
		if last == nil || last.ContainerID == "" {
			return fmt.Sprintf("previous terminated container %q in pod %q not found", container, p.Name)
		}
	case st.State.Running != nil:
	case st.State.Terminated != nil:
		if st.State.Terminated.ContainerID == "" && (last == nil || last.ContainerID == "") {
			return fmt.Sprintf("container %q in pod %q is terminated", container, p.Name)
		}
	case last != nil:
		if last.ContainerID == "" {
			return fmt.Sprintf("container %q in pod %q is terminated", container, p.Name)
		}
	case st.State.Waiting != nil:
		switch reason := st.State.Waiting.Reason; reason {
		case "ErrImagePull":
			return fmt.Sprintf("container %q in pod %q is waiting to start: image can't be pulled", container, p.Name)
		case "ImagePullBackOff":
			return fmt.Sprintf("container %q in pod %q is waiting to start: trying and failing to pull image", container, p.Name)
		default:
			return fmt.Sprintf("container %q in pod %q is waiting to start: %s", container, p.Name, reason)
		}
	default:
		return fmt.Sprintf("container %q in pod %q is waiting to start - no logs yet", container, p.Name)
	}
	return ""
}

// instanceID is the runtime's ID of the container's current instance, or of its
// previous one, as the kubelet picks it; "" when the status names none.
func instanceID(p *corev1.Pod, container string, previous bool) string {
	for _, list := range [][]corev1.ContainerStatus{p.Status.ContainerStatuses, p.Status.InitContainerStatuses, p.Status.EphemeralContainerStatuses} {
		for _, st := range list {
			switch {
			case st.Name != container:
			case previous && st.LastTerminationState.Terminated != nil:
				return st.LastTerminationState.Terminated.ContainerID
			case previous:
				return ""
			case st.State.Terminated != nil && st.State.Terminated.ContainerID != "":
				return st.State.Terminated.ContainerID
			default:
				return st.ContainerID
			}
		}
	}
	return ""
}

// containers are the container names a pod's log may be asked for: its spec's, or,
// for a pod the bundle holds logs of but not the object, those of its logs.
func (s *Server) containers(o *object, namespace, pod string) []string {
	var names []string
	if o != nil {
		spec, _ := o.item["spec"].(map[string]any)
		for _, field := range []string{"containers", "initContainers", "ephemeralContainers"} {
			list, _ := spec[field].([]any)
			for _, c := range list {
				if m, ok := c.(map[string]any); ok {
					if n, ok := m["name"].(string); ok && n != "" && !slices.Contains(names, n) {
						names = append(names, n)
					}
				}
			}
		}
		if len(names) > 0 {
			return names
		}
	}
	for k := range s.ix.logs {
		if k.namespace == namespace && k.pod == pod && !slices.Contains(names, k.container) {
			names = append(names, k.container)
		}
	}
	return names
}

// logOptions are the query parameters of a log request podflow honours; follow has
// nothing to wait for in a bundle and returns the whole log.
type logOptions struct {
	timestamps bool
	tail       int // -1: all
	limitBytes int // 0: no limit
	since      time.Time
}

func parseLogOptions(get func(string) string, now time.Time) (logOptions, error) {
	o := logOptions{tail: -1, timestamps: get("timestamps") == "true" || get("timestamps") == "1"}
	for _, p := range []struct {
		name string
		into *int
	}{{"tailLines", &o.tail}, {"limitBytes", &o.limitBytes}} {
		v := get(p.name)
		if v == "" {
			continue
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return o, apierrors.NewBadRequest(fmt.Sprintf("%s: want a count, got %q", p.name, v))
		}
		*p.into = n
	}
	if v := get("sinceSeconds"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 || n > 1<<40 {
			return o, apierrors.NewBadRequest(fmt.Sprintf("sinceSeconds: want a positive count, got %q", v))
		}
		o.since = now.Add(-time.Duration(n) * time.Second)
	}
	if v := get("sinceTime"); v != "" {
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			return o, apierrors.NewBadRequest(fmt.Sprintf("sinceTime: %v", err))
		}
		o.since = t
	}
	return o, nil
}

// apply selects and shapes the lines of a log: since, then the tail, then the byte
// limit, as the kubelet applies them. It reads the log in place: the tail is found
// by walking back from the end, and writing stops at the byte limit, so a request
// costs what it returns, never a copy or an index of every line of the log.
func (o logOptions) apply(data []byte) []byte {
	start := 0
	if o.tail >= 0 {
		start = o.tailStart(data)
	}
	var out bytes.Buffer
	for rest := data[start:]; len(rest) > 0; {
		line := rest
		if nl := bytes.IndexByte(rest, '\n'); nl >= 0 {
			line, rest = rest[:nl], rest[nl+1:]
		} else {
			rest = nil
		}
		line, keep := o.shape(line)
		if !keep {
			continue
		}
		if o.limitBytes > 0 && out.Len()+len(line)+1 >= o.limitBytes {
			out.Write(line[:min(len(line), o.limitBytes-out.Len())])
			if out.Len() < o.limitBytes {
				out.WriteByte('\n')
			}
			return out.Bytes()
		}
		out.Write(line)
		out.WriteByte('\n')
	}
	return out.Bytes()
}

// shape applies since and timestamps to one line: the line to write, or false when
// since leaves it out.
func (o logOptions) shape(line []byte) ([]byte, bool) {
	line = bytes.TrimSuffix(line, []byte{'\r'})
	if o.since.IsZero() && o.timestamps {
		return line, true
	}
	ts, rest, stamped := splitTimestamp(line)
	if !o.since.IsZero() && stamped && ts.Before(o.since) {
		return nil, false
	}
	if !o.timestamps && stamped {
		return rest, true
	}
	return line, true
}

// tailStart is the offset of the first of the last o.tail lines since keeps,
// found by walking back from the end of the log.
func (o logOptions) tailStart(data []byte) int {
	if len(data) == 0 {
		return 0
	}
	end := len(data)
	if data[end-1] == '\n' {
		end-- // the last line's newline ends it; it starts no line after it
	}
	kept := 0
	for {
		begin := bytes.LastIndexByte(data[:end], '\n') + 1
		if _, keep := o.shape(data[begin:end]); keep {
			if kept == o.tail {
				return min(end+1, len(data))
			}
			kept++
		}
		if begin == 0 {
			return 0
		}
		end = begin - 1
	}
}

// splitTimestamp splits the RFC 3339 timestamp kubelet puts before a log line.
func splitTimestamp(line []byte) (time.Time, []byte, bool) {
	sp := bytes.IndexByte(line, ' ')
	if sp < len("2006-01-02T15:04:05Z") || sp > len(time.RFC3339Nano)+6 {
		return time.Time{}, line, false
	}
	t, err := time.Parse(time.RFC3339Nano, string(line[:sp]))
	if err != nil || !strings.Contains(string(line[:sp]), "T") {
		return time.Time{}, line, false
	}
	return t, line[sp+1:], true
}
