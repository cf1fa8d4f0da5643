package index

import (
	"context"
	"testing"
	"time"

	"podflow.dev/podflow/analyze"
)

const dbSignatures = `- id: app-db-refused
  stage: runtime
  title: the program cannot reach its database
  component: application
  patterns: ['connection refused.*:(?P<port>5432|3306)\b']
  cause: the program cannot reach its database on port {port}
  fix: start the database first
  fingerprint: [port]
  examples:
    fires: ['dial tcp 10.0.0.7:5432: connect: connection refused to db:5432']
    quiet: ['connection reset by peer']
- id: app-cache-refused
  stage: runtime
  title: the program cannot reach its cache
  component: application
  patterns: ['redis: connection refused by the cache at port 7000']
  cause: the program cannot reach its cache
  fix: start the cache first
  examples:
    fires: ['redis: connection refused by the cache at port 7000']
    quiet: ['redis: ok']
`

// TestReanalyzeSignatures runs a new signature (app-db-refused) and a changed one
// (app-cache-refused, whose recorded findings no longer match) over the stored lines:
// the changed tickets get a new analysis under a new knowledge version, the old ones
// stay, and the counts over the index say what changed.
func TestReanalyzeSignatures(t *testing.T) {
	for _, tg := range targets(t) {
		t.Run(tg.name, func(t *testing.T) { testReanalyzeSignatures(t, tg) })
	}
}

func testReanalyzeSignatures(t *testing.T, tg target) {
	ctx := context.Background()
	s, err := Open(ctx, tg.url, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	sigs, err := analyze.ParseSignatures("db.yaml", []byte(dbSignatures))
	if err != nil {
		t.Fatal(err)
	}
	seen := time.Date(2026, 10, 3, 0, 0, 0, 0, time.UTC)
	add := func(digest, ticket string, fs ...*analyze.Finding) {
		t.Helper()
		if _, _, err := s.Add(ctx, Ticket{Digest: digest, Ticket: ticket, InputKind: "bundle", SeenAt: seen},
			Analysis{PodflowVersion: "test", Knowledge: "k1", Findings: fs}); err != nil {
			t.Fatal(err)
		}
	}
	unexplained := func(pod, line string) *analyze.Finding {
		f := finding(analyze.UnexplainedRule, analyze.StageRuntime, "the container reports "+line+"; no podflow rule or signature knows this evidence", "shop", pod, line)
		return f
	}
	// T-1 and T-2: nothing explains them; their lines name two database ports.
	add("d1", "T-1", unexplained("api-1", "dial tcp 10.1.0.9:5432: connect: connection refused to pg:5432"))
	add("d2", "T-2", unexplained("api-2", "dial tcp 10.2.0.4:3306: connect: connection refused to mysql:3306"))
	// T-3: a Go rule explains it; the signature's line is there too, beside it.
	oom := finding("runtime-oom-killed", analyze.StageRuntime, "container app was killed by the kernel OOM killer", "shop", "api-3", "OOMKilled")
	add("d3", "T-3", oom, &analyze.Finding{Rule: analyze.UnexplainedRule, Stage: analyze.StageService, Cause: "x",
		Evidence: []analyze.Evidence{{Excerpt: "dial tcp 10.3.0.1:5432: connect: connection refused to pg:5432"}}})
	// T-4: explained by the old app-cache-refused, whose changed pattern no longer matches.
	add("d4", "T-4", finding("app-cache-refused", analyze.StageRuntime, "the program cannot reach its cache", "shop", "api-4", "redis: connection refused by the cache at port 6379"))
	// T-5: untouched.
	add("d5", "T-5", oom)

	dry, err := s.ReanalyzeSignatures(ctx, sigs, "test", true)
	if err != nil {
		t.Fatal(err)
	}
	if dry.Recorded != 0 || dry.MoreExplain != 2 || dry.StopExplain != 1 || dry.Tickets != 5 {
		t.Errorf("dry run: %+v", dry)
	}
	if k, _ := s.Knowledge(ctx); len(k.Rows) != 1 {
		t.Errorf("a dry run recorded: %q", k.Rows)
	}

	run, err := s.ReanalyzeSignatures(ctx, sigs, "test", false)
	if err != nil {
		t.Fatal(err)
	}
	to := SignatureKnowledge("k1", sigs)
	if run.MoreExplain != 2 || run.StopExplain != 1 || run.ChangedCause != 0 || run.Changed != 4 || run.Recorded != 4 || run.Knowledge["k1"] != to {
		t.Errorf("run: %+v", run)
	}
	// The new analyses are current; the diff of the two versions says the same.
	d, err := s.DiffKnowledge(ctx, "k1", to)
	if err != nil {
		t.Fatal(err)
	}
	if d.Both != 4 || d.MoreExplain != 2 || d.StopExplain != 1 {
		t.Errorf("knowledge diff: %+v", d)
	}
	check := func(ticket, wantClass string, wantRoot bool) Finding {
		t.Helper()
		tk, err := s.Lookup(ctx, ticket)
		if err != nil {
			t.Fatal(err)
		}
		fs, a, err := s.CurrentFindings(ctx, tk.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range fs {
			if f.Class == wantClass {
				if f.Root != wantRoot || a.Knowledge != to {
					t.Errorf("%s: %s root %v at %s, want root %v at %s", ticket, wantClass, f.Root, a.Knowledge, wantRoot, to)
				}
				return f
			}
		}
		t.Errorf("%s: no %s finding in %+v", ticket, wantClass, fs)
		return Finding{}
	}
	f1 := check("T-1", "app-db-refused", true)
	f2 := check("T-2", "app-db-refused", true)
	// The fingerprint is the port: T-1 and T-3 (5432) share it, T-2 (3306) does not.
	f3 := check("T-3", "app-db-refused", false)
	if f1.Fingerprint == f2.Fingerprint || f1.Fingerprint != f3.Fingerprint {
		t.Errorf("fingerprint captures: T-1 %s, T-2 %s, T-3 %s", f1.Fingerprint, f2.Fingerprint, f3.Fingerprint)
	}
	check("T-3", "runtime-oom-killed", true)
	tk4, _ := s.Lookup(ctx, "T-4")
	if fs, _, _ := s.CurrentFindings(ctx, tk4.ID); len(fs) != 0 {
		t.Errorf("T-4 keeps findings of the changed signature: %+v", fs)
	}
	// Old analyses are kept.
	k, err := s.Knowledge(ctx)
	if err != nil || len(k.Rows) != 2 {
		t.Errorf("knowledge versions: %q %v", k.Rows, err)
	}
	checkMonths(t, s, "after signatures")
	// Running again changes nothing.
	again, err := s.ReanalyzeSignatures(ctx, sigs, "test", false)
	if err != nil || again.Changed != 0 || again.Recorded != 0 {
		t.Errorf("second run: %+v %v", again, err)
	}
}

// TestRuleKeys checks the fleet key table: two evictions for the same resource in
// other clusters share a fingerprint, evictions for different resources do not, and a
// rule not in the table keeps its cause sentence.
func TestRuleKeys(t *testing.T) {
	ev := func(ns, pod, res string) *analyze.Finding {
		return finding("node-pod-evicted", analyze.StageNode, "the kubelet on node ip-10-0-"+ns+" evicted pod "+pod+" because the node is low on "+res+"; it says \"...\"", ns, pod, "Evicted")
	}
	a, b, c := FindingKey(ev("shop", "web-1", "ephemeral-storage")), FindingKey(ev("bank", "ledger-0", "ephemeral-storage")), FindingKey(ev("shop", "web-1", "memory"))
	if a.Fingerprint != b.Fingerprint || a.Fingerprint == c.Fingerprint {
		t.Errorf("evictions: %s %s %s", a.Fingerprint, b.Fingerprint, c.Fingerprint)
	}
	if a.Template == "" || a.Template[:4] == "key " {
		t.Errorf("the shown template is the cause sentence, got %q", a.Template)
	}
	for rule, fields := range ruleKeys {
		for _, f := range fields {
			if f != "stage" && f != "subjects" && (len(f) < 11 || f[:11] != "cause-word:") {
				t.Errorf("ruleKeys[%s]: unknown field %q", rule, f)
			}
		}
	}
	x := FindingKey(finding("not-in-table", analyze.StageNode, "one thing", "a", "p", "l"))
	y := FindingKey(finding("not-in-table", analyze.StageNode, "another thing", "a", "p", "l"))
	if x.Fingerprint == y.Fingerprint {
		t.Error("a rule outside the table lost its cause sentence")
	}
}
