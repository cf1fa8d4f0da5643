//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"podflow.dev/podflow/testbed/scenario"
)

// fieldManager owns every field the test bed applies.
const fieldManager = "podflow-testbed"

// apply creates or updates objects in order with server-side apply. After a Namespace it
// waits until pods can be created in it, and after a ResourceQuota until the quota
// controller has filled its status, because the API server refuses pods against a quota
// it has not computed yet ("status unknown for quota") and that transient refusal would
// muddy the scenario's evidence. Placeholders (webhook.go) are filled in first, and after
// a webhook configuration it waits until the API server calls the webhook.
func (b *bed) apply(ctx context.Context, objs []*unstructured.Unstructured) error {
	for _, obj := range objs {
		if err := b.fillPlaceholders(obj); err != nil {
			return err
		}
		ri, err := b.resourceFor(obj)
		if err != nil {
			return err
		}
		data, err := json.Marshal(obj.Object)
		if err != nil {
			return fmt.Errorf("encode %s %s: %w", obj.GetKind(), obj.GetName(), err)
		}
		force := true
		if _, err := ri.Patch(ctx, obj.GetName(), types.ApplyPatchType, data, metav1.PatchOptions{FieldManager: fieldManager, Force: &force}); err != nil {
			return fmt.Errorf("apply %s %s/%s: %w", obj.GetKind(), obj.GetNamespace(), obj.GetName(), err)
		}
		switch obj.GetKind() {
		case "Namespace":
			err = waitFor(ctx, "namespace "+obj.GetName()+" to be usable", time.Minute, nil, func(ctx context.Context) (bool, error) {
				return b.namespaceReady(ctx, obj.GetName())
			})
		case "ValidatingWebhookConfiguration", "MutatingWebhookConfiguration":
			err = b.waitWebhookActive(ctx, obj)
		case "ResourceQuota":
			err = waitFor(ctx, "quota "+obj.GetName()+" status", time.Minute, nil, func(ctx context.Context) (bool, error) {
				q, err := ri.Get(ctx, obj.GetName(), metav1.GetOptions{})
				if err != nil {
					return false, err
				}
				hard, _, _ := unstructured.NestedMap(q.Object, "status", "hard")
				return len(hard) > 0, nil
			})
		default:
			err = b.waitApplied(ctx, ri, obj)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// deleteStep runs a scenario's delete step, when it has one: it waits until the step's
// conditions hold live, then deletes the objects it names, with the step's grace period
// when it sets one.
func (b *bed) deleteStep(ctx context.Context, s *scenario.Scenario) error {
	d := s.Expect.Delete
	if d == nil {
		return nil
	}
	objs, err := s.DeleteObjects()
	if err != nil {
		return err
	}
	var last *scenario.Snapshot
	err = waitFor(ctx, "scenario "+s.Name+" to be ready for its delete step", s.TimeoutOrDefault(), []*proc{b.apiserver, b.containerd, b.kubelet}, func(ctx context.Context) (bool, error) {
		snap, err := liveSnapshot(ctx, s.Name, d.When)
		if err != nil {
			return false, err
		}
		last = snap
		if err := snap.EvalAll(d.When); err != nil {
			return false, err
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("%w%s", err, describePods(last))
	}
	for _, obj := range objs {
		ri, err := b.resourceFor(obj)
		if err != nil {
			return err
		}
		if err := ri.Delete(ctx, obj.GetName(), metav1.DeleteOptions{GracePeriodSeconds: d.GracePeriodSeconds}); err != nil {
			return fmt.Errorf("delete %s %s/%s: %w", obj.GetKind(), obj.GetNamespace(), obj.GetName(), err)
		}
	}
	return nil
}

func (b *bed) resourceFor(obj *unstructured.Unstructured) (dynamic.ResourceInterface, error) {
	gvk := obj.GroupVersionKind()
	mapping, err := b.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if meta.IsNoMatchError(err) {
		b.mapper.Reset() // discovery may predate a just-registered API
		mapping, err = b.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	}
	if err != nil {
		return nil, fmt.Errorf("map %s: %w", gvk, err)
	}
	if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
		return b.dyn.Resource(mapping.Resource).Namespace(obj.GetNamespace()), nil
	}
	return b.dyn.Resource(mapping.Resource), nil
}
