package collect

import (
	_ "embed"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

//go:embed rbac.yaml
var rbacYAML string

// DefaultRBACNamespace is where the collector's ServiceAccount lives unless told otherwise.
const DefaultRBACNamespace = "podflow"

// rbacNamespaceLine matches the two places rbac.yaml names the ServiceAccount's
// namespace, so the shipped file stays plain, appliable YAML.
var rbacNamespaceLine = regexp.MustCompile(`(?m)^(\s*namespace: )` + DefaultRBACNamespace + `$`)

// RBAC returns the least-privilege ServiceAccount, ClusterRole and ClusterRoleBinding
// for collection, with the ServiceAccount in namespace.
func RBAC(namespace string) (string, error) {
	if errs := validation.IsDNS1123Label(namespace); len(errs) > 0 {
		return "", fmt.Errorf("namespace %q: %s", namespace, strings.Join(errs, "; "))
	}
	return rbacNamespaceLine.ReplaceAllString(rbacYAML, "${1}"+namespace), nil
}

// PrintRBAC writes RBAC(namespace) to w.
func PrintRBAC(w io.Writer, namespace string) error {
	doc, err := RBAC(namespace)
	if err != nil {
		return err
	}
	_, err = io.WriteString(w, doc)
	return err
}

// Permission is one API access the collector makes.
type Permission struct {
	Group    string
	Resource string // with its subresource, e.g. pods/log
	Verb     string
}

func (p Permission) String() string {
	g := p.Group
	if g == "" {
		g = "core"
	}
	return fmt.Sprintf("%s %s/%s", p.Verb, g, p.Resource)
}

// Permissions lists every access a collection makes, derived from the collector's own
// source table. withSecrets adds what IncludeSecretKeys needs; the optional node proxy
// (nodes/proxy) is never included.
func Permissions(withSecrets bool) []Permission {
	set := map[Permission]bool{
		// --pod reads its pod by name before anything else.
		{Resource: "pods", Verb: "get"}:     true,
		{Resource: "pods/log", Verb: "get"}: true,
		// Outside --all-namespaces, namespaces are read by name.
		{Resource: "namespaces", Verb: "get"}: true,
	}
	for _, src := range resourceSources {
		if src.resource.Resource == "secrets" && !withSecrets {
			continue
		}
		set[Permission{Group: src.resource.Group, Resource: src.resource.Resource, Verb: "list"}] = true
	}
	out := make([]Permission, 0, len(set))
	for p := range set {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}
