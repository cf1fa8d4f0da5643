// Command bench times podflow against the floor program side by side, on generated
// bundles of each size, and prints one table: wall time, CPU time and peak RSS of
// analyze (whole, or scoped to one namespace), verify, inspect and redact, with the
// podflow / floor ratios. The bundles are generated once into the cache folder and
// reused while the generator's source is unchanged.
// -compare adds a second podflow binary (an earlier build) to the same run, so before
// and after are measured under the same machine load.
//
//	go run ./testdata/bench -podflow bin/podflow -floor .cache/bench/floor -sizes S,M
package main

import (
	"crypto/sha256"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

type options struct {
	podflow, compare, floor string
	cache                   string
	namespace               string
	sizes                   []string
	commands                []string
}

func main() {
	o := options{}
	sizes := flag.String("sizes", "S,M", "bundle sizes, comma-separated: S, M, L, XL (4×L)")
	commands := flag.String("commands", "analyze,verify,inspect,redact", "podflow commands to time; analyze-scoped is analyze -n of -namespace")
	flag.StringVar(&o.namespace, "namespace", "team-004", "the namespace analyze-scoped reports on (one of the generated bundles' that fail)")
	flag.StringVar(&o.podflow, "podflow", "bin/podflow", "podflow binary")
	flag.StringVar(&o.compare, "compare", "", "an earlier podflow binary to time in the same run")
	flag.StringVar(&o.floor, "floor", ".cache/bench/floor", "floor binary (go build ./testdata/floor)")
	flag.StringVar(&o.cache, "cache", ".cache/bench", "folder for the generated bundles")
	flag.Parse()
	o.sizes = strings.Split(*sizes, ",")
	o.commands = strings.Split(*commands, ",")
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// usage is what one run cost.
type usage struct {
	wall, cpu time.Duration
	rssKB     int64
}

func measure(name string, args ...string) (usage, error) {
	cmd := exec.Command(name, args...)
	cmd.Stdout = io.Discard
	var stderr strings.Builder
	cmd.Stderr = &stderr
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		return usage{}, err
	}
	if err != nil {
		return usage{}, fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, stderr.String())
	}
	ru, _ := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	u := usage{wall: wall, cpu: cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()}
	if ru != nil {
		u.rssKB = ru.Maxrss
	}
	return u, nil
}

// bundlePath generates the bundle of one size unless the cache holds it: the cached
// file's name carries a hash of the generator's source, so a checkout (which changes
// file times, not contents) reuses it and a changed generator writes a new one.
func bundlePath(o options, size string) (string, error) {
	src, err := os.ReadFile(filepath.Join("testdata", "gen", "main.go"))
	if err != nil {
		return "", fmt.Errorf("run from the repository root: %w", err)
	}
	sum := sha256.Sum256(src)
	p := filepath.Join(o.cache, fmt.Sprintf("bundle-%s-%x.tar.gz", size, sum[:6]))
	if _, err := os.Stat(p); err == nil {
		return p, nil
	}
	if err := os.MkdirAll(o.cache, 0o755); err != nil {
		return "", err
	}
	fmt.Fprintf(os.Stderr, "bench: generating %s\n", p)
	cmd := exec.Command("go", "run", "./testdata/gen", "-size", size, "-o", p)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	return p, cmd.Run()
}

func run(o options) error {
	fmt.Println("| size | command | podflow wall | floor wall | wall ratio | podflow CPU | floor CPU | podflow peak RSS | floor peak RSS | RSS ratio |" + compareHeader(o))
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|" + strings.Repeat("---|", len(compareColumns(o))))
	for _, size := range o.sizes {
		b, err := bundlePath(o, size)
		if err != nil {
			return err
		}
		st, err := os.Stat(b)
		if err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "bench: %s is %d MB compressed\n", b, st.Size()>>20)
		for _, c := range o.commands {
			out := filepath.Join(o.cache, "redacted-"+size+".tar.gz")
			args, floorArgs := commandArgs(c, b, out, o.namespace)
			if args == nil {
				return fmt.Errorf("unknown command %q", c)
			}
			pf, err := measure(o.podflow, args...)
			if err != nil {
				return err
			}
			fl, err := measure(o.floor, floorArgs...)
			if err != nil {
				return err
			}
			row := fmt.Sprintf("| %s | %s | %s | %s | %.2f× | %s | %s | %s | %s | %.1f× |", size, c,
				secs(pf.wall), secs(fl.wall), ratio(pf.wall, fl.wall), secs(pf.cpu), secs(fl.cpu),
				mb(pf.rssKB), mb(fl.rssKB), float64(pf.rssKB)/float64(max(fl.rssKB, 1)))
			if o.compare != "" {
				before, err := measure(o.compare, args...)
				if err != nil {
					return err
				}
				row += fmt.Sprintf(" %s | %.2f× | %s | %s | %.1f× | %.2f× | %.2f× |", secs(before.wall), ratio(before.wall, fl.wall),
					secs(before.cpu), mb(before.rssKB), float64(before.rssKB)/float64(max(fl.rssKB, 1)),
					ratio(pf.wall, before.wall), ratio(pf.cpu, before.cpu))
			}
			fmt.Println(row)
			_ = os.RemoveAll(out)
		}
	}
	return nil
}

func compareColumns(o options) []string {
	if o.compare == "" {
		return nil
	}
	// CPU time is there too: on a shared machine it says more than wall time.
	return []string{"before wall", "before / floor", "before CPU", "before peak RSS", "before RSS ratio", "after / before wall", "after / before CPU"}
}

func compareHeader(o options) string {
	cols := compareColumns(o)
	if len(cols) == 0 {
		return ""
	}
	return " " + strings.Join(cols, " | ") + " |"
}

// benchTotalSize raises podflow's total-size limit (8 GiB by default) above the XL
// bundle, which holds about 9.7 GiB uncompressed; the floor has no limit.
const benchTotalSize = "32Gi"

func commandArgs(c, bundle, out, namespace string) ([]string, []string) {
	limit := []string{"--max-total-size", benchTotalSize}
	switch c {
	case "analyze":
		return append([]string{"analyze", bundle, "--fail-on", "none", "-o", "json"}, limit...), []string{"parse", bundle}
	case "analyze-scoped":
		// The floor reads the whole bundle as analyze must: only what it decodes
		// depends on the scope.
		return append([]string{"analyze", bundle, "-n", namespace, "--fail-on", "none", "-o", "json"}, limit...), []string{"parse", bundle}
	case "verify":
		return append([]string{"verify", bundle}, limit...), []string{"read", bundle}
	case "inspect":
		return append([]string{"inspect", bundle}, limit...), []string{"read", bundle}
	case "redact":
		return append([]string{"redact", bundle, "-o", out, "--force"}, limit...), []string{"copy", bundle, out}
	}
	return nil, nil
}

func secs(d time.Duration) string { return fmt.Sprintf("%.1f s", d.Seconds()) }

func mb(kb int64) string { return fmt.Sprintf("%d MB", kb>>10) }

func ratio(a, b time.Duration) float64 { return a.Seconds() / max(b.Seconds(), 1e-3) }
