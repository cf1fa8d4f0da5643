package e2e

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// discovered is one resource of a group version as discovery lists it.
type discovered struct {
	Name       string
	Kind       string
	Namespaced bool
	Verbs      []string
}

type aggregatedList struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Items      []struct {
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
		Versions []struct {
			Version   string `json:"version"`
			Freshness string `json:"freshness"`
			Resources []struct {
				Resource     string `json:"resource"`
				Scope        string `json:"scope"`
				ResponseKind struct {
					Kind string `json:"kind"`
				} `json:"responseKind"`
				Verbs        []string `json:"verbs"`
				Subresources []struct {
					Subresource string   `json:"subresource"`
					Verbs       []string `json:"verbs"`
				} `json:"subresources"`
			} `json:"resources"`
		} `json:"versions"`
	} `json:"items"`
}

// flatten gives each group version's resources (subresources as "parent/sub") as the
// one-document-per-group-version form lists them.
func (l aggregatedList) flatten() map[string]map[string]discovered {
	out := map[string]map[string]discovered{}
	for _, g := range l.Items {
		for _, v := range g.Versions {
			gv := v.Version
			if g.Metadata.Name != "" {
				gv = g.Metadata.Name + "/" + v.Version
			}
			rs := map[string]discovered{}
			for _, r := range v.Resources {
				rs[r.Resource] = discovered{Name: r.Resource, Kind: r.ResponseKind.Kind, Namespaced: r.Scope == "Namespaced", Verbs: r.Verbs}
				for _, sub := range r.Subresources {
					rs[r.Resource+"/"+sub.Subresource] = discovered{Name: r.Resource + "/" + sub.Subresource, Verbs: sub.Verbs}
				}
			}
			out[gv] = rs
		}
	}
	return out
}

// compareAggregated compares serve's aggregated discovery with the live one: the same
// form and version, and every group version and resource serve lists is live, with the
// live kind and scope and verbs the live server has; what only the live server lists is
// "not served".
func compareAggregated(live, served []byte) string {
	var l, s aggregatedList
	if err := json.Unmarshal(live, &l); err != nil {
		return fmt.Sprintf("format: the live answer is not aggregated discovery: %v", err)
	}
	if err := json.Unmarshal(served, &s); err != nil || s.Kind != l.Kind || s.APIVersion != l.APIVersion {
		return fmt.Sprintf("format: live %s %s, serve %s %s (%v)", l.APIVersion, l.Kind, s.APIVersion, s.Kind, err)
	}
	lf, sf := l.flatten(), s.flatten()
	var diffs []string
	missing := 0
	gvs := make([]string, 0, len(sf))
	for gv := range sf {
		gvs = append(gvs, gv)
	}
	sort.Strings(gvs)
	for _, gv := range gvs {
		lrs, ok := lf[gv]
		if !ok {
			diffs = append(diffs, gv+" not live")
			continue
		}
		names := make([]string, 0, len(sf[gv]))
		for n := range sf[gv] {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			r := sf[gv][n]
			lr, ok := lrs[n]
			switch {
			case !ok:
				diffs = append(diffs, gv+" "+n+" not live")
				continue
			case !strings.Contains(n, "/") && (lr.Kind != r.Kind || lr.Namespaced != r.Namespaced):
				diffs = append(diffs, fmt.Sprintf("%s %s: live %s namespaced=%t, serve %s namespaced=%t", gv, n, lr.Kind, lr.Namespaced, r.Kind, r.Namespaced))
			}
			for _, v := range r.Verbs {
				if !slices.Contains(lr.Verbs, v) {
					diffs = append(diffs, fmt.Sprintf("%s %s: verb %s not live", gv, n, v))
				}
			}
		}
		missing += len(lrs) - len(sf[gv])
	}
	for gv, lrs := range lf {
		if _, ok := sf[gv]; !ok {
			missing += len(lrs)
		}
	}
	if len(diffs) > 0 {
		return "resources: " + strings.Join(diffs, "; ")
	}
	if missing > 0 {
		return fmt.Sprintf("not served: %d resources only live", missing)
	}
	return ""
}
