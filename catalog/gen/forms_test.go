package main

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"podflow.dev/podflow/catalog"
)

// readSources writes files (path inside the module → source) into a module directory and
// returns the sites the generator reads from them, by template.
func readSources(t *testing.T, component string, files map[string]string) map[string]site {
	t.Helper()
	dir := writeTree(t, files)
	mod := module{Module: "example.com/m", Packages: []packageSel{{Dir: ".", Component: component}}}
	sites, _, err := readModule(mod, dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]site{}
	for _, s := range sites {
		out[s.template] = s
	}
	return out
}

func templates(m map[string]site) string {
	var ts []string
	for t := range m {
		ts = append(ts, t)
	}
	sort.Strings(ts)
	return strings.Join(ts, "\n")
}

// A call to a formatting helper with constant text prints the helper's format with the
// text filled in (CoreDNS's plugin.Error).
func TestHelperFilledWithCallConstants(t *testing.T) {
	got := readSources(t, "coredns", map[string]string{
		"plugin/plugin.go": `package plugin
import "fmt"
func Error(name string, err error) error { return fmt.Errorf("%s/%s: %s", "plugin", name, err) }
`,
		"plugin/forward/setup.go": `package forward
import "example.com/m/plugin"
func setup(err error) error {
	if err != nil {
		return plugin.Error("forward", err)
	}
	return plugin.Error(name(), err)
}
func name() string { return "x" }
`,
	})
	s, ok := got["plugin/forward: %s"]
	if !ok {
		t.Fatalf("no site for plugin.Error(\"forward\", err); templates:\n%s", templates(got))
	}
	if s.kind != "error" || s.function != "setup" || s.file != "plugin/forward/setup.go" {
		t.Errorf("site = %+v, want an error printed by setup in plugin/forward/setup.go", s)
	}
	if _, ok := got["plugin/%s: %s"]; ok {
		t.Errorf("a call without constant text must not make an entry of its own; templates:\n%s", templates(got))
	}
	// a stage is derived from the site as for any other
	if st := stageFor(s); st != "service" {
		t.Errorf("stage of %q = %q, want service", s.template, st)
	}
}

// fillVerbs fills the verbs that have a value, quotes %q values and keeps the others.
func TestFillVerbs(t *testing.T) {
	v := func(s string) *string { return &s }
	for _, c := range []struct {
		format string
		values []*string
		raw    bool
		want   string
	}{
		{"%s/%s: %w", []*string{v("plugin"), v("forward"), nil}, false, "plugin/forward: %w"},
		{"%s:%d: %s caused %q", []*string{nil, nil, v("exec user process")}, true, "%s:%d: exec user process caused %q"},
		{"open %q: %d%% full", []*string{v("a%b")}, false, `open "a%%b": %d%% full`},
		{"adding pid %d to %s", []*string{nil, v("cgroups %s")}, true, "adding pid %d to cgroups %s"},
	} {
		if got := fillVerbs(c.format, c.values, c.raw); got != c.want {
			t.Errorf("fillVerbs(%q) = %q, want %q", c.format, got, c.want)
		}
	}
}

// runc's rc-era errors print the cause they were built with through the error type's own
// format: "container_linux.go:349: starting container process caused: exec: …".
func TestCauseWrappedByErrorFormat(t *testing.T) {
	got := readSources(t, "runc", map[string]string{
		"libcontainer/generic_error.go": `package libcontainer
import "fmt"
type genericError struct{ Cause, Message, File string; Line int }
func newSystemErrorWithCause(err error, cause string) error { return &genericError{Cause: cause, Message: err.Error()} }
func newSystemErrorWithCausef(err error, cause string, v ...interface{}) error { return newSystemErrorWithCause(err, fmt.Sprintf(cause, v...)) }
func (e *genericError) Error() string {
	if e.Cause == "" {
		return e.Message
	}
	return fmt.Sprintf("%s:%d: %s caused: %s", e.File, e.Line, e.Cause, e.Message)
}
`,
		"libcontainer/container_linux.go": `package libcontainer
func start(err error, pid int) error {
	if pid == 0 {
		return newSystemErrorWithCause(err, "starting container process")
	}
	return newSystemErrorWithCausef(err, "adding pid %d to cgroups", pid)
}
`,
	})
	for _, want := range []string{"%s:%d: starting container process caused: %s", "%s:%d: adding pid %d to cgroups caused: %s"} {
		s, ok := got[want]
		if !ok {
			t.Errorf("no site %q; templates:\n%s", want, templates(got))
			continue
		}
		if s.kind != "error" || s.function != "start" {
			t.Errorf("site %q = %+v, want an error printed by start", want, s)
		}
	}
}

// A registry error descriptor prints its code in lower case, then its message.
func TestRegistryErrorDescriptor(t *testing.T) {
	got := readSources(t, "distribution", map[string]string{
		"registry/api/errcode/register.go": `package errcode
type ErrorDescriptor struct{ Value, Message, Description string; HTTPStatusCode int }
func Register(group string, d ErrorDescriptor) int { return 0 }
var ErrorCodeManifestUnknown = Register("registry.api.v2", ErrorDescriptor{
	Value:          "MANIFEST_UNKNOWN",
	Message:        "manifest unknown",
	Description:    "This error is returned when the manifest, identified by name and tag is unknown to the repository.",
	HTTPStatusCode: 404,
})
`,
	})
	s, ok := got["manifest unknown: manifest unknown"]
	if !ok {
		t.Fatalf("no site for the MANIFEST_UNKNOWN descriptor; templates:\n%s", templates(got))
	}
	if s.kind != "error" || s.reason != "MANIFEST_UNKNOWN" {
		t.Errorf("site = %+v, want an error with reason MANIFEST_UNKNOWN", s)
	}
	if st := stageFor(s); st != "image" {
		t.Errorf("stage = %q, want image", st)
	}
}

// A condition set through a helper gives its message, with the reason before it.
func TestConditionSetterMessage(t *testing.T) {
	got := readSources(t, "kube-controller-manager", map[string]string{
		"pkg/controller/podautoscaler/horizontal.go": `package podautoscaler
func setCondition(hpa interface{}, conditionType, status, reason, message string, args ...interface{}) {}
func reconcile(hpa interface{}, err error) {
	setCondition(hpa, "AbleToScale", "False", "FailedGetScale", "the HPA controller was unable to get the target's current scale: %v", err)
	setCondition(hpa, "ScalingActive", "False", "InvalidSelector", "the HPA target's scale is missing a selector")
}
`,
	})
	s, ok := got["the HPA controller was unable to get the target's current scale: %v"]
	if !ok {
		t.Fatalf("no site for the FailedGetScale condition; templates:\n%s", templates(got))
	}
	if s.kind != "message" || s.reason != "FailedGetScale" || s.plain {
		t.Errorf("site = %+v, want a formatted message with reason FailedGetScale", s)
	}
	if p, ok := got["the HPA target's scale is missing a selector"]; !ok || !p.plain {
		t.Errorf("a message without arguments is printed as is: %+v (found %v)", p, ok)
	}
	if r, ok := got["FailedGetScale"]; !ok || r.kind != "reason" {
		t.Errorf("the condition's reason is printed too: %+v (found %v)", r, ok)
	}
}

// Kubernetes 1.7's scheduler prints a predicate's name as the reason a node does not fit;
// such a reason is trouble.
func TestPredicateNameReason(t *testing.T) {
	got := readSources(t, "kube-scheduler", map[string]string{
		"plugin/pkg/scheduler/algorithm/predicates/error.go": `package predicates
type PredicateFailureError struct{ PredicateName string }
func newPredicateFailureError(predicateName string) *PredicateFailureError {
	return &PredicateFailureError{PredicateName: predicateName}
}
var ErrServiceAffinityViolated = newPredicateFailureError("CheckServiceAffinity")
`,
	})
	s, ok := got["CheckServiceAffinity"]
	if !ok {
		t.Fatalf("no reason site; templates:\n%s", templates(got))
	}
	m := newMerger()
	m.add("example.com/m", "v1.7.0", []site{s})
	es := m.entries()
	if len(es) != 1 || es[0].Kind != "reason" || es[0].Stage != "scheduling" || es[0].Class != "failure" {
		t.Fatalf("entries = %+v, want one scheduling failure reason", es)
	}
}

// The curated stages of messages that say more than where they are printed.
func TestTemplateStageOverrides(t *testing.T) {
	for _, c := range []struct{ component, template, want string }{
		{"client-go", "unable to retrieve the complete list of server APIs: %s", "termination"},
		{"coredns", "no nameservers found", "service"},
		{"distribution", "manifest unknown", "image"},
		{"kube-controller-manager", "%s Pod %s in StatefulSet %s failed error: %s", "admission"},
		{"docker", "invalid volume specification: '%s'", "start"},
		{"docker", "invalid mount config for type %q: %v", "start"},
	} {
		if got, ok := templateStage(c.component, c.template); !ok || got != c.want {
			t.Errorf("templateStage(%s, %q) = %q, %v; want %q", c.component, c.template, got, ok, c.want)
		}
	}
	// a registry's code that any server prints names no stage
	if got, ok := templateStage("distribution", "service unavailable"); ok {
		t.Errorf("templateStage(distribution, service unavailable) = %q, want no override", got)
	}
}

// A workload's failure condition gives its message as a failure's, by the constructor's
// name or by the failure reason before it; a progress message stays news.
func TestFailureConditionMessageIsAFailure(t *testing.T) {
	got := readSources(t, "kube-controller-manager", map[string]string{
		"pkg/controller/job/job_controller.go": `package job
import batch "k8s.io/api/batch/v1"
type Controller struct{}
func (jm *Controller) newFailureCondition(reason, message string) interface{} { return nil }
func newCondition(conditionType, status, reason, message string) interface{} { return nil }
func (jm *Controller) syncJob() {
	_ = jm.newFailureCondition(batch.JobReasonBackoffLimitExceeded, "Job has reached the specified backoff limit")
	_ = newCondition("Failed", "True", batch.JobReasonDeadlineExceeded, "Job was active longer than specified deadline")
	_ = newCondition("Progressing", "True", "NewReplicaSetAvailable", "ReplicaSet has successfully progressed")
}
`,
	})
	for _, tmpl := range []string{"Job has reached the specified backoff limit", "Job was active longer than specified deadline"} {
		s, ok := got[tmpl]
		if !ok {
			t.Fatalf("no site for %q; templates:\n%s", tmpl, templates(got))
		}
		if c := classFor(&catalog.Entry{Kind: s.kind, Level: s.level, Reason: s.reason, Template: s.template}); c != "failure" {
			t.Errorf("%q is classed %s, want failure (site %+v)", tmpl, c, s)
		}
	}
	s, ok := got["ReplicaSet has successfully progressed"]
	if !ok {
		t.Fatalf("no site for the progress message; templates:\n%s", templates(got))
	}
	if s.reason != "NewReplicaSetAvailable" {
		t.Errorf("progress message's reason = %q, want NewReplicaSetAvailable", s.reason)
	}
	if c := classFor(&catalog.Entry{Kind: s.kind, Level: s.level, Reason: s.reason, Template: s.template}); c != "info" {
		t.Errorf("a progress message is classed %s, want info", c)
	}
	// "TooManyReplicas" holds "oom" but is no OOM: an autoscaler at its maximum is news.
	if c := classFor(&catalog.Entry{Kind: "message", Reason: "TooManyReplicas", Template: "the desired replica count was more than the maximum replica count"}); c != "info" {
		t.Errorf("TooManyReplicas is classed %s, want info", c)
	}
}

// The eviction subresource's refusal, built by a helper of its file, is what a drain
// waits on: the termination stage, not the request's.
func TestEvictionRefusalIsTermination(t *testing.T) {
	s := site{component: "kube-apiserver", file: "pkg/registry/core/pod/storage/eviction.go", function: "createTooManyRequestsError",
		kind: "error", reason: "TooManyRequests", template: "Cannot evict pod as it would violate the pod's disruption budget."}
	if st := stageFor(s); st != "termination" {
		t.Errorf("stage = %q, want termination", st)
	}
}

// A lifecycle hook's failure is placed at the start stage, whatever function runs it.
func TestLifecycleHookFailureIsStart(t *testing.T) {
	s := site{component: "kubelet", file: "pkg/kubelet/lifecycle/handlers.go", function: "(*handlerRunner).Run", kind: "message",
		template: "Exec lifecycle hook (%v) for Container %q in Pod %q failed - error: %v, message: %q"}
	if st := stageFor(s); st != "start" {
		t.Errorf("stage = %q, want start", st)
	}
}

// An error type that builds its message writes a label and then the errors it holds:
// apimachinery's "strict decoding error: unknown field …". A builder's other writes
// (the separator, a word without a colon) are not messages.
func TestErrorMethodWritingALabel(t *testing.T) {
	got := readSources(t, "kube-apiserver", map[string]string{
		"pkg/runtime/error.go": `package runtime
import "strings"
type strictDecodingError struct{ errors []error }
func (e *strictDecodingError) Error() string {
	var s strings.Builder
	s.WriteString("strict decoding error: ")
	for i, err := range e.errors {
		if i != 0 {
			s.WriteString(", ")
		}
		s.WriteString(err.Error())
	}
	return s.String()
}
func describe(b *strings.Builder) { b.WriteString("not an error: ") }
`,
	})
	s, ok := got["strict decoding error: %v"]
	if !ok || s.kind != "error" || s.function != "(*strictDecodingError).Error" {
		t.Fatalf("site = %+v (found %v), want the error's label with its errors after it; templates:\n%s", s, ok, templates(got))
	}
	if len(got) != 1 {
		t.Errorf("only the error method's label is a message; templates:\n%s", templates(got))
	}
}

// net/http's server logs a connection's failure through its logf: the TLS handshake error
// a plain-HTTP probe of a TLS port causes.
func TestStandardLibraryServerLog(t *testing.T) {
	got := readSources(t, "go", map[string]string{
		"net/http/server.go": `package http
type Server struct{}
func (s *Server) logf(format string, args ...any) {}
type conn struct{ server *Server }
func (c *conn) serve(err error, addr string) {
	c.server.logf("http: TLS handshake error from %s: %v", addr, err)
}
`,
	})
	s, ok := got["http: TLS handshake error from %s: %v"]
	if !ok || s.kind != "log" || s.level != "error" {
		t.Fatalf("site = %+v (found %v), want the server's error log; templates:\n%s", s, ok, templates(got))
	}
}

// A directory skipped by its name (third_party) is read where the pins name a package in
// it: kube-proxy's forked IPVS library.
func TestPinnedPackageInSkippedDirectory(t *testing.T) {
	dir := writeTree(t, map[string]string{
		"third_party/forked/ipvs/netlink.go": "package ipvs\nimport \"github.com/sirupsen/logrus\"\nfunc setup() { logrus.Error(\"Could not get ipvs family information from the kernel.\") }\n",
		"third_party/other/x.go":             "package other\nimport \"fmt\"\nfunc f() error { return fmt.Errorf(\"not read: %d\", 1) }\n",
	})
	mod := module{Module: "k8s.io/kubernetes", Packages: []packageSel{{Dir: "third_party/forked/ipvs", Component: "kube-proxy"}, {Dir: ".", Component: "other"}}}
	sites, _, err := readModule(mod, dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range sites {
		got = append(got, s.component+": "+s.template)
	}
	if len(got) != 1 || got[0] != "kube-proxy: Could not get ipvs family information from the kernel." {
		t.Errorf("sites = %q, want only the pinned package's message", got)
	}
}

// A pin with files reads only those files of its directory: the few files of Docker's
// daemon package that stop and remove containers, not the rest of the daemon.
func TestPinnedFilesOnly(t *testing.T) {
	dir := writeTree(t, map[string]string{
		"daemon/kill.go":    "package daemon\nimport \"github.com/sirupsen/logrus\"\nfunc kill(id string) { logrus.Infof(\"Container %s failed to exit within 10 seconds of kill - trying direct SIGKILL\", id) }\n",
		"daemon/network.go": "package daemon\nimport \"fmt\"\nfunc nw() error { return fmt.Errorf(\"not read: network %d\", 1) }\n",
	})
	mod := module{Module: "github.com/docker/docker", Packages: []packageSel{{Dir: "daemon", Component: "docker", Exact: true, Files: []string{"kill.go"}}}}
	sites, _, err := readModule(mod, dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range sites {
		got = append(got, s.component+": "+s.template+" @"+s.file)
	}
	if len(got) != 1 || !strings.HasPrefix(got[0], "docker: Container %s failed to exit within 10 seconds of kill") {
		t.Errorf("sites = %q, want only kill.go's message", got)
	}
}

// writeTree writes files (slash paths to contents) under a new temporary directory
// and returns it: a module's tree for readModule.
func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for p, src := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}
