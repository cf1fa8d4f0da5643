package analyze_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"podflow.dev/podflow/analyze"
	"podflow.dev/podflow/rules"
)

// Hostile bundle text: a pod name that retitles the terminal, and a pull error whose
// message forges a line of its own, clears the screen and carries HTML and Markdown.
const (
	hostilePod = "web-\x1b]0;PWNED\x07x"
	hostileMsg = "dial tcp: lookup registry.example on 10.0.2.3:53: no such host\x1b[2J\nFORGED: all pods healthy\r <script>alert(1)</script> [link](http://evil.example) *bold*"
)

func hostileReport(t *testing.T) *analyze.Report {
	t.Helper()
	g := load(t, map[string]any{
		"cluster-resources/nodes.json": list(nodeObj("n1", "True")),
		"cluster-resources/pods/shop.json": list(pullFailing("shop", hostilePod, "n1", hostileMsg),
			pullFailing("shop", "api\nFORGED-pod", "n1", hostileMsg)),
	})
	rep := analyze.Run(g, rules.All(), analyze.Options{Timelines: true})
	if len(rep.Findings) == 0 {
		t.Fatal("the hostile bundle gives no finding; the test would check nothing")
	}
	return rep
}

func TestHumanFormatsEscapeBundleText(t *testing.T) {
	rep := hostileReport(t)
	for _, tc := range []struct {
		name   string
		format string
		opts   analyze.RenderOptions
		want   []string
		// markup is true for formats a viewer interprets, where a tag must not be live.
		markup bool
	}{
		{"piped table", analyze.FormatTable, analyze.RenderOptions{Timelines: true}, []string{`web-\x1b]0;PWNED\ax`, `api\nFORGED-pod`}, false},
		{"fitted table", analyze.FormatTable, analyze.RenderOptions{Width: 90, Unicode: true, Timelines: true}, []string{`web-\x1b]0;PWNED\ax`}, false},
		{"stacked table", analyze.FormatTable, analyze.RenderOptions{Width: 40, Verbose: true}, []string{`web-\x1b]0;PWNED\ax`}, false},
		{"markdown", analyze.FormatMarkdown, analyze.RenderOptions{Timelines: true}, []string{`web-\x1b\]0;PWNED\ax`, `&lt;script&gt;`, `\[link\]`}, true},
		{"html", analyze.FormatHTML, analyze.RenderOptions{}, []string{`web-\x1b]0;PWNED\ax`, `&lt;script&gt;alert(1)&lt;/script&gt;`}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			if err := analyze.Render(&out, rep, tc.format, tc.opts); err != nil {
				t.Fatal(err)
			}
			got := out.String()
			for _, c := range got {
				if (c < 0x20 && c != '\n') || c == 0x7f || (c >= 0x80 && c < 0xa0) {
					t.Fatalf("control character %U reaches the output:\n%s", c, got)
				}
			}
			for _, line := range strings.Split(got, "\n") {
				if strings.HasPrefix(strings.TrimLeft(line, " |"), "FORGED") {
					t.Errorf("a forged line starts a line of output: %q", line)
				}
			}
			if tc.markup && strings.Contains(got, "<script>") {
				t.Error("a tag from the bundle is live in the output")
			}
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("output lacks %q:\n%s", w, got)
				}
			}
		})
	}
}

func TestJSONKeepsBundleTextExact(t *testing.T) {
	rep := hostileReport(t)
	var out bytes.Buffer
	if err := analyze.Render(&out, rep, analyze.FormatJSON, analyze.RenderOptions{}); err != nil {
		t.Fatal(err)
	}
	var back analyze.Report
	if err := json.Unmarshal(out.Bytes(), &back); err != nil {
		t.Fatalf("report is not JSON: %v", err)
	}
	found := false
	for _, f := range back.Findings {
		for _, s := range f.Subjects {
			found = found || s.Name == hostilePod
		}
		for _, e := range f.Evidence {
			if strings.Contains(e.Excerpt, "\x1b[2J\nFORGED") {
				found = true
			}
		}
	}
	if !found {
		t.Error("JSON does not carry the bundle's text unchanged (a reader unescapes it itself)")
	}
}
