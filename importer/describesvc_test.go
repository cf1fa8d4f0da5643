package importer

import (
	"encoding/json"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"podflow.dev/podflow/bundle"
)

// What kubectl v1.37.2 printed on the test bed for `kubectl describe services` in the
// service-target-port-mismatch scenario: a numeric targetPort whose endpoint carries
// that port, and a named targetPort no container declares, whose endpoint has none.
const describeServicesTargetPort = `$ kubectl describe services -n service-target-port-mismatch
Name:                     api
Namespace:                service-target-port-mismatch
Labels:                   <none>
Annotations:              <none>
Selector:                 app=api
Type:                     ClusterIP
IP Family Policy:         SingleStack
IP Families:              IPv4
IP:                       10.96.137.38
IPs:                      10.96.137.38
Port:                     http  80/TCP
TargetPort:               8080/TCP
Endpoints:                10.213.0.5:8080
Session Affinity:         None
Internal Traffic Policy:  Cluster


Name:                     api-named
Namespace:                service-target-port-mismatch
Labels:                   <none>
Annotations:              <none>
Selector:                 app=api
Type:                     ClusterIP
IP Family Policy:         SingleStack
IP Families:              IPv4
IP:                       10.96.179.82
IPs:                      10.96.179.82
Port:                     http  80/TCP
TargetPort:               http/TCP
Endpoints:                10.213.0.5
Session Affinity:         None
Internal Traffic Policy:  Cluster
`

// service-selector-mismatch: the selector matches no pod, so no endpoint is ready (an
// empty Endpoints cell: the EndpointSlice exists and lists none).
const describeServiceNoEndpoints = `Name:                     web
Namespace:                service-selector-mismatch
Labels:                   <none>
Annotations:              <none>
Selector:                 app=web-frontend
Type:                     ClusterIP
IP Family Policy:         SingleStack
IP Families:              IPv4
IP:                       10.96.149.48
IPs:                      10.96.149.48
Port:                     http  80/TCP
TargetPort:               http/TCP
Endpoints:                
Session Affinity:         None
Internal Traffic Policy:  Cluster
Events:                   <none>
`

func TestDescribeService(t *testing.T) {
	b, rep := importDir(t, map[string][]byte{"svc.txt": []byte(describeServicesTargetPort), "svc2.txt": []byte(describeServiceNoEndpoints)}, FormatLoose)
	for _, f := range rep.Files {
		if f.Status != StatusUsed || f.Detected != segDescribeService {
			t.Errorf("%s: %s %q: %s", f.Path, f.Status, f.Detected, f.Reason)
		}
	}
	if _, err := b.ReadFile(bundle.NamespacedResourcePath(bundle.KindPods, "service-target-port-mismatch")); err == nil {
		t.Error("a described Service was read as a pod")
	}
	var svcs struct{ Items []corev1.Service }
	readItems(t, b, bundle.NamespacedResourcePath(bundle.KindServices, "service-target-port-mismatch"), &svcs)
	if len(svcs.Items) != 2 {
		t.Fatalf("services: %+v", svcs.Items)
	}
	api, named := svcs.Items[0], svcs.Items[1]
	if api.Name != "api" || api.Spec.Selector["app"] != "api" || api.Spec.Type != corev1.ServiceTypeClusterIP || api.Spec.ClusterIP != "10.96.137.38" ||
		len(api.Spec.Ports) != 1 || api.Spec.Ports[0].Name != "http" || api.Spec.Ports[0].Port != 80 ||
		api.Spec.Ports[0].Protocol != corev1.ProtocolTCP || api.Spec.Ports[0].TargetPort.String() != "8080" {
		t.Errorf("api: %+v", api)
	}
	if named.Name != "api-named" || len(named.Spec.Ports) != 1 || named.Spec.Ports[0].TargetPort.StrVal != "http" {
		t.Errorf("api-named: %+v", named)
	}
	var slices struct{ Items []discoveryv1.EndpointSlice }
	readItems(t, b, bundle.NamespacedResourcePath(bundle.KindEndpointSlices, "service-target-port-mismatch"), &slices)
	if len(slices.Items) != 2 {
		t.Fatalf("endpointslices: %+v", slices.Items)
	}
	for _, sl := range slices.Items {
		if sl.Annotations[bundle.PartialAnnotation] != "notReadyEndpoints" || len(sl.Endpoints) != 1 || sl.Endpoints[0].Addresses[0] != "10.213.0.5" {
			t.Errorf("slice %s: %+v", sl.Name, sl)
		}
		switch sl.Labels["kubernetes.io/service-name"] {
		case "api":
			if len(sl.Ports) != 1 || *sl.Ports[0].Port != 8080 || *sl.Ports[0].Name != "http" {
				t.Errorf("api's slice ports: %+v", sl.Ports)
			}
		case "api-named":
			if len(sl.Ports) != 0 {
				t.Errorf("api-named's endpoint has no port, got %+v", sl.Ports)
			}
		}
	}
	var empty struct{ Items []discoveryv1.EndpointSlice }
	readItems(t, b, bundle.NamespacedResourcePath(bundle.KindEndpointSlices, "service-selector-mismatch"), &empty)
	if len(empty.Items) != 1 || len(empty.Items[0].Endpoints) != 0 {
		t.Errorf("service-selector-mismatch slices: %+v", empty.Items)
	}
}

// Blocks that start with Name and Namespace but are no Service stay what they were.
func TestDescribeServiceStart(t *testing.T) {
	for _, tc := range []struct {
		text string
		want bool
	}{
		{describeServiceNoEndpoints, true},
		{"Name:         web-1\nNamespace:    shop\nPriority:     0\nNode-Selectors:  <none>\nStatus:  Running\n", false},
		{"Name:                   web\nNamespace:              shop\nCreationTimestamp:      Mon, 01 Jan 2024 00:00:00 +0000\nLabels:                 app=web\nSelector:               app=web\nReplicas:               1 desired\nStrategyType:           RollingUpdate\n", false},
	} {
		if got := isDescribeServiceStart(fileLines([]byte(tc.text)), 0); got != tc.want {
			t.Errorf("%q: got %v", tc.text, got)
		}
	}
}

// describe pod's Port and Host Port lines (describeContainerPorts), and an http-get
// probe on a named port, which url.Parse refuses.
func TestDescribeContainerPorts(t *testing.T) {
	ports := containerPorts("80/TCP (web), 9090/UDP, 8443", nil)
	setHostPorts(ports, "0/TCP (web), 9090/UDP, 0")
	want := []corev1.ContainerPort{{Name: "web", ContainerPort: 80, Protocol: "TCP"}, {ContainerPort: 9090, Protocol: "UDP", HostPort: 9090}, {ContainerPort: 8443, Protocol: "TCP"}}
	if got, _ := json.Marshal(ports); string(got) != string(must(json.Marshal(want))) {
		t.Errorf("ports %s", got)
	}
	if p := containerPorts("<none>", nil); len(p) != 0 {
		t.Errorf("<none>: %+v", p)
	}
	for target, want := range map[string]string{
		"http://:http/healthz":       "HTTP  http /healthz",
		"https://10.0.0.1:8443/live": "HTTPS 10.0.0.1 8443 /live",
		"http://[::1]:8080/":         "HTTP ::1 8080 /",
		"http://:8080":               "HTTP  8080 ",
	} {
		a := httpProbe(target)
		if got := string(a.Scheme) + " " + a.Host + " " + a.Port.String() + " " + a.Path; got != want {
			t.Errorf("%s: got %q, want %q", target, got, want)
		}
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

func readItems(t *testing.T, b *bundle.Bundle, path string, v any) {
	t.Helper()
	data, err := b.ReadFile(path)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}
