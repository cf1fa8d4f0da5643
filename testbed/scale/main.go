// Command scale is the test bed's scale phase (make e2e-scale): it starts the pinned etcd
// and kube-apiserver on loopback and kwok with fake nodes, fills the cluster with pods
// (kwok makes them Running and serves their logs) and core/v1 Events, then times, side
// by side and in one run, `podflow collect -A` as the least-privilege ServiceAccount,
// `kubectl cluster-info dump --all-namespaces` and the floor (testbed/scale/floor: the
// same requests, in parallel, answers thrown away). Each size is measured on the same
// cluster, grown from the previous size. It prints one table: wall time, CPU time and
// peak RSS of each client, the CPU the API server and etcd spent serving it, and the
// ratios, with the load average of the machine when each run started.
//
//	go run ./testbed/scale -bin ~/.cache/podflow/testbed/bin -podflow bin/podflow -floor scale-floor
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

type options struct {
	dir, bin, podflow, floor, kwokStages string
	compare                              string
	sizes                                []int
	nodes, namespaces, eventsPerPod      int
	rounds                               int
	dumpMaxPods                          int
	keep                                 bool
}

func main() {
	o := options{}
	sizes := flag.String("sizes", "5000,20000", "pod counts to measure, ascending, comma-separated")
	flag.StringVar(&o.dir, "dir", "/var/lib/podflow-testbed-scale", "run directory (wiped at start)")
	flag.StringVar(&o.bin, "bin", "", "folder of the pinned etcd, kube-apiserver, kubectl and kwok")
	flag.StringVar(&o.podflow, "podflow", "bin/podflow", "podflow binary under test")
	flag.StringVar(&o.compare, "compare", "", "an earlier podflow binary to time in the same run (before and after a change)")
	flag.StringVar(&o.floor, "floor", "", "floor binary (go build ./testbed/scale/floor)")
	flag.StringVar(&o.kwokStages, "kwok-stages", "", "folder of kwok's stage manifests (kustomize/stage of the pinned kwok module)")
	flag.IntVar(&o.nodes, "nodes", 50, "fake nodes")
	flag.IntVar(&o.namespaces, "namespaces", 100, "namespaces the pods are spread across")
	flag.IntVar(&o.eventsPerPod, "events-per-pod", 10, "core/v1 Events about each pod")
	flag.IntVar(&o.rounds, "rounds", 1, "runs of each client per size, taken in turns; the table shows the fastest")
	flag.IntVar(&o.dumpMaxPods, "dump-max-pods", 0, "time kubectl cluster-info dump only up to this many pods (0: at every size); it reads the logs one at a time")
	flag.BoolVar(&o.keep, "keep", false, "keep the bundles and dumps in the run directory")
	flag.Parse()
	for _, s := range strings.Split(*sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n <= 0 || (len(o.sizes) > 0 && n < o.sizes[len(o.sizes)-1]) {
			fmt.Fprintf(os.Stderr, "scale: -sizes: %q is not an ascending list of pod counts\n", *sizes)
			os.Exit(2)
		}
		o.sizes = append(o.sizes, n)
	}
	if o.bin == "" || o.floor == "" || o.kwokStages == "" {
		fmt.Fprintln(os.Stderr, "scale: -bin, -floor and -kwok-stages are required (testbed/e2e-scale.sh sets them)")
		os.Exit(2)
	}
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	if err := run(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "scale:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, o options) error {
	for _, p := range []*string{&o.dir, &o.bin, &o.podflow, &o.floor, &o.kwokStages, &o.compare} {
		if *p == "" {
			continue
		}
		abs, err := filepath.Abs(*p)
		if err != nil {
			return err
		}
		*p = abs
	}
	c, err := startCluster(ctx, o)
	if c != nil {
		defer c.stop()
	}
	if err != nil {
		return err
	}
	var rows []row
	have := 0
	for _, size := range o.sizes {
		t0 := time.Now()
		if err := c.populate(ctx, have, size, o.eventsPerPod); err != nil {
			return err
		}
		logf("%d pods and %d events created and Running in %s", size, size*o.eventsPerPod, time.Since(t0).Round(time.Second))
		have = size
		r, err := c.measure(ctx, o, size)
		if err != nil {
			return err
		}
		rows = append(rows, r...)
		printTable(os.Stderr, rows)
	}
	printTable(os.Stdout, rows)
	return nil
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "scale: "+format+"\n", args...)
}
