package scenario

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const deleteExpect = `description: d
delete:
  when:
  - {file: pod-status, pod: app, phase: Running}
  objects:
  - {kind: Pod, name: app}
  gracePeriodSeconds: 2
until:
- {file: pod-status, pod: app, terminatingFor: 70s}
evidence:
- {file: log, container: app, contains: x}
diagnosis: {rule: demo-rule, stage: termination, subject: Pod/demo/app}
`

func TestLoadOneReadsADeleteStep(t *testing.T) {
	s, err := LoadOne(writeScenario(t, "demo", okManifests, deleteExpect))
	if err != nil {
		t.Fatal(err)
	}
	d := s.Expect.Delete
	if d == nil || len(d.When) != 1 || d.When[0].Phase != "Running" || d.GracePeriodSeconds == nil || *d.GracePeriodSeconds != 2 {
		t.Fatalf("delete step: %+v", d)
	}
	objs, err := s.DeleteObjects()
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 1 || objs[0].GetKind() != "Pod" || objs[0].GetName() != "app" || objs[0].GetNamespace() != "demo" {
		t.Errorf("objects to delete: %v", objs)
	}
	if got := s.Expect.Until[0].TerminatingFor; got == nil || got.Duration != 70*time.Second {
		t.Errorf("terminatingFor: %v", got)
	}
	plain, err := LoadOne(writeScenario(t, "demo", okManifests, okExpect))
	if err != nil {
		t.Fatal(err)
	}
	if objs, err := plain.DeleteObjects(); err != nil || objs != nil {
		t.Errorf("a scenario without a delete step deletes %v (%v)", objs, err)
	}
}

func TestLoadOneRejectsBadDeleteSteps(t *testing.T) {
	cases := map[string]struct{ expect, want string }{
		"undeclared object": {strings.Replace(deleteExpect, "{kind: Pod, name: app}", "{kind: Pod, name: other}", 1), "does not declare"},
		"namespace":         {strings.Replace(deleteExpect, "{kind: Pod, name: app}", "{kind: Namespace, name: demo}", 1), "may not remove the scenario's namespace"},
		"no when":           {strings.Replace(deleteExpect, "  when:\n  - {file: pod-status, pod: app, phase: Running}\n", "", 1), "delete.when is empty"},
		"no objects":        {strings.Replace(deleteExpect, "  objects:\n  - {kind: Pod, name: app}\n", "", 1), "delete.objects is empty"},
		"bundle-only when":  {strings.Replace(deleteExpect, "{file: pod-status, pod: app, phase: Running}", "{file: log, contains: x}", 1), "delete.when[0]"},
		"negative grace":    {strings.Replace(deleteExpect, "gracePeriodSeconds: 2", "gracePeriodSeconds: -1", 1), "want 0 or more"},
		"unknown key":       {strings.Replace(deleteExpect, "gracePeriodSeconds: 2", "grace: 2", 1), `unknown field "grace"`},
		"zero terminating":  {strings.Replace(deleteExpect, "terminatingFor: 70s", "terminatingFor: 0s", 1), "want a positive duration"},
		"terminating in log": {strings.Replace(deleteExpect, "{file: log, container: app, contains: x}", "{file: log, container: app, contains: x, terminatingFor: 1s}", 1),
			`does not use "terminatingFor"`},
	}
	for name, tc := range cases {
		_, err := LoadOne(writeScenario(t, "demo", okManifests, tc.expect))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want it to mention %q", name, err, tc.want)
		}
	}
}

func TestTerminatingFor(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	deleted := func(ago time.Duration) corev1.Pod {
		p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "app"}}
		if ago >= 0 {
			ts := metav1.NewTime(now.Add(-ago))
			p.DeletionTimestamp = &ts
		}
		return p
	}
	check := Check{File: FilePodStatus, Pod: "app", TerminatingFor: &Duration{70 * time.Second}}
	cases := []struct {
		name string
		pod  corev1.Pod
		now  time.Time
		want string // "" passes; otherwise part of the error
	}{
		{"long enough", deleted(71 * time.Second), now, ""},
		{"too recent", deleted(30 * time.Second), now, "deleted 30s before"},
		{"not deleted", deleted(-1), now, "not deleted"},
		{"no clock", deleted(71 * time.Second), time.Time{}, "no time to measure"},
	}
	for _, tc := range cases {
		s := &Snapshot{Namespace: "demo", Pods: []corev1.Pod{tc.pod}, Now: tc.now}
		err := s.Eval(check)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: error %v, want it to mention %q", tc.name, err, tc.want)
		}
	}
}
