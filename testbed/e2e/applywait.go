//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
)

// waitAnnotation on a Deployment in a scenario's manifests makes apply wait, before the
// next document, until the Deployment has rolled out (value "available"): every desired
// replica updated and available. A scenario that updates the Deployment in a later
// document (a rollout to a broken template, a scale to zero) then starts from a finished
// rollout, as on a real cluster, instead of racing the controller. The later document
// leaves the annotation out, so server-side apply removes it and the bundle never shows it.
const waitAnnotation = "podflow.test/apply-wait"

func (b *bed) waitApplied(ctx context.Context, ri dynamic.ResourceInterface, obj *unstructured.Unstructured) error {
	want := obj.GetAnnotations()[waitAnnotation]
	if want == "" {
		return nil
	}
	if obj.GetKind() != "Deployment" || want != "available" {
		return fmt.Errorf("%s %s: annotation %s=%q: only Deployments wait, for \"available\"", obj.GetKind(), obj.GetName(), waitAnnotation, want)
	}
	return waitFor(ctx, "deployment "+obj.GetName()+" to roll out", 2*time.Minute, nil, func(ctx context.Context) (bool, error) {
		d, err := ri.Get(ctx, obj.GetName(), metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		gen := d.GetGeneration()
		observed, _, _ := unstructured.NestedInt64(d.Object, "status", "observedGeneration")
		want, _, _ := unstructured.NestedInt64(d.Object, "spec", "replicas")
		updated, _, _ := unstructured.NestedInt64(d.Object, "status", "updatedReplicas")
		available, _, _ := unstructured.NestedInt64(d.Object, "status", "availableReplicas")
		total, _, _ := unstructured.NestedInt64(d.Object, "status", "replicas")
		return observed >= gen && updated == want && available == want && total == want, nil
	})
}
