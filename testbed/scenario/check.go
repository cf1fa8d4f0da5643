package scenario

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// What a check looks at, the value of its `file` key.
const (
	FileEvents         = "events"
	FilePodStatus      = "pod-status"
	FileLog            = "log"
	FileKubeletJournal = "kubelet-journal"
	FileRuntimeJournal = "runtime-journal"
	FileDmesg          = "dmesg"
	FileCRIContainer   = "cri-container"
	FileEndpoints      = "endpoints"
	FileObject         = "object"
)

// Check is one condition (in until) or one piece of required evidence. File says what it
// looks at; the other keys narrow and test it. Keys a file does not use are refused, so
// a typo cannot turn a check into one that always passes.
type Check struct {
	File string `json:"file"`

	// Pod selects pods by name; Selector by labels. Neither means any pod of the scenario.
	Pod      string `json:"pod,omitempty"`
	Selector string `json:"selector,omitempty"`
	// Container names the container for pod-status, log and cri-container.
	Container string `json:"container,omitempty"`

	// Reason and Message match an event (Message is a substring); for cri-container
	// Reason is the runtime's reason, e.g. OOMKilled.
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
	// Kind and Name match the event's involved object, or the object's bundle kind and name.
	Kind string `json:"kind,omitempty"`
	Name string `json:"name,omitempty"`
	// Type is the event type, Normal or Warning.
	Type string `json:"type,omitempty"`

	// Contains lists substrings that must all appear on one line (logs and journals).
	Contains Strings `json:"contains,omitempty"`
	// Previous selects the log of the container's previous instance.
	Previous bool `json:"previous,omitempty"`

	// Pod status: phase, current waiting reason ("A|B" accepts either), reason of the
	// last termination, its exit code, minimum restart count, the Ready condition, any
	// condition as "Type=Status", and how many pods must match (default 1).
	Phase          string `json:"phase,omitempty"`
	Waiting        string `json:"waiting,omitempty"`
	LastTerminated string `json:"lastTerminated,omitempty"`
	ExitCode       *int   `json:"exitCode,omitempty"`
	MinRestarts    int    `json:"minRestarts,omitempty"`
	Ready          *bool  `json:"ready,omitempty"`
	Condition      string `json:"condition,omitempty"`
	Count          int    `json:"count,omitempty"`
	// TerminatingFor: the pod was deleted (it has a deletionTimestamp) at least this
	// long before the snapshot was taken, live or at collection.
	TerminatingFor *Duration `json:"terminatingFor,omitempty"`

	// State is a CRI container state, e.g. CONTAINER_EXITED.
	State string `json:"state,omitempty"`

	// Service, ReadyEndpoints and NotReadyEndpoints test a Service's EndpointSlices.
	Service           string `json:"service,omitempty"`
	ReadyEndpoints    *int   `json:"readyEndpoints,omitempty"`
	NotReadyEndpoints *int   `json:"notReadyEndpoints,omitempty"`

	// Field is a dotted path into the object (list indexes are numbers) and Equals its
	// expected value as text; "<none>" means absent, null or empty.
	Field  string `json:"field,omitempty"`
	Equals string `json:"equals,omitempty"`

	// Values are canaries (no-leak): planted in the scenario, they must not appear in
	// the bundle, neither as written nor base64-encoded.
	Values Strings `json:"values,omitempty"`
}

// fieldsOf lists, per file, the keys a check may set besides file.
var fieldsOf = map[string][]string{
	FileEvents:         {"pod", "reason", "message", "kind", "name", "type"},
	FilePodStatus:      {"pod", "selector", "container", "phase", "waiting", "lastTerminated", "exitCode", "minRestarts", "ready", "condition", "count", "terminatingFor"},
	FileLog:            {"pod", "selector", "container", "previous", "contains"},
	FileKubeletJournal: {"contains"},
	FileRuntimeJournal: {"contains"},
	FileDmesg:          {"contains"},
	FileCRIContainer:   {"pod", "selector", "container", "state", "reason", "exitCode"},
	FileEndpoints:      {"service", "readyEndpoints", "notReadyEndpoints"},
	FileObject:         {"kind", "name", "selector", "field", "equals"},
	FileNoLeak:         {"values"},
}

// liveFiles are the checks until may use: what the API server can answer while waiting.
var liveFiles = []string{FileEvents, FilePodStatus, FileEndpoints, FileObject}

// LiveObjectKinds are the bundle kinds an object check in until may look at: the
// controllers whose status says a failure has happened when no event does (a
// Deployment's ProgressDeadlineExceeded is only a condition).
var LiveObjectKinds = []string{"deployments", "replicasets", "jobs"}

// set lists the keys that have a value.
func (c Check) set() []string {
	var out []string
	add := func(name string, ok bool) {
		if ok {
			out = append(out, name)
		}
	}
	add("pod", c.Pod != "")
	add("selector", c.Selector != "")
	add("container", c.Container != "")
	add("reason", c.Reason != "")
	add("message", c.Message != "")
	add("kind", c.Kind != "")
	add("name", c.Name != "")
	add("type", c.Type != "")
	add("contains", len(c.Contains) > 0)
	add("previous", c.Previous)
	add("phase", c.Phase != "")
	add("waiting", c.Waiting != "")
	add("lastTerminated", c.LastTerminated != "")
	add("exitCode", c.ExitCode != nil)
	add("minRestarts", c.MinRestarts != 0)
	add("ready", c.Ready != nil)
	add("condition", c.Condition != "")
	add("count", c.Count != 0)
	add("terminatingFor", c.TerminatingFor != nil)
	add("state", c.State != "")
	add("service", c.Service != "")
	add("readyEndpoints", c.ReadyEndpoints != nil)
	add("notReadyEndpoints", c.NotReadyEndpoints != nil)
	add("field", c.Field != "")
	add("equals", c.Equals != "")
	add("values", len(c.Values) > 0)
	return out
}

func (c Check) validate(live bool) error {
	allowed, ok := fieldsOf[c.File]
	if !ok {
		files := make([]string, 0, len(fieldsOf))
		for f := range fieldsOf {
			files = append(files, f)
		}
		sort.Strings(files)
		return fmt.Errorf("file %q: want one of %s", c.File, strings.Join(files, ", "))
	}
	if live && !contains(liveFiles, c.File) {
		return fmt.Errorf("file %q cannot be checked live: until may use %s", c.File, strings.Join(liveFiles, ", "))
	}
	if live && c.File == FileObject && !contains(LiveObjectKinds, c.Kind) {
		return fmt.Errorf("object kind %q cannot be checked live: until may look at %s", c.Kind, strings.Join(LiveObjectKinds, ", "))
	}
	set := c.set()
	for _, k := range set {
		if !contains(allowed, k) {
			return fmt.Errorf("file %q does not use %q (it uses %s)", c.File, k, strings.Join(allowed, ", "))
		}
	}
	if c.Selector != "" {
		if _, err := labels.Parse(c.Selector); err != nil {
			return fmt.Errorf("selector %q: %w", c.Selector, err)
		}
	}
	if c.Pod != "" && c.Selector != "" {
		return errors.New("pod and selector are exclusive")
	}
	if c.TerminatingFor != nil && c.TerminatingFor.Duration <= 0 {
		return fmt.Errorf("terminatingFor %s: want a positive duration", c.TerminatingFor)
	}
	if c.Condition != "" && !strings.Contains(c.Condition, "=") {
		return fmt.Errorf("condition %q: want Type=Status", c.Condition)
	}
	switch c.File {
	case FileEvents:
		if c.Reason == "" {
			return errors.New("events: reason is required")
		}
	case FilePodStatus:
		if len(set) == 1 && (c.Pod != "" || c.Selector != "") || len(set) == 0 {
			return errors.New("pod-status: nothing to test")
		}
	case FileLog, FileKubeletJournal, FileRuntimeJournal, FileDmesg:
		if len(c.Contains) == 0 {
			return fmt.Errorf("%s: contains is required", c.File)
		}
	case FileCRIContainer:
		if c.Container == "" {
			return errors.New("cri-container: container is required")
		}
	case FileEndpoints:
		if c.Service == "" || (c.ReadyEndpoints == nil && c.NotReadyEndpoints == nil) {
			return errors.New("endpoints: service and readyEndpoints or notReadyEndpoints are required")
		}
	case FileObject:
		if c.Kind == "" || c.Field == "" || c.Equals == "" || (c.Name == "" && c.Selector == "") {
			return errors.New("object: kind, name or selector, field and equals are required")
		}
	case FileNoLeak:
		return validateCanaries(c.Values)
	}
	return nil
}

// String describes the check for failure messages.
func (c Check) String() string {
	parts := []string{c.File + ":"}
	add := func(k, v string) {
		if v != "" {
			parts = append(parts, k+"="+fmt.Sprintf("%q", v))
		}
	}
	add("pod", c.Pod)
	add("selector", c.Selector)
	add("container", c.Container)
	add("kind", c.Kind)
	add("name", c.Name)
	add("reason", c.Reason)
	add("message", c.Message)
	add("service", c.Service)
	add("state", c.State)
	add("phase", c.Phase)
	add("waiting", c.Waiting)
	add("lastTerminated", c.LastTerminated)
	add("condition", c.Condition)
	add("field", c.Field)
	add("equals", c.Equals)
	if len(c.Contains) > 0 {
		add("contains", strings.Join(c.Contains, " + "))
	}
	if c.Previous {
		parts = append(parts, "previous")
	}
	if len(c.Values) > 0 {
		parts = append(parts, fmt.Sprintf("values=%d", len(c.Values)))
	}
	if c.ExitCode != nil {
		parts = append(parts, fmt.Sprintf("exitCode=%d", *c.ExitCode))
	}
	if c.MinRestarts > 0 {
		parts = append(parts, fmt.Sprintf("restarts>=%d", c.MinRestarts))
	}
	if c.Ready != nil {
		parts = append(parts, fmt.Sprintf("ready=%t", *c.Ready))
	}
	if c.Count > 1 {
		parts = append(parts, fmt.Sprintf("count>=%d", c.Count))
	}
	if c.TerminatingFor != nil {
		parts = append(parts, "terminatingFor>="+c.TerminatingFor.String())
	}
	if c.ReadyEndpoints != nil {
		parts = append(parts, fmt.Sprintf("readyEndpoints=%d", *c.ReadyEndpoints))
	}
	if c.NotReadyEndpoints != nil {
		parts = append(parts, fmt.Sprintf("notReadyEndpoints=%d", *c.NotReadyEndpoints))
	}
	return strings.Join(parts, " ")
}

// validateCanaries refuses canaries that could match by chance or hide one another.
func validateCanaries(values []string) error {
	if len(values) == 0 {
		return errors.New("no-leak: values is required")
	}
	for i, v := range values {
		if len(v) < minCanary {
			return fmt.Errorf("no-leak: value %q is shorter than %d characters and could match by chance", v, minCanary)
		}
		for j, w := range values {
			if i != j && strings.Contains(w, v) {
				return fmt.Errorf("no-leak: value %q is part of %q: a leak of one would report both", v, w)
			}
		}
	}
	return nil
}

// selectsPod reports whether pod p is one the check is about.
func (c Check) selectsPod(p *corev1.Pod) bool {
	if c.Pod != "" {
		return p.Name == c.Pod
	}
	if c.Selector != "" {
		sel, err := labels.Parse(c.Selector)
		return err == nil && sel.Matches(labels.Set(p.Labels))
	}
	return true
}
