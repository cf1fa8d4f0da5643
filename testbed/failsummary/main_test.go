package main

import (
	"strings"
	"testing"
)

// A failed subtest's own lines reach the summary at the end, after everything else, even
// when parallel tests interleaved their output; passed tests and framing stay out of it.
func TestSummaryEndsWithTheFailedTestsAndTheirLines(t *testing.T) {
	in := strings.Join([]string{
		`go: downloading something`,
		`{"Action":"run","Test":"TestScenarios"}`,
		`{"Action":"output","Test":"TestScenarios/collect/a","Output":"=== RUN   TestScenarios/collect/a\n"}`,
		`{"Action":"output","Test":"TestScenarios/collect/a/serve","Output":"    servelive.go:771: serve differs from the live server: GET /x: cells\n"}`,
		`{"Action":"output","Test":"TestScenarios/collect/b","Output":"    scenarios_test.go:408: scenario b collected\n"}`,
		`{"Action":"output","Test":"TestScenarios/collect/a/serve","Output":"--- FAIL: TestScenarios/collect/a/serve (3.00s)\n"}`,
		`{"Action":"fail","Test":"TestScenarios/collect/a/serve"}`,
		`{"Action":"pass","Test":"TestScenarios/collect/b"}`,
		`{"Action":"fail","Test":"TestScenarios/collect/a"}`,
		`{"Action":"fail","Test":"TestScenarios/collect"}`,
		`{"Action":"fail","Test":"TestScenarios"}`,
		`{"Action":"output","Output":"FAIL\tpodflow.dev/podflow/testbed/e2e\t3.1s\n"}`,
		`{"Action":"fail"}`,
	}, "\n")
	var out strings.Builder
	failed, err := summarize(strings.NewReader(in), &out)
	if err != nil || !failed {
		t.Fatalf("failed=%v err=%v", failed, err)
	}
	got := out.String()
	if !strings.HasPrefix(got, "go: downloading something\n=== RUN") {
		t.Errorf("the output is not passed through first:\n%s", got)
	}
	_, summary, ok := strings.Cut(got, "==== summary: 4 failed test(s)")
	if !ok {
		t.Fatalf("no summary:\n%s", got)
	}
	for _, want := range []string{"---- TestScenarios/collect/a/serve\n", "servelive.go:771: serve differs from the live server", "==== failed:\n     TestScenarios/collect/a/serve"} {
		if !strings.Contains(summary, want) {
			t.Errorf("summary lacks %q:\n%s", want, summary)
		}
	}
	for _, not := range []string{"collected", "---- TestScenarios/collect/a\n", "--- FAIL"} {
		if strings.Contains(summary, not) {
			t.Errorf("summary holds %q:\n%s", not, summary)
		}
	}
}

func TestNoSummaryWhenAllPass(t *testing.T) {
	in := `{"Action":"output","Test":"TestA","Output":"ok\n"}` + "\n" + `{"Action":"pass","Test":"TestA"}` + "\n" + `{"Action":"pass"}`
	var out strings.Builder
	failed, err := summarize(strings.NewReader(in), &out)
	if err != nil || failed {
		t.Fatalf("failed=%v err=%v", failed, err)
	}
	if out.String() != "ok\n" {
		t.Errorf("output %q", out.String())
	}
}

// A long failed test keeps its last lines, and says how many it left out.
func TestSummaryKeepsTheLastLines(t *testing.T) {
	var b strings.Builder
	for i := range 100 {
		b.WriteString(`{"Action":"output","Test":"TestA","Output":"line ` + strings.Repeat("x", i%3) + "\\n\"}\n")
	}
	b.WriteString(`{"Action":"output","Test":"TestA","Output":"the reason\n"}` + "\n")
	b.WriteString(`{"Action":"fail","Test":"TestA"}` + "\n")
	var out strings.Builder
	if _, err := summarize(strings.NewReader(b.String()), &out); err != nil {
		t.Fatal(err)
	}
	_, summary, _ := strings.Cut(out.String(), "==== summary")
	if !strings.Contains(summary, "(61 earlier lines left out)") || !strings.Contains(summary, "the reason\n==== failed:") {
		t.Errorf("summary:\n%s", summary)
	}
}
