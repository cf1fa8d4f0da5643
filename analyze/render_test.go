package analyze_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"html/template"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"podflow.dev/podflow/analyze"
	"podflow.dev/podflow/bundle"
	"podflow.dev/podflow/rules"
)

var update = flag.Bool("update", false, "rewrite testdata/render golden files")

// sampleReport covers every part of a report: a root cause with a consequence, a grouped
// finding, a skipped rule, coverage gaps, a load warning, two bundles and timelines.
func sampleReport(t *testing.T) *analyze.Report {
	t.Helper()
	cluster := memBundle(t, map[string]any{
		"podflow.json":                 `{"formatVersion": "1.0", "collectedAt": "2026-11-29T10:15:00Z", "cluster": {"clockSkewSeconds": 1.5}}`,
		"cluster-resources/nodes.json": list(nodeObj("n1", "Unknown"), nodeObj("n2", "True")),
		"cluster-resources/pods/shop.json": list(pullFailing("shop", "web-1", "n1", dnsError),
			pullFailing("shop", "api-7c9d-aaaaa", "n2", dnsError), pullFailing("shop", "api-7c9d-bbbbb", "n2", dnsError)),
		"cluster-resources/events/shop.json": "{not json",
	})
	node := memBundle(t, map[string]any{
		"nodes/n2/kubelet.log": `2026-11-29T10:00:04+0000 n2 kubelet[9]: E1129 10:00:04.000000       9 pod_workers.go:1338] "Error syncing pod, skipping" err="failed to \"StartContainer\" for \"app\" with ErrImagePull: \"dial tcp: lookup registry.example on 10.0.2.3:53: no such host\"" pod="shop/api-7c9d-aaaaa" podUID="uid-api-7c9d-aaaaa"` + "\n",
	})
	cluster.Source, node.Source = "cluster.tar.gz", "node-n2.tar.gz"
	g := analyze.Load([]*bundle.Bundle{cluster, node}, nil)
	all := append([]*analyze.Rule{nodeNotReady}, rules.All()...)
	return analyze.Run(g, all, analyze.Options{Timelines: true, PodflowVersion: "test"})
}

func TestReportJSONMatchesSchema(t *testing.T) {
	schemaFile := filepath.Join("..", "docs", "report-schema.json")
	f, err := os.Open(schemaFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatalf("%s: %v", schemaFile, err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource("report-schema.json", doc); err != nil {
		t.Fatal(err)
	}
	schema, err := c.Compile("report-schema.json")
	if err != nil {
		t.Fatalf("compile %s: %v", schemaFile, err)
	}
	rep := sampleReport(t)
	if len(rep.Findings) < 2 || len(rep.Warnings) == 0 || len(rep.Gaps) == 0 || len(rep.Pods) == 0 {
		t.Fatalf("sample report does not exercise the schema: %+v", rep.Summary)
	}
	var out bytes.Buffer
	if err := analyze.Render(&out, rep, analyze.FormatJSON, analyze.RenderOptions{}); err != nil {
		t.Fatal(err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(out.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if err := schema.Validate(inst); err != nil {
		t.Fatalf("report does not match %s: %v", schemaFile, err)
	}
	// The schema must reject what it promises readers will not see.
	var broken map[string]any
	if err := json.Unmarshal(out.Bytes(), &broken); err != nil {
		t.Fatal(err)
	}
	delete(broken["findings"].([]any)[0].(map[string]any), "cause")
	if err := schema.Validate(broken); err == nil {
		t.Error("the schema accepts a finding without a cause")
	}
}

func TestRenderedReportsAreStable(t *testing.T) {
	rep := sampleReport(t)
	for _, tc := range []struct {
		format, file string
		opts         analyze.RenderOptions
	}{
		// Piped: the layout depends on no width.
		{analyze.FormatTable, "report.txt", analyze.RenderOptions{Timelines: true}},
		// A terminal of 80 and one of 48 columns (stacked), and --wide on a terminal.
		{analyze.FormatTable, "report-80.txt", analyze.RenderOptions{Width: 80, Unicode: true}},
		{analyze.FormatTable, "report-48.txt", analyze.RenderOptions{Width: 48, Unicode: true}},
		{analyze.FormatTable, "report-wide.txt", analyze.RenderOptions{Width: 80, Unicode: true, Wide: true}},
		{analyze.FormatMarkdown, "report.md", analyze.RenderOptions{Timelines: true}},
		// -v lists what the evidence could not answer; -q leaves even its line out.
		{analyze.FormatTable, "report-80-verbose.txt", analyze.RenderOptions{Width: 80, Unicode: true, Verbose: true}},
		{analyze.FormatTable, "report-80-quiet.txt", analyze.RenderOptions{Width: 80, Unicode: true, Quiet: true}},
		{analyze.FormatMarkdown, "report-verbose.md", analyze.RenderOptions{Verbose: true}},
	} {
		var out bytes.Buffer
		if err := analyze.Render(&out, rep, tc.format, tc.opts); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join("testdata", "render", tc.file)
		if *update {
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (go test ./analyze -update writes it)", err)
		}
		if got := out.String(); got != string(want) {
			t.Errorf("%s changed (go test ./analyze -update rewrites it); got:\n%s", path, got)
		}
	}
}

// explainPullFailing renders the explanation of a pod whose image pull fails on DNS,
// on a node whose health is Unknown.
func explainPullFailing(t *testing.T, format string) (*analyze.Graph, *analyze.Explanation, *bytes.Buffer) {
	t.Helper()
	g := load(t, map[string]any{
		"cluster-resources/nodes.json":     list(nodeObj("n1", "Unknown")),
		"cluster-resources/pods/shop.json": list(pullFailing("shop", "web-1", "n1", dnsError)),
	})
	x, err := analyze.Explain(g, []*analyze.Rule{nodeNotReady, rules.ImagePullDNS}, "shop", "web-1", analyze.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := analyze.RenderExplanation(&out, x, format, analyze.RenderOptions{}); err != nil {
		t.Fatal(err)
	}
	return g, x, &out
}

func TestExplainTextCitesFiles(t *testing.T) {
	g, _, out := explainPullFailing(t, "text")
	for _, want := range []string{
		"Root cause: [node] node n1 is NotReady (node-not-ready-test#1)",
		"node         broken         node n1 is NotReady",
		"cluster-resources/nodes.json:/items/0/status/conditions/0",
		"image        broken         image \"registry.example/app:1\" cannot be pulled",
		"missing: kubelet journal for node n1: not in bundle",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("explanation lacks %q:\n%s", want, out.String())
		}
	}
	if _, err := analyze.Explain(g, nil, "shop", "nope", analyze.Options{}); err == nil || err.Error() != "pod shop/nope is not in the bundle (check the namespace and name, or the collection scope)" {
		t.Errorf("missing pod error = %v", err)
	}
}

func TestFittedTableStaysWithinTheTerminal(t *testing.T) {
	rep := sampleReport(t)
	for _, width := range []int{48, 60, 80, 100, 132, 200} {
		var out bytes.Buffer
		if err := analyze.Render(&out, rep, analyze.FormatTable, analyze.RenderOptions{Width: width, Unicode: true}); err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(out.String(), "\n") {
			if n := utf8.RuneCountInString(line); n > width {
				t.Errorf("width %d: line of %d columns: %q", width, n, line)
			}
		}
	}
}

func TestSubjectLinesPutPodsFirstThenWorkloads(t *testing.T) {
	pod := func(name string) analyze.ObjectRef {
		return analyze.ObjectRef{Kind: "Pod", Namespace: "shop", Name: name}
	}
	for _, tc := range []struct {
		name     string
		f        analyze.Finding
		subjects []string
		involved []string
	}{{
		name: "replicas of a Deployment, with their ReplicaSet and a quota",
		f: analyze.Finding{Cause: "pods wait", Subjects: []analyze.ObjectRef{
			{Kind: "ResourceQuota", Namespace: "shop", Name: "compute"},
			pod("web-7d9f-aaaaa"), pod("web-7d9f-bbbbb"), pod("web-7d9f-ccccc"),
			{Kind: "ReplicaSet", Namespace: "shop", Name: "web-7d9f"},
			{Kind: "Deployment", Namespace: "shop", Name: "web"},
		}},
		subjects: []string{"shop/web-7d9f-* (3 pods)", "Deployment shop/web: 3 pods"},
		involved: []string{"ResourceQuota shop/compute"},
	}, {
		name: "a refused rollout: no pods, the quota named in the cause",
		f: analyze.Finding{Cause: "ResourceQuota shop/compute refuses the pods of Deployment shop/web", Subjects: []analyze.ObjectRef{
			{Kind: "Deployment", Namespace: "shop", Name: "web"},
			{Kind: "ReplicaSet", Namespace: "shop", Name: "web-699768d496"},
			{Kind: "ResourceQuota", Namespace: "shop", Name: "compute"},
		}},
		subjects: []string{"Deployment shop/web"},
	}, {
		name:     "a node with no pods bound",
		f:        analyze.Finding{Cause: "node n1 is NotReady", Subjects: []analyze.ObjectRef{{Kind: "Node", Name: "n1"}}},
		subjects: []string{"Node n1"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			if got := analyze.SubjectLines(&tc.f); !slices.Equal(got, tc.subjects) {
				t.Errorf("subjects = %q, want %q", got, tc.subjects)
			}
			if got := analyze.Involved(&tc.f); !slices.Equal(got, tc.involved) {
				t.Errorf("involved = %q, want %q", got, tc.involved)
			}
		})
	}
}

func TestHTMLReportIsSelfContainedAndComplete(t *testing.T) {
	rep := sampleReport(t)
	var out bytes.Buffer
	if err := analyze.Render(&out, rep, analyze.FormatHTML, analyze.RenderOptions{}); err != nil {
		t.Fatal(err)
	}
	page := out.String()
	for _, banned := range []string{"<script", "<link", "src=", "@import", `href="http`, "url("} {
		if strings.Contains(page, banned) {
			t.Errorf("the page refers to something outside itself (%s)", banned)
		}
	}
	want := []string{"Rules skipped", "Stages without full evidence", "Load warnings", "@media print"}
	for _, f := range rep.Findings {
		want = append(want, `id="`+f.ID+`"`, template.HTMLEscapeString(f.Remediation))
		for _, c := range f.Confirm {
			want = append(want, template.HTMLEscapeString(c))
		}
		for _, e := range f.Evidence {
			want = append(want, template.HTMLEscapeString(e.Location.String()))
		}
	}
	for _, p := range rep.Pods {
		want = append(want, `data-pod="`+p.Namespace+"/"+p.Name+`"`)
	}
	want = append(want, `data-stage="node" data-status="broken"`, `data-stage="image" data-status="broken"`, `data-status="not-reached"`)
	for _, w := range want {
		if !strings.Contains(page, w) {
			t.Errorf("the page lacks %q", w)
		}
	}
}

// TestExplainHTMLShowsTheWalkedChain renders an explanation as HTML: its chain is the
// one explain walked, the node's health included, box by box; names are escaped.
func TestExplainHTMLShowsTheWalkedChain(t *testing.T) {
	_, x, out := explainPullFailing(t, analyze.FormatHTML)
	html := out.String()
	for _, v := range x.Stages {
		box := fmt.Sprintf(`data-stage="%s" data-status="%s"`, v.Stage, v.Status)
		if !strings.Contains(html, box) {
			t.Errorf("HTML lacks the %s box (%s)", v.Stage, v.Status)
		}
	}
	for _, want := range []string{
		`data-pod="shop/web-1"`,
		"cluster-resources/nodes.json:/items/0/status/conditions/0",
		`id="` + x.RootCause.ID + `"`,
	} {
		if !strings.Contains(html, want) {
			t.Errorf("HTML lacks %q", want)
		}
	}
	if strings.Count(html, `<div class="pod"`) != 1 {
		t.Errorf("want the one pod's chain, got %d", strings.Count(html, `<div class="pod"`))
	}
}
