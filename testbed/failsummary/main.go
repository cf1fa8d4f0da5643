// Command failsummary reads `go test -json` on its standard input, prints the test
// output as `go test -v` would, and ends, when a test failed, with a summary: each failed
// test's own output (its last lines), then the list of failed tests. The end-to-end run
// prints thousands of lines (and the components' logs after a failure); the summary keeps
// what failed and why where a reader of the end of the output finds it.
//
//	go test -json ./testbed/e2e/ | go run ./testbed/failsummary
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
)

// event is one line of `go test -json` (cmd/test2json).
type event struct {
	Action  string
	Package string
	Test    string
	Output  string
	Elapsed float64
}

// maxLinesPerTest bounds the lines the summary repeats of one failed test.
const maxLinesPerTest = 40

func main() {
	// go test's own exit status says whether the run failed; this only reports.
	if _, err := summarize(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "failsummary:", err)
		os.Exit(2)
	}
}

// summarize copies the output of the events read from r to w and appends the summary.
// It reports whether a test failed.
func summarize(r io.Reader, w io.Writer) (bool, error) {
	out := bufio.NewWriter(w)
	defer out.Flush()
	lines := map[string][]string{} // test → its output lines, in order
	var failedTests []string
	pkgFailed := false
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &e) != nil {
			// Not an event (the build's own output): passed through as it is.
			fmt.Fprintf(out, "%s\n", line)
			continue
		}
		switch e.Action {
		case "output":
			fmt.Fprint(out, e.Output)
			if e.Test != "" && !isFrame(e.Output) {
				lines[e.Test] = append(lines[e.Test], strings.TrimRight(e.Output, "\n"))
			}
		case "fail":
			if e.Test != "" {
				failedTests = append(failedTests, e.Test)
			} else {
				pkgFailed = true
			}
		}
	}
	if err := sc.Err(); err != nil {
		return len(failedTests) > 0 || pkgFailed, err
	}
	if len(failedTests) == 0 {
		if pkgFailed {
			fmt.Fprintln(out, "\n==== summary: the test binary failed outside any test (build error, panic in TestMain or a timeout): see above")
		}
		return pkgFailed, nil
	}
	fmt.Fprintf(out, "\n==== summary: %d failed test(s), each with its own output\n", len(failedTests))
	for _, t := range leaves(failedTests) {
		l := lines[t]
		fmt.Fprintf(out, "---- %s\n", t)
		if len(l) > maxLinesPerTest {
			fmt.Fprintf(out, "     (%d earlier lines left out)\n", len(l)-maxLinesPerTest)
			l = l[len(l)-maxLinesPerTest:]
		}
		for _, s := range l {
			fmt.Fprintln(out, s)
		}
	}
	fmt.Fprintln(out, "==== failed:")
	for _, t := range failedTests {
		fmt.Fprintf(out, "     %s\n", t)
	}
	return true, nil
}

// isFrame reports whether an output line is go test's own framing (=== RUN, --- PASS,
// …) rather than what the test logged.
func isFrame(s string) bool {
	t := strings.TrimLeft(s, " ")
	for _, p := range []string{"=== RUN", "=== PAUSE", "=== CONT", "=== NAME", "--- PASS", "--- FAIL", "--- SKIP"} {
		if strings.HasPrefix(t, p) {
			return true
		}
	}
	return false
}

// leaves are the failed tests none of whose subtests failed: a parent fails because a
// subtest did, and its own output is usually only the subtests' framing.
func leaves(tests []string) []string {
	var out []string
	for _, t := range tests {
		parent := false
		for _, u := range tests {
			if strings.HasPrefix(u, t+"/") {
				parent = true
				break
			}
		}
		if !parent {
			out = append(out, t)
		}
	}
	return out
}
