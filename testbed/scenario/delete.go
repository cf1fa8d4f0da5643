package scenario

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Delete is expect.yaml's optional delete step, for failures that only happen when an
// object goes away (a finalizer that holds a pod, a process that ignores SIGTERM). Once
// every When condition holds, the test bed deletes Objects, then waits for Until.
type Delete struct {
	// When lists live conditions that must hold before the deletion (the pod runs).
	When []Check `json:"when"`
	// Objects names objects of manifests.yaml to delete, by kind and name.
	Objects []ObjectName `json:"objects"`
	// GracePeriodSeconds overrides the objects' own grace period when set.
	GracePeriodSeconds *int64 `json:"gracePeriodSeconds,omitempty"`
}

// ObjectName names one object of the scenario's manifests.
type ObjectName struct {
	Kind string `json:"kind"`
	Name string `json:"name"`
}

func (d *Delete) validate() error {
	var errs []error
	if len(d.When) == 0 {
		errs = append(errs, errors.New("delete.when is empty: nothing says when to delete"))
	}
	if len(d.Objects) == 0 {
		errs = append(errs, errors.New("delete.objects is empty"))
	}
	for i, c := range d.When {
		if err := c.validate(true); err != nil {
			errs = append(errs, fmt.Errorf("delete.when[%d]: %w", i, err))
		}
	}
	if g := d.GracePeriodSeconds; g != nil && *g < 0 {
		errs = append(errs, fmt.Errorf("delete.gracePeriodSeconds %d: want 0 or more", *g))
	}
	return errors.Join(errs...)
}

// DeleteObjects returns the manifests' objects the delete step names, in its order, or
// nil without a delete step. Each must be an object the scenario applies, so a deletion
// can never reach outside the scenario.
func (s *Scenario) DeleteObjects() ([]*unstructured.Unstructured, error) {
	d := s.Expect.Delete
	if d == nil {
		return nil, nil
	}
	objs, err := s.Objects()
	if err != nil {
		return nil, err
	}
	var out []*unstructured.Unstructured
	for _, want := range d.Objects {
		var found *unstructured.Unstructured
		for _, o := range objs {
			if o.GetKind() == want.Kind && o.GetName() == want.Name {
				found = o
				break
			}
		}
		if found == nil {
			return nil, fmt.Errorf("scenario %s: %s: delete names %s %s, which %s does not declare", s.Name, ExpectFile, want.Kind, want.Name, ManifestsFile)
		}
		if found.GetKind() == "Namespace" {
			return nil, fmt.Errorf("scenario %s: %s: delete may not remove the scenario's namespace", s.Name, ExpectFile)
		}
		out = append(out, found)
	}
	return out, nil
}
