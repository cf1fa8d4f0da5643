package scenario

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// webhookKinds are the admission webhook configurations a scenario may register. They
// are cluster-scoped, so each of their webhooks must select the scenario's namespace
// and nothing else.
var webhookKinds = map[string]bool{"ValidatingWebhookConfiguration": true, "MutatingWebhookConfiguration": true}

// namespaceNameLabel is the label the API server sets on every namespace to its name.
const namespaceNameLabel = "kubernetes.io/metadata.name"

// selectsOnly checks that every webhook of a configuration has a namespaceSelector of
// exactly matchLabels {kubernetes.io/metadata.name: ns}: a webhook that also saw other
// namespaces would refuse or delay the pods of scenarios running beside it.
func selectsOnly(obj *unstructured.Unstructured, ns string) error {
	hooks, _, err := unstructured.NestedSlice(obj.Object, "webhooks")
	if err != nil || len(hooks) == 0 {
		return fmt.Errorf("%s %s: no webhooks", obj.GetKind(), obj.GetName())
	}
	for i, h := range hooks {
		m, ok := h.(map[string]any)
		if !ok {
			return fmt.Errorf("%s %s: webhooks[%d] is not an object", obj.GetKind(), obj.GetName(), i)
		}
		sel, _, _ := unstructured.NestedMap(m, "namespaceSelector")
		labels, _, _ := unstructured.NestedStringMap(sel, "matchLabels")
		if len(sel) != 1 || len(labels) != 1 || labels[namespaceNameLabel] != ns {
			return fmt.Errorf("%s %s: webhooks[%d] must select only namespace %s, by namespaceSelector: {matchLabels: {%s: %s}}",
				obj.GetKind(), obj.GetName(), i, ns, namespaceNameLabel, ns)
		}
	}
	return nil
}
