package analyze

import (
	"strings"
	"testing"
)

func TestAuditRequestText(t *testing.T) {
	forbidden := `{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","stage":"ResponseComplete","requestURI":"/api/v1/namespaces/shop/pods","verb":"create","user":{"username":"system:serviceaccount:ci:deployer"},"objectRef":{"resource":"pods","namespace":"shop","apiVersion":"v1"},"responseStatus":{"metadata":{},"status":"Failure","message":"pods is forbidden: User \"system:serviceaccount:ci:deployer\" cannot create resource \"pods\" in API group \"\" in the namespace \"shop\"","reason":"Forbidden","code":403}}`
	for _, tc := range []struct {
		name, in, want string
		ok             bool
	}{
		{"forbidden with the server's message", forbidden,
			`audit: system:serviceaccount:ci:deployer create pods in namespace shop answered 403 Forbidden: pods is forbidden: User "system:serviceaccount:ci:deployer" cannot create resource "pods" in API group "" in the namespace "shop"`, true},
		{"forbidden without a message gets the authorizer's sentence",
			`{"kind":"Event","apiVersion":"audit.k8s.io/v1","stage":"ResponseComplete","verb":"list","user":{"username":"jane"},"objectRef":{"resource":"deployments","namespace":"shop","apiGroup":"apps"},"responseStatus":{"reason":"Forbidden","code":403}}`,
			`audit: jane list deployments in namespace shop answered 403 Forbidden: User "jane" cannot list resource "deployments" in API group "apps" in the namespace "shop"`, true},
		{"cluster scope, impersonated",
			`{"kind":"Event","apiVersion":"audit.k8s.io/v1","stage":"ResponseComplete","verb":"list","user":{"username":"admin"},"impersonatedUser":{"username":"bot"},"objectRef":{"resource":"nodes"},"responseStatus":{"reason":"Forbidden","code":403}}`,
			`audit: bot list nodes answered 403 Forbidden: User "bot" cannot list resource "nodes" in API group "" at the cluster scope`, true},
		{"unauthenticated",
			`{"kind":"Event","apiVersion":"audit.k8s.io/v1","stage":"ResponseComplete","requestURI":"/api/v1/namespaces/shop/pods","verb":"get","user":{},"responseStatus":{"metadata":{},"status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401}}`,
			`audit: an unauthenticated client get /api/v1/namespaces/shop/pods answered 401 Unauthorized: Unauthorized`, true},
		{"a request that succeeded", strings.Replace(forbidden, `"code":403`, `"code":201`, 1), "", false},
		{"an earlier stage of a refused request", strings.Replace(forbidden, `"ResponseComplete"`, `"RequestReceived"`, 1), "", false},
		{"another kind of JSON", `{"kind":"Event","apiVersion":"v1","reason":"Forbidden","code":403}`, "", false},
		{"broken JSON", `{"kind":"Event","apiVersion":"audit.k8s.io/v1",`, "", false},
		{"text", `Error from server (Forbidden): audit.k8s.io/v1`, "", false},
	} {
		got, ok := auditRequestText(tc.in)
		if ok != tc.ok || got != tc.want {
			t.Errorf("%s:\n got %v %q\nwant %v %q", tc.name, ok, got, tc.ok, tc.want)
		}
	}
}
