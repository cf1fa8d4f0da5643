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
	wantRoot(t, rs, analyze.StageRequest, "request-forbidden-cluster-scope", "system:serviceaccount:ops:widget-operator", "widgets")
}

// kubectl's own error is the API server's answer to a request: a kind named Certificate
// or a Service a webhook points at is no node's trouble.
func TestKubectlsErrorIsTheRequestStage(t *testing.T) {
	rs := catalogRoots(t, map[string]string{"kubectl.txt": "$ kubectl get certificates -A\n" +
		"Error from server: conversion webhook for acme.example.io/v1beta1, Kind=Certificate failed: Post \"https://acme-webhook.acme.svc:443/convert?timeout=30s\": service \"acme-webhook\" not found\n"})
	wantRootAt(t, rs, analyze.StageRequest, "acme-webhook")
}

// A client that gave up waiting ("kubectl rollout status … error: timed out waiting for
// the condition") reports an outcome: the pods it waited for, Pending and not scheduled
// in the rows beside it, are the root, and the ticket's sentence about the rollout does
// not outweigh what the rows show.
func TestAWaitThatGaveUpIsNotTheRoot(t *testing.T) {
	rs := catalogRoots(t, map[string]string{
		"pods.txt": "kube-system  dns-6d8f7c9b5-2v7sc  0/1  Pending  2m30s\nkube-system  dns-6d8f7c9b5-s2dg6  0/1  Pending  2m30s\nkube-system  dns-5b7f6c8d9-zrkrr  1/1  Running  5m26s\n",
		"rollout.txt": "$ kubectl rollout status deploy/dns -n kube-system\n" +
			"Waiting for deployment \"dns\" rollout to finish: 1 old replicas are pending termination...\n" +
			"error: timed out waiting for the condition\n",
		"message.txt": "Fresh single-node install: the rollout of the dns deployment never finishes, two pods stay Pending forever.\n"})
	wantRootAt(t, rs, analyze.StageScheduling, "dns-6d8f7c9b5")
}

// A log entry a terminal cut at its width goes on at the margin on the lines below
// ("…cannot list resource "ippools" in API group "crd.projectcalico.org" at the cl" /
// "uster scope"): those lines are the entry's, read with it, not a reporter's sentence
// between two logs, so the refusal it holds is read whole.
func TestALogEntryATerminalCutIsReadWhole(t *testing.T) {
	log := "2021-03-02 08:11:04.100 [INFO][7] startup.go 280: Using NODENAME environment for node name\n2021-03-02 08:11:04.117 [INFO][7] customresource.go 217: Error getting resource Key=ClusterInformation(default) Name=\"default\" Resource=\"ClusterInform\nations\" error=clusterinformations.crd.projectcalico.org \"default\" not found\n2021-03-02 08:11:04.120 [ERROR][7] customresource.go 100: Error getting resource Key=IPPool(name=default-ipv4) error=ippools.crd.projectcalico.org \"de\nfault-ipv4\" is forbidden: User \"system:serviceaccount:kube-system:canal\" cannot list resource \"ippools\" in API group \"crd.projectcalico.org\" at the cl\nuster scope\n"
	rs := catalogRoots(t, map[string]string{"calico-node.log": log})
	wantRoot(t, rs, analyze.StageRequest, "request-forbidden-cluster-scope", "system:serviceaccount:kube-system:canal", "ippools")
}

// A root that speaks of the pod's node without naming it ("the OS and CPU architecture
// of the node") names the node the pod is bound to when the evidence shows it: the
// node is what the fix looks at.
func TestARootNamesThePodsNode(t *testing.T) {
	rs := catalogRoots(t, map[string]string{"describe.txt": "Name:             certgen-7x2kq\nNamespace:        gateway\n" +
		"Node:             winpool000012/10.40.112.10\nStatus:           Pending\n" +
		"Containers:\n  certgen:\n    Image:          ghcr.io/example/certgen:1.4.0\n    State:          Waiting\n      Reason:       ImagePullBackOff\n    Ready:          False\n",
		"message.txt": "The pod is in ImagePullBackOff and describing it shows:\n\n" +
			"Failed to pull image \"ghcr.io/example/certgen:1.4.0\": rpc error: code = NotFound desc = failed to pull and unpack image \"ghcr.io/example/certgen:1.4.0\": no match for platform in manifest: not found\n"})
	wantRootAt(t, rs, analyze.StageImage, "ghcr.io/example/certgen:1.4.0", "winpool000012")
}

// A container's status cut from the middle of a pod's -o json, without the braces that
// open it, is read as the same piece of -o yaml: its waiting reason and message say why.
func TestAPodsJSONStatusPieceIsRead(t *testing.T) {
	rs := catalogRoots(t, map[string]string{"status.json": "      \"image\": \"quay.io/example/step:1.2\",\n      \"imageID\": \"\",\n" +
		"      \"lastState\": {},\n      \"name\": \"step-build\",\n      \"ready\": false,\n      \"restartCount\": 0,\n" +
		"      \"state\": {\n        \"waiting\": {\n          \"message\": \"secret \\\"ci-secrets\\\" not found\",\n" +
		"          \"reason\": \"CreateContainerConfigError\"\n        }\n      }\n    },\n"})
	wantRoot(t, rs, analyze.StageConfig, "config-secret-key-missing", "ci-secrets")
}
