package collect

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"podflow.dev/podflow/bundle"
)

// streamList reads a namespaced list page by page and writes each namespace's file as
// soon as that namespace is complete, so a collection holds one namespace of a list at
// a time however large the cluster. The API server returns a list in storage key order
// (<resource>/<namespace>/<name>), which keeps each namespace's items together; a
// server that interleaves them fails the source with that explanation rather than
// writing a namespace twice. Every namespace in want without items gets an empty file,
// as evidence of absence. Of pods only what their logs and nodes need is kept.
func (c *collector) streamList(ctx context.Context, l *listing, want []string) {
	c.timed(ctx, l.slot, func(ctx context.Context) outcome {
		s := &nsStream{c: c, l: l, done: map[string]bool{}}
		err := pageAll(ctx, c.client.Kube, l.src, l.namespace, l.opts, s.page, s.restart)
		if err == nil {
			err = s.flush()
		}
		for _, ns := range want {
			if err != nil {
				break
			}
			if !s.done[ns] {
				s.cur = ns
				err = s.flush()
			}
		}
		if err != nil {
			l.err = err
			if len(s.files) > 0 {
				return outcome{status: bundle.StatusPartial, err: err, files: s.files}
			}
			return outcome{status: bundle.StatusFailed, err: err}
		}
		c.log.WithField("source", l.src.describe(l.namespace)).WithField("items", s.count).Trace("listed")
		return outcome{status: bundle.StatusOK, files: s.files}
	})
}

// nsStream is the state of one streamed list: the namespace being gathered and those
// already written.
type nsStream struct {
	c   *collector
	l   *listing
	rv  string
	cur string
	buf []runtime.Object
	// done holds the namespaces written; restarted skips them when a list whose
	// continue token expired is read again.
	done      map[string]bool
	restarted bool
	files     []string
	count     int
}

func (s *nsStream) page(rv string, items []runtime.Object) error {
	s.rv = rv
	if s.l.src.kind == bundle.KindEvents {
		items = s.c.withinWindow(items)
	}
	for _, item := range items {
		m, err := meta.Accessor(item)
		if err != nil {
			return fmt.Errorf("read object metadata: %w", err)
		}
		ns := m.GetNamespace()
		if s.done[ns] {
			if s.restarted {
				continue // written from the earlier snapshot
			}
			return fmt.Errorf("the API server returned items of namespace %q after those of another namespace: the list is not in storage order", ns)
		}
		if ns != s.cur {
			if err := s.flush(); err != nil {
				return err
			}
			s.cur = ns
		}
		if p, ok := item.(*corev1.Pod); ok {
			s.l.targets = append(s.l.targets, logTargets(p)...)
			if p.Spec.NodeName != "" {
				s.l.nodes = append(s.l.nodes, p.Spec.NodeName)
			}
		}
		s.buf = append(s.buf, item)
		s.count++
	}
	return nil
}

// restart drops the namespace being gathered: the fresh list gives it again, and skips
// those already written.
func (s *nsStream) restart(*metav1.ListOptions) {
	s.restarted = true
	s.count -= len(s.buf)
	if s.l.src.kind == bundle.KindPods {
		s.l.targets = dropNamespace(s.l.targets, s.cur)
	}
	s.buf, s.cur = nil, ""
}

func dropNamespace(targets []logTarget, ns string) []logTarget {
	kept := targets[:0]
	for _, t := range targets {
		if t.namespace != ns {
			kept = append(kept, t)
		}
	}
	return kept
}

// flush writes the namespace gathered so far, if any.
func (s *nsStream) flush() error {
	ns := s.cur
	if ns == "" {
		return nil
	}
	items := s.buf
	s.buf, s.cur = nil, ""
	s.done[ns] = true
	if s.c.opts.AllNamespaces && s.l.src.kind == bundle.KindLeases && ns == NodeLeaseNamespace {
		return nil // already in node-leases.json
	}
	p := bundle.NamespacedResourcePath(s.l.src.kind, ns)
	if err := s.c.w.WriteJSON(p, newListDocument(s.l.src, s.rv, items)); err != nil {
		return err
	}
	s.files = append(s.files, p)
	return nil
}
