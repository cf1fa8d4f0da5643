package rules

import (
	"strings"
	"testing"
)

// A Service and the workload meant to serve it, pasted as YAML without their pods: the
// workload's pod template stands in for the pods. The manifests are written from the
// core/v1 and apps/v1 schemas as `kubectl get -o yaml` prints them and as tickets quote
// them: whole, cut short ("..." where lines were left out), or from `spec:` down.

const standInDeployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: shop-api
  namespace: shop
spec:
  replicas: 2
  selector:
    matchLabels:
      app: shop-api
      tier: backend
  template:
    metadata:
      labels:
        app: shop-api
        tier: backend
    spec:
      containers:
      - name: api
        image: registry.example/shop/api:2.1
        ports:
        - containerPort: 8080
          name: http-api
          protocol: TCP
`

func standInService(selector, targetPort string) string {
	return `apiVersion: v1
kind: Service
metadata:
  name: shop-api
  namespace: shop
spec:
  ports:
  - name: http
    port: 80
    protocol: TCP
    targetPort: ` + targetPort + `
  selector:
` + selector + `  type: ClusterIP
`
}

func TestServiceSelectorAgainstPastedTemplate(t *testing.T) {
	kindless := func(s string) string {
		// From spec: down, as a ticket quotes the part that matters.
		return s[strings.Index(s, "spec:"):]
	}
	runRelationCases(t, ServiceSelectorMatchesNothing, []relationCase{
		{name: "selector value differs from the template's label", files: map[string]string{
			"deploy.yaml": standInDeployment, "svc.yaml": standInService("    app: shop-api\n    tier: frontend\n", "http-api")},
			want: []string{"service shop/shop-api selects", "Deployment shop/shop-api", "tier is backend", "its pods are not in the evidence"}},
		{name: "selector key the template lacks, both pasted from spec down", files: map[string]string{
			"deployment.yaml": kindless(standInDeployment), "service.yaml": kindless(standInService("    app: shop-api\n    component: api\n", "http-api"))},
			want: []string{"no component label", "app=shop-api"}},
		{name: "the template's labels cut from the paste", files: map[string]string{
			"deploy.yaml": standInDeployment[:strings.Index(standInDeployment, "spec:")] + "...\n        ports:\n        - containerPort: 8080\n",
			"svc.yaml":    standInService("    app: shop-api\n", "http-api")}},
		{name: "selector matches the template", files: map[string]string{
			"deploy.yaml": standInDeployment, "svc.yaml": standInService("    app: shop-api\n", "http-api")}},
		{name: "pods in the evidence, the template is not read", files: map[string]string{
			"deploy.yaml": standInDeployment, "svc.yaml": standInService("    app: shop-api\n    tier: frontend\n", "http-api"),
			"pods.txt": "NAMESPACE   NAME                        READY   STATUS    RESTARTS   AGE     LABELS\n" +
				"shop        shop-api-6f9c8d7b5-x2x9q    1/1     Running   0          3h      app=shop-api,tier=frontend\n"}},
	})
}

func TestServiceTargetPortAgainstPastedTemplate(t *testing.T) {
	cut := func(s, from string) string {
		// The manifest with its middle left out, as tickets quote it.
		i := strings.Index(s, "  name: shop-api\n") + len("  name: shop-api\n")
		return s[:i] + "...\n" + s[strings.Index(s, from):]
	}
	runRelationCases(t, ServiceTargetPortMismatch, []relationCase{
		{name: "named targetPort the container does not declare", files: map[string]string{
			"deploy.yaml": standInDeployment, "svc.yaml": standInService("    app: shop-api\n", "http")},
			want: []string{`the container port named "http"`, "http-api=8080", "Deployment shop/shop-api"}},
		{name: "numeric targetPort the container does not declare", files: map[string]string{
			"deploy.yaml": standInDeployment, "svc.yaml": standInService("    app: shop-api\n", "9090")},
			want: []string{"targetPort 9090", "http-api=8080", "connections reach nothing listening"}},
		{name: "both cut short: the Service's ports and the container's ports", files: map[string]string{
			"deploy.yaml": cut(standInDeployment, "        ports:"), "svc.yaml": cut(standInService("    app: shop-api\n", "http"), "  ports:")},
			want: []string{`the container port named "http"`, "http-api=8080", "which pods the Service selects is not in the evidence", "one workload pasted with it"}},
		{name: "targetPort names the declared port", files: map[string]string{
			"deploy.yaml": standInDeployment, "svc.yaml": standInService("    app: shop-api\n", "http-api")}},
		{name: "numeric targetPort the container declares", files: map[string]string{
			"deploy.yaml": standInDeployment, "svc.yaml": standInService("    app: shop-api\n", "8080")}},
		{name: "selector matches another workload's template only", files: map[string]string{
			"deploy.yaml": standInDeployment, "svc.yaml": standInService("    app: shop-web\n", "http")}},
	})
}
