package collect

import (
	"context"
	"fmt"
	"maps"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"

	"podflow.dev/podflow/bundle"
)

// listing is one list source: a kind in one namespace, across all namespaces, or
// cluster-wide.
type listing struct {
	src *resourceSource
	// namespace is the namespace listed; "" for cluster-wide and all-namespace lists.
	namespace string
	opts      metav1.ListOptions
	// getNames, when set, fetches these objects one by one instead of listing: a user
	// allowed to read one namespace may not be allowed to list them all.
	getNames []string
	slot     int

	items []runtime.Object
	rv    string
	err   error
	// targets and nodes are what a streamed pod list keeps of its pods: the containers
	// whose logs to read and the nodes they run on.
	targets []logTarget
	nodes   []string
}

// planLists decides which lists to read and reserves their manifest sources.
func (c *collector) planLists() []*listing {
	var out []*listing
	for i := range resourceSources {
		src := &resourceSources[i]
		switch {
		case src.kind == bundle.KindSecrets && !c.opts.IncludeSecretKeys:
			continue // never read by default, and so absent from the manifest
		case src.kind == bundle.KindLeases && c.chain != nil:
			continue // a pod's chain holds no namespaced Lease
		}
		opts := metav1.ListOptions{}
		if src.kind == bundle.KindPods {
			opts.LabelSelector = c.opts.LabelSelector
			if c.chain != nil {
				opts.FieldSelector = fields.OneTermEqualSelector("metadata.name", c.chain.pod.Name).String()
			}
		}
		switch {
		case !src.namespaced:
			l := &listing{src: src, namespace: src.namespace, opts: opts}
			if src.kind == bundle.KindNamespaces && !c.opts.AllNamespaces {
				l.getNames = c.opts.Namespaces
			}
			l.slot = c.reserve(src.kind)
			out = append(out, l)
		case c.opts.AllNamespaces:
			out = append(out, &listing{src: src, opts: opts, slot: c.reserve(src.kind)})
		default:
			for _, ns := range c.opts.Namespaces {
				out = append(out, &listing{src: src, namespace: ns, opts: opts, slot: c.reserve(src.kind + "/" + ns)})
			}
		}
	}
	return out
}

func (c *collector) fetchList(ctx context.Context, l *listing) {
	c.timed(ctx, l.slot, func(ctx context.Context) outcome {
		if l.getNames != nil {
			l.items, l.err = c.getEach(ctx, l.src, l.getNames)
		} else {
			l.items, l.rv, l.err = listAll(ctx, c.client.Kube, l.src, l.namespace, l.opts)
		}
		if l.err != nil {
			l.items = nil
			return outcome{status: bundle.StatusFailed, err: l.err}
		}
		if l.src.kind == bundle.KindEvents {
			l.items = c.withinWindow(l.items)
		}
		c.log.WithField("source", l.src.describe(l.namespace)).WithField("items", len(l.items)).Trace("listed")
		return outcome{status: bundle.StatusOK}
	})
}

// getEach reads named namespaces one at a time. A namespace that does not exist is
// simply absent from the list, as it would be from a full list.
func (c *collector) getEach(ctx context.Context, src *resourceSource, names []string) ([]runtime.Object, error) {
	var out []runtime.Object
	for _, name := range names {
		ns, err := c.client.Kube.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			c.log.WithField("namespace", name).Warn("namespace does not exist; nothing is collected from it")
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("get namespace %q: %w", name, err)
		}
		if err := prepare(src, ns); err != nil {
			return nil, fmt.Errorf("get namespace %q: %w", name, err)
		}
		out = append(out, ns)
	}
	return out, nil
}

// writeLists writes every successful list held in memory, then the errors of the
// failed ones.
func (c *collector) writeLists(lists []*listing) error {
	namespaces := c.opts.Namespaces
	if c.opts.AllNamespaces {
		namespaces = listedNamespaces(lists)
	}
	for _, l := range lists {
		if l.err != nil {
			continue
		}
		if !l.src.namespaced {
			p := bundle.ClusterResourcePath(l.src.kind)
			if err := c.w.WriteJSON(p, newListDocument(l.src, l.rv, l.items)); err != nil {
				return err
			}
			c.addFiles(l.slot, p)
			continue
		}
		want := namespaces
		if l.namespace != "" {
			want = []string{l.namespace}
		}
		groups, err := byNamespace(l.items, want)
		if err != nil {
			return fmt.Errorf("split %s by namespace: %w", l.src.describe(l.namespace), err)
		}
		for _, ns := range slices.Sorted(maps.Keys(groups)) {
			if c.opts.AllNamespaces && l.src.kind == bundle.KindLeases && ns == NodeLeaseNamespace {
				continue // already in node-leases.json
			}
			p := bundle.NamespacedResourcePath(l.src.kind, ns)
			if err := c.w.WriteJSON(p, newListDocument(l.src, l.rv, groups[ns])); err != nil {
				return err
			}
			c.addFiles(l.slot, p)
		}
	}
	return c.writeErrors(lists)
}

// writeErrors writes, per kind, the errors of the failed lists (the Troubleshoot
// layout's <kind>-errors.json).
func (c *collector) writeErrors(lists []*listing) error {
	failures := map[string][]string{}
	var failedKinds []string
	for _, l := range lists {
		if l.err == nil {
			continue
		}
		if failures[l.src.kind] == nil {
			failedKinds = append(failedKinds, l.src.kind)
		}
		failures[l.src.kind] = append(failures[l.src.kind], l.err.Error())
	}
	for _, kind := range failedKinds {
		if err := c.w.WriteJSON(bundle.ErrorsPath(kind), failures[kind]); err != nil {
			return err
		}
	}
	return nil
}

// listedNamespaces names every namespace the namespaces list returned, so each gets a
// file per kind even when it holds none of that kind.
func listedNamespaces(lists []*listing) []string {
	for _, l := range lists {
		if l.src.kind != bundle.KindNamespaces || l.err != nil {
			continue
		}
		names := make([]string, 0, len(l.items))
		for _, item := range l.items {
			if m, ok := item.(metav1.Object); ok {
				names = append(names, m.GetName())
			}
		}
		return names
	}
	return nil
}
