//go:build e2e

package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"podflow.dev/podflow/testbed/scenario"
)

// The node-faults phase: scenarios whose failure is the node's own (its CNI, its pause
// image, its kubelet) cannot share the node with the others, so they run one at a time
// after every other scenario has been collected. Each fault is applied, its scenario
// reproduced, collected (cluster and node) and checked, and the fault reverted, the node
// back to Ready, before the next one, so a run ends on a healthy node whatever failed.

// nodeFault breaks the test bed's node in one way and repairs it.
type nodeFault struct {
	// inject breaks the node. revert repairs it, and must work after a partial inject.
	inject, revert func(ctx context.Context, b *bed) error
	// effective reports whether the node shows the fault, so pods meet it.
	effective func(ctx context.Context, b *bed) (bool, error)
	// watch lists the components that must keep running while the fault holds.
	watch func(b *bed) []*proc
	// expectFailed names the collection sources the fault makes fail, or is nil.
	expectFailed func(source string) bool
}

// nodeMonitorGracePeriod is the node controller's grace period during the phase: the
// kubelet renews its Lease every 10s, and after this long without a renewal the node
// goes Ready=Unknown (the default, 50s, would make the kubelet fault wait a minute).
const nodeMonitorGracePeriod = "20s"

// tinyNetwork is the CNI network of the ip-exhausted fault: the same bridge and subnet
// as the test bed's, with one address, under its own name so host-local keeps its
// allocations apart and pods of the normal network keep theirs.
const tinyNetwork = "podflow-tiny"

var nodeFaults = map[string]nodeFault{
	// cni-not-ready: the CNI configuration is gone, so containerd reports NetworkReady=false
	// ("cni plugin not initialized") and the kubelet refuses to start pod sandboxes.
	"cni-not-ready": {
		inject: func(ctx context.Context, b *bed) error {
			return os.Rename(b.cniConfPath(), b.path("cni", "10-podflow.conflist.off"))
		},
		revert: func(ctx context.Context, b *bed) error {
			// containerd reloads its CNI configuration on a write, rename or removal in
			// the directory but ignores a creation, so moving the file back would go
			// unnoticed: write it instead.
			off := b.path("cni", "10-podflow.conflist.off")
			data, err := os.ReadFile(off)
			if errors.Is(err, os.ErrNotExist) {
				return nil // never moved away
			}
			if err != nil {
				return err
			}
			if err := os.WriteFile(b.cniConfPath(), data, 0o644); err != nil {
				return err
			}
			return os.Remove(off)
		},
		effective: func(ctx context.Context, b *bed) (bool, error) {
			return b.nodeReadyIs(ctx, corev1.ConditionFalse, "NetworkReady=false")
		},
		watch: allComponents,
	},
	// ip-exhausted: containerd's first CNI configuration is a network with a single
	// address; the first pod takes it, the next fails to get one.
	"ip-exhausted": {
		inject: func(ctx context.Context, b *bed) error {
			// The one address must be free: a reservation an earlier run on this machine
			// left behind (a sandbox it could not tear down) would hold it, and neither
			// replica could start.
			if err := os.RemoveAll(filepath.Join(b.path("cni", "ipam"), tinyNetwork)); err != nil {
				return err
			}
			cni := fill(cniConfig, "{{bridge}}", bridgeName, "{{subnet}}", podSubnet, "{{ipam}}", b.path("cni", "ipam"))
			cni = strings.Replace(cni, `"name": "podflow"`, `"name": "`+tinyNetwork+`"`, 1)
			cni = strings.Replace(cni, `{"subnet": "`+podSubnet+`"}`, `{"subnet": "`+podSubnet+`", "rangeStart": "10.213.0.250", "rangeEnd": "10.213.0.250"}`, 1)
			return os.WriteFile(b.tinyConfPath(), []byte(cni), 0o644)
		},
		revert: func(ctx context.Context, b *bed) error {
			if err := os.Remove(b.tinyConfPath()); err != nil && !errors.Is(err, os.ErrNotExist) {
				return err
			}
			return waitFor(ctx, "containerd to load the podflow network again", time.Minute, []*proc{b.containerd}, func(ctx context.Context) (bool, error) {
				uses, err := b.runtimeUsesNetwork(ctx, tinyNetwork)
				return !uses, err
			})
		},
		effective: func(ctx context.Context, b *bed) (bool, error) {
			return b.runtimeUsesNetwork(ctx, tinyNetwork)
		},
		watch: allComponents,
	},
	// sandbox-image-missing: the runtime's sandbox (pause) image is removed; it cannot be
	// pulled (no registry is reachable), so new pod sandboxes fail.
	"sandbox-image-missing": {
		inject: func(ctx context.Context, b *bed) error {
			_, err := b.ctr(ctx, "images", "rm", pauseImage)
			return err
		},
		revert: func(ctx context.Context, b *bed) error {
			if has, err := b.runtimeHasImage(ctx, pauseImage); err != nil || has {
				return err
			}
			_, err := b.ctr(ctx, "images", "import", "--snapshotter", b.snapshotter, filepath.Join(b.imagesDir, "pause.tar"))
			return err
		},
		effective: func(ctx context.Context, b *bed) (bool, error) {
			has, err := b.runtimeHasImage(ctx, pauseImage)
			return !has, err
		},
		watch: allComponents,
	},
	// kubelet-stopped: the kubelet stops; the node controller stops hearing from it and
	// sets Ready=Unknown, marks its pods not ready and taints the node.
	"kubelet-stopped": {
		inject: func(ctx context.Context, b *bed) error {
			if err := b.waitNodeLease(ctx); err != nil {
				return err
			}
			b.kubelet.stop(10 * time.Second)
			return nil
		},
		revert: func(ctx context.Context, b *bed) error {
			if gone, _ := b.kubelet.exited(); !gone {
				return nil
			}
			return b.startKubelet(ctx)
		},
		effective: func(ctx context.Context, b *bed) (bool, error) {
			return b.nodeReadyIs(ctx, corev1.ConditionUnknown, "Kubelet stopped posting node status")
		},
		watch: func(b *bed) []*proc { return []*proc{b.apiserver, b.controllerManager, b.containerd} },
		// Container logs are read through the kubelet, which is gone.
		expectFailed: func(source string) bool { return strings.HasPrefix(source, "logs/") },
	},
	// The kubelet restarted misconfigured, as after an upgrade, a reinstall or a node left
	// off for a year: it exits at start, logging why, and the node controller stops
	// hearing from it.
	//
	// kubelet-runtime-endpoint-missing: containerRuntimeEndpoint names CRI-O's socket on
	// a node that runs containerd.
	"kubelet-runtime-endpoint-missing": kubeletMisconfigured(func(b *bed) (kubeletStart, error) {
		return kubeletStart{config: func(c map[string]any) {
			c["containerRuntimeEndpoint"] = "unix://" + b.path("crio", "crio.sock")
		}}, nil
	}),
	// kubelet-client-cert-expired: kubelet.conf holds a client certificate of the node's
	// identity, issued by the cluster CA, that expired a day ago, and the bootstrap
	// kubeconfig it could get a new one with is gone (kubeadm deletes it after the join).
	"kubelet-client-cert-expired": kubeletMisconfigured(func(b *bed) (kubeletStart, error) {
		now := time.Now()
		cert, key, err := b.pki.issueValid("kubelet-client-expired", "system:node:"+nodeName, []string{"system:nodes"}, false, nil, nil,
			now.Add(-366*24*time.Hour), now.Add(-24*time.Hour))
		if err != nil {
			return kubeletStart{}, err
		}
		kc := b.path("pki", "kubelet-expired.kubeconfig")
		server := fmt.Sprintf("https://127.0.0.1:%d", b.ports.apiserver)
		if err := writeCertKubeconfig(kc, server, b.pki.CAFile, "system:node:"+nodeName, cert, key); err != nil {
			return kubeletStart{}, err
		}
		return kubeletStart{kubeconfig: kc, flags: []string{
			"--bootstrap-kubeconfig", b.path("pki", "bootstrap-kubelet.kubeconfig"),
			"--cert-dir", b.path("kubelet", "pki"),
		}}, nil
	}),
	// runtime-systemd-cgroup: containerd is restarted with its runc runtime on the
	// systemd cgroup driver (SystemdCgroup = true, what kubeadm recommends), while the
	// kubelet keeps cgroupfs: every new pod sandbox gets a cgroupfs path that runc's
	// systemd driver refuses.
	"runtime-systemd-cgroup": {
		inject: func(ctx context.Context, b *bed) error {
			b.containerd.stop(10 * time.Second)
			return b.launchContainerd(ctx, true)
		},
		revert: func(ctx context.Context, b *bed) error {
			if uses, err := b.runtimeUsesSystemdCgroup(ctx); err == nil && !uses {
				return nil
			}
			b.containerd.stop(10 * time.Second)
			return b.launchContainerd(ctx, false)
		},
		effective: func(ctx context.Context, b *bed) (bool, error) { return b.runtimeUsesSystemdCgroup(ctx) },
		watch:     allComponents,
	},
}

// kubeletMisconfigured is the node fault of a kubelet restarted as start says: it must
// exit at start; the fault holds once it has and the node is Ready=Unknown.
func kubeletMisconfigured(start func(b *bed) (kubeletStart, error)) nodeFault {
	return nodeFault{
		inject: func(ctx context.Context, b *bed) error {
			k, err := start(b)
			if err != nil {
				return err
			}
			if err := b.waitNodeLease(ctx); err != nil {
				return err
			}
			b.kubelet.stop(10 * time.Second)
			_, err = b.launchKubelet(k)
			return err
		},
		revert: func(ctx context.Context, b *bed) error {
			// Whether or not the misconfigured kubelet ever started, the test bed's
			// own replaces it.
			b.kubelet.stop(10 * time.Second)
			return b.startKubelet(ctx)
		},
		effective: func(ctx context.Context, b *bed) (bool, error) {
			if gone, _ := b.kubelet.exited(); !gone {
				return false, errors.New("the misconfigured kubelet still runs")
			}
			return b.nodeReadyIs(ctx, corev1.ConditionUnknown, "Kubelet stopped posting node status")
		},
		watch: func(b *bed) []*proc { return []*proc{b.apiserver, b.controllerManager, b.containerd} },
		// Container logs are read through the kubelet, which is gone.
		expectFailed: func(source string) bool { return strings.HasPrefix(source, "logs/") },
	}
}

// waitNodeLease waits until the node's Lease has been renewed: a kubelet that just
// started may not have created it yet (it waits for its Node to own it); stopped then,
// the node would have none at all.
func (b *bed) waitNodeLease(ctx context.Context) error {
	return waitFor(ctx, "the node's Lease", time.Minute, allComponents(b), func(ctx context.Context) (bool, error) {
		l, err := b.client.CoordinationV1().Leases(corev1.NamespaceNodeLease).Get(ctx, nodeName, metav1.GetOptions{})
		return err == nil && l.Spec.RenewTime != nil, err
	})
}

func allComponents(b *bed) []*proc {
	return []*proc{b.apiserver, b.controllerManager, b.scheduler, b.containerd, b.kubelet}
}

func (b *bed) cniConfPath() string  { return b.path("cni", "net.d", "10-podflow.conflist") }
func (b *bed) tinyConfPath() string { return b.path("cni", "net.d", "05-"+tinyNetwork+".conflist") }

func (b *bed) ctr(ctx context.Context, args ...string) (string, error) {
	return run(ctx, b.componentEnv(), append([]string{"ctr", "--address", b.containerdSock, "--namespace", "k8s.io"}, args...)...)
}

func (b *bed) crictl(ctx context.Context, args ...string) (string, error) {
	return run(ctx, b.componentEnv(), append([]string{b.bin("crictl"), "--runtime-endpoint", "unix://" + b.containerdSock, "--timeout", "20s"}, args...)...)
}

var reSystemdCgroupOn = regexp.MustCompile(`"SystemdCgroup":\s*true`)

// runtimeUsesSystemdCgroup reports whether containerd's loaded configuration has its
// runc runtime on the systemd cgroup driver.
func (b *bed) runtimeUsesSystemdCgroup(ctx context.Context) (bool, error) {
	out, err := b.crictl(ctx, "info")
	if err != nil {
		return false, err
	}
	return reSystemdCgroupOn.MatchString(out), nil
}

// runtimeUsesNetwork reports whether containerd's loaded CNI configuration is network.
func (b *bed) runtimeUsesNetwork(ctx context.Context, network string) (bool, error) {
	out, err := b.crictl(ctx, "info")
	if err != nil {
		return false, err
	}
	// The network's name appears in the loaded configuration (and nowhere else).
	return strings.Contains(out, network), nil
}

func (b *bed) runtimeHasImage(ctx context.Context, image string) (bool, error) {
	out, err := b.ctr(ctx, "images", "list", "--quiet")
	if err != nil {
		return false, err
	}
	for _, l := range strings.Split(out, "\n") {
		if strings.TrimSpace(l) == image {
			return true, nil
		}
	}
	return false, nil
}

// nodeReadyIs reports whether the node's Ready condition has status and a message
// containing text; otherwise the error says what it is.
func (b *bed) nodeReadyIs(ctx context.Context, status corev1.ConditionStatus, text string) (bool, error) {
	n, err := b.client.CoreV1().Nodes().Get(ctx, nodeName, metav1.GetOptions{})
	if err != nil {
		return false, err
	}
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			if c.Status == status && strings.Contains(c.Message, text) {
				return true, nil
			}
			return false, fmt.Errorf("node Ready=%s: %s", c.Status, c.Message)
		}
	}
	return false, errors.New("node has no Ready condition")
}

// splitNodeFaults separates the node-faults scenarios from those run side by side.
func splitNodeFaults(all []*scenario.Scenario) (parallel, faulted []*scenario.Scenario) {
	for _, s := range all {
		if s.Expect.Phase == scenario.PhaseNodeFaults {
			faulted = append(faulted, s)
		} else {
			parallel = append(parallel, s)
		}
	}
	return parallel, faulted
}

// runNodeFaults runs the node-faults scenarios one after another.
func runNodeFaults(t *testing.T, cli *podflowCLI, faulted []*scenario.Scenario, runs map[string]*scenarioRun) {
	if len(faulted) == 0 {
		return
	}
	t.Run("node-faults", func(t *testing.T) {
		cli.require(t, "collect", "node")
		if err := tb.shortenNodeGracePeriod(); err != nil {
			t.Fatal(err)
		}
		for _, s := range faulted {
			r := runs[s.Name]
			t.Run(s.Name, func(t *testing.T) { runNodeFault(t, cli, r) })
			if !tb.nodeHealthy(t) {
				t.Fatal("the node did not recover from a fault; the remaining node faults are not run")
			}
		}
	})
}

// shortenNodeGracePeriod restarts the controller-manager with a short node monitor
// grace period, so a stopped kubelet shows as Ready=Unknown in seconds.
func (b *bed) shortenNodeGracePeriod() error {
	b.controllerManager.stop(10 * time.Second)
	if _, err := b.startControllerManager("--node-monitor-grace-period=" + nodeMonitorGracePeriod); err != nil {
		return fmt.Errorf("restart the controller-manager: %w", err)
	}
	return nil
}

// nodeHealthy waits for the node to be Ready again after a fault.
func (b *bed) nodeHealthy(t *testing.T) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	err := waitFor(ctx, "node "+nodeName+" Ready", 90*time.Second, allComponents(b), func(ctx context.Context) (bool, error) {
		return b.nodeReadyIs(ctx, corev1.ConditionTrue, "")
	})
	if err != nil {
		t.Errorf("after the fault: %v", err)
		return false
	}
	return true
}

// runNodeFault applies one scenario's fault, reproduces, collects and checks it, and
// reverts the fault whatever happened.
func runNodeFault(t *testing.T, cli *podflowCLI, r *scenarioRun) {
	s := r.s
	f, ok := nodeFaults[s.Expect.Fault]
	if !ok {
		t.Fatalf("scenario %s: unknown node fault %q", s.Name, s.Expect.Fault)
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.TimeoutOrDefault()+3*time.Minute)
	defer cancel()
	objs, err := s.Objects()
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	if err := tb.installSeccomp(s); err != nil {
		t.Fatalf("scenario %s: %v", s.Name, err)
	}
	if len(s.Expect.Before) > 0 {
		if err := tb.apply(ctx, objs); err != nil {
			t.Fatalf("scenario %s: %v", s.Name, err)
		}
		waitLive(t, ctx, s, "before the fault", s.Expect.Before, allComponents(tb))
	}
	defer func() {
		// A fresh context: the scenario's may have run out, the repair must still happen.
		rctx, rcancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer rcancel()
		if err := f.revert(rctx, tb); err != nil {
			t.Errorf("revert node fault %s: %v", s.Expect.Fault, err)
		}
	}()
	if err := f.inject(ctx, tb); err != nil {
		t.Fatalf("apply node fault %s: %v", s.Expect.Fault, err)
	}
	err = waitFor(ctx, "node fault "+s.Expect.Fault, 2*time.Minute, f.watch(tb), func(ctx context.Context) (bool, error) {
		return f.effective(ctx, tb)
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("node fault %s in effect after %s", s.Expect.Fault, time.Since(t0).Round(100*time.Millisecond))
	if len(s.Expect.Before) == 0 {
		if err := tb.apply(ctx, objs); err != nil {
			t.Fatalf("scenario %s: %v", s.Name, err)
		}
	}
	waitLive(t, ctx, s, "to reproduce", s.Expect.Until, f.watch(tb))
	r.reproduced = time.Since(t0)
	t.Logf("scenario %s reproduced in %s", s.Name, r.reproduced.Round(100*time.Millisecond))
	fcli := &podflowCLI{bin: cli.bin, expectFailed: f.expectFailed}
	node := collectNodeTo(t, fcli, tb.path("bundles", "node-"+s.Name+".tar.gz"), t0)
	collectScenario(t, fcli, r, collectorKubeconfig(t, s.Name), node)
}

// waitLive waits for live checks of a scenario, failing the test with the pods' states.
func waitLive(t *testing.T, ctx context.Context, s *scenario.Scenario, what string, checks []scenario.Check, watch []*proc) {
	t.Helper()
	var last *scenario.Snapshot
	err := waitFor(ctx, "scenario "+s.Name+" "+what, s.TimeoutOrDefault(), watch, func(ctx context.Context) (bool, error) {
		snap, err := liveSnapshot(ctx, s.Name, checks)
		if err != nil {
			return false, err
		}
		last = snap
		if err := snap.EvalAll(checks); err != nil {
			return false, err
		}
		return true, nil
	})
	if err != nil {
		t.Fatalf("scenario %s: %s: %v%s", s.Name, what, err, describePods(last))
	}
}
