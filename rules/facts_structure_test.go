package rules

import (
	"go/ast"
	"go/types"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// Rules read facts (v.PullFailures, v.ContainerWaits, v.SandboxFailures,
// v.SchedulingFailures, v.AdmissionRejections, v.MountFailures, v.Evictions, v.NodeAgent,
// v.PodWarning, v.ContainerRuns), not raw evidence: a rule file listed in
// factRules, and every function of the package it reaches, must not call the View's raw
// evidence readers. The facts are built once per graph from every source; a rule that
// read events or journals itself again would see less than its facts, and two rules
// would read one failure two ways.

// rawReaders are the View methods that hand out raw evidence: pods to enumerate (also
// through NotReadyPods), events, journals, runtime state, logs, kernel kills.
var rawReaders = []string{"Pods", "NotReadyPods", "PodByUID", "Events", "EventsFor", "Journal", "JournalFor", "RuntimeJournal",
	"ContainersFor", "SandboxesFor", "Log", "OOMKills", "OOMKillsFor"}

// factRules are the rule files that read only facts, each with the raw readers it may
// still call and why: other pods read as the cluster's state, not as evidence of the
// failure.
var factRules = map[string]map[string]string{
	"controller_progress_deadline_exceeded.go": {"NotReadyPods": "the ReplicaSet's pods whose readiness the rollout waits on"},
	"controller_rollout_stuck.go":              {"NotReadyPods": "the new ReplicaSet's pods whose readiness the rollout waits on"},
	"controller_statefulset_stuck.go":          nil,
	// Service rules compare objects (Services, EndpointSlices, the pods they select);
	// they read no evidence text to move onto facts.
	"service_endpointslice_missing.go":            nil,
	"service_no_ready_endpoints.go":               nil,
	"service_selector_matches_nothing.go":         {"Pods": "the namespace's pods whose labels the selector is compared with"},
	"service_target_port_mismatch.go":             nil,
	"termination_grace_period_overrun.go":         nil,
	"node_pod_evicted.go":                         nil,
	"node_not_ready.go":                           nil,
	"volume_configmap_missing.go":                 nil,
	"volume_csi_driver_missing.go":                nil,
	"volume_multi_attach.go":                      nil,
	"admission_limitrange_violated.go":            nil,
	"admission_pod_security.go":                   nil,
	"admission_priorityclass_missing.go":          nil,
	"admission_quota_exceeded.go":                 nil,
	"admission_quota_resources_required.go":       nil,
	"admission_serviceaccount_missing.go":         nil,
	"admission_webhook_denied.go":                 nil,
	"admission_webhook_unreachable.go":            nil,
	"config_run_as_non_root.go":                   nil,
	"config_secret_key_missing.go":                nil,
	"image_invalid_name.go":                       nil,
	"image_never_pull.go":                         nil,
	"image_pull_dns.go":                           nil,
	"image_pull_not_found.go":                     nil,
	"image_pull_rate_limited.go":                  nil,
	"image_pull_unauthorized.go":                  nil,
	"image_pull_x509.go":                          nil,
	"probe_liveness_restarts.go":                  nil,
	"probe_readiness_failing.go":                  nil,
	"probe_startup_failing.go":                    nil,
	"runtime_crash_exit.go":                       nil,
	"runtime_oom_killed.go":                       nil,
	"sandbox_create_failed.go":                    nil,
	"sandbox_image_pull_failed.go":                nil,
	"sandbox_ip_exhausted.go":                     nil,
	"sandbox_network_not_ready.go":                nil,
	"scheduling_affinity_unsatisfiable.go":        {"Pods": "the running pods the pod's affinity terms are matched against"},
	"scheduling_host_port_conflict.go":            {"Pods": "the pods that hold the host ports the pod asks for"},
	"scheduling_insufficient_resources.go":        {"Pods": "the requests of the pods bound to each node"},
	"scheduling_node_selector_mismatch.go":        nil,
	"scheduling_topology_spread_unsatisfiable.go": nil,
	"scheduling_untolerated_taint.go":             nil,
	"start_command_not_found.go":                  nil,
	"start_exec_format_error.go":                  nil,
	"start_init_container_failed.go":              nil,
	"start_permission_denied.go":                  nil,
	"volume_node_affinity_conflict.go":            nil,
	"volume_pvc_unbound.go":                       {"EventsFor": "the claim's own provisioning events (the PVC, not the pod)", "Pods": "which claims the evidence's pods use and whether their specs are known, so a claim no pod uses is reported on its own"},
}

// TestFactRulesReadNoRawEvidence fails when a rule file of factRules reaches a call of
// a raw evidence reader it is not allowed.
func TestFactRulesReadNoRawEvidence(t *testing.T) {
	pkg := loadRulesSource(t, ".")
	reads := pkg.rawReads()
	for _, file := range slices.Sorted(maps.Keys(factRules)) {
		if !pkg.isRuleFile(file) {
			t.Errorf("%s is listed in factRules but is not a rule file", file)
			continue
		}
		used := map[string]bool{}
		for _, r := range reads[file] {
			used[r.method] = true
			if _, ok := factRules[file][r.method]; !ok {
				t.Errorf("%s reads raw evidence: v.%s in %s (%s); read it from a fact", file, r.method, r.fn, r.at)
			}
		}
		for m := range factRules[file] {
			if !used[m] {
				t.Errorf("%s may call v.%s but does not: drop the allowance", file, m)
			}
		}
	}
	var raw []string
	for _, file := range pkg.ruleFiles {
		if _, ok := factRules[file]; !ok {
			raw = append(raw, file)
		}
	}
	t.Logf("%d of %d rules read no raw evidence; still raw: %s", len(factRules), len(pkg.ruleFiles), strings.Join(raw, " "))
}

// TestRawReadCheckCatches runs the check on a small package whose rule reaches a raw
// read through a family helper, so a check that stopped seeing calls would fail here.
func TestRawReadCheckCatches(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"registry.go": "package rules\n\nfunc All() []*analyze.Rule { return []*analyze.Rule{A, B} }\n",
		"a_rule.go": "package rules\n\nvar A = &analyze.Rule{Run: runA}\n\n" +
			"func runA(v *analyze.View) { helper(v) }\n",
		"b_rule.go": "package rules\n\nvar B = &analyze.Rule{Run: runB}\n\n" +
			"func runB(v *analyze.View) { _ = v.PullFailures(); var w notView; w.Events() }\n",
		"family.go": "package rules\n\nfunc helper(v *analyze.View) { for range v.EventsFor(ref) {} }\n\n" +
			"type notView struct{}\n\nfunc (notView) Events() {}\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	reads := loadRulesSource(t, dir).rawReads()
	if got := len(reads["a_rule.go"]); got != 1 || reads["a_rule.go"][0].method != "EventsFor" || reads["a_rule.go"][0].fn != "helper" {
		t.Errorf("a_rule.go raw reads = %+v, want v.EventsFor in helper", reads["a_rule.go"])
	}
	if got := reads["b_rule.go"]; len(got) != 0 {
		t.Errorf("b_rule.go raw reads = %+v, want none (a fact accessor and another type's Events)", got)
	}
}

// rawRead is one call of a raw evidence reader on a *analyze.View.
type rawRead struct{ method, fn, at string }

// rawReads lists, per rule file, the raw reader calls in the functions it reaches:
// its own top-level declarations and, transitively, the package functions and methods
// they use.
func (s *rulesSource) rawReads() map[string][]rawRead {
	decls := map[types.Object]*ast.FuncDecl{}
	byFile := map[string][]ast.Decl{}
	for _, f := range s.files {
		name := s.file(f.Pos())
		byFile[name] = append(byFile[name], f.Decls...)
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok {
				if obj := s.info.Defs[fd.Name]; obj != nil {
					decls[obj] = fd
				}
			}
		}
	}
	out := map[string][]rawRead{}
	for _, file := range s.ruleFiles {
		seen := map[types.Object]bool{}
		var queue []ast.Node
		for _, d := range byFile[file] {
			if fd, ok := d.(*ast.FuncDecl); ok {
				seen[s.info.Defs[fd.Name]] = true
			}
			queue = append(queue, d)
		}
		var reads []rawRead
		for len(queue) > 0 {
			n := queue[0]
			queue = queue[1:]
			if fd, ok := n.(*ast.FuncDecl); ok {
				reads = append(reads, s.rawCalls(fd)...)
			}
			ast.Inspect(n, func(x ast.Node) bool {
				id, ok := x.(*ast.Ident)
				if !ok {
					return true
				}
				obj := s.info.Uses[id]
				if fd, ok := decls[obj]; ok && !seen[obj] {
					seen[obj] = true
					queue = append(queue, fd)
				}
				return true
			})
		}
		sort.Slice(reads, func(i, j int) bool { return reads[i].at < reads[j].at })
		out[file] = slices.CompactFunc(reads, func(a, b rawRead) bool { return a == b })
	}
	return out
}

// rawCalls lists the raw reader calls in a function on a parameter of type
// *analyze.View.
func (s *rulesSource) rawCalls(fd *ast.FuncDecl) []rawRead {
	views := map[types.Object]bool{}
	for _, fl := range []*ast.FieldList{fd.Recv, fd.Type.Params} {
		if fl == nil {
			continue
		}
		for _, f := range fl.List {
			if !isViewType(f.Type) {
				continue
			}
			for _, n := range f.Names {
				views[s.info.Defs[n]] = true
			}
		}
	}
	var out []rawRead
	ast.Inspect(fd.Body, func(x ast.Node) bool {
		call, ok := x.(*ast.CallExpr)
		if !ok {
			return true
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok || !slices.Contains(rawReaders, sel.Sel.Name) {
			return true
		}
		if id, ok := sel.X.(*ast.Ident); ok && views[s.info.Uses[id]] {
			pos := s.fset.Position(call.Pos())
			out = append(out, rawRead{method: sel.Sel.Name, fn: fd.Name.Name, at: filepath.Base(pos.Filename) + ":" + strconv.Itoa(pos.Line)})
		}
		return true
	})
	return out
}

// isViewType reports whether a type expression is *analyze.View.
func isViewType(e ast.Expr) bool {
	star, ok := e.(*ast.StarExpr)
	if !ok {
		return false
	}
	sel, ok := star.X.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	pkg, ok := sel.X.(*ast.Ident)
	return ok && pkg.Name == "analyze" && sel.Sel.Name == "View"
}
