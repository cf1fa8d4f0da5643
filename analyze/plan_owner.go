package analyze

import (
	"regexp"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// controllerOf is a controlling owner reference as an ObjectRef, or nil.
func controllerOf(meta *metav1.ObjectMeta) *ObjectRef {
	if ref, ok := controllingRef(meta); ok {
		return &ref
	}
	return nil
}

// workloadRank orders the kinds a finding may name as its workload: the top of a chain
// wins over what it controls.
var workloadRank = map[string]int{"Deployment": 5, "StatefulSet": 5, "DaemonSet": 5, "CronJob": 5, "Job": 4, "ReplicaSet": 3, "ReplicationController": 3}

// findingWorkload is the top workload of a finding: from its pods' owner chains, else
// from the workloads among its subjects (an admission finding names the Deployment
// whose pods it refuses).
func (g *Graph) findingWorkload(f *Finding, pods []planPod) (ref *ObjectRef, known bool) {
	for _, p := range pods {
		if p.pod != nil && p.ownerKnown {
			if p.workload != nil {
				return p.workload, true
			}
			r := p.ref
			return &r, true
		}
	}
	var best *ObjectRef
	for i, s := range f.Subjects {
		if workloadRank[s.Kind] > 0 && (best == nil || workloadRank[s.Kind] > workloadRank[best.Kind]) {
			best = &f.Subjects[i]
		}
	}
	if best != nil {
		return g.topOwner(best), true
	}
	if len(pods) > 0 {
		r := pods[0].ref
		return &r, false
	}
	return nil, false
}

// templatePrefix is where a workload kind keeps the pod spec.
func templatePrefix(kind string) string {
	switch kind {
	case "Pod":
		return ".spec"
	case "CronJob":
		return ".spec.jobTemplate.spec.template.spec"
	}
	return ".spec.template.spec"
}

func (g *Graph) change(f *Finding, spec *ChangeSpec, pods []planPod) Change {
	wl, known := g.findingWorkload(f, pods)
	container, init := "", false
	for _, p := range pods {
		if p.container != "" {
			container, init = p.container, p.init
			break
		}
	}
	if container == "" && wl != nil {
		// No pod to read it from (admission refused them): a template with one
		// container names it.
		if spec := g.templateSpec(*wl); spec != nil && len(spec.Containers) == 1 && len(spec.InitContainers) == 0 {
			container = spec.Containers[0].Name
		}
	}
	c := Change{}
	primary := true
	for _, t := range append([]ChangeSpecRef{{Target: spec.Target, Fields: spec.Fields}}, spec.Also...) {
		ref, fields, ok := g.resolveTarget(f, t, pods, wl, container, init)
		if !ok {
			continue
		}
		if primary {
			c.Target, c.Fields, primary = ref, fields, false
			continue
		}
		ref.UID = ""
		if ref.key() != c.Target.key() {
			c.Also = append(c.Also, ChangeRef{Target: ref, Fields: fields})
		}
	}
	if primary {
		// Nothing named the target: the workload (or the pod) is the best there is.
		if wl != nil {
			c.Target = *wl
		} else {
			c.Target = ObjectRef{Kind: "Pod"}
		}
	}
	c.Target.UID = ""
	if !known && len(pods) > 0 && c.Target.key() == pods[0].ref.key() {
		c.Target = pods[0].shownRef()
	}
	c.Suggest = suggestFor(spec, c, container)
	if !known && c.Target.Kind == "Pod" {
		// Replacing a pod that may have an owner is no fix: say what is not known instead.
		c.Suggest = ""
	}
	c.Note = changeNote(c, known, pods, container, init)
	return c
}

// resolveTarget turns one target of a spec into an object of the evidence and its field
// paths.
func (g *Graph) resolveTarget(f *Finding, t ChangeSpecRef, pods []planPod, wl *ObjectRef, container string, init bool) (ObjectRef, []string, bool) {
	ns := findingNamespace(f)
	switch t.Target {
	case changeWorkload:
		if wl == nil {
			return ObjectRef{}, nil, false
		}
		return *wl, podFields(templatePrefix(wl.Kind), t.Fields, container, init), true
	case changePod:
		if len(pods) == 0 {
			return ObjectRef{}, nil, false
		}
		return pods[0].ref, t.Fields, true
	case changeNode:
		for _, s := range f.Subjects {
			if s.Kind == "Node" {
				return s, t.Fields, true
			}
		}
		for _, p := range pods {
			if p.pod != nil && p.pod.Obj.Spec.NodeName != "" {
				return NodeRef(p.pod.Obj.Spec.NodeName), t.Fields, true
			}
		}
		return ObjectRef{}, nil, false
	case changeRegistry:
		if img := g.findingImage(f, pods, container); img != "" {
			return ObjectRef{Kind: "ImageRegistry", Name: registryHost(img)}, t.Fields, true
		}
		return ObjectRef{Kind: "ImageRegistry"}, t.Fields, true
	case changePullSecret:
		return g.pullSecret(pods, ns, t.Fields)
	}
	kinds := strings.Split(t.Target, "|")
	for _, k := range kinds {
		for _, s := range f.Subjects {
			if s.Kind == k {
				return s, t.Fields, true
			}
		}
	}
	if kinds[0] == "StorageClass" {
		return g.claimStorageClass(f), t.Fields, true
	}
	// The kind is right but the evidence does not name the object.
	ref := ObjectRef{Kind: kinds[0]}
	if !clusterScoped[kinds[0]] {
		ref.Namespace = ns
	}
	return ref, t.Fields, true
}

var clusterScoped = map[string]bool{"Node": true, "StorageClass": true, "PriorityClass": true, "PersistentVolume": true,
	"ValidatingWebhookConfiguration": true, "MutatingWebhookConfiguration": true, "Namespace": true, "ImageRegistry": true,
	"CSIDriver": true, "RuntimeClass": true}

func findingNamespace(f *Finding) string {
	for _, s := range f.Subjects {
		if s.Namespace != "" {
			return s.Namespace
		}
	}
	return ""
}

// podFields makes field paths of a pod template: "{c}" becomes the container.
func podFields(prefix string, fields []string, container string, init bool) []string {
	var out []string
	c := "containers[" + cmpOr(container, "*") + "]"
	if init {
		c = "initContainers[" + container + "]"
	}
	for _, f := range fields {
		f = strings.ReplaceAll(f, "{c}", "."+c)
		if !strings.HasPrefix(f, ".") {
			f = "." + f
		}
		if strings.HasPrefix(f, ".metadata") {
			// The template's metadata sits beside its spec.
			out = append(out, strings.TrimSuffix(prefix, ".spec")+f)
			continue
		}
		out = append(out, prefix+f)
	}
	if len(out) == 0 {
		out = []string{prefix}
	}
	return out
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// findingImage is the image of the finding's container.
func (g *Graph) findingImage(f *Finding, pods []planPod, container string) string {
	for _, p := range pods {
		if p.pod == nil {
			continue
		}
		for _, c := range append(slices.Clone(p.pod.Obj.Spec.InitContainers), p.pod.Obj.Spec.Containers...) {
			if container == "" || c.Name == container {
				return c.Image
			}
		}
	}
	if m := reImageInCause.FindStringSubmatch(f.Cause); m != nil {
		return m[1]
	}
	return ""
}

var reImageInCause = regexp.MustCompile(`image "?([a-z0-9][\w.\-/:@]*)`)

// registryHost is the registry an image reference pulls from (docker.io when the first
// path part is no host).
func registryHost(image string) string {
	first, _, found := strings.Cut(image, "/")
	if !found || !strings.ContainsAny(first, ".:") && first != "localhost" {
		return "docker.io"
	}
	return first
}

// pullSecret is the secret the pod pulls with: its own imagePullSecrets, else its
// service account's; without one, the service account that should list one.
func (g *Graph) pullSecret(pods []planPod, ns string, fields []string) (ObjectRef, []string, bool) {
	for _, p := range pods {
		if p.pod == nil {
			continue
		}
		if s := p.pod.Obj.Spec.ImagePullSecrets; len(s) > 0 {
			return ObjectRef{Kind: "Secret", Namespace: p.pod.meta.Namespace, Name: s[0].Name}, fields, true
		}
		sa := cmpOr(p.pod.Obj.Spec.ServiceAccountName, "default")
		if o, ok := g.byKey["ServiceAccount/"+p.pod.meta.Namespace+"/"+sa].(*ServiceAccount); ok && len(o.Obj.ImagePullSecrets) > 0 {
			return ObjectRef{Kind: "Secret", Namespace: p.pod.meta.Namespace, Name: o.Obj.ImagePullSecrets[0].Name}, fields, true
		}
		// No pull secret at all: create one and list it on the pod's service account.
		return ObjectRef{Kind: "ServiceAccount", Namespace: p.pod.meta.Namespace, Name: sa}, []string{".imagePullSecrets"}, true
	}
	return ObjectRef{Kind: "Secret", Namespace: ns}, fields, true
}

// claimStorageClass is the StorageClass an unbound claim asks for; without a class
// name it is the cluster's default class, which the evidence may show missing.
func (g *Graph) claimStorageClass(f *Finding) ObjectRef {
	for _, s := range f.Subjects {
		if s.Kind != "PersistentVolumeClaim" {
			continue
		}
		if o, ok := g.byKey[s.key()].(*PVC); ok && o.Obj.Spec.StorageClassName != nil && *o.Obj.Spec.StorageClassName != "" {
			return ObjectRef{Kind: "StorageClass", Name: *o.Obj.Spec.StorageClassName}
		}
	}
	return ObjectRef{Kind: "StorageClass"}
}

// suggestFor fills the spec's command, or suggests kubectl edit of the target.
func suggestFor(spec *ChangeSpec, c Change, container string) string {
	t := c.Target
	if t.Name == "" {
		return ""
	}
	node := ""
	if t.Kind == "Node" {
		node = t.Name
	}
	tmpl := spec.Suggest
	if t.Kind == "ImageRegistry" {
		return "" // not an API object: no kubectl command changes it
	}
	if spec.Target == changeWorkload || strings.Contains(tmpl, "{container}") {
		if c.Target.Kind == "Job" || c.Target.Kind == "Pod" {
			tmpl = "" // kubectl set cannot change a Job's or a Pod's template
		}
	}
	if strings.Contains(tmpl, "{container}") && container == "" {
		tmpl = ""
	}
	if tmpl == "" {
		switch t.Kind {
		case "ImageRegistry":
			return ""
		case "Job":
			return Command("kubectl get job %s -n %s -o yaml > %s.yaml   # fix the template in the manifest, then: kubectl delete job %s -n %s && kubectl create -f <fixed manifest>",
				t.Name, t.Namespace, t.Name, t.Name, t.Namespace)
		case "Pod":
			if spec.Target != changePod {
				return Command("kubectl get pod %s -n %s -o yaml > %s.yaml   # fix it there, then: kubectl replace --force -f %s.yaml (deletes the pod; save its evidence first)",
					t.Name, t.Namespace, t.Name, t.Name)
			}
		}
		if t.Namespace != "" {
			return Command("kubectl edit %s -n %s", Literal(strings.ToLower(t.Kind))+"/"+Literal(t.Name), t.Namespace)
		}
		return Command("kubectl edit %s/%s", Literal(strings.ToLower(t.Kind)), t.Name)
	}
	var args []any
	format := reSuggestPlaceholder.ReplaceAllStringFunc(strings.ReplaceAll(tmpl, "%", "%%"), func(m string) string {
		switch m {
		case "{target}":
			args = append(args, Literal(strings.ToLower(t.Kind)+"/")+Literal(nameOrPlaceholder(t.Name)))
		case "{namespace}":
			args = append(args, t.Namespace)
		case "{container}":
			args = append(args, container)
		case "{node}":
			args = append(args, node)
		case "{name}":
			args = append(args, t.Name)
		}
		return "%s"
	})
	return Command(format, args...)
}

var reSuggestPlaceholder = regexp.MustCompile(`\{(target|namespace|container|node|name)\}`)

func nameOrPlaceholder(s string) string {
	if s == "" || !isNameLike(s) {
		return Placeholder
	}
	return s
}

func isNameLike(s string) bool {
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '.') {
			return false
		}
	}
	return true
}

// changeNote says what editing the target does not do by itself, or what the evidence
// does not show.
func changeNote(c Change, known bool, pods []planPod, container string, init bool) string {
	var notes []string
	if !known && len(pods) > 0 {
		notes = append(notes, ownerUnknownNote(pods[0]))
	}
	switch c.Target.Kind {
	case "Job":
		notes = append(notes, "a Job's pod template cannot be changed: fix the manifest, delete the Job and create it again")
	case "CronJob":
		notes = append(notes, "the fixed jobTemplate applies from the next scheduled run; a running Job keeps the old template")
	case "Pod":
		if known && len(pods) > 0 && pods[0].pod != nil {
			notes = append(notes, "nothing owns the pod and most of its spec cannot be changed: recreate it from a fixed manifest")
		}
	case "StatefulSet":
		notes = append(notes, "with podManagementPolicy OrderedReady a pod that never becomes Ready is not replaced after a template change: once the template is fixed, delete that pod (its claim stays)")
	}
	switch {
	case init && container != "" && isSidecar(pods, container):
		notes = append(notes, "sidecar "+container+" (an init container with restartPolicy Always) keeps running beside the app containers: "+
			"the next init containers and the app wait until it has started (and passed its startup probe)")
	case init && container != "":
		notes = append(notes, "init container "+container+" must exit 0 before any app container starts")
	}
	return strings.Join(notes, "; ")
}

// ownerUnknownNote is what a plan says of a pod the evidence names without its owner.
func ownerUnknownNote(p planPod) string {
	return "owner not in the evidence: check `" + Command("kubectl get pod %s -n %s -o jsonpath='{.metadata.ownerReferences}'", p.nameArg(), p.nsArg()) + "` before deleting"
}

// Placeholders for a pod's name and namespace the evidence does not show.
const (
	podPlaceholder       = Literal("POD")
	namespacePlaceholder = Literal("NAMESPACE")
)

// nameArg is the pod's name as a command argument, a placeholder when the evidence does
// not show it (an import made the name up from the file).
func (p planPod) nameArg() any {
	if p.ref.Name == "" || p.pod != nil && Partial(*p.pod.meta, "name") {
		return podPlaceholder
	}
	return p.ref.Name
}

// nsArg is the pod's namespace as a command argument, a placeholder when unknown.
func (p planPod) nsArg() any {
	if p.ref.Namespace == "" || p.pod != nil && Partial(*p.pod.meta, "namespace") {
		return namespacePlaceholder
	}
	return p.ref.Namespace
}

// shownRef is the pod's reference without the parts an import made up.
func (p planPod) shownRef() ObjectRef {
	r := ObjectRef{Kind: "Pod", Namespace: p.ref.Namespace, Name: p.ref.Name}
	if p.nameArg() == podPlaceholder {
		r.Name = ""
	}
	if p.nsArg() == namespacePlaceholder {
		r.Namespace = ""
	}
	return r
}

// label names the pod for a reader: "pod shop/web-1", or what the evidence shows of it.
func (p planPod) label() string {
	r := p.shownRef()
	switch {
	case r.Name == "":
		return "the pod (its name is not in the evidence)"
	case r.Namespace == "":
		return "pod " + r.Name
	}
	return "pod " + r.NamespacedName()
}

func (p planPod) eventsCommand() string {
	sel := Value("involvedObject.name=" + p.ref.Name)
	if p.nameArg() == podPlaceholder {
		sel = Value("involvedObject.name=POD")
	}
	return Command("kubectl get events -n %s --field-selector %s -o yaml > %s-events.yaml", p.nsArg(), sel, p.nameArg())
}

// restartPolicy is a pod's restart policy, Always when unset.
func restartPolicy(p *Pod) corev1.RestartPolicy {
	if p == nil || p.Obj.Spec.RestartPolicy == "" {
		return corev1.RestartPolicyAlways
	}
	return p.Obj.Spec.RestartPolicy
}

// templateSpec is the pod template's spec of a workload the graph holds, or nil.
func (g *Graph) templateSpec(ref ObjectRef) *corev1.PodSpec {
	switch o := g.byKey[ref.key()].(type) {
	case *Deployment:
		return &o.Obj.Spec.Template.Spec
	case *StatefulSet:
		return &o.Obj.Spec.Template.Spec
	case *DaemonSet:
		return &o.Obj.Spec.Template.Spec
	case *ReplicaSet:
		return &o.Obj.Spec.Template.Spec
	case *derivedReplicaSet:
		return &o.owner.Obj.Spec.Template.Spec // equal to its own (deriveReplicaSets)
	case *Job:
		return &o.Obj.Spec.Template.Spec
	case *CronJob:
		return &o.Obj.Spec.JobTemplate.Spec.Template.Spec
	}
	return nil
}

// isSidecar reports whether the pods' init container of that name is a sidecar: an init
// container with restartPolicy Always runs for the pod's life (Kubernetes 1.28 and later).
func isSidecar(pods []planPod, container string) bool {
	for _, p := range pods {
		if p.pod == nil {
			continue
		}
		for _, c := range p.pod.Obj.Spec.InitContainers {
			if c.Name == container {
				return c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
			}
		}
	}
	return false
}
