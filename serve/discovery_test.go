package serve

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"

	"podflow.dev/podflow/bundle"
)

// TestAggregatedDiscovery: a client that asks for aggregated discovery learns every
// served group, version and resource from /api and /apis alone, in the form it asked
// for; a client that asks for the older form still gets it.
func TestAggregatedDiscovery(t *testing.T) {
	srv, err := New([]*bundle.Bundle{openDemo(t)}, Options{Token: token})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var paths []string
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		paths = append(paths, r.URL.Path)
		mu.Unlock()
		srv.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	srv.SetAddress(strings.TrimPrefix(hs.URL, "http://"))

	resources := func(legacy bool) map[string][]string {
		t.Helper()
		dc, err := discovery.NewDiscoveryClientForConfig(&rest.Config{Host: hs.URL, BearerToken: token})
		if err != nil {
			t.Fatal(err)
		}
		dc.UseLegacyDiscovery = legacy
		_, lists, err := dc.ServerGroupsAndResources()
		if err != nil {
			t.Fatal(err)
		}
		out := map[string][]string{}
		for _, l := range lists {
			for _, r := range l.APIResources {
				out[l.GroupVersion] = append(out[l.GroupVersion], r.Name)
			}
			slices.Sort(out[l.GroupVersion])
		}
		return out
	}

	mu.Lock()
	paths = nil
	mu.Unlock()
	agg := resources(false)
	mu.Lock()
	asked := slices.Clone(paths)
	mu.Unlock()
	slices.Sort(asked)
	if !slices.Equal(asked, []string{"/api", "/apis"}) {
		t.Errorf("aggregated discovery asked %v, want only /api and /apis", asked)
	}
	core := agg["v1"]
	for _, want := range []string{"pods", "pods/log", "events", "endpoints"} {
		if !slices.Contains(core, want) {
			t.Errorf("aggregated v1 lacks %s: %v", want, core)
		}
	}
	if !slices.Contains(agg["authorization.k8s.io/v1"], "selfsubjectaccessreviews") {
		t.Errorf("aggregated discovery lacks the reviews: %v", agg)
	}

	// The one-request-per-group-version form lists the same.
	legacy := resources(true)
	if len(legacy) != len(agg) {
		t.Errorf("legacy discovery has %d group versions, aggregated %d", len(legacy), len(agg))
	}
	for gv, rs := range legacy {
		if !slices.Equal(rs, agg[gv]) {
			t.Errorf("%s: legacy %v, aggregated %v", gv, rs, agg[gv])
		}
	}

	// An older client asks for v2beta1 and gets it, labelled as such.
	req, _ := http.NewRequest(http.MethodGet, hs.URL+"/apis", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Accept", "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList" {
		t.Errorf("v2beta1 content type %q", ct)
	}
	var l apidiscoveryv2.APIGroupDiscoveryList
	if err := json.NewDecoder(resp.Body).Decode(&l); err != nil {
		t.Fatal(err)
	}
	if l.APIVersion != "apidiscovery.k8s.io/v2beta1" || len(l.Items) == 0 {
		t.Errorf("v2beta1 answer %s with %d groups", l.APIVersion, len(l.Items))
	}
	for _, g := range l.Items {
		if g.Name == "" {
			t.Errorf("/apis lists the core group")
		}
		for _, v := range g.Versions {
			if v.Freshness != apidiscoveryv2.DiscoveryFreshnessCurrent {
				t.Errorf("%s/%s freshness %q", g.Name, v.Version, v.Freshness)
			}
		}
	}

	// A plain JSON client gets the APIGroupList, as before.
	code, body := get(t, hs.URL+"/apis", "application/json")
	var gl metav1.APIGroupList
	if code != http.StatusOK || json.Unmarshal(body, &gl) != nil || gl.Kind != "APIGroupList" {
		t.Errorf("plain /apis: %d %s", code, body)
	}
}
