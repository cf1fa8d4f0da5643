package e2e

import (
	"strings"
	"testing"
)

func TestCompareAggregated(t *testing.T) {
	live := `{"kind":"APIGroupDiscoveryList","apiVersion":"apidiscovery.k8s.io/v2","items":[{"metadata":{"name":""},"versions":[{"version":"v1","freshness":"Current","resources":[
		{"resource":"pods","scope":"Namespaced","responseKind":{"kind":"Pod"},"verbs":["create","get","list","watch"],"subresources":[{"subresource":"log","verbs":["get"]}]},
		{"resource":"nodes","scope":"Cluster","responseKind":{"kind":"Node"},"verbs":["get","list","watch"]}]}]}]}`
	for _, c := range []struct{ name, served, want string }{
		{"a subset", `{"kind":"APIGroupDiscoveryList","apiVersion":"apidiscovery.k8s.io/v2","items":[{"metadata":{"name":""},"versions":[{"version":"v1","resources":[
			{"resource":"pods","scope":"Namespaced","responseKind":{"kind":"Pod"},"verbs":["get","list","watch"],"subresources":[{"subresource":"log","verbs":["get"]}]}]}]}]}`,
			"not served: 1 resources only live"},
		{"a wrong scope", `{"kind":"APIGroupDiscoveryList","apiVersion":"apidiscovery.k8s.io/v2","items":[{"metadata":{"name":""},"versions":[{"version":"v1","resources":[
			{"resource":"nodes","scope":"Namespaced","responseKind":{"kind":"Node"},"verbs":["get"]}]}]}]}`,
			"resources: v1 nodes: live Node namespaced=false, serve Node namespaced=true"},
		{"a verb the live server lacks", `{"kind":"APIGroupDiscoveryList","apiVersion":"apidiscovery.k8s.io/v2","items":[{"metadata":{"name":""},"versions":[{"version":"v1","resources":[
			{"resource":"pods","scope":"Namespaced","responseKind":{"kind":"Pod"},"verbs":["get"],"subresources":[{"subresource":"log","verbs":["get","create"]}]}]}]}]}`,
			"resources: v1 pods/log: verb create not live"},
		{"a group the live server lacks", `{"kind":"APIGroupDiscoveryList","apiVersion":"apidiscovery.k8s.io/v2","items":[{"metadata":{"name":"apps"},"versions":[{"version":"v1","resources":[]}]}]}`,
			"resources: apps/v1 not live"},
		{"another version of the form", `{"kind":"APIGroupDiscoveryList","apiVersion":"apidiscovery.k8s.io/v2beta1","items":[]}`,
			"format: live apidiscovery.k8s.io/v2 APIGroupDiscoveryList, serve apidiscovery.k8s.io/v2beta1 APIGroupDiscoveryList"},
	} {
		got := compareAggregated([]byte(live), []byte(c.served))
		if !strings.HasPrefix(got, c.want) {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
	if got := compareAggregated([]byte(live), []byte(live)); got != "" {
		t.Errorf("the same answer differs: %q", got)
	}
}
