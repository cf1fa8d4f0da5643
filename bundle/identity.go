package bundle

import "slices"

// Identity is who collected a bundle and what that identity was allowed to do in each
// namespace of the scope, as the API server answered; it never holds a credential. It is
// optional: bundles of older collectors, imports and node bundles have none.
type Identity struct {
	// Username and Groups are the identity the API server authenticated.
	Username string   `json:"username,omitempty"`
	Groups   []string `json:"groups,omitempty"`
	// Source says how the identity was learned: "SelfSubjectReview", or "kubeconfig"
	// (the kubeconfig's user entry) where the API server does not serve the review.
	Source string `json:"source"`
	// Permissions are, per namespace, the rules SelfSubjectRulesReview returned.
	Permissions []NamespacePermissions `json:"permissions,omitempty"`
}

// NamespacePermissions is what the identity may do in one namespace.
type NamespacePermissions struct {
	Namespace string           `json:"namespace"`
	Rules     []PermissionRule `json:"rules,omitempty"`
	// Incomplete is true when an authorizer could not list its rules (a webhook): a
	// missing rule then does not mean a refusal.
	Incomplete bool `json:"incomplete,omitempty"`
	// Error is why the rules could not be had.
	Error string `json:"error,omitempty"`
}

// PermissionRule is one resource rule of a SelfSubjectRulesReview.
type PermissionRule struct {
	Verbs         []string `json:"verbs"`
	APIGroups     []string `json:"apiGroups,omitempty"`
	Resources     []string `json:"resources,omitempty"`
	ResourceNames []string `json:"resourceNames,omitempty"`
}

// PermissionsIn returns the rules recorded for namespace ns, or nil.
func (id *Identity) PermissionsIn(ns string) *NamespacePermissions {
	if id == nil {
		return nil
	}
	for i := range id.Permissions {
		if id.Permissions[i].Namespace == ns {
			return &id.Permissions[i]
		}
	}
	return nil
}

// Denies reports whether the recorded rules show for sure that the identity may not
// verb resource (with its subresource, "pods/log") of API group group in the namespace:
// the rules are complete, were read without error, and none allows it on every name.
func (p *NamespacePermissions) Denies(verb, group, resource string) bool {
	if p == nil || p.Incomplete || p.Error != "" {
		return false
	}
	for _, r := range p.Rules {
		if len(r.ResourceNames) == 0 && matchAny(r.Verbs, verb) && matchAny(r.APIGroups, group) && resourceMatches(r.Resources, resource) {
			return false
		}
	}
	return true
}

func matchAny(list []string, v string) bool {
	return slices.Contains(list, "*") || slices.Contains(list, v)
}

// resourceMatches follows RBAC: "*", the resource itself, or "*/sub" for a subresource.
func resourceMatches(list []string, resource string) bool {
	if matchAny(list, resource) {
		return true
	}
	for i := 0; i < len(resource); i++ {
		if resource[i] == '/' {
			return slices.Contains(list, "*"+resource[i:])
		}
	}
	return false
}
