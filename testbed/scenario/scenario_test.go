package scenario

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"podflow.dev/podflow/bundle"
)

const scenariosDir = "../../testdata/scenarios"

// required are the failure modes the test bed must reproduce.
var required = []string{
	"healthy-web", "insufficient-cpu", "node-selector-mismatch", "untolerated-taint",
	"quota-exceeded", "pod-security-restricted", "image-pull-dns", "configmap-volume-missing",
	"secret-key-missing", "crash-exit-1", "oom-killed", "command-not-found",
	"readiness-failing", "service-selector-mismatch", "liveness-restarts", "pvc-unbound",
	"job-backoff-limit", "progress-deadline", "runtimeclass-missing",
}

func TestEveryScenarioLoads(t *testing.T) {
	all, err := Load(scenariosDir)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*Scenario{}
	for _, s := range all {
		byName[s.Name] = s
	}
	for _, name := range required {
		if byName[name] == nil {
			t.Errorf("scenario %s is missing", name)
		}
	}
}

func writeScenario(t *testing.T, name, manifests, expect string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ManifestsFile), []byte(manifests), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ExpectFile), []byte(expect), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

const okManifests = `# comment only document
---
apiVersion: v1
kind: Namespace
metadata: {name: demo}
---
apiVersion: v1
kind: Pod
metadata: {name: app, namespace: demo}
spec: {containers: [{name: app, image: x}]}
`

const okExpect = `description: d
until:
- {file: events, reason: Failed}
evidence:
- {file: log, container: app, contains: x}
diagnosis: {rule: demo-rule, stage: runtime, subject: Pod/demo/app}
`

func TestLoadOneAcceptsAValidScenario(t *testing.T) {
	s, err := LoadOne(writeScenario(t, "demo", okManifests, okExpect))
	if err != nil {
		t.Fatal(err)
	}
	objs, err := s.Objects()
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 2 || objs[0].GetKind() != "Namespace" || objs[1].GetName() != "app" {
		t.Errorf("objects: %v", objs)
	}
	if s.TimeoutOrDefault() != DefaultTimeout {
		t.Errorf("timeout %v, want the default", s.TimeoutOrDefault())
	}
	if kind, ns, name := s.Expect.Diagnosis.SubjectParts(); kind != "Pod" || ns != "demo" || name != "app" {
		t.Errorf("subject parts %q %q %q", kind, ns, name)
	}
	withAlso := strings.Replace(okExpect, "subject: Pod/demo/app}", "subject: Pod/demo/app, also: [{rule: service-x, stage: service, subject: Service/demo/web}]}", 1)
	s, err = LoadOne(writeScenario(t, "demo", okManifests, withAlso))
	if err != nil {
		t.Fatal(err)
	}
	if also := s.Expect.Diagnosis.Also; len(also) != 1 || also[0].Rule != "service-x" || also[0].Subject != "Service/demo/web" {
		t.Errorf("also: %+v", also)
	}
	faulted := okExpect + "phase: node-faults\nfault: kubelet-stopped\nbefore:\n- {file: pod-status, pod: app, phase: Running}\n"
	s, err = LoadOne(writeScenario(t, "demo", okManifests, faulted))
	if err != nil {
		t.Fatal(err)
	}
	if e := s.Expect; e.Phase != PhaseNodeFaults || e.Fault != "kubelet-stopped" || len(e.Before) != 1 {
		t.Errorf("node fault: phase %q fault %q before %v", e.Phase, e.Fault, e.Before)
	}
}

func TestLoadOneRejectsMistakes(t *testing.T) {
	cases := map[string]struct{ manifests, expect, want string }{
		"unknown key":               {okManifests, strings.Replace(okExpect, "contains: x", "contains: x, contain: y", 1), `unknown field "contain"`},
		"key the file does not use": {okManifests, strings.Replace(okExpect, "contains: x", "contains: x, reason: OOMKilled", 1), `does not use "reason"`},
		"unknown file":              {okManifests, strings.Replace(okExpect, "file: log", "file: logs", 1), `file "logs"`},
		"bundle-only until":         {okManifests, strings.Replace(okExpect, "file: events, reason: Failed", "file: log, contains: x", 1), "cannot be checked live"},
		"bad stage":                 {okManifests, strings.Replace(okExpect, "stage: runtime", "stage: running", 1), "diagnosis.stage"},
		"foreign subject":           {okManifests, strings.Replace(okExpect, "Pod/demo/app", "Pod/other/app", 1), "diagnosis.subject"},
		"bad rule":                  {okManifests, strings.Replace(okExpect, "demo-rule", "DemoRule", 1), "kebab-case"},
		"bad diagnosis":             {okManifests, strings.Replace(okExpect, "diagnosis: {rule: demo-rule, stage: runtime, subject: Pod/demo/app}", "diagnosis: healthy", 1), `want "none"`},
		"bad timeout":               {okManifests, okExpect + "timeout: soon\n", "duration"},
		"no until":                  {okManifests, strings.Replace(okExpect, "until:\n- {file: events, reason: Failed}\n", "", 1), "until is empty"},
		"events without reason":     {okManifests, strings.Replace(okExpect, "reason: Failed", "message: x", 1), "reason is required"},
		"bad selector":              {okManifests, strings.Replace(okExpect, "container: app, contains: x", "selector: 'a in (', contains: x", 1), "selector"},
		"foreign namespace":         {strings.Replace(okManifests, "namespace: demo}", "namespace: default}", 1), okExpect, `in namespace "default"`},
		"undeclared namespace":      {strings.Replace(okManifests, "kind: Namespace\nmetadata: {name: demo}", "kind: Namespace\nmetadata: {name: other}", 1), okExpect, "declares Namespace other"},
		"no namespace":              {strings.Replace(okManifests, "apiVersion: v1\nkind: Namespace\nmetadata: {name: demo}\n---\n", "", 1), okExpect, "does not declare Namespace demo"},
		"no kind":                   {okManifests + "---\napiVersion: v1\nmetadata: {name: x}\n", okExpect, "kind and metadata.name are required"},
		"bad yaml":                  {okManifests + "---\n\tkind: [\n", okExpect, "manifests.yaml: parse document 3"},
		"webhook sees all":          {okManifests + webhookManifest("{}"), okExpect, "webhooks[0] must select only namespace demo"},
		"webhook sees other":        {okManifests + webhookManifest("{matchLabels: {kubernetes.io/metadata.name: other}}"), okExpect, "must select only namespace demo"},
		"webhook sees more":         {okManifests + webhookManifest("{matchLabels: {kubernetes.io/metadata.name: demo}, matchExpressions: [{key: x, operator: Exists}]}"), okExpect, "must select only"},
		"unknown phase":             {okManifests, okExpect + "phase: later\n", `phase "later"`},
		"node-faults without fault": {okManifests, okExpect + "phase: node-faults\n", "needs a fault"},
		"fault without phase":       {okManifests, okExpect + "fault: cni-not-ready\n", "need phase node-faults"},
		"bundle-only before":        {okManifests, okExpect + "phase: node-faults\nfault: x\nbefore:\n- {file: log, contains: x}\n", "before[0]"},
	}
	for name, tc := range cases {
		_, err := LoadOne(writeScenario(t, "demo", tc.manifests, tc.expect))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want it to mention %q", name, err, tc.want)
		}
	}
	if _, err := LoadOne(writeScenario(t, "Bad_Name", okManifests, okExpect)); err == nil {
		t.Error("a scenario name that is not a namespace name was accepted")
	}
	if _, err := LoadOne(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("a missing scenario directory was accepted")
	}
}

// webhookManifest is a ValidatingWebhookConfiguration document with a namespaceSelector.
func webhookManifest(selector string) string {
	return "---\napiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration\nmetadata: {name: demo}\n" +
		"webhooks:\n- name: deny.demo.test\n  namespaceSelector: " + selector + "\n"
}

func TestLoadOneAcceptsAWebhookOfItsOwnNamespace(t *testing.T) {
	if _, err := LoadOne(writeScenario(t, "demo", okManifests+webhookManifest("{matchLabels: {kubernetes.io/metadata.name: demo}}"), okExpect)); err != nil {
		t.Fatal(err)
	}
}

// TestRecordedBundlesHoldTheEvidence checks every fixture recorded from the test bed
// (make record) still verifies, holds its scenario's evidence and stays reviewable.
func TestRecordedBundlesHoldTheEvidence(t *testing.T) {
	all, err := Load(scenariosDir)
	if err != nil {
		t.Fatal(err)
	}
	const maxFixture = 200 << 10
	recorded := 0
	for _, s := range all {
		dir := filepath.Join("../../testdata/bundles", s.Name)
		if _, err := os.Stat(dir); err != nil {
			continue // not recorded yet
		}
		recorded++
		b, err := bundle.Open(dir, bundle.DefaultLimits())
		if err != nil {
			t.Errorf("%s: %v", s.Name, err)
			continue
		}
		if problems := bundle.Verify(b); len(problems) > 0 {
			t.Errorf("%s: the fixture does not verify: %v", s.Name, problems)
		}
		if b.Size() > maxFixture {
			t.Errorf("%s: the fixture holds %d bytes, more than %d: trim it", s.Name, b.Size(), maxFixture)
		}
		snap, err := FromBundle(b, s.Name)
		if err != nil {
			t.Errorf("%s: %v", s.Name, err)
			continue
		}
		if err := snap.EvalAll(s.Expect.Evidence); err != nil {
			t.Errorf("%s: the fixture lacks evidence:\n%v", s.Name, err)
		}
	}
	if recorded == 0 {
		t.Skip("no fixture recorded in testdata/bundles")
	}
}

// seccompManifests is okManifests with a pod under the Localhost profile ref.
func seccompManifests(ref string) string {
	return strings.Replace(okManifests, "spec: {containers:", "spec: {securityContext: {seccompProfile: {type: Localhost, localhostProfile: "+ref+"}}, containers:", 1)
}

func writeProfile(t *testing.T, dir, name, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, SeccompDir), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, SeccompDir, name), []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestLoadOneReadsTheSeccompProfilesItsPodsName(t *testing.T) {
	const profile = `{"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [{"names": ["mkdir"], "action": "SCMP_ACT_KILL_PROCESS"}]}`
	dir := writeScenario(t, "demo", seccompManifests("demo/deny.json"), okExpect)
	writeProfile(t, dir, "deny.json", profile)
	s, err := LoadOne(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(s.Seccomp["deny.json"]); got != profile {
		t.Errorf("profile deny.json = %q, want %q", got, profile)
	}
}

func TestLoadOneRefusesSeccompProfilesItDoesNotHold(t *testing.T) {
	cases := []struct {
		name, ref, file, data, want string
	}{
		{"missing file", "demo/deny.json", "", "", `localhostProfile "demo/deny.json"`},
		{"another scenario's", "other/deny.json", "deny.json", `{"defaultAction": "SCMP_ACT_ALLOW"}`, `localhostProfile "other/deny.json"`},
		{"not a profile", "demo/deny.json", "deny.json", `{"syscalls": []}`, "not a seccomp profile"},
		{"bad file name", "demo/deny.json", "Deny.JSON", `{"defaultAction": "SCMP_ACT_ALLOW"}`, "want only profile files"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := writeScenario(t, "demo", seccompManifests(c.ref), okExpect)
			if c.file != "" {
				writeProfile(t, dir, c.file, c.data)
			}
			_, err := LoadOne(dir)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want one saying %q", err, c.want)
			}
		})
	}
}
