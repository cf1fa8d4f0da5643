package rules

import "testing"

// A message that prints a Go value over several lines (Helm re-indents the API server's
// %#v of a selector) is read whole: its closing line ("}: field is immutable") is part
// of it, not a line of its own.
func TestAMessageWrappedAroundAValueIsReadWhole(t *testing.T) {
	paste := "Error: UPGRADE FAILED:\n" +
		"cannot patch \"shop-api\" with kind Deployment: Deployment.apps \"shop-api\" is invalid: spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string\n" +
		"    ]string{\n" +
		"        \"app.kubernetes.io/name\": \"shop\",\n" +
		"        \"tier\": \"api\"\n" +
		"    }, MatchExpressions: []v1.LabelSelectorRequirement(nil)\n" +
		"}: field is immutable\n"
	wantOneRoot(t, catalogRoots(t, map[string]string{"helm.txt": paste}), "request-field-immutable", "shop-api")
}
