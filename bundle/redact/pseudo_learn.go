package redact

import (
	"net/url"
	"strings"

	"podflow.dev/podflow/bundle"
)

// Identity categories, in the order pseudonyms are assigned: owners before what they
// own, so a ReplicaSet's pseudonym is built on its Deployment's.
var categories = []string{
	"cluster", "namespace", "node", "host", "deployment", "statefulset", "daemonset", "cronjob",
	"replicaset", "job", "pod", "service", "label",
}

var kindCategory = map[string]string{
	"Namespace": "namespace", "Node": "node", "Pod": "pod", "Deployment": "deployment",
	"ReplicaSet": "replicaset", "StatefulSet": "statefulset", "DaemonSet": "daemonset",
	"Job": "job", "CronJob": "cronjob", "Service": "service",
}

// learner collects the identities of a bundle before pseudonyms are assigned.
type learner struct {
	names map[string]map[string]bool
	ips   map[string]bool
	uids  map[string]bool
	// doc is the JSON document being read.
	doc *jparser
}

func (l *learner) add(category, s string) {
	if s == "" {
		return
	}
	// A host's short name appears on its own too (static pod names, journal lines);
	// learning it lets the FQDN take the short name's pseudonym.
	if short, _, ok := strings.Cut(s, "."); ok && (category == "node" || category == "host") && !isIPv4([]byte(s)) {
		l.add(category, short)
	}
	if l.names[category] == nil {
		l.names[category] = map[string]bool{}
	}
	l.names[category][s] = true
}

// Learn adds every identity in a bundle's files and manifest to the mapping: names
// from object metadata, owner references, events and paths; every IPv4 address and UID
// found anywhere. Pseudonyms are assigned in sorted order, so the same bundle always
// maps the same way. Learn from redacted files, so no secret ends up in the mapping.
func (p *Pseudonymizer) Learn(files map[string][]byte, m *bundle.Manifest) {
	l := &learner{names: map[string]map[string]bool{}, ips: map[string]bool{}, uids: map[string]bool{}}
	for name, data := range files {
		info := bundle.ParsePath(name)
		l.add("namespace", info.Namespace)
		if !wellKnown[info.Namespace] {
			l.add("pod", info.Pod)
		}
		l.add("node", info.Node)
		if looksLikeJSON(data) {
			if root, doc, err := parseJSON(data); err == nil {
				l.doc = doc
				l.json(root, fileItemKind(name))
				continue
			}
		}
		l.text(data)
	}
	if m != nil {
		l.add("cluster", m.Cluster.Name)
		if u, err := url.Parse(m.Cluster.Server); err == nil && u.Hostname() != "" && !isIPv4([]byte(u.Hostname())) {
			l.add("host", u.Hostname())
		}
		for _, ns := range m.Scope.Namespaces {
			l.add("namespace", ns)
		}
		l.add("node", m.Scope.Node)
		l.text([]byte(m.Cluster.Server))
	}
	// A name seen in several roles takes the first category's pseudonym; names are
	// assigned shortest first, so a Deployment's pseudonym exists before its ReplicaSet's
	// is built on it.
	category := map[string]string{}
	taken := map[string]bool{}
	for i := len(categories) - 1; i >= 0; i-- {
		for s := range l.names[categories[i]] {
			category[s] = categories[i]
			taken[s] = true
		}
	}
	for s := range p.m.Names {
		taken[s] = true
	}
	for _, s := range sortedKeys(taken) {
		if c, ok := category[s]; ok {
			p.name(c, s, taken)
		}
	}
	for _, s := range sortedKeys(l.uids) {
		p.uid(s)
	}
	for _, s := range sortedKeys(l.ips) {
		p.ip(s)
	}
}

// text collects the IPs and UIDs of free text, including a UID that starts a longer
// token (0f5e...-kube-api-access-x2x9z in a kubelet volume name).
func (l *learner) text(data []byte) {
	tokens(data, func(s, e int) {
		t := data[s:e]
		switch {
		case isIPv4(t):
			l.ips[string(t)] = true
		case isUUID(t):
			l.uids[string(t)] = true
		case len(t) > 36 && t[36] == '-' && isUUID(t[:36]):
			l.uids[string(t[:36])] = true
		}
	})
}

// json walks a document for object metadata and the names objects refer to.
func (l *learner) json(n *jnode, itemKind string) {
	switch n.kind {
	case jString:
		l.text([]byte(l.doc.str(n)))
	case jArray:
		kids := l.doc.kids(n)
		for i := range kids {
			l.json(&kids[i], itemKind)
		}
	case jObject:
		kind := l.doc.memberString(n, "kind")
		self := kind
		if self == "" && l.doc.member(n, "items") == nil {
			self = itemKind
		}
		l.object(n, self)
		childKind := ""
		if strings.HasSuffix(kind, "List") {
			childKind = strings.TrimSuffix(kind, "List")
		} else if kind == "" {
			childKind = itemKind
		}
		kids := l.doc.kids(n)
		for i := range kids {
			if l.doc.key(&kids[i]) == "items" {
				l.json(&kids[i], childKind)
			} else {
				l.json(&kids[i], "")
			}
		}
	}
}

// object collects what one Kubernetes object says about identities.
func (l *learner) object(n *jnode, kind string) {
	if md := l.doc.member(n, "metadata"); md != nil && md.kind == jObject {
		name := l.doc.memberString(md, "name")
		ns := l.doc.memberString(md, "namespace")
		// Objects of kube-system and the like are the same in every cluster.
		if c, ok := kindCategory[kind]; ok && !wellKnown[ns] {
			l.add(c, name)
		}
		l.add("namespace", ns)
		l.labels(l.doc.member(md, "labels"))
		if refs := l.doc.member(md, "ownerReferences"); refs != nil {
			kids := l.doc.kids(refs)
			for i := range kids {
				l.reference(&kids[i])
			}
		}
	}
	for _, field := range []string{"involvedObject", "regarding", "related"} {
		l.reference(l.doc.member(n, field))
	}
	if spec := l.doc.member(n, "spec"); spec != nil {
		nodeName := l.doc.memberString(spec, "nodeName")
		l.add("node", nodeName)
		sel := l.doc.member(spec, "selector")
		l.labels(sel)
		l.labels(l.doc.member(sel, "matchLabels"))
	}
	if kind == "Node" {
		if addrs := l.doc.member(l.doc.member(n, "status"), "addresses"); addrs != nil {
			kids := l.doc.kids(addrs)
			for i := range kids {
				a := &kids[i]
				t := l.doc.memberString(a, "type")
				addr := l.doc.memberString(a, "address")
				if t == "Hostname" || t == "InternalDNS" || t == "ExternalDNS" {
					l.add("host", addr)
				}
			}
		}
	}
}

func (l *learner) reference(r *jnode) {
	if r == nil || r.kind != jObject {
		return
	}
	kind := l.doc.memberString(r, "kind")
	name := l.doc.memberString(r, "name")
	ns := l.doc.memberString(r, "namespace")
	if c, ok := kindCategory[kind]; ok && !wellKnown[ns] {
		l.add(c, name)
	}
	l.add("namespace", ns)
}

// labels collects label values, except those of labels Kubernetes defines (os, arch,
// hashes), which identify nothing.
func (l *learner) labels(m *jnode) {
	if m == nil || m.kind != jObject {
		return
	}
	kids := l.doc.kids(m)
	for i := range kids {
		if v := &kids[i]; v.kind == jString && !systemLabel(l.doc.key(v)) {
			l.add("label", l.doc.str(v))
		}
	}
}

func systemLabel(key string) bool {
	if strings.HasSuffix(key, "-hash") {
		return true
	}
	domain, _, ok := strings.Cut(key, "/")
	if !ok || strings.HasPrefix(domain, "app.") {
		return false
	}
	return domain == "kubernetes.io" || domain == "k8s.io" ||
		strings.HasSuffix(domain, ".kubernetes.io") || strings.HasSuffix(domain, ".k8s.io")
}
