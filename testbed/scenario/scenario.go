// Package scenario reads the test bed's scenarios (testdata/scenarios/<name>/): the
// manifests that reproduce one failure mode on a real cluster, and expect.yaml, which
// says when the failure has happened, what evidence a bundle of it must hold, and what
// podflow's analysis must conclude. The format is documented in
// testdata/scenarios/README.md.
package scenario

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// Files of a scenario directory.
const (
	ManifestsFile = "manifests.yaml"
	ExpectFile    = "expect.yaml"
	// SeccompDir holds the scenario's seccomp profiles (optional). The test bed installs
	// each as <scenario>/<file> under the kubelet's seccomp directory, which is what a
	// pod's seccompProfile {type: Localhost, localhostProfile: <scenario>/<file>} names.
	SeccompDir = "seccomp"
)

// DefaultTimeout bounds the wait for a scenario's until conditions.
const DefaultTimeout = 4 * time.Minute

// Scenario is one failure mode reproduced in its own namespace, named like the scenario.
type Scenario struct {
	Name      string
	Dir       string
	Manifests []byte
	Expect    Expect
	// Seccomp maps the file names of SeccompDir to their contents.
	Seccomp map[string][]byte
}

// Expect is expect.yaml.
type Expect struct {
	// Description says in one sentence what the scenario reproduces.
	Description string `json:"description"`
	// Timeout bounds the wait for Until; zero means DefaultTimeout.
	Timeout Duration `json:"timeout,omitempty"`
	// Delete, when set, deletes some of the scenario's objects once its conditions
	// hold; Until is then checked after the deletion.
	Delete *Delete `json:"delete,omitempty"`
	// Until lists the conditions, checked against the live API server, that say the
	// failure has happened and the scenario can be collected.
	Until []Check `json:"until"`
	// Evidence lists what the collected (cluster plus node) bundle must hold.
	Evidence []Check `json:"evidence"`
	// Diagnosis is what `podflow analyze` must conclude.
	Diagnosis Diagnosis `json:"diagnosis"`

	// Phase is empty for a scenario reproduced side by side with the others, or
	// PhaseNodeFaults for one that breaks the node: reproduced alone, after the others,
	// while the test bed applies Fault, which it reverts before the next one.
	Phase string `json:"phase,omitempty"`
	// Fault names the node fault of a node-faults scenario.
	Fault string `json:"fault,omitempty"`
	// Before lists live checks that must hold before the fault is applied. Without it the
	// fault is applied first and the manifests meet the broken node; with it the
	// manifests are applied first and the node breaks under running pods.
	Before []Check `json:"before,omitempty"`
}

// PhaseNodeFaults marks a scenario that needs a node fault.
const PhaseNodeFaults = "node-faults"

// Duration is a time.Duration written as "90s" or "3m" in YAML.
type Duration struct{ time.Duration }

// UnmarshalJSON reads a Go duration string.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("duration: want a string such as \"3m\": %w", err)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("duration %q: %w", s, err)
	}
	d.Duration = v
	return nil
}

// MarshalJSON writes the duration as a string.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(d.String()) }

// Diagnosis is the root-cause finding the analyzer must report, or None for a healthy
// scenario.
type Diagnosis struct {
	None    bool   `json:"-"`
	Rule    string `json:"rule"`
	Stage   string `json:"stage"`
	Subject string `json:"subject"`
	// Cause, when set, is text the finding's cause must contain: it pins which of a
	// rule's explanations the scenario reproduces (exit code 139 against 143).
	Cause string `json:"cause,omitempty"`
	// Also lists findings the root cause explains, which must be reported too.
	Also []Finding `json:"also,omitempty"`
}

// Finding is one expected finding: rule ID, stage and one subject as Kind/namespace/name.
type Finding struct {
	Rule    string `json:"rule"`
	Stage   string `json:"stage"`
	Subject string `json:"subject"`
	// Cause, when set, is text the finding's cause must contain.
	Cause string `json:"cause,omitempty"`
}

// Root is the root-cause finding itself.
func (d Diagnosis) Root() Finding {
	return Finding{Rule: d.Rule, Stage: d.Stage, Subject: d.Subject, Cause: d.Cause}
}

// UnmarshalJSON accepts the string "none" or {rule, stage, subject}.
func (d *Diagnosis) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		if s != "none" {
			return fmt.Errorf("diagnosis %q: want \"none\" or {rule, stage, subject}", s)
		}
		*d = Diagnosis{None: true}
		return nil
	}
	type plain Diagnosis
	var p plain
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return fmt.Errorf("diagnosis: %w", err)
	}
	*d = Diagnosis(p)
	return nil
}

// SubjectParts splits Subject, "Kind/namespace/name".
func (d Diagnosis) SubjectParts() (kind, namespace, name string) {
	return d.Root().SubjectParts()
}

// SubjectParts splits Subject, "Kind/namespace/name".
func (f Finding) SubjectParts() (kind, namespace, name string) {
	parts := strings.SplitN(f.Subject, "/", 3)
	if len(parts) != 3 {
		return "", "", ""
	}
	return parts[0], parts[1], parts[2]
}

// Strings is a list of strings that may be written as a single string.
type Strings []string

// UnmarshalJSON accepts "x" or ["x", "y"].
func (s *Strings) UnmarshalJSON(b []byte) error {
	var one string
	if json.Unmarshal(b, &one) == nil {
		*s = Strings{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return fmt.Errorf("want a string or a list of strings: %w", err)
	}
	*s = many
	return nil
}

var (
	nameRE  = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]*[a-z0-9])?$`)
	stages  = []string{"request", "admission", "controller", "scheduling", "node", "sandbox", "image", "volume", "config", "start", "runtime", "probe", "service", "termination"}
	kindsRE = regexp.MustCompile(`^[A-Z][A-Za-z]+$`)
)

// Load reads every scenario under dir, sorted by name.
func Load(dir string) ([]*Scenario, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("read scenarios %q: %w", dir, err)
	}
	var out []*Scenario
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		s, err := LoadOne(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	if len(out) == 0 {
		return nil, fmt.Errorf("read scenarios %q: no scenario directories", dir)
	}
	return out, nil
}

// LoadOne reads and validates one scenario directory.
func LoadOne(dir string) (*Scenario, error) {
	s := &Scenario{Name: filepath.Base(dir), Dir: dir}
	if !nameRE.MatchString(s.Name) || len(s.Name) > 63 {
		return nil, fmt.Errorf("scenario %q: the name must be a valid namespace name", dir)
	}
	var err error
	if s.Manifests, err = os.ReadFile(filepath.Join(dir, ManifestsFile)); err != nil {
		return nil, fmt.Errorf("scenario %s: %w", s.Name, err)
	}
	data, err := os.ReadFile(filepath.Join(dir, ExpectFile))
	if err != nil {
		return nil, fmt.Errorf("scenario %s: %w", s.Name, err)
	}
	if err := yaml.UnmarshalStrict(data, &s.Expect); err != nil {
		return nil, fmt.Errorf("scenario %s: parse %s: %w", s.Name, ExpectFile, err)
	}
	if err := s.validate(); err != nil {
		return nil, fmt.Errorf("scenario %s: %s: %w", s.Name, ExpectFile, err)
	}
	objs, err := s.Objects()
	if err != nil {
		return nil, err
	}
	if err := s.loadSeccomp(objs); err != nil {
		return nil, fmt.Errorf("scenario %s: %w", s.Name, err)
	}
	if _, err := s.DeleteObjects(); err != nil {
		return nil, err
	}
	return s, nil
}

// TimeoutOrDefault is how long to wait for Until.
func (s *Scenario) TimeoutOrDefault() time.Duration {
	if s.Expect.Timeout.Duration > 0 {
		return s.Expect.Timeout.Duration
	}
	return DefaultTimeout
}

func (s *Scenario) validate() error {
	e := &s.Expect
	var errs []error
	if strings.TrimSpace(e.Description) == "" {
		errs = append(errs, errors.New("description is empty"))
	}
	if len(e.Until) == 0 {
		errs = append(errs, errors.New("until is empty: nothing says when the failure has happened"))
	}
	if len(e.Evidence) == 0 {
		errs = append(errs, errors.New("evidence is empty"))
	}
	if e.Delete != nil {
		errs = append(errs, e.Delete.validate())
	}
	for i, c := range e.Until {
		if err := c.validate(true); err != nil {
			errs = append(errs, fmt.Errorf("until[%d]: %w", i, err))
		}
	}
	for i, c := range e.Evidence {
		if err := c.validate(false); err != nil {
			errs = append(errs, fmt.Errorf("evidence[%d]: %w", i, err))
		}
	}
	switch {
	case e.Phase != "" && e.Phase != PhaseNodeFaults:
		errs = append(errs, fmt.Errorf("phase %q: want %q or none", e.Phase, PhaseNodeFaults))
	case e.Phase == PhaseNodeFaults && !nameRE.MatchString(e.Fault):
		errs = append(errs, fmt.Errorf("phase %s needs a fault (kebab-case name), got %q", PhaseNodeFaults, e.Fault))
	case e.Phase == "" && (e.Fault != "" || len(e.Before) > 0):
		errs = append(errs, fmt.Errorf("fault and before need phase %s", PhaseNodeFaults))
	}
	for i, c := range e.Before {
		if err := c.validate(true); err != nil {
			errs = append(errs, fmt.Errorf("before[%d]: %w", i, err))
		}
	}
	d := e.Diagnosis
	if !d.None {
		errs = append(errs, s.validateFinding("diagnosis", d.Root()))
		for i, f := range d.Also {
			errs = append(errs, s.validateFinding(fmt.Sprintf("diagnosis.also[%d]", i), f))
		}
	}
	return errors.Join(errs...)
}

func (s *Scenario) validateFinding(where string, f Finding) error {
	var errs []error
	if !nameRE.MatchString(f.Rule) {
		errs = append(errs, fmt.Errorf("%s.rule %q: want a kebab-case rule ID", where, f.Rule))
	}
	if !contains(stages, f.Stage) {
		errs = append(errs, fmt.Errorf("%s.stage %q: want one of %s", where, f.Stage, strings.Join(stages, ", ")))
	}
	kind, ns, name := f.SubjectParts()
	if !kindsRE.MatchString(kind) || ns != s.Name || name == "" {
		errs = append(errs, fmt.Errorf("%s.subject %q: want Kind/%s/name", where, f.Subject, s.Name))
	}
	return errors.Join(errs...)
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// Objects decodes the manifests, in file order. Every namespaced object must live in the
// scenario's namespace, and the namespace itself must be declared, so scenarios running
// side by side on one cluster cannot touch each other.
func (s *Scenario) Objects() ([]*unstructured.Unstructured, error) {
	objs, err := DecodeManifests(s.Manifests)
	if err != nil {
		return nil, fmt.Errorf("scenario %s: %s: %w", s.Name, ManifestsFile, err)
	}
	declared := false
	for _, obj := range objs {
		switch {
		case obj.GetKind() == "Namespace" && obj.GetName() == s.Name:
			declared = true
		case obj.GetKind() == "Namespace":
			return nil, fmt.Errorf("scenario %s: %s declares Namespace %s; a scenario only uses its own namespace", s.Name, ManifestsFile, obj.GetName())
		case webhookKinds[obj.GetKind()]:
			if err := selectsOnly(obj, s.Name); err != nil {
				return nil, fmt.Errorf("scenario %s: %s: %w", s.Name, ManifestsFile, err)
			}
		case clusterScoped[obj.GetKind()]:
		case obj.GetNamespace() != s.Name:
			return nil, fmt.Errorf("scenario %s: %s %s is in namespace %q, want %q", s.Name, obj.GetKind(), obj.GetName(), obj.GetNamespace(), s.Name)
		}
	}
	if !declared {
		return nil, fmt.Errorf("scenario %s: %s does not declare Namespace %s", s.Name, ManifestsFile, s.Name)
	}
	return objs, nil
}

// DecodeManifests splits multi-document YAML into objects, skipping empty documents.
func DecodeManifests(data []byte) ([]*unstructured.Unstructured, error) {
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var out []*unstructured.Unstructured
	for i := 0; ; i++ {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("read document %d: %w", i, err)
		}
		if len(bytes.TrimSpace(stripComments(doc))) == 0 {
			continue
		}
		obj := &unstructured.Unstructured{}
		if err := yaml.UnmarshalStrict(doc, &obj.Object); err != nil {
			return nil, fmt.Errorf("parse document %d: %w", i, err)
		}
		if obj.GetAPIVersion() == "" || obj.GetKind() == "" || obj.GetName() == "" {
			return nil, fmt.Errorf("document %d: apiVersion, kind and metadata.name are required", i)
		}
		out = append(out, obj)
	}
}

// clusterScoped are the cluster-scoped kinds a scenario may create besides its namespace.
var clusterScoped = map[string]bool{
	"Node": true, "PersistentVolume": true, "StorageClass": true, "PriorityClass": true,
	"ClusterRole": true, "ClusterRoleBinding": true, "RuntimeClass": true, "CSIDriver": true,
}

func stripComments(doc []byte) []byte {
	var out [][]byte
	for _, line := range bytes.Split(doc, []byte("\n")) {
		if t := bytes.TrimSpace(line); len(t) > 0 && t[0] != '#' {
			out = append(out, line)
		}
	}
	return bytes.Join(out, []byte("\n"))
}

var seccompFileRE = regexp.MustCompile(`^[a-z0-9][a-z0-9.-]*\.json$`)

// loadSeccomp reads SeccompDir and checks that every Localhost profile the manifests
// name is one of them, named <scenario>/<file>, so a scenario cannot depend on a profile
// another scenario (or the machine) provides.
func (s *Scenario) loadSeccomp(objs []*unstructured.Unstructured) error {
	dir := filepath.Join(s.Dir, SeccompDir)
	entries, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	for _, e := range entries {
		if e.IsDir() || !seccompFileRE.MatchString(e.Name()) {
			return fmt.Errorf("%s/%s: want only profile files named like deny-mkdir.json", SeccompDir, e.Name())
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return err
		}
		var profile struct {
			DefaultAction string `json:"defaultAction"`
		}
		if err := json.Unmarshal(data, &profile); err != nil || profile.DefaultAction == "" {
			return fmt.Errorf("%s/%s: not a seccomp profile (want a JSON object with defaultAction)", SeccompDir, e.Name())
		}
		if s.Seccomp == nil {
			s.Seccomp = map[string][]byte{}
		}
		s.Seccomp[e.Name()] = data
	}
	for _, obj := range objs {
		for _, ref := range localhostProfiles(obj.Object) {
			file, ok := strings.CutPrefix(ref, s.Name+"/")
			if !ok || s.Seccomp[file] == nil {
				return fmt.Errorf("%s %s: localhostProfile %q: want %s/<file> with the file in %s/", obj.GetKind(), obj.GetName(), ref, s.Name, SeccompDir)
			}
		}
	}
	return nil
}

// localhostProfiles lists every localhostProfile value in an object.
func localhostProfiles(v any) []string {
	var out []string
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if s, ok := e.(string); ok && k == "localhostProfile" {
				out = append(out, s)
				continue
			}
			out = append(out, localhostProfiles(e)...)
		}
	case []any:
		for _, e := range x {
			out = append(out, localhostProfiles(e)...)
		}
	}
	return out
}
