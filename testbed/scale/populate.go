package main

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// createWorkers is how many creates are in flight while the cluster is filled.
const createWorkers = 32

// nodesAndNamespaces creates the fake nodes (kwok manages every node) and the
// namespaces, each with the default ServiceAccount the ServiceAccount admission plugin
// needs (no controller-manager runs).
func (c *cluster) nodesAndNamespaces(ctx context.Context, o options) error {
	for i := range o.nodes {
		name := fmt.Sprintf("kwok-node-%02d", i)
		n := &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: name,
				Annotations: map[string]string{"kwok.x-k8s.io/node": "fake"},
				Labels:      map[string]string{"kubernetes.io/hostname": name, "type": "kwok", "topology.kubernetes.io/zone": fmt.Sprintf("zone-%d", i%3)}},
			Spec: corev1.NodeSpec{Taints: nil},
			Status: corev1.NodeStatus{
				Capacity: corev1.ResourceList{
					corev1.ResourceCPU: resource.MustParse("64"), corev1.ResourceMemory: resource.MustParse("256Gi"),
					corev1.ResourcePods: resource.MustParse("1000"),
				},
				Allocatable: corev1.ResourceList{
					corev1.ResourceCPU: resource.MustParse("63"), corev1.ResourceMemory: resource.MustParse("250Gi"),
					corev1.ResourcePods: resource.MustParse("1000"),
				},
			},
		}
		if _, err := c.client.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{}); err != nil {
			return err
		}
		c.nodeNames = append(c.nodeNames, name)
	}
	for i := range o.namespaces {
		name := fmt.Sprintf("team-%03d", i)
		if _, err := c.client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
			return err
		}
		if _, err := c.client.CoreV1().ServiceAccounts(name).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{}); err != nil {
			return err
		}
		c.namespaces = append(c.namespaces, name)
	}
	return waitFor(ctx, "kwok to make the nodes Ready", 2*time.Minute, c.kwok, func(ctx context.Context) error {
		nodes, err := c.client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		ready := 0
		for _, n := range nodes.Items {
			for _, cond := range n.Status.Conditions {
				if cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue {
					ready++
				}
			}
		}
		if ready < o.nodes {
			return fmt.Errorf("%d of %d nodes Ready", ready, o.nodes)
		}
		return nil
	})
}

// parallel runs fn(i) for i in [from, to) on createWorkers goroutines; the first error
// stops the rest.
func parallel(ctx context.Context, from, to int, fn func(ctx context.Context, i int) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var next atomic.Int64
	next.Store(int64(from))
	var wg sync.WaitGroup
	for range createWorkers {
		wg.Go(func() {
			for ctx.Err() == nil {
				i := int(next.Add(1) - 1)
				if i >= to {
					return
				}
				if err := fn(ctx, i); err != nil {
					cancel(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if err := context.Cause(ctx); err != nil && ctx.Err() != nil {
		return err
	}
	return nil
}

var eventReasons = []struct{ typ, reason, message string }{
	{"Normal", "Scheduled", "Successfully assigned %s/%s to %s"},
	{"Normal", "Pulling", "Pulling image \"registry.shop.example/orders:2.14.%d\""},
	{"Normal", "Pulled", "Successfully pulled image \"registry.shop.example/orders:2.14.%d\" in 1.2s (1.2s including waiting). Image size: 48213004 bytes."},
	{"Normal", "Created", "Created container: app"},
	{"Normal", "Started", "Started container app"},
	{"Warning", "Unhealthy", "Readiness probe failed: Get \"http://10.128.%d.%d:8080/ready\": context deadline exceeded (Client.Timeout exceeded while awaiting headers)"},
	{"Warning", "BackOff", "Back-off restarting failed container app in pod %s_%s(%s)"},
	{"Normal", "Killing", "Stopping container app"},
	{"Warning", "FailedMount", "MountVolume.SetUp failed for volume \"config-%d\" : configmap \"orders-config-%d\" not found"},
	{"Warning", "ProbeWarning", "Liveness probe warning: HTTP probe succeeded with a redirect to /healthz/%d"},
}

// populate grows the cluster from `from` pods to `to`, spread over the namespaces and
// nodes, each with eventsPerPod core/v1 Events, and waits until kwok has made every
// pod Running.
func (c *cluster) populate(ctx context.Context, from, to, eventsPerPod int) error {
	uids := make([]types.UID, to)
	err := parallel(ctx, from, to, func(ctx context.Context, i int) error {
		ns := c.namespaces[i%len(c.namespaces)]
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{
				Name: fmt.Sprintf("orders-%06d", i), Namespace: ns,
				Labels: map[string]string{"app": "orders", "shard": fmt.Sprint(i % 16)},
			},
			Spec: corev1.PodSpec{
				NodeName: c.nodeNames[i%len(c.nodeNames)],
				Containers: []corev1.Container{{
					Name:  "app",
					Image: fmt.Sprintf("registry.shop.example/orders:2.14.%d", i%7),
					Args:  []string{"--listen=:8080", "--db=postgres://orders-db:5432/orders"},
					Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}},
					Env:   []corev1.EnvVar{{Name: "SHARD", Value: fmt.Sprint(i % 16)}, {Name: "LOG_LEVEL", Value: "info"}},
					Resources: corev1.ResourceRequirements{
						Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
						Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("256Mi")},
					},
					ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/ready", Port: intstr.FromInt32(8080)}}},
				}},
			},
		}
		created, err := c.client.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			created, err = c.client.CoreV1().Pods(ns).Get(ctx, p.Name, metav1.GetOptions{})
		}
		if err != nil {
			return fmt.Errorf("create pod %s/%s: %w", ns, p.Name, err)
		}
		uids[i] = created.UID
		return nil
	})
	if err != nil {
		return err
	}
	logf("%d pods created", to-from)
	base := time.Now().Add(-30 * time.Minute)
	err = parallel(ctx, from*eventsPerPod, to*eventsPerPod, func(ctx context.Context, j int) error {
		i, k := j/eventsPerPod, j%eventsPerPod
		ns, pod, node := c.namespaces[i%len(c.namespaces)], fmt.Sprintf("orders-%06d", i), c.nodeNames[i%len(c.nodeNames)]
		r := eventReasons[k%len(eventReasons)]
		var msg string
		switch r.reason {
		case "Scheduled":
			msg = fmt.Sprintf(r.message, ns, pod, node)
		case "Unhealthy":
			msg = fmt.Sprintf(r.message, i/250%256, i%250)
		case "BackOff":
			msg = fmt.Sprintf(r.message, pod, ns, uids[i])
		case "FailedMount":
			msg = fmt.Sprintf(r.message, i%5, i%5)
		case "Created", "Started", "Killing":
			msg = r.message
		default:
			msg = fmt.Sprintf(r.message, i%7)
		}
		at := metav1.NewTime(base.Add(time.Duration(k)*time.Minute + time.Duration(i%60)*time.Second))
		ev := &corev1.Event{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s.%016x", pod, j), Namespace: ns},
			InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: ns, Name: pod, UID: uids[i], APIVersion: "v1",
				FieldPath: "spec.containers{app}"},
			Reason: r.reason, Message: msg, Type: r.typ,
			Source:         corev1.EventSource{Component: "kubelet", Host: node},
			FirstTimestamp: at, LastTimestamp: at, Count: int32(1 + k%3),
			ReportingController: "kubelet", ReportingInstance: node,
		}
		if _, err := c.client.CoreV1().Events(ns).Create(ctx, ev, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create event %s/%s: %w", ns, ev.Name, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	logf("%d events created", (to-from)*eventsPerPod)
	return waitFor(ctx, "kwok to make every pod Running", 15*time.Minute, c.kwok, func(ctx context.Context) error {
		l, err := c.client.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "status.phase=Pending", Limit: 1})
		if err != nil {
			return err
		}
		if len(l.Items) > 0 {
			time.Sleep(2 * time.Second)
			return fmt.Errorf("pods still Pending, e.g. %s/%s", l.Items[0].Namespace, l.Items[0].Name)
		}
		return nil
	})
}
