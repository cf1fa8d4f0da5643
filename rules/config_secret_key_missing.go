package rules

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"podflow.dev/podflow/analyze"
)

// ConfigSecretKeyMissing finds containers whose environment reads a Secret or ConfigMap,
// or a key of one, that does not exist.
var ConfigSecretKeyMissing = &analyze.Rule{
	ID:       "config-secret-key-missing",
	Stage:    analyze.StageConfig,
	Title:    "container environment references a missing Secret, ConfigMap or key",
	Doc:      configSecretKeyMissingDoc,
	Severity: analyze.SeverityError,
	Needs: analyze.Needs{
		Required: []analyze.Kind{analyze.Pods},
		Optional: []analyze.Kind{analyze.Events, analyze.Secrets, analyze.ConfigMaps, analyze.ReplicaSets, analyze.Jobs},
	},
	Run: configSecretKeyMissing,
}

const configSecretKeyMissingDoc = `Before creating a container the kubelet resolves its environment: every env entry with
valueFrom.secretKeyRef or configMapKeyRef, and every envFrom source. When a referenced
Secret or ConfigMap does not exist, or lacks the key, and the reference is not optional,
the container cannot be created: it waits in CreateContainerConfigError with the
message "couldn't find key KEY in Secret NAMESPACE/NAME" (or "in ConfigMap
NAMESPACE/NAME"; ` + "`" + `secret "NAME" not found` + "`" + ` or ` + "`" + `configmap "NAME" not found` + "`" + ` when
the object itself is missing), and the kubelet records a Failed event "Error: …" on
every retry.

## Confirm on a live cluster

    kubectl get pod -n NAMESPACE POD -o jsonpath='{.status.containerStatuses[*].state.waiting}'
    kubectl get secret -n NAMESPACE NAME -o go-template='{{range $k, $v := .data}}{{$k}}{{"\n"}}{{end}}'

## Fix

Add the key to the Secret or ConfigMap (or create the object), or correct the key or
object name in the container's env. Mark the reference optional: true only when the
application works without the value. The kubelet retries on its own; no restart is needed.
`

var (
	// pkg/kubelet/kubelet_pods.go, makeEnvironmentVariables: "couldn't find key %v in
	// Secret %v/%v" and "couldn't find key %v in ConfigMap %v/%v".
	reEnvKeyMissing = regexp.MustCompile(`couldn't find key (\S+) in (Secret|ConfigMap) ([^/\s]+)/(\S+)`)
	// The secret and configmap managers' NotFound (pkg/kubelet/secret, pkg/kubelet/configmap):
	// `secret "db" not found`; straight from the API server: `secrets "db" not found`.
	reEnvObjectMissing = regexp.MustCompile(`\b(secret|configmap)s? "([^"]+)" not found`)
)

// envRef is one env entry or envFrom source of a container that reads a Secret or
// ConfigMap.
type envRef struct {
	// envVar is the variable's name; empty for envFrom, which imports every key.
	envVar   string
	kind     string // Secret or ConfigMap
	name     string
	key      string
	optional bool
	loc      analyze.Location
}

func (r envRef) String() string {
	if r.envVar == "" {
		return "envFrom"
	}
	return "env var " + r.envVar
}

// describe says what the reference reads, for evidence.
func (r envRef) describe() string {
	if r.envVar == "" {
		return fmt.Sprintf("envFrom imports every key of %s %s", r.kind, r.name)
	}
	return fmt.Sprintf("env var %s reads key %s of %s %s", r.envVar, r.key, r.kind, r.name)
}

func envRefs(c analyze.ContainerInfo) []envRef {
	var out []envRef
	for i, e := range c.Spec.Env {
		if e.ValueFrom == nil {
			continue
		}
		loc := c.SpecLoc().At("env", i)
		if r := e.ValueFrom.SecretKeyRef; r != nil {
			out = append(out, envRef{e.Name, "Secret", r.Name, r.Key, r.Optional != nil && *r.Optional, loc})
		}
		if r := e.ValueFrom.ConfigMapKeyRef; r != nil {
			out = append(out, envRef{e.Name, "ConfigMap", r.Name, r.Key, r.Optional != nil && *r.Optional, loc})
		}
	}
	for i, e := range c.Spec.EnvFrom {
		loc := c.SpecLoc().At("envFrom", i)
		if r := e.SecretRef; r != nil {
			out = append(out, envRef{"", "Secret", r.Name, "", r.Optional != nil && *r.Optional, loc})
		}
		if r := e.ConfigMapRef; r != nil {
			out = append(out, envRef{"", "ConfigMap", r.Name, "", r.Optional != nil && *r.Optional, loc})
		}
	}
	return out
}

// envProblem is what the kubelet could not resolve: a key of an object, or the object.
type envProblem struct {
	kind, namespace, name string
	// key is empty when the object itself is missing.
	key  string
	said string
}

func parseEnvProblem(msg, namespace string) (envProblem, bool) {
	if m := reEnvKeyMissing.FindStringSubmatch(msg); m != nil {
		return envProblem{kind: m[2], namespace: m[3], name: m[4], key: m[1], said: m[0]}, true
	}
	if m := reEnvObjectMissing.FindStringSubmatch(msg); m != nil {
		return envProblem{kind: analyze.VolumeObjectKind(m[1]), namespace: namespace, name: m[2], said: m[0]}, true
	}
	return envProblem{}, false
}

func configSecretKeyMissing(v *analyze.View) []analyze.Finding {
	var out []analyze.Finding
	for r := range v.ContainerRuns() {
		p, c := r.Subject.Pod, r.Container
		msg, event, ok := v.ConfigError(p, c)
		if !ok {
			continue
		}
		prob, ok := parseEnvProblem(msg, p.Obj.Namespace)
		if !ok {
			continue
		}
		var refs []envRef
		for _, r := range envRefs(c) {
			if r.kind == prob.kind && r.name == prob.name && !r.optional && (prob.key == "" || r.key == prob.key) {
				refs = append(refs, r)
			}
		}
		out = append(out, envFinding(v, p, c, prob, refs, event))
	}
	return out
}

func envFinding(v *analyze.View, p *analyze.Pod, c analyze.ContainerInfo, prob envProblem, refs []envRef, event *analyze.Event) analyze.Finding {
	pod := p.Obj
	w := c.Status.State.Waiting
	evidence := []analyze.Evidence{c.StatusLoc().At("state", "waiting").Evidence(w.Reason+": "+w.Message, time.Time{})}
	if event != nil {
		evidence = append(evidence, event.Evidence())
	}
	var users []string
	for _, r := range refs {
		users = append(users, r.String())
		evidence = append(evidence, r.loc.Evidence(r.describe(), pod.CreationTimestamp.Time))
	}
	who, reads := "its environment", "reads"
	if len(users) > 0 {
		who = strings.Join(users, " and ")
	}
	if len(users) > 1 {
		reads = "read"
	}
	obj := prob.namespace + "/" + prob.name
	var cause string
	if prob.key != "" {
		cause = fmt.Sprintf("container %s cannot be created (CreateContainerConfigError): %s %s key %q of %s %s, which has no such key",
			c.Name, who, reads, prob.key, prob.kind, obj)
	} else {
		cause = fmt.Sprintf("container %s cannot be created (CreateContainerConfigError): %s %s %s %s, which does not exist",
			c.Name, who, reads, prob.kind, obj)
	}
	keys, objLoc, known := objectKeys(v, prob)
	if known && keys != nil {
		evidence = append(evidence, objLoc.Evidence(fmt.Sprintf("%s %s keys: %s", prob.kind, prob.name, strings.Join(keys, ", ")), time.Time{}))
		switch {
		case prob.key == "" || slices.Contains(keys, prob.key):
			cause += "; the bundle holds it now, so it was fixed after the kubelet's last attempt"
		default:
			cause += "; it holds only the key(s) " + strings.Join(keys, ", ")
		}
	}
	fix := fmt.Sprintf("Add key %q to %s %s, or correct the key in %s; mark the reference optional only if the application works without it.",
		prob.key, prob.kind, obj, who)
	if prob.key == "" {
		fix = fmt.Sprintf("Create %s %s in namespace %s, or correct the name in %s; mark the reference optional only if the application works without it.",
			prob.kind, prob.name, prob.namespace, who)
	}
	subjects := []analyze.ObjectRef{p.Ref(), {Kind: prob.kind, Namespace: prob.namespace, Name: prob.name}}
	if wl := v.Workload(p); wl != nil {
		subjects = append(subjects, *wl)
	}
	resource := strings.ToLower(prob.kind)
	return analyze.Finding{
		Subjects:    subjects,
		Cause:       cause,
		Evidence:    evidence,
		Remediation: fix + " The kubelet retries by itself.",
		Confirm: []string{
			analyze.Command("kubectl get pod -n %s %s -o jsonpath='{.status.containerStatuses[?(@.name==\"%s\")].state.waiting.message}'", pod.Namespace, pod.Name, c.Name),
			analyze.Command("kubectl get %s -n %s %s -o go-template='{{range $k, $v := .data}}{{$k}}{{\"\\n\"}}{{end}}'", resource, prob.namespace, prob.name),
		},
		GroupKey: strings.Join([]string{prob.kind, obj, prob.key, c.Name}, "\x00"),
	}
}

// objectKeys lists the keys the bundle holds for the Secret or ConfigMap (values are
// never collected); known is false when the bundle has no such list, keys nil when the
// object is not in it.
func objectKeys(v *analyze.View, prob envProblem) (keys []string, loc analyze.Location, known bool) {
	switch prob.kind {
	case "Secret":
		if !v.Has(analyze.Secrets) {
			return nil, loc, false
		}
		s := v.Secret(prob.namespace, prob.name)
		if s == nil {
			return nil, loc, true
		}
		return analyze.SecretKeys(s.Obj), s.Loc, true
	default:
		if !v.Has(analyze.ConfigMaps) {
			return nil, loc, false
		}
		cm := v.ConfigMap(prob.namespace, prob.name)
		if cm == nil {
			return nil, loc, true
		}
		return configMapKeys(cm.Obj), cm.Loc, true
	}
}

func configMapKeys(cm *corev1.ConfigMap) []string {
	keys := make([]string, 0, len(cm.Data)+len(cm.BinaryData))
	for k := range cm.Data {
		keys = append(keys, k)
	}
	for k := range cm.BinaryData {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if len(keys) == 0 {
		return []string{"(none)"}
	}
	return keys
}
