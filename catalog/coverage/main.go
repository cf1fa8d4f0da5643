// Command coverage measures how much of the trouble in an incident corpus the message
// catalog recognizes: of the warning and error lines in the evidence files (every file of
// an incident folder but case.yaml), how many have a layer that a catalog entry prints.
// It prints the share per source and per catalog component, and the biggest families of
// lines the catalog does not know: those tell which modules or packages to add.
//
//	go run ./catalog/coverage testdata/incidents
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"text/tabwriter"

	"podflow.dev/podflow/catalog"
	"podflow.dev/podflow/logline"
)

func main() {
	top := flag.Int("top", 30, "how many unrecognized families to list")
	goal := flag.Float64("goal", 95, "the share to reach, in percent (reported, not enforced)")
	list := flag.Bool("list", false, "list every unrecognized line with its file, instead of the families")
	flag.Parse()
	dir := "testdata/incidents"
	if flag.NArg() > 0 {
		dir = flag.Arg(0)
	}
	if err := run(dir, *top, *goal, *list); err != nil {
		fmt.Fprintln(os.Stderr, "catalog coverage:", err)
		os.Exit(1)
	}
}

var (
	klogSeverity = regexp.MustCompile(`(?:^|\s)[EWF]\d{4} \d\d:\d\d:\d\d`)
	levelField   = regexp.MustCompile(`(?i)\blevel=(?:error|warning|warn|fatal|panic)\b|"level":\s*"(?:error|warning|warn|fatal|panic)"|\[(?:ERROR|WARN|WARNING|FATAL)\]|\b(?:ERROR|WARN|WARNING|FATAL)\b`)
	eventWarning = regexp.MustCompile(`(?:^|\s)Warning\s`)
	troubleWords = regexp.MustCompile(`(?i)\b(?:failed|failure|fails|error|errors|refused|denied|forbidden|unable|cannot|can't|couldn't|timeout|timed out|back-off|backoff|unauthorized|invalid|oomkilled|crashloopbackoff|evicted|insufficient|exceeded|unhealthy|not ready|notready|no such|panic|fatal)\b`)
)

// trouble reports whether a line is a warning or an error line.
func trouble(line string) bool {
	return klogSeverity.MatchString(line) || levelField.MatchString(line) || eventWarning.MatchString(line) || troubleWords.MatchString(line)
}

// outside is why a trouble line is outside the measure, "" when it is in it. The measure
// is the messages components on the Pod path print; these lines are not such messages:
//
//   - command: a command the user typed, quoted with its output (`kubectl get …`,
//     `journalctl -u kubelet | grep …`);
//   - field: a status field or table row whose value is one word or count (`Reason:
//     Evicted`, `phase: Failed`, `"reason": "Forbidden",`, `Pods Status: … 0 Failed`, a
//     `kubectl get pods` row): a phase or a one-word reason, not a message; the importer
//     and the rules read these fields, the catalog reads messages. A field whose value is
//     a CamelCase reason (`Reason: OOMKilled`, a row in CrashLoopBackOff) stays in: the
//     catalog holds those reasons;
//   - application: output of the program in the container or of a shell tool in it
//     (JVM exceptions, Node.js, MongoDB, MySQL's server log, PostgreSQL's initdb and its
//     server's "FATAL:  " lines (two spaces after the level: PostgreSQL's own layout),
//     Python's logging layout "2025-05-03 17:50:50,140 - name - LEVEL - ", tini, tar, id,
//     whoami, curl, an HTTP server's access log line with its status code): no Pod-path
//     component prints it;
//   - stack frame: a file:line line of a Go stack trace, or its function line
//     (`github.com/go-logr/zapr.(*zapLogger).Error`, `main.run(0xc000010000)`);
//   - prose: a sentence of the ticket's own text ("When running the chart … the init
//     container enters a CrashLoop with the following error:", "I see the following
//     errors:"): its writer speaks in the first person or introduces the output that
//     follows; no component prints such a sentence.
func outside(line string) string {
	l := strings.TrimLeft(line, "`> \t")
	switch {
	case commandLine.MatchString(strings.TrimLeft(line, "> \t")):
		return "command"
	case (fieldLine.MatchString(l) || countLine.MatchString(l) || getRow.MatchString(l)) && !reasonValue.MatchString(l):
		return "field"
	case appLine.MatchString(l):
		return "application"
	case stackFrame.MatchString(l):
		return "stack frame"
	case reporterProse(l):
		return "prose"
	}
	return ""
}

var (
	commandLine = regexp.MustCompile(`^(?:\$\s*)?(?:sudo\s+)?(?:(?:kubectl|k|oc)\s+(?:get|describe|logs|apply|create|delete|edit|exec|rollout|top|-n)\b|(?:journalctl|systemctl|grep|crictl)\s+-)|\|\s*grep\s`)
	reasonValue = regexp.MustCompile(`\b[A-Z][a-z]*[A-Z][A-Za-z]*\b`) // a CamelCase reason (OOMKilled, CrashLoopBackOff): the catalog holds those
	fieldLine   = regexp.MustCompile(`^"?[A-Za-z][\w .-]{0,40}"?\s*[:=]\s*"?[\w.-]*"?,?$|^[A-Za-z]+$`)
	countLine   = regexp.MustCompile(`^[A-Z][\w ]+:\s+(?:\d+ [A-Za-z]+(?: / )?)+;?$`)
	getRow      = regexp.MustCompile(`^\S+\s+\d+/\d+\s+[A-Za-z:]+\s+\d+(?:\s+\(\S+ ago\))?\s+\d+\w`)
	appLine     = regexp.MustCompile(`^(?:Caused by: )?(?:[a-z][\w$]*\.)+[A-Z][\w$]*(?:Exception|Error)\b|^FATAL ERROR: .*JavaScript heap|^Cannot find module |MongoDB \S+ requires|^\[\w+\s+tini \(\d+\)\]|(?:^|\s)\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+Z \d+ \[(?:ERROR|Warning|Note|System)\] |^(?:tar|id|whoami|groups|initdb|mkdir|cp|chown|chmod|su|sh|bash|curl|wget): |"(?:GET|HEAD|POST|PUT|PATCH|DELETE|OPTIONS) \S+ HTTP/\d(?:\.\d)?" [1-5]\d\d\b|(?:^|\s)(?:FATAL|PANIC|ERROR|WARNING|LOG):  \S|^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} - `)
	stackFrame  = regexp.MustCompile(`^\S+\.go:\d+(?: \+0x[0-9a-f]+)?$|^(?:[\w.-]+/)*[\w-]+(?:\.[\w-]+)*\.\(\*?\w+\)\.\w+(?:\(.*\))?$|^(?:[\w.-]+/)+[\w.-]+\.\w+\(.*\)$`)
)

var (
	firstPerson = regexp.MustCompile(`(?:^|\s)(?:I|I'm|I've|I'd|my|we|we're|we've|our|us)(?:[\s,.;:!?]|$)|^(?:My|We|We're|We've|Our)\s`)
	heading     = regexp.MustCompile(`^#{1,6}\s`)
	introduces  = regexp.MustCompile(`(?i)\b(?:the following|as follows|below)\b.*:$`)
	logHeader   = regexp.MustCompile(`^(?:[IWEF]\d{4} |\d{4}-\d\d-\d\d|\w{3} +\d+ \d\d:|time=|level=|[A-Z]{4,5}\[|\{|\[)`)
)

// reporterProse reports whether a line is a sentence of the ticket's own text: several
// words, not a log line's header, and written by someone who says "I" or "we" (or starts
// a sentence with "We", "Our"), who introduces the output below it, or who heads a part
// of the ticket ("## 3. Inside the same pod, the error …").
func reporterProse(l string) bool {
	if len(strings.Fields(l)) < 6 || logHeader.MatchString(l) {
		return false
	}
	return firstPerson.MatchString(l) || introduces.MatchString(l) || heading.MatchString(l)
}

var (
	family1 = regexp.MustCompile(`"(?:[^"\\]|\\.)*"|'[^']*'`)
	family2 = regexp.MustCompile(`\b[0-9a-f]{8,}\b|\b\d[\d.:/x-]*\b|\b[\w.-]+-[a-z0-9]{5}\b`)
	spaces  = regexp.MustCompile(`\s+`)
)

// family is a line with its values replaced, cut to its first words: lines of one family
// differ only in names, numbers and quoted values.
func family(line string) string {
	l := catalog.Layers(line)
	s := line
	if len(l) > 0 {
		s = l[0]
	}
	s = family1.ReplaceAllString(s, `"…"`)
	s = family2.ReplaceAllString(s, "#")
	s = spaces.ReplaceAllString(strings.TrimSpace(s), " ")
	if f := strings.Fields(s); len(f) > 10 {
		s = strings.Join(f[:10], " ") + " …"
	}
	return s
}

// source guesses who wrote a line, from the line or else the file it is in.
func source(file, line string) string {
	l := strings.ToLower(line)
	switch {
	case strings.Contains(l, "kubelet[") || strings.Contains(l, "kubelet:") || strings.Contains(file, "kubelet"):
		return "kubelet journal"
	case strings.Contains(l, "containerd[") || strings.Contains(file, "containerd"):
		return "containerd journal"
	case strings.Contains(l, "crio[") || strings.Contains(l, "cri-o"):
		return "cri-o journal"
	case strings.Contains(file, "journal") || strings.Contains(file, "systemctl"):
		return "other journal"
	case strings.Contains(file, "event"):
		return "events"
	case strings.Contains(file, "describe"):
		return "describe"
	case strings.Contains(file, "container") || strings.HasSuffix(file, ".log"):
		return "container log"
	case strings.Contains(file, "kubectl") || strings.Contains(file, "get-"):
		return "kubectl output"
	}
	return "other"
}

type tally struct{ lines, known int }

func run(dir string, top int, goal float64, list bool) error {
	c := catalog.Default()
	if err := catalog.Err(); err != nil {
		return err
	}
	cases, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	bySource := map[string]*tally{}
	byComponent := map[string]int{}
	families := map[string]int{}
	example := map[string]string{}
	var unknown []string    // every unrecognized line, with its file
	out := map[string]int{} // lines outside the measure, by why
	var outsideLines []string
	total := tally{}
	podPath := 0 // recognized by an entry of a pod-path component, not only the Go standard library
	for _, ce := range cases {
		if !ce.IsDir() {
			continue
		}
		files, err := os.ReadDir(filepath.Join(dir, ce.Name()))
		if err != nil {
			return err
		}
		for _, fe := range files {
			if fe.IsDir() || fe.Name() == "case.yaml" {
				continue
			}
			p := filepath.Join(dir, ce.Name(), fe.Name())
			f, err := os.Open(p)
			if err != nil {
				return err
			}
			var raw []string
			sc := bufio.NewScanner(f)
			sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
			for sc.Scan() {
				raw = append(raw, sc.Text())
			}
			err = sc.Err()
			f.Close()
			if err != nil {
				return fmt.Errorf("%s: %w", p, err)
			}
			for _, line := range messages(fe.Name(), raw) {
				line = strings.TrimSpace(line)
				if line == "" || !trouble(line) {
					continue
				}
				if why := outside(line); why != "" {
					out[why]++
					outsideLines = append(outsideLines, ce.Name()+"/"+fe.Name()+"\t"+why+"\t"+line)
					continue
				}
				src := source(fe.Name(), line)
				t := bySource[src]
				if t == nil {
					t = &tally{}
					bySource[src] = t
				}
				t.lines++
				total.lines++
				ms := c.Read(line)
				if len(ms) > 0 {
					t.known++
					total.known++
					byComponent[ms[0].Entry.Component]++
					for _, m := range ms {
						if m.Entry.Component != "go" {
							podPath++
							break
						}
					}
					continue
				}
				unknown = append(unknown, ce.Name()+"/"+fe.Name()+"\t"+src+"\t"+line)
				fam := family(line)
				families[fam]++
				if _, ok := example[fam]; !ok {
					example[fam] = ce.Name() + "/" + fe.Name()
				}
			}
		}
	}
	w := os.Stdout
	pct := func(a, b int) string {
		if b == 0 {
			return "-"
		}
		return fmt.Sprintf("%.1f %%", 100*float64(a)/float64(b))
	}
	fmt.Fprintf(w, "catalog coverage of %s: %d warning and error lines in the measure, %d recognized (%s; goal %.0f %%)\n\n",
		dir, total.lines, total.known, pct(total.known, total.lines), goal)
	nOut := 0
	for _, n := range out {
		nOut += n
	}
	fmt.Fprintf(w, "outside the measure (not a message a Pod-path component prints): %d lines:", nOut)
	for _, why := range []string{"command", "field", "application", "stack frame", "prose"} {
		fmt.Fprintf(w, " %s %d", why, out[why])
	}
	fmt.Fprint(w, "\n\n")
	fmt.Fprintf(w, "recognized by a Pod-path component (not only by a Go standard library error): %d (%s)\n\n",
		podPath, pct(podPath, total.lines))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "SOURCE\tLINES\tRECOGNIZED\tSHARE\t")
	var srcs []string
	for s := range bySource {
		srcs = append(srcs, s)
	}
	sort.Slice(srcs, func(i, j int) bool { return bySource[srcs[i]].lines > bySource[srcs[j]].lines })
	for _, s := range srcs {
		t := bySource[s]
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t\n", s, t.lines, t.known, pct(t.known, t.lines))
	}
	_ = tw.Flush()
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "COMPONENT (outermost match)\tLINES\t")
	var comps []string
	for k := range byComponent {
		comps = append(comps, k)
	}
	sort.Slice(comps, func(i, j int) bool {
		if byComponent[comps[i]] != byComponent[comps[j]] {
			return byComponent[comps[i]] > byComponent[comps[j]]
		}
		return comps[i] < comps[j]
	})
	for _, k := range comps {
		fmt.Fprintf(tw, "%s\t%d\t\n", k, byComponent[k])
	}
	_ = tw.Flush()
	if list {
		fmt.Fprintf(w, "\nUnrecognized lines (%d):\n", len(unknown))
		for _, u := range unknown {
			fmt.Fprintln(w, clip(u, 400))
		}
		fmt.Fprintf(w, "\nLines outside the measure (%d):\n", len(outsideLines))
		for _, u := range outsideLines {
			fmt.Fprintln(w, clip(u, 400))
		}
		return nil
	}
	var fams []string
	for k := range families {
		fams = append(fams, k)
	}
	sort.Slice(fams, func(i, j int) bool {
		if families[fams[i]] != families[fams[j]] {
			return families[fams[i]] > families[fams[j]]
		}
		return fams[i] < fams[j]
	})
	fmt.Fprintf(w, "\nBiggest unrecognized families (%d families):\n", len(fams))
	for i, k := range fams {
		if i == top {
			break
		}
		fmt.Fprintf(w, "%5d  %s\n       e.g. %s\n", families[k], clip(k, 150), example[k])
	}
	return nil
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// messages are the messages of a file's lines as podflow reads them: log lines with the
// lines that continue them joined (logline.JoinMessages: klog multi-line values, journal
// continuations, wrapped systemctl status lines) and, in a YAML file, a scalar that spans
// lines as one value, as the YAML decoder the import uses reads it.
func messages(name string, lines []string) []string {
	if ext := filepath.Ext(name); ext == ".yaml" || ext == ".yml" {
		lines = yamlScalars(lines)
	}
	ms := logline.JoinMessages(lines)
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.Text
	}
	return out
}

// yamlKey is a YAML mapping line with a value: its indentation, an optional list dash,
// its key and its value.
var yamlKey = regexp.MustCompile(`^(\s*(?:- )?)[A-Za-z_][\w.-]*:(?:\s+(.*))?$`)

// yamlScalars joins a scalar value continued on the lines below its key (a plain or
// quoted scalar, or a folded one after `>`), each continuation indented deeper than the
// key: YAML folds them into one line with spaces.
func yamlScalars(lines []string) []string {
	out := make([]string, 0, len(lines))
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		m := yamlKey.FindStringSubmatch(l)
		if m == nil {
			out = append(out, l)
			continue
		}
		indent := len(m[1])
		v := strings.TrimSpace(m[2])
		folded := v == ">" || v == ">-" || v == ">+"
		if v == "" || strings.HasPrefix(v, "|") || strings.HasPrefix(v, "{") || strings.HasPrefix(v, "[") || strings.HasPrefix(v, "&") {
			out = append(out, l)
			continue
		}
		joined := l
		if folded {
			joined = strings.TrimRight(l[:len(l)-len(m[2])], " ")
		}
		open := quoteOpen(v)
		j := i + 1
		for ; j < len(lines); j++ {
			n := lines[j]
			t := strings.TrimSpace(n)
			in := len(n) - len(strings.TrimLeft(n, " "))
			if t == "" || in <= indent || !open && (yamlKey.MatchString(n) || strings.HasPrefix(t, "- ") || strings.HasPrefix(t, "#")) {
				break
			}
			joined += " " + t
			if open {
				open = quoteOpen(strings.TrimSpace(joined[len(l)-len(m[2]):]))
			}
		}
		out = append(out, joined)
		for k := i + 1; k < j; k++ {
			out = append(out, "") // keep the line count: the continuations joined above
		}
		i = j - 1
	}
	return out
}

// quoteOpen reports whether a YAML value starts a quoted scalar its text does not close.
func quoteOpen(v string) bool {
	if v == "" || v[0] != '\'' && v[0] != '"' {
		return false
	}
	q := v[0]
	for i := 1; i < len(v); i++ {
		switch {
		case q == '"' && v[i] == '\\':
			i++
		case v[i] == q && q == '\'' && i+1 < len(v) && v[i+1] == '\'':
			i++
		case v[i] == q:
			return false
		}
	}
	return true
}
