package analyze_test

import (
	"encoding/json"
	"fmt"
	"runtime"
	"testing"

	"podflow.dev/podflow/analyze"
	"podflow.dev/podflow/bundle"
)

// healthyPod is a running, ready pod of a ReplicaSet as the API server returns it: the
// parts its workload's pods share (owner, tolerations, probe, command, ports, projected
// token volume) and the parts that are its own (name, UID, addresses, times, the token
// volume's name).
func healthyPod(ns string, i int) obj {
	name := fmt.Sprintf("web-5d85c85fbb-%05d", i)
	token := fmt.Sprintf("kube-api-access-%05d", i)
	at := fmt.Sprintf("2026-11-29T20:%02d:%02dZ", i/60%60, i%60)
	mount := []any{obj{"name": token, "readOnly": true, "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"}}
	cond := func(typ string) obj {
		return obj{"type": typ, "status": "True", "lastProbeTime": nil, "lastTransitionTime": at}
	}
	return obj{
		"kind": "Pod", "apiVersion": "v1",
		"metadata": obj{"name": name, "generateName": "web-5d85c85fbb-", "namespace": ns, "uid": fmt.Sprintf("uid-%s-%05d", ns, i),
			"resourceVersion": fmt.Sprint(1000 + i), "creationTimestamp": at,
			"labels": obj{"app": "web", "pod-template-hash": "5d85c85fbb"},
			"ownerReferences": []any{obj{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-5d85c85fbb",
				"uid": "uid-rs-" + ns, "controller": true, "blockOwnerDeletion": true}}},
		"spec": obj{
			"volumes": []any{obj{"name": token, "projected": obj{"defaultMode": 420, "sources": []any{
				obj{"serviceAccountToken": obj{"expirationSeconds": 3607, "path": "token"}},
				obj{"configMap": obj{"name": "kube-root-ca.crt", "items": []any{obj{"key": "ca.crt", "path": "ca.crt"}}}},
				obj{"downwardAPI": obj{"items": []any{obj{"path": "namespace", "fieldRef": obj{"apiVersion": "v1", "fieldPath": "metadata.namespace"}}}}},
			}}}},
			"containers": []any{obj{"name": "web", "image": "registry.example/web:1",
				"command":   []any{"sh", "-c", "exec httpd -f -p 8080 -h /www"},
				"ports":     []any{obj{"name": "http", "containerPort": 8080, "protocol": "TCP"}},
				"resources": obj{"limits": obj{"memory": "32Mi"}, "requests": obj{"cpu": "5m", "memory": "8Mi"}},
				"readinessProbe": obj{"httpGet": obj{"path": "/index.html", "port": "http", "scheme": "HTTP"},
					"timeoutSeconds": 1, "periodSeconds": 2, "successThreshold": 1, "failureThreshold": 3},
				"volumeMounts": mount, "terminationMessagePath": "/dev/termination-log",
				"terminationMessagePolicy": "File", "imagePullPolicy": "IfNotPresent"}},
			"restartPolicy": "Always", "terminationGracePeriodSeconds": 30, "dnsPolicy": "ClusterFirst",
			"serviceAccountName": "default", "serviceAccount": "default", "nodeName": fmt.Sprintf("node-%03d", i%10),
			"securityContext": obj{}, "schedulerName": "default-scheduler",
			"tolerations": []any{
				obj{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
				obj{"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}},
			"priority": 0, "enableServiceLinks": true, "preemptionPolicy": "PreemptLowerPriority"},
		"status": obj{"phase": "Running",
			"conditions": []any{cond("PodReadyToStartContainers"), cond("Initialized"), cond("Ready"), cond("ContainersReady"), cond("PodScheduled")},
			"hostIP":     fmt.Sprintf("10.0.255.%d", i%10), "podIP": fmt.Sprintf("10.0.%d.%d", i/250, i%250), "startTime": at,
			"containerStatuses": []any{obj{"name": "web", "state": obj{"running": obj{"startedAt": at}}, "lastState": obj{},
				"ready": true, "restartCount": 0, "image": "registry.example/web:1", "started": true,
				"imageID":     "registry.example/web@sha256:cce7619cb8f38e5cd096af0014ecb17b4808e4cf7f32c014887e3dd912c8a2a4",
				"containerID": fmt.Sprintf("containerd://%064x", i), "volumeMounts": mount}},
			"qosClass": "Burstable"},
	}
}

// TestHealthyPodsCostLittle bounds what a loaded healthy pod keeps in memory. A big
// cluster is mostly such pods, and a load keeps every one for the rules: decoded apart,
// the parts a workload's pods share cost about 4.7 KB per pod here; shared (the
// loader's decode and interner), 2.8 to 3.3 KB. The bound sits between the two.
func TestHealthyPodsCostLittle(t *testing.T) {
	const namespaces, perNamespace = 10, 100
	raw := map[string][]byte{}
	for n := range namespaces {
		ns := fmt.Sprintf("team-%02d", n)
		items := make([]any, perNamespace)
		for i := range items {
			items[i] = healthyPod(ns, i)
		}
		data, err := json.Marshal(list(items...))
		if err != nil {
			t.Fatal(err)
		}
		raw[bundle.NamespacedResourcePath(bundle.KindPods, ns)] = data
	}
	b, err := bundle.New("mem", raw)
	if err != nil {
		t.Fatal(err)
	}
	var g *analyze.Graph
	grew := heapGrowth(func() { g = analyze.Load([]*bundle.Bundle{b}, nil) })
	pods := g.PodCount()
	runtime.KeepAlive(g)
	runtime.KeepAlive(b)
	if pods != namespaces*perNamespace {
		t.Fatalf("loaded %d pods, want %d", pods, namespaces*perNamespace)
	}
	perPod := grew / int64(pods)
	t.Logf("%d bytes kept per healthy pod", perPod)
	if perPod > 4000 {
		t.Errorf("a loaded healthy pod keeps %d bytes, want at most 4000: the parts its workload's pods share are held once per pod again", perPod)
	}
}

// heapGrowth is how much the live heap grows across load, each side measured after a
// collection; the caller keeps what load made alive until it has the number.
func heapGrowth(load func()) int64 {
	var before, after runtime.MemStats
	settle()
	runtime.ReadMemStats(&before)
	load()
	settle()
	runtime.ReadMemStats(&after)
	return int64(after.HeapAlloc) - int64(before.HeapAlloc)
}

// settle collects until the heap holds only what is reachable: a sync.Pool's items
// survive one collection in its victim cache, so what a load left pooled (decode
// buffers) would count as kept after a single one.
func settle() {
	runtime.GC()
	runtime.GC()
}
