package analyze_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
	for _, tc := range []struct{ format, file string }{
		{analyze.FormatTable, "report.txt"},
		{analyze.FormatMarkdown, "report.md"},
	} {
		var out bytes.Buffer
		if err := analyze.Render(&out, rep, tc.format, analyze.RenderOptions{Timelines: true}); err != nil {
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

func TestExplainTextCitesFiles(t *testing.T) {
	g := load(t, map[string]any{
		"cluster-resources/nodes.json":     list(nodeObj("n1", "Unknown")),
		"cluster-resources/pods/shop.json": list(pullFailing("shop", "web-1", "n1", dnsError)),
	})
	x, err := analyze.Explain(g, []*analyze.Rule{nodeNotReady, rules.ImagePullDNS}, "shop", "web-1", analyze.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := analyze.RenderExplanation(&out, x, "text"); err != nil {
		t.Fatal(err)
	}
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
