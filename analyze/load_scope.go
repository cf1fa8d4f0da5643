package analyze

import "slices"

// A report scoped to one namespace (or one pod) shows the findings about it and those
// linked to them; every pod still counts in the node-fit arithmetic, and a finding in
// scope may cite the node, its journals and the events about it. What only other
// namespaces hold (their events about their own objects, their workloads, services,
// claims, quotas, config maps and secrets, their pods' logs) explains nothing in scope:
// a scoped load skims it (loadScope.skim) instead of decoding it.
// Pods of every namespace are loaded, as the node facts, the lone-pod checks and the
// journals' citations read them, and so are their owners (loadScope.skims).
//
// Two parts of a scoped report still count what other namespaces show, and can differ
// from a full load's when those namespaces' findings do: a finding's number counts the
// findings of its rule before it in every namespace, and a signature's finding merges
// the evidence of every object its cause is seen for, whatever their namespace. So
// does the list of warnings, for a type error inside a list skimmed (loadScope.skim).

// loadScope says which namespaces a scoped load decodes in full.
type loadScope struct {
	namespace string
	// skimmed and skipped count the list files a scoped load skimmed, and of those the
	// ones it added nothing of.
	skimmed, skipped int
}

// newLoadScope is the scope of a load for a report about ns, or nil (everything is
// decoded) when ns is empty or when a bundle has no collection time: the reference
// time of such a bundle is the latest time any of its objects or events carries.
func newLoadScope(ns string, bundles []*loadedBundle) *loadScope {
	if ns == "" {
		return nil
	}
	for _, lb := range bundles {
		if m := lb.b.Manifest; m == nil || m.CollectedAt.IsZero() {
			return nil
		}
	}
	return &loadScope{namespace: ns}
}

// skims reports whether the list file f of a namespace is skimmed rather than decoded.
// Every pod is decoded, and so is every ReplicaSet and Job: a plan that deletes the
// pods on a node in scope says which controller recreates each pod there, up its
// chain, and how a Job counts the deletion.
func (s *loadScope) skims(f *objectFile) bool {
	return s != nil && f.namespace != "" && f.namespace != s.namespace && !slices.Contains(ownerKinds, f.kind)
}

var ownerKinds = []Kind{Pods, ReplicaSets, Jobs}

// keepsEvent reports whether an event of another namespace's events file is about
// something the scope may cite: a node (events about a cluster-scoped object are
// recorded in some namespace, most often default) or an object of the scope's own
// namespace.
func (s *loadScope) keepsEvent(kind, namespace string) bool {
	return kind == "Node" || namespace == s.namespace
}

// skimmedObject is what a skim reads of an object: enough to know that a full decode
// would warn of nothing (every item is an object with a name).
type skimmedObject struct {
	Metadata struct {
		Name string `json:"name"`
	} `json:"metadata"`
}

// skimmedEvent is what a skim reads of an event: what it is about.
type skimmedEvent struct {
	Metadata struct {
		Name string `json:"name"`
	} `json:"metadata"`
	InvolvedObject skimmedRef  `json:"involvedObject"`
	Regarding      *skimmedRef `json:"regarding"`
}

type skimmedRef struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
}

// skim reads a list file of another namespace. It reports skip when the full decode
// would add nothing the scope reads: a readable JSON list whose every item has a name
// and, for events, none of which the scope keeps (keepsEvent). Anything else is
// decoded in full, as without a scope, and warns as it did; an events file then adds
// only the events the scope keeps. A value of the wrong type inside an item of a
// skipped list goes without the warning a full decode gives: nothing in scope reads
// the item.
func (s *loadScope) skim(f *objectFile) (skip bool) {
	if f.kind != Events {
		d := decodeInto(nil, f.data, []skimmedObject(nil))
		items, _ := d.items.([]skimmedObject)
		return d.err == nil && !slices.ContainsFunc(items, func(o skimmedObject) bool { return o.Metadata.Name == "" })
	}
	d := decodeInto(nil, f.data, []skimmedEvent(nil))
	if d.err != nil {
		return false
	}
	items, _ := d.items.([]skimmedEvent)
	for _, e := range items {
		ref := e.InvolvedObject
		if e.Regarding != nil {
			ref = *e.Regarding
		}
		if e.Metadata.Name == "" || s.keepsEvent(ref.Kind, ref.Namespace) {
			return false
		}
	}
	return true
}

// ScopedLoad is what a scoped load (LoadOptions.Namespace) did with the list files of
// other namespaces: Skimmed were read only for what they are about, and Skipped of
// those added nothing to the graph.
type ScopedLoad struct {
	Namespace        string
	Skimmed, Skipped int
}

// Scoped says what a scoped load left out, nil for a load of everything.
func (g *Graph) Scoped() *ScopedLoad { return g.scoped }

// scopedOut reports whether p is of a namespace a scoped load did not decode in full.
// Its pod is there for the node facts, but not its events, its workload or its logs:
// what a rule would have explained with those reads as unexplained trouble, which the
// report leaves out with the namespace, after the floor and the catalog had been read
// for it at several times the cost of the whole analysis.
func (g *Graph) scopedOut(p *Pod) bool {
	return g.scoped != nil && p.meta.Namespace != g.scoped.Namespace
}
