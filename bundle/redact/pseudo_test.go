package redact

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"podflow.dev/podflow/bundle"
)

const (
	podUID = "0f5e3d9a-1b2c-4d5e-8f90-a1b2c3d4e5f6"
	rsUID  = "11111111-2222-4333-8444-555555555555"
)

func identityFiles() map[string][]byte {
	return map[string][]byte{
		"cluster-resources/nodes.json": []byte(`{"items":[{"metadata":{"name":"ip-10-0-1-17.corp.example","labels":{"kubernetes.io/os":"linux","kubernetes.io/hostname":"ip-10-0-1-17.corp.example","team":"payments"}},` +
			`"status":{"addresses":[{"type":"InternalIP","address":"10.0.1.17"},{"type":"Hostname","address":"ip-10-0-1-17.corp.example"}]}}]}`),
		"cluster-resources/deployments/checkout.json": []byte(`{"items":[{"metadata":{"name":"cart","namespace":"checkout","uid":"22222222-3333-4444-8555-666666666666","labels":{"app":"cart"}},"spec":{"selector":{"matchLabels":{"app":"cart"}}}}]}`),
		"cluster-resources/replicasets/checkout.json": []byte(`{"items":[{"metadata":{"name":"cart-7d9f8b6c4","namespace":"checkout","uid":"` + rsUID + `",` +
			`"ownerReferences":[{"kind":"Deployment","name":"cart","uid":"22222222-3333-4444-8555-666666666666"}]}}]}`),
		"cluster-resources/pods/checkout.json": []byte(`{"items":[{"metadata":{"name":"cart-7d9f8b6c4-x2x9z","namespace":"checkout","uid":"` + podUID + `","labels":{"app":"cart","pod-template-hash":"7d9f8b6c4"},` +
			`"ownerReferences":[{"kind":"ReplicaSet","name":"cart-7d9f8b6c4","uid":"` + rsUID + `"}]},` +
			`"spec":{"nodeName":"ip-10-0-1-17.corp.example","serviceAccountName":"default","containers":[{"name":"cart","image":"registry.local/shop/cart:1.4"}]},` +
			`"status":{"podIP":"10.244.1.5","podIPs":[{"ip":"10.244.1.5"}],"hostIP":"10.0.1.17"}}]}`),
		"cluster-resources/pods/kube-system.json": []byte(`{"items":[{"metadata":{"name":"coredns-5d78c9869d-abcde","namespace":"kube-system"},"status":{"podIP":"10.244.0.2"}},` +
			`{"metadata":{"name":"kube-apiserver-ip-10-0-1-17.corp.example","namespace":"kube-system"}}]}`),
		"cluster-resources/events/checkout.json": []byte(`{"items":[{"involvedObject":{"kind":"Pod","name":"cart-7d9f8b6c4-x2x9z","namespace":"checkout","uid":"` + podUID + `"},` +
			`"reason":"Scheduled","message":"Successfully assigned checkout/cart-7d9f8b6c4-x2x9z to ip-10-0-1-17.corp.example"}]}`),
		"cluster-resources/pods/logs/checkout/cart-7d9f8b6c4-x2x9z/cart.log": []byte("listening on 10.244.1.5:8080\ncalling cart.checkout.svc.cluster.local\n"),
		"nodes/ip-10-0-1-17.corp.example/kubelet.log":                        []byte(`Nov 29 10:00:00 ip-10-0-1-17.corp.example kubelet[1]: I1129 10:00:00.1 1 kubelet.go:2468] "SyncLoop ADD" pod="checkout/cart-7d9f8b6c4-x2x9z" podUID="` + podUID + `" path="/var/lib/kubelet/pods/` + podUID + `/volumes/kubernetes.io~projected/kube-api-access-x2x9z" volume="` + podUID + `-kube-api-access-x2x9z"` + "\n"),
		"nodes/ip-10-0-1-17.corp.example/crictl/inspect/4f1a.json": []byte(`{"status":{"labels":{"io.kubernetes.pod.name":"cart-7d9f8b6c4-x2x9z","io.kubernetes.pod.namespace":"checkout","io.kubernetes.pod.uid":"` + podUID + `"},` +
			`"mounts":[{"hostPath":"/var/lib/kubelet/pods/` + podUID + `/etc-hosts"}]},"info":{"runtimeSpec":{"hostname":"cart-7d9f8b6c4-x2x9z"}}}`),
	}
}

func pseudonymize(t *testing.T, m *Mapping, files map[string][]byte) (*Pseudonymizer, map[string][]byte) {
	t.Helper()
	p := NewPseudonymizer(m)
	p.Learn(files, &bundle.Manifest{Cluster: bundle.Cluster{Name: "prod-eu", Server: "https://api.prod-eu.corp.example:6443"}})
	out := map[string][]byte{}
	for name, data := range files {
		got, err := p.Apply(name, data)
		if err != nil {
			t.Fatal(err)
		}
		if json.Valid(data) && !json.Valid(got) {
			t.Fatalf("%s: not JSON after pseudonymization: %s", name, got)
		}
		newName := p.Path(name)
		if _, dup := out[newName]; dup {
			t.Fatalf("two files renamed to %s", newName)
		}
		out[newName] = got
	}
	return p, out
}

func emptyMapping() *Mapping {
	return &Mapping{Version: MappingVersion, Names: map[string]string{}, IPs: map[string]string{}, UIDs: map[string]string{}}
}

func jsonAt(t *testing.T, files map[string][]byte, name string, v any) {
	t.Helper()
	data, ok := files[name]
	if !ok {
		t.Fatalf("no file %s; have %v", name, keys(files))
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

func keys(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestPseudonymizeKeepsReferences(t *testing.T) {
	p, out := pseudonymize(t, emptyMapping(), identityFiles())
	names := p.Mapping().Names
	ns, pod, rs, deploy, node := names["checkout"], names["cart-7d9f8b6c4-x2x9z"], names["cart-7d9f8b6c4"], names["cart"], names["ip-10-0-1-17.corp.example"]
	if ns == "" || pod == "" || rs == "" || deploy == "" || node == "" {
		t.Fatalf("identities not learned: %v", names)
	}
	// Owners come first, and what they own is named after them.
	if deploy != "deployment-1" || rs != deploy+"-7d9f8b6c4" || pod != rs+"-x2x9z" {
		t.Fatalf("derived names: deployment %s, replicaset %s, pod %s", deploy, rs, pod)
	}
	type meta struct {
		Name, Namespace, UID string
		Labels               map[string]string
		OwnerReferences      []struct{ Name, UID string }
	}
	var pods struct {
		Items []struct {
			Metadata meta
			Spec     struct{ NodeName, ServiceAccountName string }
			Status   struct{ PodIP, HostIP string }
		}
	}
	jsonAt(t, out, "cluster-resources/pods/"+ns+".json", &pods)
	var rss, nodes struct{ Items []struct{ Metadata meta } }
	jsonAt(t, out, "cluster-resources/replicasets/"+ns+".json", &rss)
	jsonAt(t, out, "cluster-resources/nodes.json", &nodes)
	var events struct {
		Items []struct {
			InvolvedObject meta
			Message        string
		}
	}
	jsonAt(t, out, "cluster-resources/events/"+ns+".json", &events)
	var inspect struct {
		Status struct{ Labels map[string]string }
	}
	jsonAt(t, out, bundle.NodeCRIInspectPath(node, "4f1a"), &inspect)

	pm := pods.Items[0].Metadata
	checks := []struct{ what, got, want string }{
		{"pod namespace", pm.Namespace, ns},
		{"pod name", pm.Name, pod},
		{"owner name", pm.OwnerReferences[0].Name, rss.Items[0].Metadata.Name},
		{"owner uid", pm.OwnerReferences[0].UID, rss.Items[0].Metadata.UID},
		{"node name", pods.Items[0].Spec.NodeName, nodes.Items[0].Metadata.Name},
		{"event uid", events.Items[0].InvolvedObject.UID, pm.UID},
		{"event name", events.Items[0].InvolvedObject.Name, pm.Name},
		{"event message", events.Items[0].Message, "Successfully assigned " + ns + "/" + pod + " to " + node},
		{"cri pod uid", inspect.Status.Labels["io.kubernetes.pod.uid"], pm.UID},
		{"cri pod name", inspect.Status.Labels["io.kubernetes.pod.name"], pm.Name},
		{"label selector", pm.Labels["app"], deploy},
		{"system label kept", nodes.Items[0].Metadata.Labels["kubernetes.io/os"], "linux"},
		{"well-known name kept", pods.Items[0].Spec.ServiceAccountName, "default"},
		{"hash label kept", pm.Labels["pod-template-hash"], "7d9f8b6c4"},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %q, want %q", c.what, c.got, c.want)
		}
	}
	journal := string(out[bundle.NodePath(node, bundle.NodeKubeletLog)])
	for _, want := range []string{" " + node + " kubelet[1]", `pod="` + ns + "/" + pod + `"`, `podUID="` + pm.UID + `"`, "/pods/" + pm.UID + "/volumes", `volume="` + pm.UID + `-kube-api-access-x2x9z"`} {
		if !strings.Contains(journal, want) {
			t.Errorf("journal lacks %q:\n%s", want, journal)
		}
	}
	logText := string(out[bundle.LogPath(ns, pod, names["cart"], false)])
	if !strings.Contains(logText, "listening on "+pods.Items[0].Status.PodIP+":8080") || !strings.Contains(logText, deploy+"."+ns+".svc.cluster.local") {
		t.Errorf("container log:\n%s", logText)
	}
	// Nothing identifying is left anywhere, in contents or paths.
	secretsOfIdentity := regexp.MustCompile(`checkout|cart|ip-10-0-1-17|corp\.example|payments|10\.244\.1\.5|10\.0\.1\.17|` + podUID + `|` + rsUID)
	for name, data := range out {
		if loc := secretsOfIdentity.FindIndex(append([]byte(name+"\n"), data...)); loc != nil {
			t.Errorf("%s still names %q:\n%s", name, (name + "\n" + string(data))[loc[0]:loc[1]], data)
		}
	}
	// kube-system and its coredns keep their names; a static pod named after its node
	// follows the node.
	system := string(out["cluster-resources/pods/kube-system.json"])
	if !strings.Contains(system, `"coredns-5d78c9869d-abcde"`) || !strings.Contains(system, `"kube-apiserver-`+node+`"`) {
		t.Errorf("kube-system pods: %s", system)
	}
}

func TestPseudonymsStayStableAcrossBundles(t *testing.T) {
	p1, _ := pseudonymize(t, emptyMapping(), identityFiles())
	path := filepath.Join(t.TempDir(), "mapping.yaml")
	if err := p1.Mapping().Save(path); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("mapping file mode: %v %v", st.Mode(), err)
	}
	m, err := LoadMapping(path)
	if err != nil {
		t.Fatal(err)
	}
	next := identityFiles()
	next["cluster-resources/pods/checkout.json"] = []byte(`{"items":[{"metadata":{"name":"cart-7d9f8b6c4-q8w7e","namespace":"checkout","uid":"99999999-2222-4333-8444-555555555555",` +
		`"ownerReferences":[{"kind":"ReplicaSet","name":"cart-7d9f8b6c4"}]},"status":{"podIP":"10.244.1.6"}}]}`)
	p2, _ := pseudonymize(t, m, next)
	for orig, pseudo := range p1.Mapping().Names {
		if got := p2.Mapping().Names[orig]; got != pseudo {
			t.Errorf("%s: %s then %s", orig, pseudo, got)
		}
	}
	if got := p2.Mapping().Names["cart-7d9f8b6c4-q8w7e"]; got != p1.Mapping().Names["cart-7d9f8b6c4"]+"-q8w7e" {
		t.Errorf("new pod = %q", got)
	}
	if got, first := p2.Mapping().UIDs["99999999-2222-4333-8444-555555555555"], p1.Mapping().UIDs; got == "" || containsValue(first, got) {
		t.Errorf("new uid pseudonym %q collides with %v", got, first)
	}
	a, b := p2.Mapping().IPs["10.244.1.5"], p2.Mapping().IPs["10.244.1.6"]
	if a == b || a[:strings.LastIndexByte(a, '.')] != b[:strings.LastIndexByte(b, '.')] {
		t.Errorf("10.244.1.5 -> %s and 10.244.1.6 -> %s should share their /24", a, b)
	}
}

func containsValue(m map[string]string, v string) bool {
	for _, x := range m {
		if x == v {
			return true
		}
	}
	return false
}

func TestIPPseudonyms(t *testing.T) {
	p := NewPseudonymizer(emptyMapping())
	p.Learn(map[string][]byte{"x.log": []byte("10.244.1.5 10.244.1.6 10.244.2.5 10.96.0.1 10.244.0.0/16 127.0.0.1 0.0.0.0 192.168.1.255 999.1.1.1 1.2.3")}, nil)
	ips := p.Mapping().IPs
	prefix := func(ip string, n int) string { return strings.Join(strings.Split(ip, ".")[:n], ".") }
	switch {
	case prefix(ips["10.244.1.5"], 3) != prefix(ips["10.244.1.6"], 3):
		t.Errorf("same /24 lost: %v", ips)
	case prefix(ips["10.244.1.5"], 2) != prefix(ips["10.244.2.5"], 2) || prefix(ips["10.244.1.5"], 3) == prefix(ips["10.244.2.5"], 3):
		t.Errorf("same /16, different /24 lost: %v", ips)
	case !strings.HasSuffix(ips["10.244.0.0"], ".0.0") || !strings.HasSuffix(ips["192.168.1.255"], ".255"):
		t.Errorf("network and broadcast octets changed: %v", ips)
	case len(ips) != 6:
		t.Errorf("want 6 addresses mapped (loopback, unspecified and non-addresses kept): %v", ips)
	}
	out := p.String("dial 127.0.0.1 and 10.96.0.1:443 (999.1.1.1)")
	if out != "dial 127.0.0.1 and "+ips["10.96.0.1"]+":443 (999.1.1.1)" {
		t.Errorf("text = %q", out)
	}
}

func TestPseudonymsNeverEqualRealNames(t *testing.T) {
	p := NewPseudonymizer(emptyMapping())
	p.Learn(map[string][]byte{"cluster-resources/nodes.json": []byte(`{"items":[{"metadata":{"name":"node-1"}},{"metadata":{"name":"node-2"}}]}`)}, nil)
	n := p.Mapping().Names
	if n["node-1"] == "node-1" || n["node-1"] == "node-2" || n["node-2"] == "node-1" || n["node-2"] == "node-2" || n["node-1"] == n["node-2"] {
		t.Fatalf("pseudonyms collide with real names: %v", n)
	}
}

func TestLoadMappingErrors(t *testing.T) {
	dir := t.TempDir()
	m, err := LoadMapping(filepath.Join(dir, "new.yaml"))
	if err != nil || len(m.Names) != 0 || m.Version != MappingVersion {
		t.Fatalf("missing mapping = %+v, %v", m, err)
	}
	for name, content := range map[string]string{
		"version.yaml": "version: 9\nnames: {}\n",
		"garbage.yaml": "names: [\n",
		"unknown.yaml": "version: 1\nnmaes: {}\n",
	} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := LoadMapping(path); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: error %v should name the file", name, err)
		}
	}
}

func TestPseudonymizeLeavesMasksAlone(t *testing.T) {
	p := NewPseudonymizer(emptyMapping())
	p.Learn(map[string][]byte{"cluster-resources/namespaces.json": []byte(`{"items":[{"kind":"Namespace","metadata":{"name":"abcdef"}}]}`)}, nil)
	in := "ns abcdef <redacted:jwt:abcdef>"
	if out := p.String(in); out != "ns namespace-1 <redacted:jwt:abcdef>" {
		t.Fatalf("out = %q", out)
	}
}
