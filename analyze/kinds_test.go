package analyze

import (
	"fmt"
	"testing"

	"github.com/sirupsen/logrus"

	"podflow.dev/podflow/bundle"
)

// TestEveryBundleListIsDecodedOrCompatibilityOnly ties analyze to bundle.Lists: a list
// marked ReadByAnalyze is decoded into the graph (one object in, one object indexed),
// and a CompatibilityOnly list feeds no evidence kind.
func TestEveryBundleListIsDecodedOrCompatibilityOnly(t *testing.T) {
	quiet := logrus.New()
	quiet.SetLevel(logrus.PanicLevel)
	for _, l := range bundle.Lists() {
		kind, read := listKinds[l.Name]
		switch l.Use {
		case bundle.CompatibilityOnly:
			if read {
				t.Errorf("%s is marked compatibility only but feeds the evidence kind %s", l.Name, kind)
			}
			continue
		case bundle.ReadByAnalyze:
			if !read {
				t.Errorf("%s is marked read by analyze but feeds no evidence kind", l.Name)
				continue
			}
		default:
			t.Errorf("%s: use %d is neither ReadByAnalyze nor CompatibilityOnly", l.Name, l.Use)
			continue
		}
		if info, ok := kinds[kind]; !ok || info.what == "" || info.where == "" {
			t.Errorf("%s: kind %s has no description or location", l.Name, kind)
		}
		ns := "shop"
		if !l.Namespaced {
			ns = l.Namespace
		}
		item := fmt.Sprintf(`{"apiVersion":%q,"kind":%q,"metadata":{"name":"x","namespace":%q,"uid":"uid-%s"}}`,
			l.APIVersion(), l.Kind, ns, l.Name)
		data := []byte(`{"kind":"List","apiVersion":"v1","items":[` + item + `]}`)
		l2 := &loader{g: newGraph(), log: quiet}
		lb := &loadedBundle{label: "mem"}
		dec, ok := kindDecoders[kind]
		if !ok {
			t.Errorf("%s: analyze has no decoder for kind %s", l.Name, kind)
			continue
		}
		if !dec.add(l2, lb, Location{Bundle: "mem", Path: bundle.ClusterResourcePath(l.Name)}, data, dec.decode(newSharedDecode(), data)) {
			t.Errorf("%s: list not readable", l.Name)
			continue
		}
		_, indexed := l2.g.byKey[l.Kind+"/"+ns+"/x"]
		if l.Kind == "Event" {
			indexed = l2.seenEvents.has("uid-" + l.Name)
		}
		if !indexed {
			t.Errorf("%s: analyze has no decoder for it: an item of kind %s was not loaded", l.Name, l.Kind)
		}
	}
}
