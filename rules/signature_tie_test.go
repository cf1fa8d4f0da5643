package rules

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"podflow.dev/podflow/analyze"
	"podflow.dev/podflow/catalog"
)

// fromTemplate is a line a catalog entry prints: its template with the values in place of
// its verbs, in order (%q quotes the value), so a test's line is the component's own
// wording of a release, not one written for the test.
func fromTemplate(t *testing.T, id string, vals ...string) string {
	t.Helper()
	e := catalog.Default().Lookup(id)
	if e == nil {
		t.Fatalf("catalog entry %s is gone; pick the entry that now prints this wording", id)
	}
	verbs := regexp.MustCompile(`%[-+# 0-9.]*[a-zA-Z]`)
	i := 0
	out := verbs.ReplaceAllStringFunc(e.Template, func(v string) string {
		if i >= len(vals) {
			t.Fatalf("%s: template %q has more verbs than the %d values given", id, e.Template, len(vals))
		}
		s := vals[i]
		i++
		if strings.HasSuffix(v, "q") {
			return `"` + s + `"`
		}
		return s
	})
	if i != len(vals) {
		t.Fatalf("%s: template %q has %d verbs, %d values given", id, e.Template, i, len(vals))
	}
	return out
}

func tieOf(t *testing.T, line, sig string) (analyze.TieMatch, bool) {
	t.Helper()
	sigs := loadSignatures(t)
	for _, m := range analyze.TieLine(sigs, line) {
		if m.Signature == sig {
			return m, true
		}
	}
	return analyze.TieMatch{}, false
}

// Another release's template of the call site a signature knows fires it; the same
// function's message of another meaning does not.
func TestTieOtherReleaseOfTheCallSite(t *testing.T) {
	// forbiddenMessage of Kubernetes 1.8 to 1.11, tried on the signatures with only the
	// later "cannot list resource "pods" in API group "" at the cluster scope" known (the
	// catalog's own pattern for the old wording left out).
	src, err := os.ReadFile(filepath.Join("signatures", "request.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	oldPattern := regexp.MustCompile(`(?m)^    - 'User .* cannot \(\?P<verb>\[a-z\]\+\) \(\?P<resource>\[a-z0-9\].* at the cluster scope[^\n]*'\n`)
	if len(oldPattern.FindAll(src, -1)) != 1 {
		t.Fatal("request.yaml's pattern for the old cluster-scope wording is not found once; update the test")
	}
	// and the example it fires on.
	oldExample := regexp.MustCompile(`(?m)^      - '.*cannot list nodes at the cluster scope\. \(get nodes\)'\n`)
	sigs, err := analyze.ParseSignatures("request.yaml", oldExample.ReplaceAll(oldPattern.ReplaceAll(src, nil), nil))
	if err != nil {
		t.Fatal(err)
	}
	tieOf := func(line, sig string) (analyze.TieMatch, bool) {
		for _, m := range analyze.TieLine(sigs, line) {
			if m.Signature == sig {
				return m, true
			}
		}
		return analyze.TieMatch{}, false
	}
	line := fromTemplate(t, "kube-apiserver/56545c0acd", "system:serviceaccount:default:default", "list", "pods")
	m, ok := tieOf(line, "request-forbidden-cluster-scope")
	if !ok {
		t.Fatalf("%q does not fire request-forbidden-cluster-scope through the catalog", line)
	}
	if m.Captures["user"] != "system:serviceaccount:default:default" {
		t.Errorf("user = %q, want the identity the line names", m.Captures["user"])
	}
	if _, ok := m.Captures["resource"]; ok {
		t.Errorf("resource filled (%q) though the old template names it in no capture of the same name", m.Captures["resource"])
	}
	// The same function's namespace refusal is the signature's near miss.
	ns := fromTemplate(t, "kube-apiserver/526e891ee5", "system:serviceaccount:default:default", "list", "pods", "default")
	if _, ok := tieOf(ns, "request-forbidden-cluster-scope"); ok {
		t.Errorf("%q fires request-forbidden-cluster-scope: the namespace wording is its quiet example's", ns)
	}
}

// The same inner value under an older outer layer fires the signature that knows the
// value under a newer one; another resource under the same wrapper does not.
func TestTieInnerValueUnderAnOlderWrapper(t *testing.T) {
	inner := fromTemplate(t, "kube-apiserver/ea902c42bb", "configmaps", "app-config")
	line := fromTemplate(t, "kubelet/deb76d01e6", "web-1_prod(0731e1f9-44d2-11e6-85f6-f8bc1206b7d0)", inner)
	m, ok := tieOf(t, line, "volume-configmap-missing-message")
	if !ok {
		t.Fatalf("%q does not fire volume-configmap-missing-message through the catalog", line)
	}
	if m.Captures["name"] != "app-config" {
		t.Errorf("name = %q, want app-config", m.Captures["name"])
	}
	other := fromTemplate(t, "kubelet/deb76d01e6", "web-1_prod(0731e1f9-44d2-11e6-85f6-f8bc1206b7d0)",
		fromTemplate(t, "kube-apiserver/ea902c42bb", "persistentvolumeclaims", "data"))
	if _, ok := tieOf(t, other, "volume-configmap-missing-message"); ok {
		t.Errorf("%q fires volume-configmap-missing-message: the resource is not the one its pattern spells out", other)
	}
}

// A generic wrapper never ties a line to a signature by itself: neither its call sites
// among any signature's ties, nor a line of it around an inner message no one knows.
func TestTieGenericWrappersDoNot(t *testing.T) {
	sigs := loadSignatures(t)
	_, sites := analyze.SignatureTies(sigs)
	for _, id := range []string{"kubelet/530288f045", "kubelet/cdfb0a37f3", "kubelet/b389cc1782", "kubelet/fe3a8fc6b0"} {
		e := catalog.Default().Lookup(id)
		if e == nil {
			t.Fatalf("catalog entry %s is gone", id)
		}
		for sig, ss := range sites {
			if slices.Contains(ss, e.Site()) {
				t.Errorf("%s ties the generic wrapper %s (%q)", sig, id, e.Template)
			}
		}
	}
	inner := fromTemplate(t, "kubelet/b389cc1782", "StartContainer", "app", "RunContainerError", "the frobnicator declined")
	line := fromTemplate(t, "kubelet/530288f045", inner)
	if got := analyze.TieLine(sigs, line); len(got) > 0 {
		t.Errorf("%q ties to %+v; a wrapper around an unknown message says nothing", line, got)
	}
}

// A tie never makes a signature fire on its own near misses.
func TestTieKeepsQuietExamplesQuiet(t *testing.T) {
	sigs := loadSignatures(t)
	for _, s := range sigs {
		for _, ex := range s.Examples.Quiet {
			for _, m := range analyze.TieLine(sigs, ex) {
				if m.Signature == s.ID {
					t.Errorf("%s: quiet example %q fires it through catalog entry %s", s.ID, ex, m.Entry)
				}
			}
		}
	}
}

// The ties reach across the catalog: a floor, so a change that loses most of them shows.
func TestTieCoverage(t *testing.T) {
	sigs := loadSignatures(t)
	entries, sites := analyze.SignatureTies(sigs)
	n := 0
	for _, es := range entries {
		n += len(es)
	}
	t.Logf("%d of %d signatures tie to call sites; %d catalog entries lead to a signature by their own example", len(sites), len(sigs), n)
	if len(sites) < len(sigs)/3 || n < 60 {
		t.Errorf("%d signatures tied, %d entries lead to one: fewer than a third of the signatures or 60 entries", len(sites), n)
	}
}

// A tie carries a signature's meaning to another wording of the layer it ties, never
// away from the values the meaning rests on around that layer: the sandbox image's
// pull failure is about the /pause image its firing examples name, so a registry's bare
// "pull access denied" about another image is not it.
func TestTieKeepsTheValuesAroundTheLayer(t *testing.T) {
	line := fromTemplate(t, "containerd/d37550b876", "docker.io/acme/app:1.0")
	if _, ok := tieOf(t, line, "sandbox-image-pull-failed-message"); ok {
		t.Errorf("%q ties to sandbox-image-pull-failed-message without the sandbox image", line)
	}
}

// A tie carries a meaning only to values of the example's shape: kyverno's "%s/%s not
// found" reads a registry's "docker.io/x/y:1: not found" and a shell's "/bin/sh: 1:
// gcc10-ld.bfd: not found" alike, and only the first names an image.
func TestTieValueShape(t *testing.T) {
	if _, ok := tieOf(t, "/bin/sh: 1: gcc10-ld.bfd: not found", "image-pull-not-found-message"); ok {
		t.Error("a shell's command not found tied to the image pull signature")
	}
	if _, ok := tieOf(t, "registry.example.com/team/app:1.2: not found", "image-pull-not-found-message"); !ok {
		t.Error("an image reference not found no longer ties to the image pull signature")
	}
}
