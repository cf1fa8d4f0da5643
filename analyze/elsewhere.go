package analyze

import (
	"regexp"
	"slices"
	"strings"
)

// An object a component looks for in one namespace and the evidence shows in another
// is the cause an expert reads first: a chart installed into its own namespace whose
// controller still looks for "default/default-http-backend", a Secret created in
// default for a pod in another namespace. A root whose cause says such an object is
// not found is told where the evidence has one of that name.

// reNotFoundObject is an API server's NotFound for a namespaced object, as a component
// quotes it ("services \"web\" not found", "configmap \"cfg\" not found"), or a
// component's own "no service with name ns/name found".
var reNotFoundObject = regexp.MustCompile(`\b(services?|configmaps?|secrets?|serviceaccounts?|persistentvolumeclaims?)\s+\\*"([a-z0-9][-a-z0-9.]*)\\*"\s+not found|\bno (service|configmap|secret) with name ([a-z0-9][-a-z0-9]*)/([a-z0-9][-a-z0-9.]*) found`)

// nameElsewhere adds to each root whose cause says a namespaced object is not found
// where the evidence holds one of that kind and name: in which namespace, when that is
// not the namespace it was looked for in.
func nameElsewhere(g *Graph, fs []*Finding) {
	for _, f := range fs {
		if !f.Root || !strings.Contains(f.Cause, "not found") && !strings.Contains(f.Cause, "no ") {
			continue
		}
		for _, m := range reNotFoundObject.FindAllStringSubmatch(f.Cause, -1) {
			kind, ns, name := m[1], "", m[2]
			if kind == "" {
				kind, ns, name = m[3], m[4], m[5]
			} else {
				ns = podsNamespace(f)
			}
			if ns == "" {
				continue
			}
			where := g.namespacesOf(kind, name)
			if len(where) == 0 || slices.Contains(where, ns) {
				continue
			}
			note := " (the evidence shows " + kindName(kind) + " " + name + " in namespace " + strings.Join(where, ", ") + ", not in " + ns + ")"
			if !strings.Contains(f.Cause, note) {
				f.Cause += note
			}
		}
	}
}

// podsNamespace is the namespace of the finding's pods, when they share one the
// evidence knows.
func podsNamespace(f *Finding) string {
	ns := ""
	for _, s := range f.Subjects {
		if s.Kind != "Pod" || s.NamespaceUnknown || s.Namespace == "" {
			continue
		}
		if ns != "" && ns != s.Namespace {
			return ""
		}
		ns = s.Namespace
	}
	return ns
}

// kindName is the kind a NotFound's resource word names.
func kindName(word string) string {
	switch strings.TrimSuffix(word, "s") {
	case "service":
		return "Service"
	case "configmap":
		return "ConfigMap"
	case "secret":
		return "Secret"
	case "serviceaccount":
		return "ServiceAccount"
	}
	return "PersistentVolumeClaim"
}

// namespacesOf lists the namespaces the evidence holds an object of the kind and name
// in (the kind as a NotFound's resource word names it), sorted.
func (g *Graph) namespacesOf(word, name string) []string {
	var out []string
	add := func(r ObjectRef) {
		if r.Name == name && r.Namespace != "" && !r.NamespaceUnknown && !slices.Contains(out, r.Namespace) {
			out = append(out, r.Namespace)
		}
	}
	switch kindName(word) {
	case "Service":
		eachRef(g.services, add)
	case "ConfigMap":
		eachRef(g.configMaps, add)
	case "Secret":
		eachRef(g.secrets, add)
	case "ServiceAccount":
		eachRef(g.serviceAccounts, add)
	default:
		eachRef(g.pvcs, add)
	}
	slices.Sort(out)
	return out
}

// eachRef calls add with the reference of each object.
func eachRef[T any](objs []*Object[T], add func(ObjectRef)) {
	for _, o := range objs {
		add(o.Ref())
	}
}

// nameNode names the node a root's cause speaks of without naming it ("is not published
// for the OS and CPU architecture of the node"), when the finding's pods are bound to one
// node the evidence shows: the node is what the fix looks at (its architecture, its
// registry access, its disk).
func nameNode(g *Graph, fs []*Finding) {
	for _, f := range fs {
		if !f.Root || !reUnnamedNode.MatchString(f.Cause) {
			continue
		}
		node := ""
		for _, s := range f.Subjects {
			if s.Kind != "Pod" {
				continue
			}
			p := g.FindPod(s.Namespace, s.Name)
			if p == nil || p.Obj.Spec.NodeName == "" || node != "" && node != p.Obj.Spec.NodeName {
				node = ""
				break
			}
			node = p.Obj.Spec.NodeName
		}
		if node == "" || strings.Contains(f.Cause, node) {
			continue
		}
		f.Cause += " (the pod's node: " + node + ")"
	}
}

// reUnnamedNode is a cause that speaks of the pod's node without its name.
var reUnnamedNode = regexp.MustCompile(`\bthe node(?:'s)?\b`)
