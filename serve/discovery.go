package serve

import (
	"mime"
	"net/http"
	"strings"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Aggregated discovery: since Kubernetes 1.26 (beta) and 1.30 (v2) clients ask /api and
// /apis for every group, version and resource in one answer, and fall back to one
// request per group version when the server answers plain JSON. podflow answers in the
// form asked for, so kubectl, client-go and the dashboards discover the bundle's kinds
// in two requests as they do against an API server.

const discoveryGroup = "apidiscovery.k8s.io"

// aggregatedVersion is the apidiscovery version the Accept header asks for ("v2" or
// "v2beta1"), in the client's order of preference, or "" when it asks for none.
func aggregatedVersion(r *http.Request) string {
	for _, part := range strings.Split(r.Header.Get("Accept"), ",") {
		base, params, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil || base != "application/json" || params["g"] != discoveryGroup || params["as"] != "APIGroupDiscoveryList" {
			continue
		}
		// A peer-less profile is what a single server answers anyway.
		if p := params["profile"]; p != "" && p != "nopeer" {
			continue
		}
		if v := params["v"]; v == "v2" || v == "v2beta1" {
			return v
		}
	}
	return ""
}

// writeAggregated answers /api (core true) or /apis in the aggregated form of version
// ver. The v2beta1 and v2 types have the same JSON shape; only the type's version and
// the content type differ.
func (s *Server) writeAggregated(w http.ResponseWriter, core bool, ver string) {
	l := s.aggregated(core)
	l.APIVersion = discoveryGroup + "/" + ver
	writeJSONAs(w, "application/json;g="+discoveryGroup+";v="+ver+";as=APIGroupDiscoveryList", l)
}

// aggregated lists the core group (core true) or every other served group, each at the
// one version it is served at, with the resources its discovery document lists.
func (s *Server) aggregated(core bool) *apidiscoveryv2.APIGroupDiscoveryList {
	l := &apidiscoveryv2.APIGroupDiscoveryList{TypeMeta: metav1.TypeMeta{Kind: "APIGroupDiscoveryList"},
		Items: []apidiscoveryv2.APIGroupDiscovery{}}
	groups := []string{""}
	if !core {
		groups = s.groups()
	}
	for _, g := range groups {
		ver := "v1"
		if g != "" {
			ver = s.groupVersion(g)
		}
		l.Items = append(l.Items, apidiscoveryv2.APIGroupDiscovery{
			ObjectMeta: metav1.ObjectMeta{Name: g},
			Versions: []apidiscoveryv2.APIVersionDiscovery{{
				Version:   ver,
				Resources: discoveryResources(g, ver, s.resourceList(g, ver).APIResources),
				Freshness: apidiscoveryv2.DiscoveryFreshnessCurrent,
			}},
		})
	}
	return l
}

// discoveryResources turns a group version's resource list into the aggregated form:
// subresources ("pods/log") go under their resource.
func discoveryResources(group, ver string, in []metav1.APIResource) []apidiscoveryv2.APIResourceDiscovery {
	out := []apidiscoveryv2.APIResourceDiscovery{}
	at := map[string]int{}
	for _, r := range in {
		gvk := &metav1.GroupVersionKind{Group: group, Version: ver, Kind: r.Kind}
		if parent, sub, ok := strings.Cut(r.Name, "/"); ok {
			i, found := at[parent]
			if !found {
				continue
			}
			out[i].Subresources = append(out[i].Subresources, apidiscoveryv2.APISubresourceDiscovery{
				Subresource: sub, ResponseKind: gvk, Verbs: r.Verbs,
			})
			continue
		}
		scope := apidiscoveryv2.ScopeCluster
		if r.Namespaced {
			scope = apidiscoveryv2.ScopeNamespace
		}
		at[r.Name] = len(out)
		out = append(out, apidiscoveryv2.APIResourceDiscovery{
			Resource: r.Name, ResponseKind: gvk, Scope: scope, SingularResource: r.SingularName,
			Verbs: r.Verbs, ShortNames: r.ShortNames, Categories: r.Categories,
		})
	}
	return out
}
