package scenario

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/labels"

	"podflow.dev/podflow/bundle"
)

// Snapshot is what checks are evaluated against: a scenario namespace as seen live
// (pods, events, EndpointSlices) or in a bundle (also logs, node files, any list).
type Snapshot struct {
	Namespace      string
	Pods           []corev1.Pod
	Events         []corev1.Event
	EndpointSlices []discoveryv1.EndpointSlice
	// Objects holds, in a live snapshot, the lists of LiveObjectKinds by bundle kind, each
	// object as its JSON fields.
	Objects map[string][]map[string]any
	// Bundle is nil for a live snapshot.
	Bundle *bundle.Bundle
	// Now is when the snapshot was taken: the clock for a live one, the collection
	// time for a bundle.
	Now time.Time
}

// FromBundle decodes the namespace's pods, events and EndpointSlices from b.
func FromBundle(b *bundle.Bundle, namespace string) (*Snapshot, error) {
	s := &Snapshot{Namespace: namespace, Bundle: b}
	if b.Manifest != nil {
		s.Now = b.Manifest.CollectedAt
	}
	var pods corev1.PodList
	var events corev1.EventList
	var slices discoveryv1.EndpointSliceList
	for kind, into := range map[string]any{bundle.KindPods: &pods, bundle.KindEvents: &events, bundle.KindEndpointSlices: &slices} {
		p := bundle.NamespacedResourcePath(kind, namespace)
		data, err := b.ReadFile(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue // no evidence of this kind; checks that need it say so
		}
		if err != nil {
			return nil, err
		}
		if err := json.Unmarshal(data, into); err != nil {
			return nil, fmt.Errorf("decode %s: %w", p, err)
		}
	}
	s.Pods, s.Events, s.EndpointSlices = pods.Items, events.Items, slices.Items
	return s, nil
}

// Eval tests one check; nil means it holds. The error says what was looked at.
func (s *Snapshot) Eval(c Check) error {
	switch c.File {
	case FileEvents:
		return s.evalEvents(c)
	case FilePodStatus:
		return s.evalPodStatus(c)
	case FileEndpoints:
		return s.evalEndpoints(c)
	case FileObject:
		if s.Bundle == nil {
			return s.evalItems(c, "live "+c.Kind, s.Objects[c.Kind])
		}
	}
	if s.Bundle == nil {
		return fmt.Errorf("%s: needs a bundle", c)
	}
	switch c.File {
	case FileLog:
		return s.evalLog(c)
	case FileKubeletJournal:
		return s.evalNodeLines(c, bundle.NodeKubeletLog)
	case FileRuntimeJournal:
		return s.evalNodeLines(c, bundle.NodeRuntimeLog)
	case FileDmesg:
		return s.evalNodeLines(c, bundle.NodeDmesg)
	case FileCRIContainer:
		return s.evalCRI(c)
	case FileObject:
		return s.evalObject(c)
	case FileNoLeak:
		return s.evalNoLeak(c)
	}
	return fmt.Errorf("%s: unknown file", c)
}

// EvalAll tests every check and joins the failures.
func (s *Snapshot) EvalAll(checks []Check) error {
	var errs []error
	for _, c := range checks {
		if err := s.Eval(c); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (s *Snapshot) evalEvents(c Check) error {
	var seen []string
	for _, e := range s.Events {
		if c.Pod != "" && (e.InvolvedObject.Kind != "Pod" || e.InvolvedObject.Name != c.Pod) {
			continue
		}
		if (c.Kind != "" && e.InvolvedObject.Kind != c.Kind) || (c.Name != "" && e.InvolvedObject.Name != c.Name) ||
			(c.Type != "" && e.Type != c.Type) {
			continue
		}
		if e.Reason == c.Reason && strings.Contains(e.Message, c.Message) {
			return nil
		}
		seen = append(seen, fmt.Sprintf("%s %s/%s: %s", e.Reason, e.InvolvedObject.Kind, e.InvolvedObject.Name, e.Message))
	}
	return fmt.Errorf("%s: no such event among %d%s", c, len(s.Events), listing(seen))
}

func (s *Snapshot) evalPodStatus(c Check) error {
	want := c.Count
	if want == 0 {
		want = 1
	}
	var seen []string
	matched := 0
	for i := range s.Pods {
		p := &s.Pods[i]
		if !c.selectsPod(p) {
			continue
		}
		if why := podMismatch(c, p, s.Now); why != "" {
			seen = append(seen, p.Name+": "+why)
			continue
		}
		matched++
	}
	if matched >= want {
		return nil
	}
	return fmt.Errorf("%s: %d of %d pods match, want %d%s", c, matched, len(s.Pods), want, listing(seen))
}

// podMismatch says how p fails the check, or "" when it passes.
func podMismatch(c Check, p *corev1.Pod, now time.Time) string {
	if c.Phase != "" && string(p.Status.Phase) != c.Phase {
		return "phase " + string(p.Status.Phase)
	}
	if c.TerminatingFor != nil {
		switch {
		case p.DeletionTimestamp == nil:
			return "not deleted"
		case now.IsZero():
			return "no time to measure the deletion against"
		case now.Sub(p.DeletionTimestamp.Time) < c.TerminatingFor.Duration:
			return fmt.Sprintf("deleted %s before", now.Sub(p.DeletionTimestamp.Time).Round(time.Second))
		}
	}
	if c.Condition != "" {
		typ, status, _ := strings.Cut(c.Condition, "=")
		got := "absent"
		for _, cond := range p.Status.Conditions {
			if string(cond.Type) == typ {
				got = string(cond.Status)
			}
		}
		if got != status {
			return fmt.Sprintf("condition %s is %s", typ, got)
		}
	}
	if c.Ready != nil {
		ready := false
		for _, cond := range p.Status.Conditions {
			if cond.Type == corev1.PodReady && cond.Status == corev1.ConditionTrue {
				ready = true
			}
		}
		if ready != *c.Ready {
			return fmt.Sprintf("ready is %t", ready)
		}
	}
	if c.Container == "" && c.Waiting == "" && c.LastTerminated == "" && c.ExitCode == nil && c.MinRestarts == 0 {
		return ""
	}
	var why []string
	statuses := append(append([]corev1.ContainerStatus{}, p.Status.InitContainerStatuses...), p.Status.ContainerStatuses...)
	for _, st := range statuses {
		if c.Container != "" && st.Name != c.Container {
			continue
		}
		w := containerMismatch(c, st)
		if w == "" {
			return ""
		}
		why = append(why, st.Name+" "+w)
	}
	if len(why) == 0 {
		return "no status for container " + orAny(c.Container)
	}
	return strings.Join(why, "; ")
}

func containerMismatch(c Check, st corev1.ContainerStatus) string {
	if c.Waiting != "" {
		got := ""
		if st.State.Waiting != nil {
			got = st.State.Waiting.Reason
		}
		if !contains(strings.Split(c.Waiting, "|"), got) {
			return "waiting " + orNone(got)
		}
	}
	term := st.LastTerminationState.Terminated
	if term == nil {
		term = st.State.Terminated
	}
	if c.LastTerminated != "" && (term == nil || term.Reason != c.LastTerminated) {
		if term == nil {
			return "never terminated"
		}
		return "terminated " + orNone(term.Reason)
	}
	if c.ExitCode != nil && (term == nil || int(term.ExitCode) != *c.ExitCode) {
		if term == nil {
			return "no exit code"
		}
		return fmt.Sprintf("exit code %d", term.ExitCode)
	}
	if int(st.RestartCount) < c.MinRestarts {
		return fmt.Sprintf("%d restarts", st.RestartCount)
	}
	return ""
}

func (s *Snapshot) evalEndpoints(c Check) error {
	ready, notReady, slices := 0, 0, 0
	for _, es := range s.EndpointSlices {
		if es.Labels[discoveryv1.LabelServiceName] != c.Service {
			continue
		}
		slices++
		for _, ep := range es.Endpoints {
			if ep.Conditions.Ready != nil && *ep.Conditions.Ready {
				ready++
			} else {
				notReady++
			}
		}
	}
	switch {
	case slices == 0:
		return fmt.Errorf("%s: no EndpointSlice for the service", c)
	case c.ReadyEndpoints != nil && ready != *c.ReadyEndpoints,
		c.NotReadyEndpoints != nil && notReady != *c.NotReadyEndpoints:
		return fmt.Errorf("%s: %d ready and %d not ready endpoints in %d slices", c, ready, notReady, slices)
	}
	return nil
}

func (s *Snapshot) evalLog(c Check) error {
	var looked []string
	for i := range s.Pods {
		p := &s.Pods[i]
		if !c.selectsPod(p) {
			continue
		}
		for _, ct := range append(append([]corev1.Container{}, p.Spec.InitContainers...), p.Spec.Containers...) {
			if c.Container != "" && ct.Name != c.Container {
				continue
			}
			path := bundle.LogPath(p.Namespace, p.Name, ct.Name, c.Previous)
			data, err := s.Bundle.ReadFile(path)
			if err != nil {
				looked = append(looked, path+" (absent)")
				continue
			}
			if lineWith(data, c.Contains) != "" {
				return nil
			}
			looked = append(looked, path)
		}
	}
	return fmt.Errorf("%s: no matching line%s", c, listing(looked))
}

// nodeFiles returns the given file of every node in the bundle.
func (s *Snapshot) nodeFiles(file string) []string {
	var out []string
	for _, n := range s.Bundle.Names() {
		if info := bundle.ParsePath(n); info.Area == "node" && info.NodeFile == file {
			out = append(out, n)
		}
	}
	return out
}

func (s *Snapshot) evalNodeLines(c Check, file string) error {
	paths := s.nodeFiles(file)
	for _, p := range paths {
		data, err := s.Bundle.ReadFile(p)
		if err == nil && lineWith(data, c.Contains) != "" {
			return nil
		}
	}
	if len(paths) == 0 {
		return fmt.Errorf("%s: the bundle has no nodes/*/%s", c, file)
	}
	return fmt.Errorf("%s: no matching line in %s", c, strings.Join(paths, ", "))
}

// criContainer is the part of `crictl ps -o json` and `crictl inspect -o json` checks read.
type criContainer struct {
	ID       string            `json:"id"`
	State    string            `json:"state"`
	Labels   map[string]string `json:"labels"`
	Metadata struct {
		Name string `json:"name"`
	} `json:"metadata"`
}

type criInspect struct {
	Status struct {
		State    string          `json:"state"`
		ExitCode json.RawMessage `json:"exitCode"`
		Reason   string          `json:"reason"`
	} `json:"status"`
}

func (s *Snapshot) evalCRI(c Check) error {
	var seen []string
	for _, p := range s.nodeFiles(bundle.NodeCRIContainers) {
		node := bundle.ParsePath(p).Node
		data, err := s.Bundle.ReadFile(p)
		if err != nil {
			return err
		}
		var ps struct {
			Containers []criContainer `json:"containers"`
		}
		if err := json.Unmarshal(data, &ps); err != nil {
			return fmt.Errorf("decode %s: %w", p, err)
		}
		for _, ct := range ps.Containers {
			if ct.Labels["io.kubernetes.pod.namespace"] != s.Namespace || ct.Metadata.Name != c.Container {
				continue
			}
			pod := ct.Labels["io.kubernetes.pod.name"]
			if c.Pod != "" && pod != c.Pod {
				continue
			}
			if c.Selector != "" && !s.podLabelsMatch(pod, c.Selector) {
				continue
			}
			why := s.criMismatch(c, node, ct)
			if why == "" {
				return nil
			}
			seen = append(seen, shortID(ct.ID)+": "+why)
		}
	}
	return fmt.Errorf("%s: no such CRI container%s", c, listing(seen))
}

func (s *Snapshot) criMismatch(c Check, node string, ct criContainer) string {
	if c.State != "" && ct.State != c.State {
		return "state " + ct.State
	}
	if c.Reason == "" && c.ExitCode == nil {
		return ""
	}
	p := bundle.NodeCRIInspectPath(node, ct.ID)
	data, err := s.Bundle.ReadFile(p)
	if err != nil {
		return "no " + p
	}
	var in criInspect
	if err := json.Unmarshal(data, &in); err != nil {
		return fmt.Sprintf("decode %s: %v", p, err)
	}
	if c.Reason != "" && in.Status.Reason != c.Reason {
		return "reason " + orNone(in.Status.Reason)
	}
	if c.ExitCode != nil {
		code, err := strconv.Atoi(strings.Trim(string(in.Status.ExitCode), `"`))
		if err != nil || code != *c.ExitCode {
			return "exit code " + orNone(string(in.Status.ExitCode))
		}
	}
	return ""
}

func (s *Snapshot) podLabelsMatch(name, selector string) bool {
	sel, err := labels.Parse(selector)
	if err != nil {
		return false
	}
	for i := range s.Pods {
		if s.Pods[i].Name == name {
			return sel.Matches(labels.Set(s.Pods[i].Labels))
		}
	}
	return false
}

func (s *Snapshot) evalObject(c Check) error {
	p := bundle.NamespacedResourcePath(c.Kind, s.Namespace)
	if contains(bundle.ClusterScopedKinds, c.Kind) {
		p = bundle.ClusterResourcePath(c.Kind)
	}
	data, err := s.Bundle.ReadFile(p)
	if err != nil {
		return fmt.Errorf("%s: %w", c, err)
	}
	var list struct {
		Items []map[string]any `json:"items"`
	}
	if err := json.Unmarshal(data, &list); err != nil {
		return fmt.Errorf("decode %s: %w", p, err)
	}
	return s.evalItems(c, p, list.Items)
}

// evalItems tests an object check against a list's items; where names the list.
func (s *Snapshot) evalItems(c Check, where string, items []map[string]any) error {
	var sel labels.Selector
	if c.Selector != "" {
		var err error
		if sel, err = labels.Parse(c.Selector); err != nil {
			return fmt.Errorf("%s: %w", c, err)
		}
	}
	var seen []string
	for _, item := range items {
		meta, _ := item["metadata"].(map[string]any)
		name, _ := meta["name"].(string)
		if c.Name != "" && name != c.Name {
			continue
		}
		if sel != nil && !sel.Matches(labels.Set(stringMap(meta["labels"]))) {
			continue
		}
		got := fieldText(item, c.Field)
		if got == c.Equals {
			return nil
		}
		seen = append(seen, fmt.Sprintf("%s: %s", name, got))
	}
	return fmt.Errorf("%s: no object in %s has it%s", c, where, listing(seen))
}

// fieldText renders the value at a dotted path as text; "<none>" for absent, null or empty.
// A key that holds dots escapes them: metadata.labels.app\.kubernetes\.io/name.
func fieldText(v any, path string) string {
	for _, part := range splitPath(path) {
		switch t := v.(type) {
		case map[string]any:
			v = t[part]
		case []any:
			i, err := strconv.Atoi(part)
			if err != nil || i < 0 || i >= len(t) {
				return "<none>"
			}
			v = t[i]
		default:
			return "<none>"
		}
	}
	switch t := v.(type) {
	case nil:
		return "<none>"
	case string:
		if t == "" {
			return "<none>"
		}
		return t
	case []any:
		if len(t) == 0 {
			return "<none>"
		}
	case map[string]any:
		if len(t) == 0 {
			return "<none>"
		}
	}
	data, _ := json.Marshal(v) // a value decoded from JSON always encodes
	return string(data)
}

func splitPath(path string) []string {
	var parts []string
	var cur strings.Builder
	for i := 0; i < len(path); i++ {
		switch {
		case path[i] == '\\' && i+1 < len(path) && path[i+1] == '.':
			cur.WriteByte('.')
			i++
		case path[i] == '.':
			parts = append(parts, cur.String())
			cur.Reset()
		default:
			cur.WriteByte(path[i])
		}
	}
	return append(parts, cur.String())
}

func stringMap(v any) map[string]string {
	m, _ := v.(map[string]any)
	out := make(map[string]string, len(m))
	for k, val := range m {
		if s, ok := val.(string); ok {
			out[k] = s
		}
	}
	return out
}

// lineWith returns the first line holding every substring, or "".
func lineWith(data []byte, subs []string) string {
	for _, line := range bytes.Split(data, []byte("\n")) {
		ok := true
		for _, s := range subs {
			if !bytes.Contains(line, []byte(s)) {
				ok = false
				break
			}
		}
		if ok {
			return string(line)
		}
	}
	return ""
}

// listing renders what was seen for a failure message, capped so it stays readable.
func listing(seen []string) string {
	if len(seen) == 0 {
		return ""
	}
	sort.Strings(seen)
	const max = 8
	more := ""
	if len(seen) > max {
		more = fmt.Sprintf("\n    ... and %d more", len(seen)-max)
		seen = seen[:max]
	}
	return "; seen:\n    " + strings.Join(seen, "\n    ") + more
}

func shortID(id string) string {
	if len(id) > 13 {
		return id[:13]
	}
	return id
}

func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}

func orAny(s string) string {
	if s == "" {
		return "<any>"
	}
	return s
}
