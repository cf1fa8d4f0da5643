package analyze

import (
	"strings"
)

// ChangeSpec says where the fix of a cause lives, as data: the change table below holds
// one per rule, a signature may carry one (`change:` in its YAML), and a stage default
// covers the rest.
type ChangeSpec struct {
	// Target is what to edit: "workload" (the top of the pods' owner chain), "node",
	// "registry" (the image's registry host), "pull-secret" (the pod's image pull
	// secret), "pod" (the pod object itself), or an API kind ("ResourceQuota",
	// "StorageClass", "ValidatingWebhookConfiguration", ...), taken from the finding's
	// subjects. Several kinds separated by "|" take the first the subjects hold.
	Target string `json:"target"`
	// Fields are field paths of the target. For a workload they are relative to the pod
	// spec and "{c}" is the container (containers[app] or initContainers[init]); the
	// owner kind adds its template's prefix.
	Fields []string `json:"fields,omitempty"`
	// Also names other targets whose edit fixes the cause instead, with their fields.
	Also []ChangeSpecRef `json:"also,omitempty"`
	// Suggest is a command for a person to review; {target} (kind/name), {namespace},
	// {container} and {node} are filled in. Without it podflow suggests kubectl edit.
	Suggest string `json:"suggest,omitempty"`
	// Recurs says whether a replacement pod meets the cause again: "yes" (it is in the
	// template or a cluster object), "maybe" (transient: a rate limit, capacity), or
	// "node" (tied to the node: a replacement elsewhere escapes it).
	Recurs string `json:"recurs,omitempty"`
}

// ChangeSpecRef is another target of a ChangeSpec.
type ChangeSpecRef struct {
	Target string   `json:"target"`
	Fields []string `json:"fields,omitempty"`
}

// Valid change targets besides API kinds.
const (
	changeWorkload   = "workload"
	changeNode       = "node"
	changeRegistry   = "registry"
	changePullSecret = "pull-secret"
	changePod        = "pod"
)

// recurs values.
const (
	recursYes   = "yes"
	recursMaybe = "maybe"
	recursNode  = "node"
)

func w(fields ...string) *ChangeSpec {
	return &ChangeSpec{Target: changeWorkload, Fields: fields, Recurs: recursYes}
}

func (s *ChangeSpec) also(target string, fields ...string) *ChangeSpec {
	s.Also = append(s.Also, ChangeSpecRef{Target: target, Fields: fields})
	return s
}

func (s *ChangeSpec) recurs(r string) *ChangeSpec { s.Recurs = r; return s }

func (s *ChangeSpec) suggest(cmd string) *ChangeSpec { s.Suggest = cmd; return s }

func to(target string, fields ...string) *ChangeSpec {
	return &ChangeSpec{Target: target, Fields: fields, Recurs: recursYes}
}

const (
	suggestImage     = "kubectl set image {target} -n {namespace} {container}=<fixed image reference>"
	suggestResources = "kubectl set resources {target} -n {namespace} -c {container} --limits=memory=<new limit>"
)

// changeTable holds, per rule ID, where its cause is fixed. rules.TestChangeTable ties
// its keys to the registry.
var changeTable = map[string]*ChangeSpec{
	"admission-limitrange-violated": to("LimitRange", ".spec.limits").also(changeWorkload, "{c}.resources"),
	"admission-pod-security":        w(".securityContext", "{c}.securityContext").also("Namespace", `.metadata.labels["pod-security.kubernetes.io/enforce"]`),
	"admission-priorityclass-missing": to("PriorityClass").also(changeWorkload, ".priorityClassName").
		suggest("kubectl create priorityclass <name> --value=<priority>   # or fix .priorityClassName in {target}"),
	"admission-quota-exceeded":           to("ResourceQuota", ".spec.hard").also(changeWorkload, "{c}.resources.requests", "{c}.resources.limits"),
	"admission-quota-resources-required": w("{c}.resources.requests", "{c}.resources.limits").also("LimitRange", ".spec.limits[].default", ".spec.limits[].defaultRequest"),
	"admission-serviceaccount-missing": to("ServiceAccount").also(changeWorkload, ".serviceAccountName").
		suggest("kubectl create serviceaccount <name> -n {namespace}   # or fix .serviceAccountName in {target}"),
	"admission-webhook-denied":                 w(".metadata", ".securityContext", "{c}").also("ValidatingWebhookConfiguration|MutatingWebhookConfiguration", ".webhooks[].rules", ".webhooks[].namespaceSelector", ".webhooks[].objectSelector"),
	"admission-webhook-unreachable":            to("ValidatingWebhookConfiguration|MutatingWebhookConfiguration", ".webhooks[].clientConfig", ".webhooks[].timeoutSeconds", ".webhooks[].failurePolicy"),
	"config-run-as-non-root":                   w(".securityContext.runAsUser", "{c}.securityContext.runAsUser"),
	"config-secret-key-missing":                to("Secret|ConfigMap", ".data").also(changeWorkload, "{c}.env[].valueFrom", "{c}.envFrom"),
	"controller-daemonset-failed-placement":    to("DaemonSet", ".spec.template.spec.tolerations", ".spec.template.spec.nodeSelector", ".spec.template.spec.affinity.nodeAffinity").also("Node", ".spec.taints", ".metadata.labels"),
	"controller-job-backoff-limit":             w("{c}", ".restartPolicy"),
	"controller-progress-deadline-exceeded":    w("{c}"),
	"controller-replicas-zero":                 to("Deployment|StatefulSet|ReplicaSet", ".spec.replicas").suggest("kubectl scale {target} -n {namespace} --replicas=<count>"),
	"controller-rollout-stuck":                 w("{c}"),
	"controller-statefulset-stuck":             w("{c}"),
	"image-invalid-name":                       w("{c}.image").suggest(suggestImage),
	"image-never-pull":                         w("{c}.imagePullPolicy", "{c}.image").also(changeNode),
	"image-pull-dns":                           to(changeRegistry).also(changeWorkload, "{c}.image").suggest(suggestImage),
	"image-pull-not-found":                     w("{c}.image").suggest(suggestImage),
	"image-pull-rate-limited":                  to(changePullSecret, ".data[\".dockerconfigjson\"]").also(changeWorkload, ".imagePullSecrets", "{c}.image").recurs(recursMaybe),
	"image-pull-unauthorized":                  to(changePullSecret, ".data[\".dockerconfigjson\"]").also(changeWorkload, ".imagePullSecrets", "{c}.image"),
	"image-pull-x509":                          to(changeRegistry).also(changeNode),
	"node-not-ready":                           to(changeNode).recurs(recursNode),
	"node-pod-evicted":                         w("{c}.resources.limits", ".volumes[].emptyDir.sizeLimit").also(changeNode).recurs(recursMaybe),
	"probe-liveness-restarts":                  w("{c}.livenessProbe"),
	"probe-readiness-failing":                  w("{c}.readinessProbe"),
	"probe-startup-failing":                    w("{c}.startupProbe"),
	"runtime-crash-exit":                       w("{c}.image", "{c}.command", "{c}.args", "{c}.env"),
	"runtime-oom-killed":                       w("{c}.resources.limits.memory").suggest(suggestResources),
	"sandbox-create-failed":                    to(changeNode).also(changeWorkload, ".runtimeClassName").recurs(recursNode),
	"sandbox-image-pull-failed":                to(changeNode).recurs(recursNode),
	"sandbox-ip-exhausted":                     to(changeNode, ".spec.podCIDR").recurs(recursNode),
	"sandbox-network-not-ready":                to(changeNode).recurs(recursNode),
	"scheduling-affinity-unsatisfiable":        w(".affinity"),
	"scheduling-host-port-conflict":            w("{c}.ports[].hostPort").recurs(recursMaybe),
	"scheduling-insufficient-resources":        w("{c}.resources.requests").also(changeNode).recurs(recursMaybe),
	"scheduling-node-selector-mismatch":        w(".nodeSelector", ".affinity.nodeAffinity").also(changeNode, ".metadata.labels"),
	"scheduling-topology-spread-unsatisfiable": w(".topologySpreadConstraints"),
	"scheduling-untolerated-taint":             w(".tolerations").also(changeNode, ".spec.taints"),
	"service-endpointslice-missing":            to("Service", ".spec.selector"),
	"service-no-ready-endpoints":               w("{c}.readinessProbe").also("Service", ".spec.selector"),
	"service-selector-matches-nothing":         to("Service", ".spec.selector").also(changeWorkload, ".metadata.labels"),
	"service-without-endpoints":                to("Service", ".spec.selector").also(changeWorkload, ".metadata.labels"),
	"service-target-port-mismatch":             to("Service", ".spec.ports[].targetPort").also(changeWorkload, "{c}.ports"),
	"start-command-not-found":                  w("{c}.command", "{c}.args", "{c}.image"),
	"start-exec-format-error":                  w("{c}.image", ".nodeSelector[\"kubernetes.io/arch\"]").suggest(suggestImage),
	"start-init-container-failed":              w("{c}"),
	"start-permission-denied":                  w("{c}.command", "{c}.securityContext", ".securityContext"),
	"termination-deletion-stalled":             to(changeNode).recurs(recursNode),
	"termination-finalizers-stuck": to(changePod, ".metadata.finalizers").
		suggest(`kubectl patch pod {name} -n {namespace} --type=merge -p '{"metadata":{"finalizers":null}}'   # only once the finalizer's controller is known to be gone`),
	"termination-grace-period-overrun": w(".terminationGracePeriodSeconds", "{c}.lifecycle.preStop"),
	"termination-node-lost":            to(changeNode).recurs(recursNode),
	"volume-configmap-missing":         to("ConfigMap|Secret").also(changeWorkload, ".volumes"),
	"volume-csi-driver-missing":        to(changeNode).also("StorageClass", ".provisioner").recurs(recursNode),
	"volume-multi-attach":              to("PersistentVolumeClaim").also(changeWorkload, ".volumes").recurs(recursMaybe),
	"volume-node-affinity-conflict":    to("PersistentVolume", ".spec.nodeAffinity").also("StorageClass", ".volumeBindingMode"),
	"volume-pvc-unbound":               to("StorageClass").also("PersistentVolumeClaim", ".spec.storageClassName"),
	UnexplainedRule:                    w("{c}").recurs(recursMaybe),
}

// stageChange is the default for a finding whose rule has no entry and whose signature
// names no change: where a cause at that stage is usually fixed.
var stageChange = map[Stage]*ChangeSpec{
	StageAdmission:   w(),
	StageController:  w(),
	StageScheduling:  w(".affinity", ".nodeSelector", ".tolerations", "{c}.resources.requests").recurs(recursMaybe),
	StageNode:        to(changeNode).recurs(recursNode),
	StageSandbox:     to(changeNode).recurs(recursNode),
	StageImage:       w("{c}.image"),
	StageVolume:      w(".volumes", "{c}.volumeMounts"),
	StageConfig:      w("{c}.env", "{c}.envFrom", ".securityContext"),
	StageStart:       w("{c}.command", "{c}.args", "{c}.securityContext"),
	StageRuntime:     w("{c}"),
	StageProbe:       w("{c}.livenessProbe", "{c}.readinessProbe", "{c}.startupProbe"),
	StageService:     to("Service", ".spec"),
	StageTermination: w(".terminationGracePeriodSeconds"),
}

// ValidChangeTarget reports whether a signature's change target is one podflow resolves.
func ValidChangeTarget(t string) bool {
	for _, k := range strings.Split(t, "|") {
		switch k {
		case changeWorkload, changeNode, changeRegistry, changePullSecret, changePod:
			continue
		}
		if k == "" || !isAPIKind(k) {
			return false
		}
	}
	return t != ""
}

func isAPIKind(k string) bool {
	if k == "" || k[0] < 'A' || k[0] > 'Z' {
		return false
	}
	for _, r := range k {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return false
		}
	}
	return true
}

// changeSpecFor picks a finding's change spec: its rule's entry, its signature's, or
// its stage's default.
func changeSpecFor(f *Finding) *ChangeSpec {
	if s := changeTable[f.Rule]; s != nil {
		return s
	}
	if f.sig != nil && f.sig.Change != nil {
		s := *f.sig.Change
		if s.Recurs == "" {
			s.Recurs = recursYes
		}
		return &s
	}
	if s := stageChange[f.Stage]; s != nil {
		return s
	}
	return w()
}

// ChangeTableRules lists the rule IDs the change table holds, for the test that ties
// it to the registry.
func ChangeTableRules() []string {
	var out []string
	for id := range changeTable {
		out = append(out, id)
	}
	return out
}

// check validates a signature's change (nil is valid: the stage's default applies).
func (s *ChangeSpec) check() *FieldError {
	if s == nil {
		return nil
	}
	if !ValidChangeTarget(s.Target) {
		return &FieldError{Field: "change.target", Msg: "must be workload, node, registry, pull-secret, pod or an API kind such as ResourceQuota (several kinds joined by |)"}
	}
	switch s.Recurs {
	case "", recursYes, recursMaybe, recursNode:
	default:
		return &FieldError{Field: "change.recurs", Msg: "must be yes, maybe or node"}
	}
	for i, f := range s.Fields {
		if !strings.HasPrefix(f, ".") && !strings.HasPrefix(f, "{c}") {
			return &FieldError{Field: "change.fields[" + itoa(i) + "]", Msg: "a field path starts with . (or {c} for the container in a workload's pod template)"}
		}
	}
	if m := reSuggestPlaceholder.ReplaceAllString(s.Suggest, ""); rePlaceholder.MatchString(m) {
		return &FieldError{Field: "change.suggest", Msg: "unknown placeholder; known: {target}, {namespace}, {container}, {node}, {name}"}
	}
	return nil
}
