package serve

import (
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"podflow.dev/podflow/bundle"
)

// bundleOf writes a bundle of these files and opens it.
func bundleOf(t *testing.T, files map[string]string) *bundle.Bundle {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "b")
	w, err := bundle.Create(dir, bundle.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for name, body := range files {
		if err := w.WriteFile(name, []byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(&bundle.Manifest{PodflowVersion: "test", CollectedAt: time.Date(2026, 11, 29, 21, 0, 0, 0, time.UTC)}); err != nil {
		t.Fatal(err)
	}
	b, err := bundle.Open(dir, bundle.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func list(kind string, items ...string) string {
	return `{"kind":"` + kind + `List","apiVersion":"v1","items":[` + strings.Join(items, ",") + `]}`
}

func TestEndpointsFromSlices(t *testing.T) {
	b := bundleOf(t, map[string]string{
		bundle.NamespacedResourcePath(bundle.KindServices, "shop"): list("Service",
			`{"metadata":{"name":"web","namespace":"shop","labels":{"app":"web"},"creationTimestamp":"2026-11-29T20:00:00Z"},"spec":{"selector":{"app":"web"},"clusterIP":"10.96.0.10","ports":[{"name":"http","port":80,"targetPort":8080}]}}`,
			`{"metadata":{"name":"idle","namespace":"shop"},"spec":{"selector":{"app":"idle"}}}`,
			`{"metadata":{"name":"manual","namespace":"shop"},"spec":{}}`),
		bundle.NamespacedResourcePath(bundle.KindEndpointSlices, "shop"): list("EndpointSlice",
			`{"metadata":{"name":"web-abc12","namespace":"shop","labels":{"kubernetes.io/service-name":"web"}},"addressType":"IPv4",
			  "ports":[{"name":"http","port":8080,"protocol":"TCP"}],
			  "endpoints":[{"addresses":["10.0.0.3"],"conditions":{"ready":false},"nodeName":"n1","targetRef":{"kind":"Pod","name":"web-2","namespace":"shop"}},
			               {"addresses":["10.0.0.2"],"conditions":{"ready":true},"nodeName":"n1","targetRef":{"kind":"Pod","name":"web-1","namespace":"shop"}}]}`),
	})
	cs, url := start(t, b)
	ctx := context.Background()
	eps, err := cs.CoreV1().Endpoints("shop").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range eps.Items {
		got = append(got, e.Name)
	}
	// "manual" has no selector and no slice: the controller writes no Endpoints for it.
	if !slices.Equal(got, []string{"idle", "web"}) {
		t.Fatalf("endpoints %v, want idle and web", got)
	}
	web, err := cs.CoreV1().Endpoints("shop").Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(web.Subsets) != 1 {
		t.Fatalf("web subsets %+v", web.Subsets)
	}
	ss := web.Subsets[0]
	if len(ss.Addresses) != 1 || ss.Addresses[0].IP != "10.0.0.2" || ss.Addresses[0].TargetRef == nil || ss.Addresses[0].TargetRef.Name != "web-1" ||
		len(ss.NotReadyAddresses) != 1 || ss.NotReadyAddresses[0].IP != "10.0.0.3" {
		t.Errorf("web addresses %+v not ready %+v", ss.Addresses, ss.NotReadyAddresses)
	}
	if len(ss.Ports) != 1 || ss.Ports[0].Port != 8080 || ss.Ports[0].Name != "http" || ss.Ports[0].Protocol != corev1.ProtocolTCP {
		t.Errorf("web ports %+v", ss.Ports)
	}
	if web.Labels["app"] != "web" || web.CreationTimestamp.IsZero() {
		t.Errorf("web metadata %+v", web.ObjectMeta)
	}
	if idle, err := cs.CoreV1().Endpoints("shop").Get(ctx, "idle", metav1.GetOptions{}); err != nil || len(idle.Subsets) != 0 {
		t.Errorf("idle: %+v, %v", idle, err)
	}
	code, body := get(t, url+"/api/v1/namespaces/shop/endpoints", kubectlTable)
	var tab metav1.Table
	if code != http.StatusOK || json.Unmarshal(body, &tab) != nil || len(tab.Rows) != 2 {
		t.Fatalf("%d %s", code, body)
	}
	if tab.Rows[0].Cells[1] != "<none>" || tab.Rows[1].Cells[1] != "10.0.0.2:8080" {
		t.Errorf("ENDPOINTS cells %v %v", tab.Rows[0].Cells, tab.Rows[1].Cells)
	}
	res, err := cs.Discovery().ServerResourcesForGroupVersion("v1")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(res.APIResources, func(r metav1.APIResource) bool { return r.Name == "endpoints" && slices.Contains(r.ShortNames, "ep") }) {
		t.Errorf("discovery lacks endpoints: %+v", res.APIResources)
	}
}

func TestEveryKindServedEvenEmpty(t *testing.T) {
	b := bundleOf(t, map[string]string{
		bundle.NamespacedResourcePath(bundle.KindPods, "shop"): list("Pod", `{"metadata":{"name":"web-1","namespace":"shop"},"spec":{"containers":[{"name":"app"}]}}`),
	})
	cs, _ := start(t, b)
	ctx := context.Background()
	if l, err := cs.NetworkingV1().Ingresses("shop").List(ctx, metav1.ListOptions{}); err != nil || len(l.Items) != 0 {
		t.Errorf("ingresses: %v, %v", l, err)
	}
	if l, err := cs.AutoscalingV2().HorizontalPodAutoscalers("").List(ctx, metav1.ListOptions{}); err != nil || len(l.Items) != 0 {
		t.Errorf("horizontalpodautoscalers: %v, %v", l, err)
	}
	if l, err := cs.NetworkingV1().NetworkPolicies("shop").List(ctx, metav1.ListOptions{}); err != nil || len(l.Items) != 0 {
		t.Errorf("networkpolicies: %v, %v", l, err)
	}
	if l, err := cs.RbacV1().ClusterRoleBindings().List(ctx, metav1.ListOptions{}); err != nil || len(l.Items) != 0 {
		t.Errorf("clusterrolebindings: %v, %v", l, err)
	}
	if l, err := cs.RbacV1().RoleBindings("shop").List(ctx, metav1.ListOptions{}); err != nil || len(l.Items) != 0 {
		t.Errorf("rolebindings: %v, %v", l, err)
	}
	if l, err := cs.CoreV1().Endpoints("shop").List(ctx, metav1.ListOptions{}); err != nil || len(l.Items) != 0 {
		t.Errorf("endpoints: %v, %v", l, err)
	}
	// Secrets are read only on request: a bundle without them says nothing of the cluster's.
	if _, err := cs.CoreV1().Secrets("shop").List(ctx, metav1.ListOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("secrets of a bundle without them: %v, want NotFound", err)
	}
	groups, err := cs.Discovery().ServerGroups()
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range groups.Groups {
		if g.Name == "autoscaling" && g.PreferredVersion.Version != "v2" {
			t.Errorf("autoscaling served at %s, want v2", g.PreferredVersion.Version)
		}
	}
}

func TestLogsOfContainersWithoutOne(t *testing.T) {
	b := bundleOf(t, map[string]string{
		bundle.NamespacedResourcePath(bundle.KindPods, "shop"): list("Pod",
			`{"metadata":{"name":"pending","namespace":"shop"},"spec":{"containers":[{"name":"app"}]},"status":{"phase":"Pending"}}`,
			`{"metadata":{"name":"creating","namespace":"shop"},"spec":{"nodeName":"n1","containers":[{"name":"app"}]},
			  "status":{"phase":"Pending","containerStatuses":[{"name":"app","state":{"waiting":{"reason":"ContainerCreating"}}}]}}`,
			`{"metadata":{"name":"pulling","namespace":"shop"},"spec":{"nodeName":"n1","containers":[{"name":"app"}]},
			  "status":{"phase":"Pending","containerStatuses":[{"name":"app","state":{"waiting":{"reason":"ImagePullBackOff"}}}]}}`,
			`{"metadata":{"name":"fresh","namespace":"shop"},"spec":{"nodeName":"n1","containers":[{"name":"app"}]},
			  "status":{"phase":"Running","containerStatuses":[{"name":"app","containerID":"containerd://abc","state":{"running":{}}}]}}`,
			`{"metadata":{"name":"looping","namespace":"shop"},"spec":{"nodeName":"n1","containers":[{"name":"app"}]},
			  "status":{"phase":"Running","containerStatuses":[{"name":"app","restartCount":3,"state":{"waiting":{"reason":"CrashLoopBackOff"}},
			  "lastState":{"terminated":{"exitCode":1,"reason":"Error","containerID":"containerd://old"}}}]}}`),
	})
	cs, _ := start(t, b)
	ctx := context.Background()
	pods := cs.CoreV1().Pods("shop")
	var code int
	res := pods.GetLogs("pending", &corev1.PodLogOptions{}).Do(ctx).StatusCode(&code)
	if data, err := res.Raw(); err != nil || len(data) != 0 || code != http.StatusNoContent {
		t.Errorf("log of a pod with no node: %d %q, %v; want the API server's empty 204", code, data, err)
	}
	// A previous instance the status names, whose log the collector could not get: the
	// kubelet had removed it, and answers 200 with its own words.
	if data, err := pods.GetLogs("looping", &corev1.PodLogOptions{Previous: true}).DoRaw(ctx); err != nil ||
		string(data) != "unable to retrieve container logs for containerd://old" {
		t.Errorf("previous log of a removed container: %q, %v; want the kubelet's 200 text", data, err)
	}
	for pod, want := range map[string]string{
		"creating": `container "app" in pod "creating" is waiting to start: ContainerCreating`,
		"pulling":  `container "app" in pod "pulling" is waiting to start: trying and failing to pull image`,
	} {
		// Stream, as kubectl logs reads a log, decodes the Status of a refusal.
		_, err := pods.GetLogs(pod, &corev1.PodLogOptions{}).Stream(ctx)
		if !apierrors.IsBadRequest(err) || !strings.Contains(err.Error(), want) {
			t.Errorf("log of %s: %v, want BadRequest %q", pod, err, want)
		}
	}
	_, err := pods.GetLogs("fresh", &corev1.PodLogOptions{Previous: true}).Stream(ctx)
	if want := `previous terminated container "app" in pod "fresh" not found`; !apierrors.IsBadRequest(err) || !strings.Contains(err.Error(), want) {
		t.Errorf("previous log of a container that never restarted: %v, want %q", err, want)
	}
	// A started container whose log the bundle lacks: the collector asked, and the
	// kubelet had removed it (a terminating pod's), which it says with 200 and its text.
	if data, err := pods.GetLogs("fresh", &corev1.PodLogOptions{}).DoRaw(ctx); err != nil ||
		string(data) != "unable to retrieve container logs for containerd://abc" {
		t.Errorf("log of a removed container: %q, %v; want the kubelet's 200 text", data, err)
	}
}

func TestReviews(t *testing.T) {
	cs, _ := start(t, openDemo(t))
	ctx := context.Background()
	for verb, want := range map[string]bool{"get": true, "list": true, "watch": true, "create": false, "delete": false, "patch": false} {
		rev, err := cs.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authorizationv1.SelfSubjectAccessReview{
			Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: verb, Resource: "pods", Namespace: "shop"}},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("%s: %v", verb, err)
		}
		if rev.Status.Allowed != want || rev.Spec.ResourceAttributes.Resource != "pods" {
			t.Errorf("can %s pods: %+v, want allowed=%v", verb, rev.Status, want)
		}
	}
	rules, err := cs.AuthorizationV1().SelfSubjectRulesReviews().Create(ctx, &authorizationv1.SelfSubjectRulesReview{
		Spec: authorizationv1.SelfSubjectRulesReviewSpec{Namespace: "shop"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rules.Status.ResourceRules) != 1 || !slices.Equal(rules.Status.ResourceRules[0].Verbs, []string{"get", "list", "watch"}) {
		t.Errorf("rules %+v", rules.Status)
	}
	who, err := cs.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if who.Status.UserInfo.Username != User {
		t.Errorf("whoami %+v", who.Status.UserInfo)
	}
	// Every other write is still refused.
	if _, err := cs.CoreV1().ConfigMaps("shop").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x"}}, metav1.CreateOptions{}); !apierrors.IsMethodNotSupported(err) {
		t.Errorf("create configmap: %v, want MethodNotAllowed", err)
	}
}

func TestTableColumnsAsTheAPIServerPrints(t *testing.T) {
	now := time.Date(2026, 11, 29, 21, 0, 0, 0, time.UTC)
	b := bundleOf(t, map[string]string{
		bundle.NamespacedResourcePath(bundle.KindJobs, "shop"): list("Job",
			`{"metadata":{"name":"done","namespace":"shop","creationTimestamp":"2026-11-29T20:00:00Z"},"spec":{"completions":1,"template":{"spec":{"containers":[{"name":"c","image":"i"}]}}},
			  "status":{"succeeded":1,"startTime":"2026-11-29T20:00:00Z","completionTime":"2026-11-29T20:00:42Z","conditions":[{"type":"Complete","status":"True"}]}}`,
			`{"metadata":{"name":"failing","namespace":"shop","creationTimestamp":"2026-11-29T20:00:00Z"},"spec":{"template":{"spec":{"containers":[{"name":"c","image":"i"}]}}},
			  "status":{"startTime":"2026-11-29T20:50:00Z","conditions":[{"type":"Failed","status":"True"}]}}`),
		bundle.NamespacedResourcePath(bundle.KindConfigMaps, "shop"): list("ConfigMap",
			`{"metadata":{"name":"cfg","namespace":"shop","annotations":{"podflow.dev/value-sizes":"{\"a\":1,\"b\":2}"}}}`),
		bundle.ClusterResourcePath(bundle.KindPVs): list("PersistentVolume",
			`{"metadata":{"name":"pv1"},"spec":{"capacity":{"storage":"1Gi"},"accessModes":["ReadWriteOnce"],"persistentVolumeReclaimPolicy":"Delete","storageClassName":"fast","claimRef":{"namespace":"shop","name":"data"}},"status":{"phase":"Bound"}}`),
		bundle.NamespacedResourcePath(bundle.KindRoles, "shop"): list("Role",
			`{"metadata":{"name":"reader","namespace":"shop","creationTimestamp":"2026-11-29T20:00:00Z"}}`),
		bundle.NamespacedResourcePath(bundle.KindRoleBindings, "shop"): list("RoleBinding",
			`{"metadata":{"name":"read","namespace":"shop"},"roleRef":{"kind":"Role","name":"reader"},"subjects":[{"kind":"ServiceAccount","name":"app","namespace":"shop"}]}`),
		bundle.NamespacedResourcePath(bundle.KindEvents, "shop"): list("Event",
			`{"metadata":{"name":"web.1","namespace":"shop"},"type":"Warning","reason":"BackOff","message":"m","count":2,
			  "involvedObject":{"kind":"Pod","name":"web"},"lastTimestamp":"2026-11-29T20:59:00Z"}`),
	})
	_, url := startWith(t, Options{Token: token, Now: now}, b)
	table := func(path string) ([]string, [][]any) {
		t.Helper()
		code, body := get(t, url+path, kubectlTable)
		var tab metav1.Table
		if code != http.StatusOK || json.Unmarshal(body, &tab) != nil {
			t.Fatalf("%s: %d %s", path, code, body)
		}
		var cols []string
		for _, c := range tab.ColumnDefinitions {
			cols = append(cols, c.Name)
		}
		var rows [][]any
		for _, r := range tab.Rows {
			rows = append(rows, r.Cells)
		}
		return cols, rows
	}
	cols, rows := table("/apis/batch/v1/namespaces/shop/jobs")
	if !slices.Equal(cols, []string{"Name", "Status", "Completions", "Duration", "Age", "Containers", "Images", "Selector"}) {
		t.Errorf("job columns %v", cols)
	}
	if len(rows) != 2 || rows[0][1] != "Complete" || rows[0][2] != "1/1" || rows[0][3] != "42s" ||
		rows[1][1] != "Failed" || rows[1][2] != "0/1" || rows[1][3] != "10m" {
		t.Errorf("job rows %v", rows)
	}
	cols, rows = table("/api/v1/namespaces/shop/configmaps")
	if !slices.Equal(cols, []string{"Name", "Data", "Age"}) || len(rows) != 1 || rows[0][1] != float64(2) {
		t.Errorf("configmaps %v %v", cols, rows)
	}
	cols, rows = table("/api/v1/persistentvolumes")
	if !slices.Equal(cols[:8], []string{"Name", "Capacity", "Access Modes", "Reclaim Policy", "Status", "Claim", "StorageClass", "VolumeAttributesClass"}) ||
		len(rows) != 1 || rows[0][1] != "1Gi" || rows[0][2] != "RWO" || rows[0][5] != "shop/data" || rows[0][6] != "fast" {
		t.Errorf("pv %v %v", cols, rows)
	}
	cols, rows = table("/apis/rbac.authorization.k8s.io/v1/namespaces/shop/roles")
	if !slices.Equal(cols, []string{"Name", "Created At"}) || len(rows) != 1 || rows[0][1] != "2026-11-29T20:00:00Z" {
		t.Errorf("roles %v %v", cols, rows)
	}
	// Events: NAME last, shown with -o wide only, as the API server's event printer has it
	// (measured against the test bed's API server).
	cols, rows = table("/api/v1/namespaces/shop/events")
	if !slices.Equal(cols, []string{"Last Seen", "Type", "Reason", "Object", "Subobject", "Source", "Message", "First Seen", "Count", "Name"}) ||
		len(rows) != 1 || rows[0][9] != "web.1" || rows[0][2] != "BackOff" {
		t.Errorf("events %v %v", cols, rows)
	}
	_, rows = table("/apis/rbac.authorization.k8s.io/v1/namespaces/shop/rolebindings")
	if len(rows) != 1 || rows[0][1] != "Role/reader" || rows[0][5] != "shop/app" {
		t.Errorf("rolebindings %v", rows)
	}
}

// kubectl explain reads the v3 documents; clients that validate read v2 in protobuf.
func TestOpenAPI(t *testing.T) {
	cs, url := start(t, openDemo(t))
	paths, err := cs.Discovery().OpenAPIV3().Paths()
	if err != nil {
		t.Fatal(err)
	}
	for _, gv := range []string{"api/v1", "apis/apps/v1", "apis/batch/v1", "apis/autoscaling/v2", "apis/networking.k8s.io/v1", "apis/rbac.authorization.k8s.io/v1"} {
		gvPath, ok := paths[gv]
		if !ok {
			t.Errorf("/openapi/v3 lacks %s", gv)
			continue
		}
		data, err := gvPath.Schema("application/json")
		if err != nil {
			t.Fatalf("%s: %v", gv, err)
		}
		var doc struct {
			Components struct {
				Schemas map[string]json.RawMessage `json:"schemas"`
			} `json:"components"`
			// kubectl explain finds a resource's kind through its path's get operation
			// (x-kubernetes-group-version-kind), then the schema of that kind.
			Paths map[string]struct {
				Get struct {
					GVK struct{ Group, Version, Kind string } `json:"x-kubernetes-group-version-kind"`
				} `json:"get"`
			} `json:"paths"`
		}
		if err := json.Unmarshal(data, &doc); err != nil || len(doc.Components.Schemas) == 0 {
			t.Errorf("%s: %d schemas, %v", gv, len(doc.Components.Schemas), err)
		}
		if gv == "api/v1" {
			pod := string(doc.Components.Schemas["io.k8s.api.core.v1.Pod"])
			if !strings.Contains(pod, `"x-kubernetes-group-version-kind"`) || !strings.Contains(pod, "spec") {
				t.Errorf("Pod schema %.300s", pod)
			}
			if k := doc.Paths["/api/v1/namespaces/{namespace}/pods"].Get.GVK; k.Kind != "Pod" || k.Version != "v1" {
				t.Errorf("the pods path names kind %+v, want v1 Pod: kubectl explain pods fails without it", k)
			}
		}
		if gv == "apis/apps/v1" {
			if k := doc.Paths["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"].Get.GVK; k.Kind != "Deployment" || k.Group != "apps" {
				t.Errorf("the deployment path names kind %+v, want apps/v1 Deployment", k)
			}
		}
	}
	v2, err := cs.Discovery().OpenAPISchema()
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, d := range v2.GetDefinitions().GetAdditionalProperties() {
		found = found || d.GetName() == "io.k8s.api.apps.v1.Deployment"
	}
	if !found {
		t.Error("/openapi/v2 lacks the Deployment definition")
	}
	if code, body := get(t, url+"/openapi/v2", "application/json"); code != http.StatusOK || !strings.HasPrefix(string(body), "{") {
		t.Errorf("/openapi/v2 as JSON: %d %.100s", code, body)
	}
	if code, _ := get(t, url+"/openapi/v3/apis/nope/v1", ""); code != http.StatusNotFound {
		t.Errorf("unknown group version: %d", code)
	}
}

// TestNodeTableAsTheAPIServerPrints: the node table's cells are the API server's
// printNode's: a Ready condition that is not True (Unknown too) is NotReady, a node
// without one is Unknown, roles come from both role labels, an empty node-info field
// is <unknown>, and the kernel carries the architecture.
func TestNodeTableAsTheAPIServerPrints(t *testing.T) {
	b := bundleOf(t, map[string]string{
		bundle.ClusterResourcePath(bundle.KindNodes): `{"kind":"NodeList","apiVersion":"v1","items":[
			{"metadata":{"name":"gone","labels":{"kubernetes.io/role":"worker"}},"status":{"conditions":[{"type":"Ready","status":"Unknown"}]}},
			{"metadata":{"name":"fresh"},"spec":{"unschedulable":true}},
			{"metadata":{"name":"cp","labels":{"node-role.kubernetes.io/control-plane":""}},"status":{"conditions":[{"type":"Ready","status":"True"}],
			 "nodeInfo":{"osImage":"Debian GNU/Linux 13","kernelVersion":"6.12.0","containerRuntimeVersion":"containerd://2.1.4","architecture":"amd64","kubeletVersion":"v1.37.2"}}}]}`,
	})
	_, url := start(t, b)
	code, body := get(t, url+"/api/v1/nodes?includeObject=None", "application/json;as=Table;v=v1;g=meta.k8s.io")
	var tab metav1.Table
	if code != http.StatusOK || json.Unmarshal(body, &tab) != nil {
		t.Fatalf("%d %s", code, body)
	}
	got := map[string][]any{}
	for _, r := range tab.Rows {
		got[r.Cells[0].(string)] = r.Cells
	}
	want := map[string][]any{
		"gone":  {"gone", "NotReady", "worker", "<unknown>", "<unknown>"},
		"fresh": {"fresh", "Unknown,SchedulingDisabled", "<none>", "<unknown>", "<unknown>"},
		"cp":    {"cp", "Ready", "control-plane", "Debian GNU/Linux 13", "6.12.0 (amd64)"},
	}
	for name, w := range want {
		c := got[name]
		if len(c) < 10 {
			t.Fatalf("%s: cells %v", name, c)
		}
		// NAME, STATUS, ROLES, then (wide) OS-IMAGE and KERNEL-VERSION.
		if c[0] != w[0] || c[1] != w[1] || c[2] != w[2] || c[7] != w[3] || c[8] != w[4] {
			t.Errorf("%s: cells %v, want status %v roles %v os %v kernel %v", name, c, w[1], w[2], w[3], w[4])
		}
	}
	if c := got["fresh"]; c[9] != "<unknown>" {
		t.Errorf("fresh container runtime %v, want <unknown>", c[9])
	}
}

// TestEndpointsLeaveOutPodsWithoutTheNamedPort: a Service whose named targetPort no pod
// declares gets an EndpointSlice with its pods and no port; the endpoints controller
// writes no address for them, so the derived Endpoints have none either. A headless
// Service without ports keeps its addresses.
func TestEndpointsLeaveOutPodsWithoutTheNamedPort(t *testing.T) {
	b := bundleOf(t, map[string]string{
		bundle.NamespacedResourcePath(bundle.KindServices, "shop"): list("Service",
			`{"metadata":{"name":"api-named","namespace":"shop"},"spec":{"selector":{"app":"api"},"clusterIP":"10.96.0.11","ports":[{"port":80,"targetPort":"http-api"}]}}`,
			`{"metadata":{"name":"db","namespace":"shop"},"spec":{"selector":{"app":"db"},"clusterIP":"None"}}`),
		bundle.NamespacedResourcePath(bundle.KindEndpointSlices, "shop"): list("EndpointSlice",
			`{"metadata":{"name":"api-named-x1","namespace":"shop","labels":{"kubernetes.io/service-name":"api-named"}},"addressType":"IPv4","ports":[],
			  "endpoints":[{"addresses":["10.0.0.4"],"conditions":{"ready":true},"targetRef":{"kind":"Pod","name":"api-1","namespace":"shop"}}]}`,
			`{"metadata":{"name":"db-x1","namespace":"shop","labels":{"kubernetes.io/service-name":"db"}},"addressType":"IPv4","ports":[],
			  "endpoints":[{"addresses":["10.0.0.5"],"conditions":{"ready":true},"targetRef":{"kind":"Pod","name":"db-0","namespace":"shop"}}]}`),
	})
	cs, _ := start(t, b)
	ctx := context.Background()
	api, err := cs.CoreV1().Endpoints("shop").Get(ctx, "api-named", metav1.GetOptions{})
	if err != nil || len(api.Subsets) != 0 {
		t.Errorf("api-named: %+v, %v; want no subset", api, err)
	}
	db, err := cs.CoreV1().Endpoints("shop").Get(ctx, "db", metav1.GetOptions{})
	if err != nil || len(db.Subsets) != 1 || len(db.Subsets[0].Addresses) != 1 || db.Subsets[0].Addresses[0].IP != "10.0.0.5" {
		t.Errorf("db: %+v, %v; want its one address", db, err)
	}
}
