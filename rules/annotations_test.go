package rules

import (
	"testing"

	"podflow.dev/podflow/bundle"
)

// The annotations an import writes and rules read are the bundle's.
func TestImportAnnotations(t *testing.T) {
	if deletionAnnotation != bundle.DeletionAnnotation {
		t.Errorf("deletionAnnotation %q, bundle %q", deletionAnnotation, bundle.DeletionAnnotation)
	}
}
