package rules

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"podflow.dev/podflow/analyze"
	"podflow.dev/podflow/bundle"
)

// recordings lists the scenarios recorded from the test bed under testdata/bundles/.
func recordings(t *testing.T) []string {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join("..", "testdata", "bundles", "*"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no recordings under testdata/bundles: %v", err)
	}
	var out []string
	for _, d := range dirs {
		if st, err := os.Stat(d); err == nil && st.IsDir() {
			out = append(out, filepath.Base(d))
		}
	}
	return out
}

func analyzeRecording(t *testing.T, scenario string, patch func(*testing.T, map[string][]byte)) *analyze.Report {
	t.Helper()
	files := readRecording(t, scenario)
	if patch != nil {
		patch(t, files)
	}
	b, err := bundle.New(scenario, files)
	if err != nil {
		t.Fatal(err)
	}
	return analyze.Run(analyze.Load([]*bundle.Bundle{b}, nil), All(), analyze.Options{})
}

// Every root finding of every recorded scenario says what to change and what deleting
// its pods would do; a consequence carries no plan of its own.
func TestEveryRootOfEveryRecordingHasAPlan(t *testing.T) {
	roots := 0
	for _, sc := range recordings(t) {
		rep := analyzeRecording(t, sc, nil)
		for _, f := range rep.Findings {
			if !f.Root {
				if f.Plan != nil {
					t.Errorf("%s: consequence %s has a plan", sc, f.ID)
				}
				continue
			}
			roots++
			p := f.Plan
			switch {
			case p == nil:
				t.Errorf("%s: root %s has no plan", sc, f.ID)
				continue
			case p.Change.Target.Kind == "":
				t.Errorf("%s: root %s: no change target", sc, f.ID)
			case p.DeleteRisk.Outcome == "" || p.DeleteRisk.Summary == "":
				t.Errorf("%s: root %s: no delete risk", sc, f.ID)
			case len(p.KeepFirst) == 0:
				t.Errorf("%s: root %s: nothing to keep first", sc, f.ID)
			case len(p.Needs) == 0:
				t.Errorf("%s: root %s: no permissions", sc, f.ID)
			}
			if p.Change.Target.Name == "" && p.Change.Target.Kind != "StorageClass" {
				t.Errorf("%s: root %s: change target %s has no name although the recording names it", sc, f.ID, p.Change.Target.Kind)
			}
			if p.Change.Target.Kind == "Pod" && len(f.Pods()) > 0 && p.DeleteRisk.Outcome != analyze.DeleteGone &&
				f.Rule != "termination-finalizers-stuck" {
				t.Errorf("%s: root %s: the change targets the Pod although %s", sc, f.ID, p.DeleteRisk.Summary)
			}
		}
	}
	if roots < 50 {
		t.Fatalf("only %d root findings over the recordings; the walk is not reading them", roots)
	}
}

// planGolden is one root finding's plan as the golden files pin it.
type planGolden struct {
	Finding  string              `json:"finding"`
	Subjects []analyze.ObjectRef `json:"subjects"`
	Plan     *analyze.Plan       `json:"plan"`
}

// The plan of every root finding of every recording, pinned in
// ../testdata/plans/<scenario>.golden (go test ./rules -run TestPlansOfRecordings -update).
func TestPlansOfRecordings(t *testing.T) {
	for _, sc := range recordings(t) {
		t.Run(sc, func(t *testing.T) {
			rep := analyzeRecording(t, sc, nil)
			var got []planGolden
			for _, f := range rep.Findings {
				if f.Root {
					subjects := slices.Clone(f.Subjects)
					for i := range subjects {
						subjects[i].UID = ""
					}
					got = append(got, planGolden{Finding: f.ID, Subjects: subjects, Plan: f.Plan})
				}
			}
			data, err := yaml.Marshal(got)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("..", "testdata", "plans", sc+".golden")
			if *update {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, data, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (go test ./rules -run TestPlansOfRecordings -update writes it)", err)
			}
			if !bytes.Equal(data, want) {
				t.Errorf("%s differs (go test ./rules -run TestPlansOfRecordings -update rewrites it):\n%s", path, diff(string(want), string(data)))
			}
		})
	}
}

// The change target and the delete risk across owner kinds and cluster-object causes,
// from the recordings; the owner kinds the test bed did not record (a DaemonSet, a
// CronJob, a StatefulSet with a claim) are the recording with the owner the cluster
// would show.
func TestPlanAcrossOwnersAndClusterObjects(t *testing.T) {
	cases := []struct {
		name, scenario string
		patch          func(*testing.T, map[string][]byte)
		rule           string
		target         string // Kind ns/name
		field          string // first field path, "" to skip
		outcome        analyze.DeleteOutcome
		same           analyze.SameCause
		summary        string // a substring of the delete risk's summary
	}{{
		name: "bare pod", scenario: "oom-killed", rule: "runtime-oom-killed",
		target: "Pod oom-killed/app", field: ".spec.containers[app].resources.limits.memory",
		outcome: analyze.DeleteGone, summary: "gone for good",
	}, {
		name: "Deployment", scenario: "crash-exit-1", rule: "runtime-crash-exit",
		target: "Deployment crash-exit-1/worker", field: ".spec.template.spec.containers[worker].image",
		outcome: analyze.DeleteRecreated, same: analyze.SameCauseYes, summary: "(Deployment crash-exit-1/worker)",
	}, {
		name: "StatefulSet without a claim", scenario: "statefulset-stuck", rule: "probe-readiness-failing",
		target: "StatefulSet statefulset-stuck/db", field: ".spec.template.spec.containers[db].readinessProbe",
		outcome: analyze.DeleteRecreated, same: analyze.SameCauseYes, summary: "recreated as db-0",
	}, {
		name: "StatefulSet with a claim", scenario: "statefulset-stuck", patch: withClaim("statefulset-stuck", "db-0", "data-db-0"),
		rule: "probe-readiness-failing", target: "StatefulSet statefulset-stuck/db",
		outcome: analyze.DeleteReattached, same: analyze.SameCauseYes, summary: "with the same claim data-db-0",
	}, {
		name: "DaemonSet", scenario: "crash-segfault", patch: ownedBy("crash-segfault", "indexer", "DaemonSet", "indexer"),
		rule: "runtime-crash-exit", target: "DaemonSet crash-segfault/indexer", field: ".spec.template.spec.containers[indexer].image",
		outcome: analyze.DeleteRecreated, same: analyze.SameCauseYes, summary: "on the same node",
	}, {
		name: "Job (finished)", scenario: "job-backoff-limit", rule: "runtime-crash-exit",
		target: "Job job-backoff-limit/migrate", field: ".spec.template.spec.containers[migrate].image",
		outcome: analyze.DeleteGone, summary: "Failed (BackoffLimitExceeded)",
	}, {
		name: "Job (running)", scenario: "job-backoff-limit", patch: jobRunning("job-backoff-limit", "migrate"),
		rule: "runtime-crash-exit", target: "Job job-backoff-limit/migrate",
		outcome: analyze.DeleteBackoff, same: analyze.SameCauseYes, summary: "backoffLimit 1",
	}, {
		name: "CronJob", scenario: "job-backoff-limit", patch: cronJobOwns("job-backoff-limit", "migrate", "nightly-migrate"),
		rule: "runtime-crash-exit", target: "CronJob job-backoff-limit/nightly-migrate",
		field: ".spec.jobTemplate.spec.template.spec.containers[migrate].image", outcome: analyze.DeleteGone,
	}, {
		name: "quota", scenario: "quota-exceeded", rule: "admission-quota-exceeded",
		target: "ResourceQuota quota-exceeded/compute", field: ".spec.hard", outcome: analyze.DeleteNoPod,
	}, {
		name: "LimitRange", scenario: "limitrange-violated", rule: "admission-limitrange-violated",
		target: "LimitRange limitrange-violated/container-limits", field: ".spec.limits", outcome: analyze.DeleteNoPod,
	}, {
		name: "webhook", scenario: "webhook-timeout", rule: "admission-webhook-unreachable",
		target: "ValidatingWebhookConfiguration podflow-webhook-timeout", field: ".webhooks[].clientConfig", outcome: analyze.DeleteNoPod,
	}, {
		name: "PriorityClass", scenario: "priorityclass-missing", rule: "admission-priorityclass-missing",
		target: "PriorityClass podflow-missing-critical", outcome: analyze.DeleteNoPod,
	}, {
		name: "StorageClass", scenario: "pvc-unbound", rule: "volume-pvc-unbound",
		target: "StorageClass", outcome: analyze.DeleteGone,
	}, {
		name: "node", scenario: "node-not-ready", rule: "node-not-ready",
		target: "Node podflow-node", outcome: analyze.DeleteGone, summary: "gone for good",
	}, {
		name: "image registry", scenario: "image-pull-dns", rule: "image-pull-dns",
		target: "ImageRegistry", outcome: analyze.DeleteGone,
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rep := analyzeRecording(t, c.scenario, c.patch)
			var f *analyze.Finding
			for _, x := range rep.Findings {
				if x.Root && x.Rule == c.rule {
					f = x
					break
				}
			}
			if f == nil {
				t.Fatalf("no root %s; findings %v", c.rule, ruleIDs(rep.Findings))
			}
			p := f.Plan
			got := p.Change.Target.String()
			if !strings.HasPrefix(got, c.target) {
				t.Errorf("change target %q, want %q", got, c.target)
			}
			if c.field != "" && (len(p.Change.Fields) == 0 || p.Change.Fields[0] != c.field) {
				t.Errorf("change fields %q, want first %q", p.Change.Fields, c.field)
			}
			if p.DeleteRisk.Outcome != c.outcome || p.DeleteRisk.SameCause != c.same {
				t.Errorf("delete risk %s/%s (%s), want %s/%s", p.DeleteRisk.Outcome, p.DeleteRisk.SameCause, p.DeleteRisk.Summary, c.outcome, c.same)
			}
			if !strings.Contains(p.DeleteRisk.Summary, c.summary) {
				t.Errorf("delete risk %q does not say %q", p.DeleteRisk.Summary, c.summary)
			}
		})
	}
}

// setOwner points an object's controller reference at kind/name.
func setOwner(meta map[string]any, apiVersion, kind, name string) {
	meta["ownerReferences"] = []any{map[string]any{"apiVersion": apiVersion, "kind": kind, "name": name,
		"uid": "uid-" + strings.ToLower(kind) + "-" + name, "controller": true, "blockOwnerDeletion": true}}
}

func podsFile(ns string) string { return "cluster-resources/pods/" + ns + ".json" }

// ownedBy makes a recorded bare pod the pod of a DaemonSet (or another owner kind).
func ownedBy(ns, pod, kind, name string) func(*testing.T, map[string][]byte) {
	return func(t *testing.T, files map[string][]byte) {
		found := false
		editList(t, files, podsFile(ns), func(items []any) []any {
			for _, it := range items {
				meta := it.(map[string]any)["metadata"].(map[string]any)
				if meta["name"] == pod {
					setOwner(meta, "apps/v1", kind, name)
					found = true
				}
			}
			return items
		})
		if !found {
			t.Fatalf("no pod %s/%s in the recording", ns, pod)
		}
	}
}

// withClaim gives a StatefulSet's pod the claim its volumeClaimTemplates would make.
func withClaim(ns, pod, claim string) func(*testing.T, map[string][]byte) {
	return func(t *testing.T, files map[string][]byte) {
		editList(t, files, podsFile(ns), func(items []any) []any {
			for _, it := range items {
				p := it.(map[string]any)
				if p["metadata"].(map[string]any)["name"] != pod {
					continue
				}
				spec := p["spec"].(map[string]any)
				vols, _ := spec["volumes"].([]any)
				spec["volumes"] = append(vols, map[string]any{"name": "data", "persistentVolumeClaim": map[string]any{"claimName": claim}})
			}
			return items
		})
		editList(t, files, "cluster-resources/pvcs/"+ns+".json", func(items []any) []any {
			return append(items, map[string]any{"apiVersion": "v1", "kind": "PersistentVolumeClaim",
				"metadata": map[string]any{"name": claim, "namespace": ns, "uid": "uid-" + claim},
				"spec":     map[string]any{"accessModes": []any{"ReadWriteOnce"}, "resources": map[string]any{"requests": map[string]any{"storage": "1Gi"}}, "volumeName": "pv-" + claim},
				"status":   map[string]any{"phase": "Bound"}})
		})
	}
}

// jobRunning turns a failed Job back into one still within its backoff limit.
func jobRunning(ns, job string) func(*testing.T, map[string][]byte) {
	return func(t *testing.T, files map[string][]byte) {
		editList(t, files, "cluster-resources/jobs/"+ns+".json", func(items []any) []any {
			for _, it := range items {
				j := it.(map[string]any)
				if j["metadata"].(map[string]any)["name"] != job {
					continue
				}
				status := j["status"].(map[string]any)
				delete(status, "conditions")
				status["failed"] = 1
				j["spec"].(map[string]any)["backoffLimit"] = 1
			}
			return items
		})
	}
}

// cronJobOwns makes a recorded Job the run of a CronJob.
func cronJobOwns(ns, job, cron string) func(*testing.T, map[string][]byte) {
	return func(t *testing.T, files map[string][]byte) {
		var template any
		editList(t, files, "cluster-resources/jobs/"+ns+".json", func(items []any) []any {
			for _, it := range items {
				j := it.(map[string]any)
				meta := j["metadata"].(map[string]any)
				if meta["name"] == job {
					setOwner(meta, "batch/v1", "CronJob", cron)
					template = j["spec"]
				}
			}
			return items
		})
		if template == nil {
			t.Fatalf("no Job %s/%s in the recording", ns, job)
		}
		editList(t, files, "cluster-resources/cronjobs/"+ns+".json", func(items []any) []any {
			return append(items, map[string]any{"apiVersion": "batch/v1", "kind": "CronJob",
				"metadata": map[string]any{"name": cron, "namespace": ns, "uid": "uid-cronjob-" + cron},
				"spec":     map[string]any{"schedule": "0 3 * * *", "jobTemplate": map[string]any{"spec": template}}})
		})
	}
}

// The change table names only registered rules, so a renamed rule cannot leave its
// entry behind.
func TestChangeTableNamesRegisteredRules(t *testing.T) {
	for _, id := range analyze.ChangeTableRules() {
		if id != analyze.UnexplainedRule && ByID(id) == nil {
			t.Errorf("change table entry %q names no rule", id)
		}
	}
	for _, r := range All() {
		if !slices.Contains(analyze.ChangeTableRules(), r.ID) {
			t.Errorf("rule %s has no entry in analyze/plan_change.go changeTable (where its cause is fixed)", r.ID)
		}
	}
}

// A Job's pod with restartPolicy Never is not restarted by the kubelet, and its fix must
// not say it is; a Deployment's pod is.
func TestCrashFixFitsTheRestartPolicy(t *testing.T) {
	for _, c := range []struct {
		scenario, want, not string
	}{
		{"job-backoff-limit", "With restartPolicy Never the kubelet does not restart it", "The kubelet restarts it on its own"},
		{"crash-exit-1", "The kubelet restarts it on its own", "restartPolicy Never"},
	} {
		rep := analyzeRecording(t, c.scenario, nil)
		found := false
		for _, f := range rep.Findings {
			if f.Rule != "runtime-crash-exit" {
				continue
			}
			found = true
			if !strings.Contains(f.Remediation, c.want) || strings.Contains(f.Remediation, c.not) {
				t.Errorf("%s: fix %q: want %q, not %q", c.scenario, f.Remediation, c.want, c.not)
			}
		}
		if !found {
			t.Errorf("%s: no runtime-crash-exit finding", c.scenario)
		}
	}
}
