//go:build e2e

// Package e2e is podflow's real test bed: it starts etcd, a Kubernetes control plane, and
// a node (kubelet, containerd, runc, CNI bridge) on this machine, reproduces every
// scenario of testdata/scenarios in parallel, then collects each one with the podflow
// binary under test and checks the bundle's evidence and podflow's diagnosis.
// Run it with testbed/e2e.sh (make e2e), as root.
package e2e

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// tb is the running test bed, shared by every test of the package.
var tb *bed

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	b, err := newBed()
	if err != nil {
		fmt.Fprintf(os.Stderr, "testbed: %v\n", err)
		return 1
	}
	if os.Getenv("PODFLOW_TESTBED_REAP") == "1" {
		// e2e.sh's exit trap: clean up after a run that could not (killed, timed out).
		if os.Geteuid() != 0 {
			fmt.Fprintln(os.Stderr, "testbed:", errNotRoot)
			return 1
		}
		reap(b.dir, b.logf)
		return 0
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		sig := <-sigs
		b.logf("%s: stopping the test bed", sig)
		cancel()
		b.stop()
		os.Exit(130)
	}()
	if err := b.start(ctx); err != nil {
		fmt.Fprintf(os.Stderr, "testbed: bring-up failed: %v\n", err)
		b.dumpLogs()
		b.stop()
		return 1
	}
	b.logf("up in %s: %s", time.Since(b.startedAt).Round(100*time.Millisecond), b.timingSummary())
	tb = b
	code := m.Run()
	if code != 0 {
		b.dumpLogs()
	}
	b.stop()
	return code
}

func (b *bed) timingSummary() string {
	var parts []string
	for _, t := range b.timings {
		parts = append(parts, fmt.Sprintf("%s %s", t.what, t.took.Round(100*time.Millisecond)))
	}
	return strings.Join(parts, ", ")
}

// dumpLogs prints the tail of every component's log (or journal) to help a failed run.
func (b *bed) dumpLogs() {
	for _, p := range b.procs {
		if tail := p.tail(40); tail != "" {
			fmt.Fprintf(os.Stderr, "---- last lines of %s (%s)\n%s\n", p.name, p.log, tail)
		}
	}
	if b.journal == "" {
		return
	}
	for _, unit := range []string{"containerd", "kubelet"} {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		out, err := run(ctx, nil, "journalctl", "-t", unit, "--since", "@"+fmt.Sprint(b.startedAt.Unix()), "-n", "60", "--no-pager", "-o", "short-iso")
		cancel()
		if err != nil {
			fmt.Fprintf(os.Stderr, "---- journal of %s unavailable: %v\n", unit, err)
			continue
		}
		fmt.Fprintf(os.Stderr, "---- last journal lines of %s\n%s\n", unit, out)
	}
}

// TestBedIsReady checks what every scenario relies on, so a broken test bed fails here
// with a clear message rather than as sixteen scenario timeouts.
func TestBedIsReady(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	n, err := tb.client.CoreV1().Nodes().Get(ctx, nodeName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := n.Status.NodeInfo.KubeletVersion; got != "v1.37.2" {
		t.Errorf("kubelet version %q, want v1.37.2", got)
	}
	if got := n.Status.NodeInfo.ContainerRuntimeVersion; !strings.HasPrefix(got, "containerd://") {
		t.Errorf("container runtime %q, want containerd", got)
	}
	var images []string
	for _, img := range n.Status.Images {
		images = append(images, img.Names...)
	}
	sort.Strings(images)
	for _, want := range []string{busyboxImage, pauseImage} {
		if !containsString(images, want) {
			t.Errorf("node image list %v lacks %s", images, want)
		}
	}
	if tb.journal == "" {
		t.Log("no journald: kubelet and containerd log to files")
		return
	}
	selector := []string{"-t", "kubelet"}
	if tb.journal == "own" && unitCgroupRoot() != "" {
		// The node collector looks the kubelet up by unit first, as on a systemd node.
		selector = []string{"-u", "kubelet"}
	}
	out, err := run(ctx, nil, append([]string{"journalctl", "--no-pager", "-o", "cat", "--since", "@" + fmt.Sprint(tb.startedAt.Unix())}, selector...)...)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "Successfully registered node") {
		t.Errorf("journalctl %s has no kubelet registration line; it has %d bytes", strings.Join(selector, " "), len(out))
	}
}

func containsString(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
