package bundle

import "testing"

func TestPermissionsDenies(t *testing.T) {
	p := &NamespacePermissions{Namespace: "shop", Rules: []PermissionRule{
		{Verbs: []string{"get", "list", "watch"}, APIGroups: []string{""}, Resources: []string{"pods", "events"}},
		{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"*/log"}},
		{Verbs: []string{"*"}, APIGroups: []string{"apps"}, Resources: []string{"*"}},
		{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"secrets"}, ResourceNames: []string{"one"}},
	}}
	for _, tc := range []struct {
		verb, group, resource string
		denied                bool
	}{
		{"list", "", "events", false},
		{"get", "", "pods/log", false},
		{"delete", "apps", "deployments", false},
		{"create", "", "pods", true},
		{"list", "batch", "jobs", true},
		{"list", "", "secrets", true}, // a rule for one name does not allow listing
	} {
		if got := p.Denies(tc.verb, tc.group, tc.resource); got != tc.denied {
			t.Errorf("Denies(%s %q %s) = %v, want %v", tc.verb, tc.group, tc.resource, got, tc.denied)
		}
	}
	for _, unsure := range []*NamespacePermissions{nil, {Incomplete: true}, {Error: "timeout"}} {
		if unsure.Denies("list", "", "events") {
			t.Errorf("%+v: rules that are missing, incomplete or failed prove no refusal", unsure)
		}
	}
	var id *Identity
	if id.PermissionsIn("shop") != nil {
		t.Error("a bundle without an identity has no permissions")
	}
}
