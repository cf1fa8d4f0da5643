package rules

import (
	"testing"

	"podflow.dev/podflow/analyze"
)

// An operator's list refused by the API server, as a Go HTTP client prints it inside a
// logfmt msg: the Status JSON is quoted twice (\\\" around the user), and the path is the
// Kubernetes API's. It is the request's 403, not an image pull's "unexpected status code".
func TestAnOperatorsRefusedListIsTheRequestStage(t *testing.T) {
	line := `time="2021-05-03T09:12:40Z" level=error msg="sync failed: listing widgets: unexpected status code (Forbidden) for GET \"/apis/example.com/v1/widgets\": {\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\",\"message\":\"widgets.example.com is forbidden: User \\\"system:serviceaccount:ops:widget-operator\\\" cannot list resource \\\"widgets\\\" in API group \\\"example.com\\\" at the cluster scope\",\"reason\":\"Forbidden\",\"code\":403}\n"` + "\n"
	rs := catalogRoots(t, map[string]string{"container.log": line})
	r := wantRootAt(t, rs, analyze.StageRequest, "system:serviceaccount:ops:widget-operator", "widgets")
	if r.Rule != "request-forbidden-cluster-scope" {
		t.Errorf("root rule %s, want request-forbidden-cluster-scope", r.Rule)
	}
}

// kubectl's own error is the API server's answer to a request: a kind named Certificate
// or a Service a webhook points at is no node's trouble.
func TestKubectlsErrorIsTheRequestStage(t *testing.T) {
	rs := catalogRoots(t, map[string]string{"kubectl.txt": "$ kubectl get certificates -A\n" +
		"Error from server: conversion webhook for acme.example.io/v1beta1, Kind=Certificate failed: Post \"https://acme-webhook.acme.svc:443/convert?timeout=30s\": service \"acme-webhook\" not found\n"})
	wantRootAt(t, rs, analyze.StageRequest, "acme-webhook")
}
