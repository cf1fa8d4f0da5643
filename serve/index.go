// Package serve answers the read-only part of the Kubernetes API from a bundle, so
// kubectl (get, describe, logs, events) and other clients browse the evidence offline
// as they would browse the cluster it came from. Everything it serves was read from the
// bundle, which is untrusted: URLs are only ever looked up in an index built when the
// server starts, never turned into paths, and what a response holds is bounded.
package serve

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/version"

	"podflow.dev/podflow/bundle"
)

// object is one API object of the bundle, decoded once at start.
type object struct {
	namespace, name string
	uid             string
	created         time.Time
	labels          labels.Set
	fields          fields.Set
	// item is the object as the bundle holds it, with apiVersion and kind set.
	item map[string]any
}

// resource is one API resource the bundle holds objects of.
type resource struct {
	list       bundle.ResourceList
	singular   string
	shortNames []string
	categories []string
	// fieldLabels are the field selector labels the API server supports for it.
	fieldLabels []string
	objects     []*object // sorted by namespace, then name
	byKey       map[string]*object
}

// logKey names one container log of the bundle.
type logKey struct {
	namespace, pod, container string
	previous                  bool
}

// index is what a server serves: every object of the bundles by resource, and the
// container logs.
type index struct {
	resources []*resource // in the order of bundle.Lists
	logs      map[logKey][]byte
	version   version.Info
	// now is the time ages are counted from.
	now func() time.Time
	// skipped counts list items that could not be served (not an object, no name).
	skipped int
}

// apiNames are what discovery says of a resource beyond the bundle's table of lists.
var apiNames = map[string]struct {
	short      []string
	categories []string
}{
	"pods":                     {[]string{"po"}, []string{"all"}},
	"nodes":                    {[]string{"no"}, nil},
	"namespaces":               {[]string{"ns"}, nil},
	"events":                   {[]string{"ev"}, nil},
	"services":                 {[]string{"svc"}, []string{"all"}},
	"deployments":              {[]string{"deploy"}, []string{"all"}},
	"replicasets":              {[]string{"rs"}, []string{"all"}},
	"statefulsets":             {[]string{"sts"}, []string{"all"}},
	"daemonsets":               {[]string{"ds"}, []string{"all"}},
	"jobs":                     {nil, []string{"all"}},
	"cronjobs":                 {[]string{"cj"}, []string{"all"}},
	"persistentvolumeclaims":   {[]string{"pvc"}, nil},
	"persistentvolumes":        {[]string{"pv"}, nil},
	"configmaps":               {[]string{"cm"}, nil},
	"serviceaccounts":          {[]string{"sa"}, nil},
	"resourcequotas":           {[]string{"quota"}, nil},
	"limitranges":              {[]string{"limits"}, nil},
	"storageclasses":           {[]string{"sc"}, nil},
	"priorityclasses":          {[]string{"pc"}, nil},
	"poddisruptionbudgets":     {[]string{"pdb"}, nil},
	"networkpolicies":          {[]string{"netpol"}, nil},
	"endpoints":                {[]string{"ep"}, nil},
	"ingresses":                {[]string{"ing"}, nil},
	"horizontalpodautoscalers": {[]string{"hpa"}, []string{"all"}},
}

// fieldPaths are the field selector labels the API server supports beyond
// metadata.name and metadata.namespace, by resource, and where each is in the object.
var fieldPaths = map[string]map[string][]string{
	"pods": {
		"spec.nodeName":            {"spec", "nodeName"},
		"spec.restartPolicy":       {"spec", "restartPolicy"},
		"spec.schedulerName":       {"spec", "schedulerName"},
		"spec.serviceAccountName":  {"spec", "serviceAccountName"},
		"status.phase":             {"status", "phase"},
		"status.podIP":             {"status", "podIP"},
		"status.nominatedNodeName": {"status", "nominatedNodeName"},
	},
	"events": {
		"involvedObject.kind":            {"involvedObject", "kind"},
		"involvedObject.namespace":       {"involvedObject", "namespace"},
		"involvedObject.name":            {"involvedObject", "name"},
		"involvedObject.uid":             {"involvedObject", "uid"},
		"involvedObject.apiVersion":      {"involvedObject", "apiVersion"},
		"involvedObject.resourceVersion": {"involvedObject", "resourceVersion"},
		"involvedObject.fieldPath":       {"involvedObject", "fieldPath"},
		"reason":                         {"reason"},
		"reportingComponent":             {"reportingComponent"},
		"source":                         {"source", "component"},
		"type":                           {"type"},
	},
	"nodes":      {"spec.unschedulable": {"spec", "unschedulable"}},
	"namespaces": {"status.phase": {"status", "phase"}},
	"secrets":    {"type": {"type"}},
}

// newIndex reads every resource list and container log of the bundles. An object in
// two bundles is served from the first.
func newIndex(bundles []*bundle.Bundle, now func() time.Time) (*index, error) {
	ix := &index{logs: map[logKey][]byte{}, now: now}
	byName := map[string]*resource{}
	for _, b := range bundles {
		for _, name := range b.Names() {
			info := bundle.ParsePath(name)
			switch info.Area {
			case "log":
				k := logKey{info.Namespace, info.Pod, info.Container, info.Previous}
				if _, seen := ix.logs[k]; !seen {
					data, err := b.ReadFile(name)
					if err != nil {
						return nil, err
					}
					ix.logs[k] = data
				}
				continue
			case "cluster", "namespaced":
			default:
				continue
			}
			list, ok := bundle.ListNamed(info.Kind)
			if !ok || list.Namespaced != (info.Area == "namespaced") {
				continue
			}
			data, err := b.ReadFile(name)
			if err != nil {
				return nil, err
			}
			r := byName[list.Group+"/"+list.Resource]
			if r == nil {
				r = newResource(list)
				byName[list.Group+"/"+list.Resource] = r
			}
			ix.skipped += r.add(data, info.Namespace)
		}
		if ix.version.GitVersion == "" {
			ix.version = serverVersion(b)
		}
	}
	// Every resource of the format is served, as an empty list where the bundle holds
	// none: an API server has each of them, and a client (kubectl get ing, a dashboard
	// listing network policies) reads "none" where the cluster had none. Secrets are
	// the exception: a collection reads them only when asked, so their absence says
	// nothing about the cluster.
	for _, l := range bundle.Lists() {
		r := byName[l.Group+"/"+l.Resource]
		if r == nil && l.Name != bundle.KindSecrets && l.Namespace == "" {
			r = newResource(l)
			byName[l.Group+"/"+l.Resource] = r
		}
		if r != nil && !slices.Contains(ix.resources, r) {
			r.sort()
			ix.resources = append(ix.resources, r)
		}
		if l.Name == bundle.KindEndpointSlices {
			ix.resources = append(ix.resources, deriveEndpoints(byName["/services"], r))
		}
	}
	if ix.version.GitVersion == "" {
		ix.version = version.Info{GitVersion: "v0.0.0-unknown", Platform: "bundle"}
	}
	return ix, nil
}

func newResource(list bundle.ResourceList) *resource {
	// A list read from one namespace of a namespaced resource (node Leases) is served
	// as that resource.
	if list.Namespace != "" {
		list.Namespaced = true
	}
	r := &resource{list: list, singular: strings.ToLower(list.Kind), byKey: map[string]*object{}}
	n := apiNames[list.Resource]
	r.shortNames, r.categories = n.short, n.categories
	r.fieldLabels = []string{"metadata.name"}
	if list.Namespaced {
		r.fieldLabels = append(r.fieldLabels, "metadata.namespace")
	}
	for label := range fieldPaths[list.Resource] {
		r.fieldLabels = append(r.fieldLabels, label)
	}
	slices.Sort(r.fieldLabels)
	return r
}

// add decodes one list file and indexes its items; it returns how many it could not
// serve. A file that is not a list is skipped whole: analyze reports it.
func (r *resource) add(data []byte, fileNamespace string) int {
	var list struct {
		Items []json.RawMessage `json:"items"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&list); err != nil {
		return 1
	}
	skipped := 0
	for _, raw := range list.Items {
		if r.list.Resource == "pods" && r.list.Group == "" {
			raw = podFromRow(raw)
		}
		o := r.decode(raw, fileNamespace)
		if o == nil {
			skipped++
			continue
		}
		key := o.namespace + "/" + o.name
		if _, dup := r.byKey[key]; dup {
			continue
		}
		r.byKey[key] = o
		r.objects = append(r.objects, o)
	}
	return skipped
}

func (r *resource) decode(raw json.RawMessage, fileNamespace string) *object {
	var item map[string]any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&item); err != nil || item == nil {
		return nil
	}
	meta, _ := item["metadata"].(map[string]any)
	if meta == nil {
		return nil
	}
	name, _ := meta["name"].(string)
	if name == "" {
		return nil
	}
	ns := ""
	if r.list.Namespaced {
		ns, _ = meta["namespace"].(string)
		if ns == "" {
			ns = fileNamespace
			if r.list.Namespace != "" {
				ns = r.list.Namespace
			}
			meta["namespace"] = ns
		}
		if ns == "" {
			return nil
		}
	} else {
		delete(meta, "namespace")
	}
	item["apiVersion"], item["kind"] = r.list.APIVersion(), r.list.Kind
	o := &object{namespace: ns, name: name, item: item, labels: labels.Set{}, fields: fields.Set{"metadata.name": name}}
	o.uid, _ = meta["uid"].(string)
	if ts, ok := meta["creationTimestamp"].(string); ok {
		o.created, _ = time.Parse(time.RFC3339, ts)
	}
	if l, ok := meta["labels"].(map[string]any); ok {
		for k, v := range l {
			if s, ok := v.(string); ok {
				o.labels[k] = s
			}
		}
	}
	if r.list.Namespaced {
		o.fields["metadata.namespace"] = ns
	}
	for label, path := range fieldPaths[r.list.Resource] {
		o.fields[label] = fieldValue(item, path)
	}
	return o
}

// fieldValue is the string a field selector compares a field with: a string as it
// is, a boolean as true or false, an absent field as empty.
func fieldValue(item map[string]any, path []string) string {
	var v any = item
	for _, p := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return ""
		}
		v = m[p]
	}
	switch v := v.(type) {
	case string:
		return v
	case bool:
		return fmt.Sprint(v)
	case json.Number:
		return v.String()
	}
	return ""
}

func (r *resource) sort() {
	slices.SortFunc(r.objects, func(a, b *object) int {
		if c := strings.Compare(a.namespace, b.namespace); c != 0 {
			return c
		}
		return strings.Compare(a.name, b.name)
	})
}

// serverVersion is the cluster's version as the bundle recorded it: the version file
// a collection writes, else the manifest's version string.
func serverVersion(b *bundle.Bundle) version.Info {
	if data, err := b.ReadFile(bundle.ClusterVersionPath); err == nil {
		var f struct {
			Info version.Info `json:"info"`
		}
		if json.Unmarshal(data, &f) == nil && f.Info.GitVersion != "" {
			return f.Info
		}
	}
	if b.Manifest != nil && b.Manifest.Cluster.ServerVersion != "" {
		v := version.Info{GitVersion: b.Manifest.Cluster.ServerVersion}
		if major, minor, ok := strings.Cut(strings.TrimPrefix(v.GitVersion, "v"), "."); ok {
			v.Major = major
			v.Minor, _, _ = strings.Cut(minor, ".")
		}
		return v
	}
	return version.Info{}
}

// lookup finds the resource a URL names by group, version and plural name.
func (ix *index) lookup(group, ver, plural string) *resource {
	for _, r := range ix.resources {
		if r.list.Group == group && r.list.Version == ver && r.list.Resource == plural {
			return r
		}
	}
	return nil
}

// groups lists the API groups the bundle holds resources of (not the core group), each
// once, in the order of the bundle's lists.
func (ix *index) groups() []string {
	var out []string
	for _, r := range ix.resources {
		if r.list.Group != "" && !slices.Contains(out, r.list.Group) {
			out = append(out, r.list.Group)
		}
	}
	return out
}

// version is the one version a group is served at.
func (ix *index) groupVersion(group string) string {
	for _, r := range ix.resources {
		if r.list.Group == group {
			return r.list.Version
		}
	}
	return ""
}
