package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes/scheme"

	"podflow.dev/podflow/bundle"
	"podflow.dev/podflow/collect"
)

// The shape of the test bed's scale phase (make e2e-scale): pods spread over
// namespaces and nodes, ten core/v1 Events each, a 200-line log per container.
const (
	scalePods       = 5000
	scaleNamespaces = 100
	scaleNodes      = 50
	scaleEvents     = 10
)

// scaleAPI answers what `podflow collect -A` and its floor ask of an API server holding
// such a cluster: lists 500 items a page in storage order, in protobuf or JSON as asked,
// and every container's log. Every answer is encoded once up front, so serving costs
// little next to what the client does with it.
type scaleAPI struct {
	// pages holds each list path's pages, per content type.
	pages map[string]map[string][][]byte
	log   []byte
}

const protobufType = "application/vnd.kubernetes.protobuf"

func newScaleAPI(tb testing.TB, pods, namespaces, nodes, eventsPerPod int) *scaleAPI {
	tb.Helper()
	a := &scaleAPI{pages: map[string]map[string][][]byte{}}
	var log strings.Builder
	at := time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)
	for i := range 200 {
		fmt.Fprintf(&log, "%s GET /api/orders/%d 200 %dms user-agent=shop-client/2.1\n",
			at.Add(time.Duration(i)*17*time.Second).Format(time.RFC3339Nano), 1000+i*7, 3+i%40)
	}
	a.log = []byte(log.String())

	nsNames := make([]string, namespaces)
	nsItems := make([]corev1.Namespace, namespaces)
	for i := range nsNames {
		nsNames[i] = fmt.Sprintf("shop-%03d", i)
		nsItems[i] = corev1.Namespace{ObjectMeta: objectMeta("", nsNames[i], i), Status: corev1.NamespaceStatus{Phase: corev1.NamespaceActive}}
	}
	nodeNames := make([]string, nodes)
	nodeItems := make([]corev1.Node, nodes)
	leases := make([]coordinationv1.Lease, nodes)
	for i := range nodeNames {
		nodeNames[i] = fmt.Sprintf("kwok-node-%d", i)
		nodeItems[i] = scaleNode(nodeNames[i], i)
		holder, secs := nodeNames[i], int32(40)
		leases[i] = coordinationv1.Lease{ObjectMeta: objectMeta(bundle.NodeLeaseNamespace, nodeNames[i], i),
			Spec: coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &secs}}
	}
	// Storage order: by namespace, then name.
	var podItems []corev1.Pod
	var eventItems []corev1.Event
	for n, ns := range nsNames {
		for i := n; i < pods; i += namespaces {
			p := scalePod(ns, nodeNames[i%nodes], i)
			podItems = append(podItems, p)
			for k := range eventsPerPod {
				eventItems = append(eventItems, scaleEvent(&p, k, i*eventsPerPod+k))
			}
		}
	}
	add := func(path string, items int, page func(from, to int) runtime.Object) {
		a.pages[path] = map[string][][]byte{}
		for from := 0; from == 0 || from < items; from += collect.PageSize {
			to := min(from+collect.PageSize, items)
			obj := page(from, to)
			if to < items {
				obj.(metav1.ListInterface).SetContinue(strconv.Itoa(to))
			}
			a.addPage(tb, path, obj)
		}
	}
	add("/api/v1/namespaces", len(nsItems), func(from, to int) runtime.Object {
		return &corev1.NamespaceList{TypeMeta: listType("NamespaceList"), ListMeta: listMeta(), Items: nsItems[from:to]}
	})
	add("/api/v1/nodes", len(nodeItems), func(from, to int) runtime.Object {
		return &corev1.NodeList{TypeMeta: listType("NodeList"), ListMeta: listMeta(), Items: nodeItems[from:to]}
	})
	add("/apis/coordination.k8s.io/v1/namespaces/"+bundle.NodeLeaseNamespace+"/leases", len(leases), func(from, to int) runtime.Object {
		return &coordinationv1.LeaseList{TypeMeta: metav1.TypeMeta{APIVersion: "coordination.k8s.io/v1", Kind: "LeaseList"},
			ListMeta: listMeta(), Items: leases[from:to]}
	})
	add("/api/v1/pods", len(podItems), func(from, to int) runtime.Object {
		return &corev1.PodList{TypeMeta: listType("PodList"), ListMeta: listMeta(), Items: podItems[from:to]}
	})
	add("/api/v1/events", len(eventItems), func(from, to int) runtime.Object {
		return &corev1.EventList{TypeMeta: listType("EventList"), ListMeta: listMeta(), Items: eventItems[from:to]}
	})
	return a
}

func (a *scaleAPI) addPage(tb testing.TB, path string, obj runtime.Object) {
	tb.Helper()
	var pb bytes.Buffer
	if err := protobuf.NewSerializer(scheme.Scheme, scheme.Scheme).Encode(obj, &pb); err != nil {
		tb.Fatal(err)
	}
	js, err := json.Marshal(obj)
	if err != nil {
		tb.Fatal(err)
	}
	a.pages[path][protobufType] = append(a.pages[path][protobufType], pb.Bytes())
	a.pages[path]["application/json"] = append(a.pages[path]["application/json"], js)
}

func (a *scaleAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	switch {
	case p == "/version":
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"major":"1","minor":"37","gitVersion":"v1.37.2"}`))
		return
	case strings.HasSuffix(p, "/proxy/configz"):
		// The least-privilege role does not grant nodes/proxy.
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusForbidden)
		_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Forbidden","code":403,"message":"nodes \"x\" is forbidden"}`))
		return
	case strings.HasSuffix(p, "/log"):
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write(a.log)
		return
	}
	byType, ok := a.pages[p]
	if !ok {
		// Every other kind exists but holds nothing.
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"metadata":{"resourceVersion":"1000"},"items":[]}`))
		return
	}
	ct := "application/json"
	if strings.HasPrefix(r.Header.Get("Accept"), protobufType) {
		ct = protobufType
	}
	pages := byType[ct]
	page := 0
	if c := r.URL.Query().Get("continue"); c != "" {
		from, err := strconv.Atoi(c)
		if err != nil || from%collect.PageSize != 0 || from/collect.PageSize >= len(pages) {
			http.Error(w, "bad continue token", http.StatusBadRequest)
			return
		}
		page = from / collect.PageSize
	}
	w.Header().Set("Content-Type", ct)
	_, _ = w.Write(pages[page])
}

func listType(kind string) metav1.TypeMeta { return metav1.TypeMeta{APIVersion: "v1", Kind: kind} }

func listMeta() metav1.ListMeta { return metav1.ListMeta{ResourceVersion: "1000"} }

var scaleCreated = metav1.NewTime(time.Date(2026, 11, 29, 8, 0, 0, 0, time.UTC))

// objectMeta is an object's metadata as the API server returns it, managed fields
// included: the collector drops them, but only after decoding them.
func objectMeta(ns, name string, i int) metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Name: name, Namespace: ns, UID: typesUID(ns, name), ResourceVersion: strconv.Itoa(1000 + i),
		CreationTimestamp: scaleCreated,
		ManagedFields: []metav1.ManagedFieldsEntry{
			{Manager: "scale", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", Time: &scaleCreated,
				FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"f:metadata":{"f:labels":{".":{},"f:app":{},"f:shard":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"app\"}":{".":{},"f:args":{},"f:env":{},"f:image":{},"f:name":{},"f:ports":{},"f:readinessProbe":{},"f:resources":{}}},"f:nodeName":{}}}`)},
			{Manager: "kwok", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", Time: &scaleCreated, Subresource: "status",
				FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"f:status":{"f:conditions":{},"f:containerStatuses":{},"f:hostIP":{},"f:phase":{},"f:podIP":{},"f:podIPs":{},"f:startTime":{}}}`)},
		},
	}
}

func typesUID(ns, name string) types.UID {
	return types.UID(fmt.Sprintf("%08x-0000-4000-8000-%012x", len(ns)*7919+len(name), hashName(ns+"/"+name)))
}

func hashName(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := range len(s) {
		h = (h ^ uint64(s[i])) * 1099511628211
	}
	return h & 0xffffffffffff
}

func scaleNode(name string, i int) corev1.Node {
	n := corev1.Node{ObjectMeta: objectMeta("", name, i)}
	n.Labels = map[string]string{"kubernetes.io/hostname": name, "type": "kwok"}
	n.Status.Capacity = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("32"), corev1.ResourceMemory: resource.MustParse("256Gi"), corev1.ResourcePods: resource.MustParse("110")}
	n.Status.Allocatable = n.Status.Capacity
	n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady", Message: "kubelet is posting ready status",
		LastHeartbeatTime: scaleCreated, LastTransitionTime: scaleCreated}}
	n.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "127.0.0.1"}}
	return n
}

func scalePod(ns, node string, i int) corev1.Pod {
	name := fmt.Sprintf("orders-%06d", i)
	p := corev1.Pod{ObjectMeta: objectMeta(ns, name, i)}
	p.Labels = map[string]string{"app": "orders", "shard": strconv.Itoa(i % 16)}
	p.Spec = corev1.PodSpec{
		NodeName: node,
		Containers: []corev1.Container{{
			Name:  "app",
			Image: fmt.Sprintf("registry.shop.example/orders:2.14.%d", i%7),
			Args:  []string{"--listen=:8080", "--db=postgres://orders-db:5432/orders"},
			Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}},
			Env:   []corev1.EnvVar{{Name: "SHARD", Value: strconv.Itoa(i % 16)}, {Name: "LOG_LEVEL", Value: "info"}},
			Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
				Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("256Mi")},
			},
			ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/ready", Port: intstr.FromInt32(8080), Scheme: corev1.URISchemeHTTP}},
				TimeoutSeconds: 1, PeriodSeconds: 10, SuccessThreshold: 1, FailureThreshold: 3},
			TerminationMessagePath: "/dev/termination-log", TerminationMessagePolicy: corev1.TerminationMessageReadFile,
			ImagePullPolicy: corev1.PullIfNotPresent,
		}},
		RestartPolicy: corev1.RestartPolicyAlways, DNSPolicy: corev1.DNSClusterFirst, SchedulerName: "default-scheduler",
		ServiceAccountName: "default",
		Tolerations: []corev1.Toleration{
			{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute},
			{Key: "node.kubernetes.io/unreachable", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute},
		},
	}
	ip := fmt.Sprintf("10.128.%d.%d", i/250%256, i%250)
	p.Status = corev1.PodStatus{
		Phase: corev1.PodRunning, HostIP: "127.0.0.1", PodIP: ip, PodIPs: []corev1.PodIP{{IP: ip}}, StartTime: &scaleCreated,
		QOSClass: corev1.PodQOSBurstable,
		ContainerStatuses: []corev1.ContainerStatus{{Name: "app", Ready: true, Image: p.Spec.Containers[0].Image,
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: scaleCreated}}}},
	}
	for _, c := range []corev1.PodConditionType{corev1.PodInitialized, corev1.PodReady, corev1.ContainersReady, corev1.PodScheduled} {
		p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: c, Status: corev1.ConditionTrue, LastTransitionTime: scaleCreated})
	}
	return p
}

func scaleEvent(p *corev1.Pod, k, j int) corev1.Event {
	reasons := []struct{ typ, reason, message string }{
		{"Normal", "Scheduled", "Successfully assigned " + p.Namespace + "/" + p.Name + " to " + p.Spec.NodeName},
		{"Normal", "Pulling", `Pulling image "` + p.Spec.Containers[0].Image + `"`},
		{"Normal", "Pulled", `Successfully pulled image "` + p.Spec.Containers[0].Image + `" in 1.2s (1.2s including waiting). Image size: 48213004 bytes.`},
		{"Normal", "Created", "Created container: app"},
		{"Normal", "Started", "Started container app"},
		{"Warning", "Unhealthy", `Readiness probe failed: Get "http://` + p.Status.PodIP + `:8080/ready": context deadline exceeded (Client.Timeout exceeded while awaiting headers)`},
		{"Warning", "BackOff", fmt.Sprintf("Back-off restarting failed container app in pod %s_%s(%s)", p.Name, p.Namespace, p.UID)},
		{"Normal", "Killing", "Stopping container app"},
		{"Warning", "FailedMount", fmt.Sprintf(`MountVolume.SetUp failed for volume "config-%d" : configmap "orders-config-%d" not found`, j%5, j%5)},
		{"Normal", "ProbeWarning", fmt.Sprintf("Liveness probe warning: HTTP probe succeeded with a redirect to /healthz/%d", j%7)},
	}
	r := reasons[k%len(reasons)]
	at := metav1.NewTime(scaleCreated.Add(time.Duration(k) * time.Minute))
	return corev1.Event{
		ObjectMeta: objectMeta(p.Namespace, fmt.Sprintf("%s.%016x", p.Name, j), j),
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: p.Namespace, Name: p.Name, UID: p.UID, APIVersion: "v1",
			FieldPath: "spec.containers{app}"},
		Reason: r.reason, Message: r.message, Type: r.typ,
		Source:         corev1.EventSource{Component: "kubelet", Host: p.Spec.NodeName},
		FirstTimestamp: at, LastTimestamp: at, Count: int32(1 + k%3),
		ReportingController: "kubelet", ReportingInstance: p.Spec.NodeName,
	}
}

// cpuTime is the CPU this process has used so far, user and system.
func cpuTime(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkCollectAllNamespaces runs `podflow collect -A`, redaction and leak scan
// included, against the scale phase's cluster served in-process, without a rate limit,
// so it measures podflow's own work; cpu-s/op includes the little the server spends.
// Compare it with BenchmarkCollectFloor, which sends the same requests and discards
// the answers.
func BenchmarkCollectAllNamespaces(b *testing.B) {
	srv := httptest.NewServer(newScaleAPI(b, scalePods, scaleNamespaces, scaleNodes, scaleEvents))
	b.Cleanup(srv.Close)
	kubeconfig := writeKubeconfig(b, srv.URL)
	dir := b.TempDir()
	var cpu time.Duration
	n := 0
	for b.Loop() {
		n++
		before := cpuTime(b)
		s, _, errOut := testStreams()
		code := run(context.Background(), []string{"collect", "-A", "-q", "--kubeconfig", kubeconfig, "--qps", "1000000", "--burst", "1000000",
			"-o", filepath.Join(dir, "out.tar.gz"), "--force"}, s)
		cpu += cpuTime(b) - before
		if code != exitOK {
			b.Fatalf("exit %d: %s", code, errOut)
		}
	}
	b.ReportMetric(cpu.Seconds()/float64(n), "cpu-s/op")
}

// BenchmarkCollectFloor sends the requests `podflow collect -A` sends (every list but
// Secrets, paginated, then every container's log) with as many in flight, reads only
// continue tokens and the pods' containers, and discards the rest: what collecting
// costs before podflow does anything with the answers.
func BenchmarkCollectFloor(b *testing.B) {
	srv := httptest.NewServer(newScaleAPI(b, scalePods, scaleNamespaces, scaleNodes, scaleEvents))
	b.Cleanup(srv.Close)
	base, err := url.Parse(srv.URL)
	if err != nil {
		b.Fatal(err)
	}
	var cpu time.Duration
	n := 0
	for b.Loop() {
		n++
		before := cpuTime(b)
		if err := floor(srv.Client(), base, collect.DefaultConcurrency); err != nil {
			b.Fatal(err)
		}
		cpu += cpuTime(b) - before
	}
	b.ReportMetric(cpu.Seconds()/float64(n), "cpu-s/op")
}

func floor(hc *http.Client, base *url.URL, concurrency int) error {
	get := func(u string) ([]byte, error) {
		req, err := http.NewRequest(http.MethodGet, u, nil)
		if err != nil {
			return nil, err
		}
		req.Header.Set("Accept", "application/json")
		resp, err := hc.Do(req)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err == nil && resp.StatusCode != http.StatusOK {
			err = fmt.Errorf("GET %s: %s", u, resp.Status)
		}
		return body, err
	}
	sem := make(chan struct{}, concurrency)
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
		logs []string
	)
	for _, l := range bundle.Lists() {
		if l.Name == bundle.KindSecrets {
			continue
		}
		wg.Go(func() {
			cont := ""
			for {
				sem <- struct{}{}
				body, err := get(floorListURL(base, l, cont))
				<-sem
				var page struct {
					Metadata struct {
						Continue string `json:"continue"`
					} `json:"metadata"`
					Items []struct {
						Metadata struct{ Namespace, Name string } `json:"metadata"`
						Spec     struct {
							Containers []struct{ Name string } `json:"containers"`
						} `json:"spec"`
					} `json:"items"`
				}
				if err == nil {
					err = json.Unmarshal(body, &page)
				}
				mu.Lock()
				if err != nil {
					errs = append(errs, err)
					mu.Unlock()
					return
				}
				if l.Name == bundle.KindPods {
					for _, it := range page.Items {
						for _, c := range it.Spec.Containers {
							logs = append(logs, base.JoinPath("api/v1/namespaces", it.Metadata.Namespace, "pods", it.Metadata.Name, "log").String()+
								"?container="+url.QueryEscape(c.Name)+"&tailLines=2000&timestamps=true")
						}
					}
				}
				mu.Unlock()
				if cont = page.Metadata.Continue; cont == "" {
					return
				}
			}
		})
	}
	wg.Wait()
	for _, u := range logs {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			if _, err := get(u); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(errs) > 0 {
		return errs[0]
	}
	return nil
}

func floorListURL(base *url.URL, l bundle.ResourceList, cont string) string {
	p := "api/" + l.Version
	if l.Group != "" {
		p = "apis/" + l.Group + "/" + l.Version
	}
	if l.Namespace != "" {
		p += "/namespaces/" + l.Namespace
	}
	q := url.Values{"limit": {strconv.Itoa(collect.PageSize)}}
	if cont != "" {
		q.Set("continue", cont)
	}
	return base.JoinPath(p, l.Resource).String() + "?" + q.Encode()
}
