package analyze_test

import (
	"testing"

	"podflow.dev/podflow/analyze"
)

// A failed pull is classified once, on its attempt, from every message about it: the
// status may say only "Back-off pulling image" while the event or journal says why.
func TestPullAttemptKinds(t *testing.T) {
	cases := map[string]analyze.PullErrorKind{
		`dial tcp: lookup registry.example on 10.96.0.10:53: no such host`:                               analyze.PullErrorDNS,
		`tls: failed to verify certificate: x509: certificate signed by unknown authority`:               analyze.PullErrorX509,
		`429 Too Many Requests - Server message: toomanyrequests: You have reached your pull rate limit`: analyze.PullErrorRateLimited,
		`pull access denied for shop/api, repository does not exist or may require 'docker login'`:       analyze.PullErrorNotFound,
		`failed to resolve reference "registry.example/app:9": registry.example/app:9: not found`:        analyze.PullErrorNotFound,
		// A registry's own words for a 401, as the Docker daemon passes them on.
		`Error response from daemon: Get https://registry.example/v2/app/manifests/1: unknown: Authentication is required`: analyze.PullErrorUnauthorized,
		`reading manifest 1.2 in quay.io/shop/api: manifest unknown`:                                                       analyze.PullErrorNotFound,
		`failed to copy: httpReadSeeker: failed open: unexpected status code 500 Internal Server Error`:                    analyze.PullErrorOther,
		`unexpected status 401 Unauthorized, but also lookup x on 10.0.0.1:53: no such host (the DNS wins)`:                analyze.PullErrorDNS,
		// Docker Hub's official library is public: its "pull access denied" is a repository
		// that does not exist.
		`failed to resolve reference "docker.io/library/controller:latest": pull access denied, repository does not exist or may require authorization: server message: insufficient_scope: authorization failed`: analyze.PullErrorNotFound,
		`Error response from daemon: pull access denied for controller, repository does not exist or may require 'docker login'`:                                                                                  analyze.PullErrorNotFound,
		// The same answer of any repository to a pod with no pull secret: the image is not
		// there for the node, whether it never existed or is private.
		`failed to resolve reference "docker.io/shop/api:1": pull access denied, repository does not exist or may require authorization`: analyze.PullErrorNotFound,
		`failed to pull and unpack image "ghcr.io/shop/api:latest": 403 Forbidden`:                                                       analyze.PullErrorNotFound,
		`Error response from daemon: Get https://ghcr.io/v2/shop/api/manifests/latest: unauthorized`:                                     analyze.PullErrorNotFound,
		`Error response from daemon: error from registry: denied`:                                                                        analyze.PullErrorOther,
	}
	for msg, want := range cases {
		g := load(t, map[string]any{
			"cluster-resources/pods/shop.json": list(pullFailing("shop", "web", "n1", "Back-off pulling image")),
			"cluster-resources/events/shop.json": list(
				event("shop", "e1", "Pod", "web", "spec.containers{app}", "Failed", `Failed to pull image "registry.example/app:1": `+msg, "2026-11-29T10:00:05Z")),
		})
		got := viewOf(t, g, allKinds, func(v *analyze.View) []analyze.PullErrorKind {
			var out []analyze.PullErrorKind
			for _, a := range v.PullAttempts() {
				out = append(out, a.Kind)
				if of := v.PullAttemptsOf(a.Kind); len(of) != 1 {
					t.Errorf("%s: PullAttemptsOf(%s) has %d attempts, want 1", msg, a.Kind, len(of))
				}
			}
			return out
		})
		if len(got) != 1 || got[0] != want {
			t.Errorf("%s: kinds %v, want [%s]", msg, got, want)
		}
	}
}

// A pod that gives pull secrets and gets the ambiguous answer had its credentials refused.
func TestAnAmbiguousRefusalWithPullSecretsIsUnauthorized(t *testing.T) {
	pod := pullFailing("shop", "web", "n1", "Back-off pulling image")
	pod["spec"].(obj)["imagePullSecrets"] = []any{obj{"name": "shop-pull"}}
	g := load(t, map[string]any{
		"cluster-resources/pods/shop.json": list(pod),
		"cluster-resources/events/shop.json": list(
			event("shop", "e1", "Pod", "web", "spec.containers{app}", "Failed", `Failed to pull image "docker.io/shop/api:1": failed to resolve reference "docker.io/shop/api:1": pull access denied, repository does not exist or may require authorization`, "2026-11-29T10:00:05Z")),
	})
	got := viewOf(t, g, allKinds, func(v *analyze.View) []analyze.PullErrorKind {
		var out []analyze.PullErrorKind
		for _, a := range v.PullAttempts() {
			out = append(out, a.Kind)
		}
		return out
	})
	if len(got) != 1 || got[0] != analyze.PullErrorUnauthorized {
		t.Errorf("kinds %v, want [unauthorized]", got)
	}
}

func TestImageReferenceParts(t *testing.T) {
	for image, want := range map[string][3]string{
		"nginx":                          {"docker.io", "nginx", "latest"},
		"localhost/app:2":                {"localhost", "localhost/app", "2"},
		"registry.example:5000/shop/api": {"registry.example:5000", "registry.example:5000/shop/api", "latest"},
		"quay.io/shop/api@sha256:abc":    {"quay.io", "quay.io/shop/api", "sha256:abc"},
	} {
		repo, version := analyze.SplitImage(image)
		if got := [3]string{analyze.RegistryHost(image), repo, version}; got != want {
			t.Errorf("%s: host, repo, version = %q, want %q", image, got, want)
		}
	}
}
