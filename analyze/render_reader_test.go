package analyze_test

import (
	"bytes"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"podflow.dev/podflow/analyze"
	"podflow.dev/podflow/rules"
)

// pastedReport is the report of a paste that named pod shop/web-1 and held no owner,
// Service or claim: eleven rules had nothing to read.
func pastedReport() *analyze.Report {
	return &analyze.Report{
		Bundles: []analyze.BundleInfo{{Source: "ticket.txt", Imported: "loose"}},
		Pods:    []analyze.PodReport{{Namespace: "shop", Name: "web-1"}},
		Findings: []*analyze.Finding{{ID: "runtime#1", Root: true, Stage: analyze.StageRuntime, Severity: analyze.SeverityError,
			Title: "t", Cause: `container app exits; its last error line is "error: relation \"orders\" does not exist"`,
			Subjects: []analyze.ObjectRef{{Kind: "Pod", Namespace: "shop", Name: "web-1"}}}},
		Skipped: []analyze.SkippedRule{
			{Rule: "controller-rollout-stuck", Reason: "needs deployments: not in bundle (cluster-resources/deployments/<namespace>.json)",
				Missing: []analyze.Kind{analyze.Deployments, analyze.ReplicaSets}},
			{Rule: "node-not-ready", Reason: "needs node objects: not in bundle (cluster-resources/nodes.json)", Missing: []analyze.Kind{analyze.Nodes}},
		},
		Warnings: []analyze.Warning{{Path: "ticket.txt", Message: "imported as loose; evidence this input does not hold: kubelet journals"}},
	}
}

func render(t *testing.T, r *analyze.Report, format string, opts analyze.RenderOptions) string {
	t.Helper()
	var out bytes.Buffer
	if err := analyze.Render(&out, r, format, opts); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

func TestAPasteClosesWithOneLineAndSaysWhatToPaste(t *testing.T) {
	r := pastedReport()
	const line = "2 rules had no evidence to read, 1 load warning; `-v` says what to paste."
	for _, tc := range []struct {
		name, format string
		opts         analyze.RenderOptions
	}{
		{"fitted", analyze.FormatTable, analyze.RenderOptions{Width: 80}},
		{"piped", analyze.FormatTable, analyze.RenderOptions{}},
		{"markdown", analyze.FormatMarkdown, analyze.RenderOptions{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := render(t, r, tc.format, tc.opts)
			if !strings.Contains(got, line) {
				t.Errorf("the report does not close with %q:\n%s", line, got)
			}
			for _, banned := range []string{"Rules skipped", "controller-rollout-stuck", "cluster-resources/", "Load warnings"} {
				if strings.Contains(got, banned) {
					t.Errorf("without -v the report lists %q:\n%s", banned, got)
				}
			}
			if tc.opts.Width > 0 {
				if n := strings.Count(got, "\n"); n > 15 {
					t.Errorf("a one-finding paste's answer is %d lines at 80 columns:\n%s", n, got)
				}
			}
			tc.opts.Verbose = true
			got = render(t, r, tc.format, tc.opts)
			flat := strings.Join(strings.Fields(got), " ")
			for _, want := range []string{"kubectl get deployments,replicasets -n shop -o yaml", "kubectl describe node NODE", "imported as loose"} {
				if !strings.Contains(flat, want) {
					t.Errorf("-v does not say %q:\n%s", want, got)
				}
			}
			if strings.Contains(got, "cluster-resources/") {
				t.Errorf("-v tells someone who holds a paste about bundle paths:\n%s", got)
			}
			tc.opts.Verbose, tc.opts.Quiet = false, true
			got = render(t, r, tc.format, tc.opts)
			if strings.Contains(got, "no evidence to read") || !strings.Contains(got, "orders") {
				t.Errorf("-q should print the findings only:\n%s", got)
			}
		})
	}
	// A collected bundle keeps its paths under -v: its reader can look there.
	r.Bundles[0].Imported = ""
	got := render(t, r, analyze.FormatTable, analyze.RenderOptions{Width: 100, Verbose: true})
	if !strings.Contains(got, "cluster-resources/deployments/<namespace>.json") || strings.Contains(got, "what to paste") {
		t.Errorf("a bundle's skipped rules should name its paths:\n%s", got)
	}
}

func TestHTMLFoldsWhatWasNotRead(t *testing.T) {
	r := pastedReport()
	page := render(t, r, analyze.FormatHTML, analyze.RenderOptions{})
	if !strings.Contains(page, `<details class="trailer" id="not-read">`) || !strings.Contains(page, "listed below") {
		t.Errorf("the closing sections are not folded under one line:\n%s", page)
	}
	if page := render(t, r, analyze.FormatHTML, analyze.RenderOptions{Verbose: true}); !strings.Contains(page, `id="not-read" open>`) {
		t.Error("-v does not open the closing sections")
	}
	if page := render(t, r, analyze.FormatHTML, analyze.RenderOptions{Quiet: true}); strings.Contains(page, "Rules skipped") {
		t.Error("-q keeps the closing sections")
	}
}

func TestCausesShowQuotesUnescapedAndStaySafe(t *testing.T) {
	r := pastedReport()
	r.Findings[0].Cause += " \x1b[2J"
	for _, tc := range []struct{ format, want string }{
		{analyze.FormatTable, `relation "orders" does not exist`},
		{analyze.FormatMarkdown, `relation "orders" does not exist`},
		{analyze.FormatHTML, `relation &#34;orders&#34; does not exist`},
	} {
		got := render(t, r, tc.format, analyze.RenderOptions{Width: 200})
		if !strings.Contains(got, tc.want) || strings.Contains(got, `\"orders\"`) || strings.Contains(got, `\&#34;orders`) {
			t.Errorf("%s: the cause's quotes are not shown as quotes (want %q):\n%s", tc.format, tc.want, got)
		}
		if strings.Contains(got, "\x1b") || !strings.Contains(got, `\x1b`) {
			t.Errorf("%s: a control character reaches the output unescaped", tc.format)
		}
	}
	// The structured formats keep the text as read.
	if got := render(t, r, analyze.FormatJSON, analyze.RenderOptions{}); !strings.Contains(got, `relation \\\"orders\\\"`) {
		t.Errorf("JSON changed the cause's text:\n%s", got)
	}
}

func TestHTMLOpensWithASummaryAndATitle(t *testing.T) {
	rep := sampleReport(t)
	page := render(t, rep, analyze.FormatHTML, analyze.RenderOptions{})
	title := regexp.MustCompile(`<title>([^<]*)</title>`).FindStringSubmatch(page)
	if title == nil || title[1] != "podflow: namespace shop · collected 2026-11-29 10:15 UTC" {
		t.Errorf("title = %q, want the namespace and the collection time", title)
	}
	summary := strings.Index(page, `id="summary"`)
	findings := strings.Index(page, `id="findings"`)
	if summary < 0 || findings < 0 || summary > findings {
		t.Fatalf("no summary table above the findings")
	}
	rows := regexp.MustCompile(`(?s)<tr(?: class="consequence")?><td>(?:↳ )?(\w+)</td><td><span class="sev sev-(\w+)">.*?<a href="#([^"]+)"`).FindAllStringSubmatch(page[summary:findings], -1)
	if len(rows) != len(rep.Findings) {
		t.Fatalf("summary has %d rows for %d findings", len(rows), len(rep.Findings))
	}
	for _, row := range rows {
		id, _ := url.PathUnescape(row[3])
		f := rep.Finding(id)
		if f == nil || string(f.Stage) != row[1] || string(f.Severity) != row[2] {
			t.Errorf("summary row %v does not match its finding", row[1:])
		}
	}
	for _, want := range []string{"print-color-adjust: exact", ".stage.st-not-applicable { display: none; }", "flex-wrap: nowrap"} {
		if !strings.Contains(page, want) {
			t.Errorf("print CSS lacks %q", want)
		}
	}
}

// chainOf reads a pod's chain from an HTML page: stage=status pairs in order.
func chainOf(t *testing.T, page, pod string) []string {
	t.Helper()
	i := strings.Index(page, `data-pod="`+pod+`"`)
	if i < 0 {
		t.Fatalf("no chain for %s", pod)
	}
	block := page[i:]
	if j := strings.Index(block[1:], `<div class="pod"`); j > 0 {
		block = block[:j]
	}
	var out []string
	for _, m := range regexp.MustCompile(`data-stage="([a-z]+)" data-status="([a-z-]+)"`).FindAllStringSubmatch(block, -1) {
		out = append(out, m[1]+"="+m[2])
	}
	return out
}

func TestAnalyzeAndExplainHTMLShowTheSameChain(t *testing.T) {
	g := load(t, map[string]any{
		"cluster-resources/nodes.json":     list(nodeObj("n1", "True")),
		"cluster-resources/pods/shop.json": list(pullFailing("shop", "web-1", "n1", dnsError)),
	})
	rep := analyze.Run(g, rules.All(), analyze.Options{})
	page := render(t, rep, analyze.FormatHTML, analyze.RenderOptions{})
	analyzed := chainOf(t, page, "shop/web-1")
	// Both read the node's health, as explain always did.
	if !strings.Contains(page, `title="node: node n1 is Ready"`) {
		t.Errorf("analyze's chain does not read the node's health")
	}
	x, err := analyze.Explain(g, rules.All(), "shop", "web-1", analyze.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := analyze.RenderExplanation(&out, x, analyze.FormatHTML, analyze.RenderOptions{}); err != nil {
		t.Fatal(err)
	}
	explained := chainOf(t, out.String(), "shop/web-1")
	if strings.Join(analyzed, " ") != strings.Join(explained, " ") {
		t.Errorf("the chains differ:\nanalyze %v\nexplain %v", analyzed, explained)
	}
	var text []string
	for _, v := range x.Stages {
		text = append(text, string(v.Stage)+"="+v.Status)
	}
	if strings.Join(text, " ") != strings.Join(explained, " ") {
		t.Errorf("explain's text and HTML differ:\ntext %v\nhtml %v", text, explained)
	}
	for _, s := range explained {
		if s == "node=not-reached" || s == "scheduling=pending" || s == "sandbox=pending" {
			t.Errorf("a stage the pod went past reads %s", s)
		}
	}
}

func TestExplainTextFitsTheWidth(t *testing.T) {
	_, x, _ := explainPullFailing(t, "text")
	var out bytes.Buffer
	if err := analyze.RenderExplanation(&out, x, "text", analyze.RenderOptions{Width: 60}); err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(out.String(), "\n") {
		if n := len([]rune(l)); n > 60 && !strings.Contains(l, ".json") {
			t.Errorf("line of %d columns at width 60: %q", n, l)
		}
	}
	if !strings.Contains(out.String(), "cluster-resources/nodes.json") && !strings.Contains(out.String(), "c/nodes.json") {
		t.Errorf("the node's file is not cited:\n%s", out.String())
	}
	out.Reset()
	if err := analyze.RenderExplanation(&out, x, "text", analyze.RenderOptions{Width: 100, Color: true}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "\x1b[1m\x1b[31mbroken") {
		t.Errorf("a broken stage is not coloured on a terminal:\n%q", out.String())
	}
}

func TestExcerptKeepsTheDecisiveWords(t *testing.T) {
	msg := `Failed to pull image "registry.podflow-e2e.invalid/shop/app:1.0": failed to pull and unpack image "registry.podflow-e2e.invalid/shop/app:1.0": failed to resolve reference "registry.podflow-e2e.invalid/shop/app:1.0": failed to do request: Head "https://registry.podflow-e2e.invalid/v2/shop/app/manifests/1.0": dial tcp: lookup registry.podflow-e2e.invalid on 10.255.255.53:53: no such host, retrying with a longer backoff and some more words that pad this line out`
	got := analyze.ExcerptAround(msg, "lookup registry.podflow-e2e.invalid")
	if !strings.Contains(got, "no such host") {
		t.Errorf("the excerpt lost the reason: %q", got)
	}
	if strings.HasSuffix(strings.TrimSuffix(got, "…"), "ho") {
		t.Errorf("the excerpt ends inside a word: %q", got)
	}
}

func TestLongNamesNeverBreakTheFittedLayout(t *testing.T) {
	r := pastedReport()
	long := "checkout-7d9f8b6c5d-4xk2p-with-a-very-long-generated-suffix-abcdef"
	r.Findings[0].Subjects = []analyze.ObjectRef{{Kind: "Pod", Namespace: "shop", Name: long}}
	r.Findings[0].Cause = "pod shop/" + long + " is broken in pod " + long + "_shop(0c6d1e2f)"
	for width := 20; width <= 140; width += 7 {
		got := render(t, r, analyze.FormatTable, analyze.RenderOptions{Width: width})
		if !strings.Contains(got, long) {
			t.Errorf("width %d: the pod's name is split:\n%s", width, got)
		}
	}
}
