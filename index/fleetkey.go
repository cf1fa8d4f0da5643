package index

import (
	"slices"
	"strings"

	"podflow.dev/podflow/analyze"
)

// ruleKeys is the fleet key of Go rules whose cause sentence carries the cluster's
// own values (names, images, users, fields) in ways masking does not always catch, or
// words one cause several ways: for these, which of the finding's fields say "same
// cause". A rule not listed is keyed by its masked cause sentence.
//
// Fields:
//   - stage: the finding's stage;
//   - subjects: the kinds of its subjects, sorted;
//   - cause-word:A|B|...: the first of these words the cause sentence holds (or none),
//     for a rule whose one ID covers causes that differ by that word (free cpu or
//     memory; a missing configmap or secret).
var ruleKeys = map[string][]string{
	"admission-pod-security":                {"stage"},
	"admission-quota-exceeded":              {"stage"},
	"admission-quota-resources-required":    {"stage"},
	"admission-scc-denied":                  {"stage"},
	"admission-serviceaccount-missing":      {"stage"},
	"admission-webhook-denied":              {"stage", "cause-word:gke warden|kyverno|gatekeeper|opa|kubewarden"},
	"admission-webhook-unreachable":         {"stage"},
	"controller-progress-deadline-exceeded": {"stage"},
	"image-invalid-name":                    {"stage"},
	"image-pull-not-found":                  {"stage"},
	"image-pull-platform-missing":           {"stage"},
	"image-pull-rate-limited":               {"stage"},
	"image-pull-short-name-unresolved":      {"stage"},
	"image-pull-unauthorized":               {"stage"},
	"node-image-gc-failed":                  {"stage"},
	"node-pod-evicted":                      {"stage", "cause-word:ephemeral-storage|nodefs|imagefs|memory|pid"},
	"request-already-exists":                {"stage"},
	"request-exec-plugin-api-version":       {"stage", "cause-word:v1alpha1|v1beta1"},
	"request-field-immutable":               {"stage"},
	"request-forbidden":                     {"stage"},
	"request-forbidden-cluster-scope":       {"stage"},
	"request-unknown-field":                 {"stage"},
	"runtime-oom-killed":                    {"stage"},
	"sandbox-ip-exhausted":                  {"stage"},
	"scheduling-insufficient-resources":     {"stage", "cause-word:cpu|memory|ephemeral-storage|pods|gpu|hugepages"},
	"service-coredns-upstream-timeout":      {"stage"},
	"service-selector-matches-nothing":      {"stage"},
	"start-permission-denied":               {"stage"},
	"termination-finalizers-stuck":          {"stage"},
	"termination-node-lost":                 {"stage"},
	"termination-pvc-protection-finalizer":  {"stage"},
	"volume-cloud-api-unauthorized":         {"stage", "cause-word:create|attach|detach|delete"},
	"volume-configmap-missing":              {"stage", "cause-word:configmap|secret"},
	"volume-multi-attach":                   {"stage"},
	"volume-node-affinity-conflict":         {"stage"},
	"volume-pvc-unbound":                    {"stage"},
	"volume-subpath-stale":                  {"stage"},
}

// ruleKey is the fleet key template of a finding of a listed rule, or "" for a rule
// not listed.
func ruleKey(f *analyze.Finding) string {
	fields, ok := ruleKeys[f.Rule]
	if !ok {
		return ""
	}
	parts := make([]string, 0, len(fields))
	for _, field := range fields {
		switch {
		case field == "stage":
			parts = append(parts, "stage="+string(f.Stage))
		case field == "subjects":
			var kinds []string
			for _, s := range f.Subjects {
				kinds = append(kinds, s.Kind)
			}
			slices.Sort(kinds)
			parts = append(parts, "subjects="+strings.Join(slices.Compact(kinds), ","))
		case strings.HasPrefix(field, "cause-word:"):
			cause := strings.ToLower(f.Cause)
			word := ""
			for _, w := range strings.Split(strings.TrimPrefix(field, "cause-word:"), "|") {
				if strings.Contains(cause, w) {
					word = w
					break
				}
			}
			parts = append(parts, "word="+word)
		}
	}
	return "key " + strings.Join(parts, " ")
}
