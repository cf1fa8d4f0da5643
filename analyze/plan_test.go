package analyze_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"podflow.dev/podflow/analyze"
)

// planRule reports every pod as broken at the runtime stage, citing a field of the pod
// (at), with the confirm commands given: the plan is then the engine's alone to make.
func planRule(at []any, confirm ...string) *analyze.Rule {
	return &analyze.Rule{
		ID: "runtime-crash-exit", Stage: analyze.StageRuntime, Title: "test", Severity: analyze.SeverityError,
		Needs: analyze.Needs{Required: []analyze.Kind{analyze.Pods}},
		Run: func(v *analyze.View) []analyze.Finding {
			var out []analyze.Finding
			for _, p := range v.Pods() {
				subjects, _ := v.PodAndWorkload(p)
				out = append(out, analyze.Finding{Subjects: subjects, Cause: "it breaks", Remediation: "fix it", Confirm: confirm,
					Evidence: []analyze.Evidence{p.Loc.At(at...).Evidence("cited", time.Time{})}})
			}
			return out
		},
	}
}

func onlyRoot(t *testing.T, rep *analyze.Report) *analyze.Plan {
	t.Helper()
	if len(rep.Findings) != 1 || !rep.Findings[0].Root || rep.Findings[0].Plan == nil {
		t.Fatalf("want one root finding with a plan, got %+v", rep.Findings)
	}
	return rep.Findings[0].Plan
}

// A pod an import built from a fragment (an event row) shows no owner: the plan says so
// and how to look before deleting, and claims nothing about what a deletion does.
func TestPlanOfAPodWithoutItsOwner(t *testing.T) {
	pod := podObj("shop", "web-7d9f8b6c5d-4xk2p", "", nil)
	pod["metadata"].(obj)["annotations"] = obj{"podflow.dev/partial": "spec"}
	g := load(t, map[string]any{"cluster-resources/pods/shop.json": list(pod)})
	p := onlyRoot(t, analyze.Run(g, []*analyze.Rule{planRule([]any{"status"})}, analyze.Options{}))
	want := "owner not in the evidence: check `kubectl get pod web-7d9f8b6c5d-4xk2p -n shop -o jsonpath='{.metadata.ownerReferences}'` before deleting"
	if p.DeleteRisk.Outcome != analyze.DeleteUnknown || p.DeleteRisk.Summary != want {
		t.Errorf("delete risk %+v, want %s: %s", p.DeleteRisk, analyze.DeleteUnknown, want)
	}
	if !strings.Contains(p.Change.Note, "owner not in the evidence") || p.Change.Suggest != "" {
		t.Errorf("change %+v: want a note that the owner is unknown and no command that replaces the pod", p.Change)
	}

	// A pod known from an event row without its name or namespace: the commands say
	// POD and NAMESPACE rather than the names the import made up.
	pod = podObj("default", "unnamed-events-txt", "", nil)
	pod["metadata"].(obj)["annotations"] = obj{"podflow.dev/partial": "name,namespace,spec"}
	g = load(t, map[string]any{"cluster-resources/pods/default.json": list(pod)})
	p = onlyRoot(t, analyze.Run(g, []*analyze.Rule{planRule([]any{"status"})}, analyze.Options{}))
	want = "owner not in the evidence: check `kubectl get pod POD -n NAMESPACE -o jsonpath='{.metadata.ownerReferences}'` before deleting"
	if p.DeleteRisk.Summary != want || p.Change.Target.Name != "" || p.Change.Target.Namespace != "" {
		t.Errorf("plan %+v, want %q and a target without the made-up name", p, want)
	}
	if len(p.KeepFirst) != 1 || p.KeepFirst[0].Command != "kubectl get events -n NAMESPACE --field-selector involvedObject.name=POD -o yaml > POD-events.yaml" {
		t.Errorf("keep first %+v", p.KeepFirst)
	}
}

// An init container's fix is in initContainers, and a bare pod's under .spec; the
// permissions are read from the commands, node-level ones marked.
func TestPlanOfAnInitContainerOfABarePod(t *testing.T) {
	pod := podObj("shop", "app", "n1", nil)
	pod["spec"].(obj)["initContainers"] = []any{obj{"name": "migrate", "image": "registry.example/migrate:1"}}
	pod["spec"].(obj)["restartPolicy"] = "Never"
	pod["spec"].(obj)["volumes"] = []any{obj{"name": "scratch", "emptyDir": obj{}}}
	pod["status"] = obj{"phase": "Failed", "initContainerStatuses": []any{obj{"name": "migrate", "image": "registry.example/migrate:1",
		"state": obj{"terminated": obj{"exitCode": 1, "reason": "Error"}}}}}
	g := load(t, map[string]any{"cluster-resources/pods/shop.json": list(pod)})
	rule := planRule([]any{"spec", "initContainers", 0}, "kubectl logs -n shop app -c migrate --tail=50",
		"kubectl get --raw /api/v1/nodes/n1/proxy/configz", "kubectl describe node n1", "journalctl -u kubelet --since -1h")
	p := onlyRoot(t, analyze.Run(g, []*analyze.Rule{rule}, analyze.Options{}))
	if got := p.Change.Target.String(); got != "Pod shop/app" {
		t.Errorf("change target %s, want Pod shop/app", got)
	}
	if len(p.Change.Fields) == 0 || p.Change.Fields[0] != ".spec.initContainers[migrate].image" {
		t.Errorf("change fields %q, want .spec.initContainers[migrate].image first", p.Change.Fields)
	}
	if !strings.Contains(p.Change.Note, "init container migrate must exit 0") {
		t.Errorf("change note %q does not name the init container", p.Change.Note)
	}
	if p.DeleteRisk.Outcome != analyze.DeleteGone || !strings.Contains(strings.Join(p.DeleteRisk.Details, "; "), "emptyDir data is lost: scratch") {
		t.Errorf("delete risk %+v, want gone with the emptyDir named", p.DeleteRisk)
	}
	var keep []string
	for _, k := range p.KeepFirst {
		keep = append(keep, k.Command)
	}
	wantKeep := []string{
		"kubectl logs app -n shop -c migrate > app-migrate.log",
		"kubectl get events -n shop --field-selector involvedObject.name=app -o yaml > app-events.yaml",
		"journalctl -u kubelet -u containerd --since -2h --no-pager > n1-journal.log   # on node n1",
	}
	if strings.Join(keep, "\n") != strings.Join(wantKeep, "\n") {
		t.Errorf("keep first:\n%s\nwant:\n%s", strings.Join(keep, "\n"), strings.Join(wantKeep, "\n"))
	}
	var needs []string
	for _, n := range p.Needs {
		needs = append(needs, n.String())
	}
	wantNeeds := "get pods/log in shop; get nodes/proxy (node-level); get nodes; list events in all namespaces; a shell on the node (node-level); list events in shop"
	if got := strings.Join(needs, "; "); got != wantNeeds {
		t.Errorf("needs:\n got %s\nwant %s", got, wantNeeds)
	}
}

// An init container with restartPolicy Always is a sidecar: it is not told to exit 0.
func TestPlanOfASidecar(t *testing.T) {
	pod := podObj("shop", "app", "n1", nil)
	pod["spec"].(obj)["initContainers"] = []any{obj{"name": "proxy", "image": "registry.example/proxy:1", "restartPolicy": "Always"}}
	g := load(t, map[string]any{"cluster-resources/pods/shop.json": list(pod)})
	p := onlyRoot(t, analyze.Run(g, []*analyze.Rule{planRule([]any{"spec", "initContainers", 0})}, analyze.Options{}))
	if !strings.Contains(p.Change.Note, "sidecar proxy") || strings.Contains(p.Change.Note, "exit 0") {
		t.Errorf("change note %q: want the sidecar named, not told to exit 0", p.Change.Note)
	}
	if len(p.Change.Fields) == 0 || p.Change.Fields[0] != ".spec.initContainers[proxy].image" {
		t.Errorf("change fields %q", p.Change.Fields)
	}
}

// A signature may say where its cause is fixed; a target podflow cannot resolve is an
// error naming the field.
func TestSignatureChange(t *testing.T) {
	const sig = `- id: test-quota-scope
  stage: admission
  title: t
  component: c
  patterns: ['insufficient quota to match these scopes: (?P<detail>.+)']
  cause: 'refused: {detail}'
  fix: f
  change: {target: %s, fields: [.spec.scopeSelector], recurs: maybe}
  examples: {fires: ['insufficient quota to match these scopes: [x]'], quiet: ['quota']}
`
	sigs, err := analyze.ParseSignatures("test.yaml", []byte(strings.Replace(sig, "%s", "ResourceQuota", 1)))
	if err != nil {
		t.Fatal(err)
	}
	if c := sigs[0].Change; c == nil || c.Target != "ResourceQuota" || c.Recurs != "maybe" || c.Fields[0] != ".spec.scopeSelector" {
		t.Errorf("change = %+v", sigs[0].Change)
	}
	_, err = analyze.ParseSignatures("test.yaml", []byte(strings.Replace(sig, "%s", "the-quota", 1)))
	var se *analyze.SignatureError
	if !errors.As(err, &se) || se.Field != "change.target" || se.Line != 8 {
		t.Errorf("err = %v, want a change.target error at line 8", err)
	}
}
