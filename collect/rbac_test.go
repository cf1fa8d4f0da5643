package collect

import (
	"slices"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"
)

type rbacDocs struct {
	sa      map[string]any
	role    rbacv1.ClusterRole
	binding rbacv1.ClusterRoleBinding
}

func parseRBAC(t *testing.T, doc string) rbacDocs {
	t.Helper()
	var out rbacDocs
	for _, part := range strings.Split(doc, "\n---\n") {
		var head struct{ Kind string }
		if err := yaml.Unmarshal([]byte(part), &head); err != nil {
			t.Fatalf("decode RBAC document: %v", err)
		}
		var err error
		switch head.Kind {
		case "ServiceAccount":
			err = yaml.Unmarshal([]byte(part), &out.sa)
		case "ClusterRole":
			err = yaml.UnmarshalStrict([]byte(part), &out.role)
		case "ClusterRoleBinding":
			err = yaml.UnmarshalStrict([]byte(part), &out.binding)
		default:
			t.Fatalf("unexpected RBAC document kind %q", head.Kind)
		}
		if err != nil {
			t.Fatalf("decode %s: %v", head.Kind, err)
		}
	}
	return out
}

// grants says whether a rule list allows verb on group/resource, as the RBAC
// authorizer decides it (no wildcards are expected in a least-privilege role).
func grants(rules []rbacv1.PolicyRule, p Permission) bool {
	for _, r := range rules {
		if slices.Contains(r.APIGroups, p.Group) && slices.Contains(r.Resources, p.Resource) && slices.Contains(r.Verbs, p.Verb) {
			return true
		}
	}
	return false
}

func TestRoleCoversEveryRead(t *testing.T) {
	docs := parseRBAC(t, rbacYAML)
	for _, p := range Permissions(false) {
		if !grants(docs.role.Rules, p) {
			t.Errorf("the ClusterRole does not grant %s, which the collector needs", p)
		}
	}
	for _, p := range []Permission{{Resource: "secrets", Verb: "list"}, {Resource: "secrets", Verb: "get"}, {Resource: "nodes/proxy", Verb: "get"}} {
		if grants(docs.role.Rules, p) {
			t.Errorf("the ClusterRole grants %s; it must not", p)
		}
	}
	if !slices.Contains(Permissions(true), Permission{Resource: "secrets", Verb: "list"}) {
		t.Error("Permissions(true) leaves out listing secrets")
	}
}

func TestRoleGrantsNothingUnused(t *testing.T) {
	docs := parseRBAC(t, rbacYAML)
	needed := map[[2]string]bool{}
	for _, p := range Permissions(false) {
		needed[[2]string{p.Group, p.Resource}] = true
	}
	for _, r := range docs.role.Rules {
		for _, verb := range r.Verbs {
			if !slices.Contains([]string{"get", "list", "watch"}, verb) {
				t.Errorf("rule %v grants %q: the role must be read-only", r, verb)
			}
		}
		if len(r.NonResourceURLs) > 0 || len(r.ResourceNames) > 0 {
			t.Errorf("unexpected rule %v", r)
		}
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				if !needed[[2]string{g, res}] {
					t.Errorf("the ClusterRole grants %s in group %q, which the collector never reads", res, g)
				}
			}
		}
	}
}

func TestRBACNamespace(t *testing.T) {
	doc, err := RBAC("ops")
	if err != nil {
		t.Fatal(err)
	}
	docs := parseRBAC(t, doc)
	md := docs.sa["metadata"].(map[string]any)
	if md["name"] != "podflow-collector" || md["namespace"] != "ops" {
		t.Errorf("ServiceAccount metadata = %v", md)
	}
	subj := docs.binding.Subjects
	if len(subj) != 1 || subj[0].Kind != "ServiceAccount" || subj[0].Name != "podflow-collector" || subj[0].Namespace != "ops" {
		t.Errorf("binding subjects = %+v", subj)
	}
	if docs.binding.RoleRef.Name != docs.role.Name || docs.binding.RoleRef.Kind != "ClusterRole" {
		t.Errorf("binding refers to %+v, role is %q", docs.binding.RoleRef, docs.role.Name)
	}
	if strings.Contains(doc, "namespace: "+DefaultRBACNamespace+"\n") {
		t.Error("default namespace left in the output")
	}
	if _, err := RBAC("Not_A_Namespace"); err == nil {
		t.Error("an invalid namespace was accepted")
	}
}
