package e2e

import (
	"encoding/json"
	"strings"
	"testing"
)

// podTable is a pods Table of one row, as the API server answers it.
func podTable(t *testing.T, cells ...any) []byte {
	t.Helper()
	b, err := json.Marshal(map[string]any{
		"kind":              "Table",
		"columnDefinitions": []map[string]string{{"name": "Name"}, {"name": "Ready"}, {"name": "Status"}, {"name": "Restarts"}, {"name": "Age"}},
		"rows":              []map[string]any{{"cells": cells, "object": map[string]any{"metadata": map[string]string{"namespace": "ns", "name": "spooler"}}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Each cell is the live one, a count between the reads, or a difference whose kind
// cellAllowed names; a restart explains READY and STATUS only for a pod that restarted.
func TestCompareTable(t *testing.T) {
	cases := []struct {
		name       string
		l1, l2, s  []any
		restarted  bool
		want       string // the difference's kind ("" for none), then the kinds of cells
		wantDetail string
	}{
		{"the same", []any{"spooler", "0/1", "CrashLoopBackOff", "3 (20s ago)", "5m"}, []any{"spooler", "0/1", "CrashLoopBackOff", "3 (25s ago)", "5m5s"},
			[]any{"spooler", "0/1", "CrashLoopBackOff", "3 (20s ago)", "5m"}, false, "", ""},
		{"asked later", []any{"spooler", "0/1", "CrashLoopBackOff", "3 (20s ago)", "5m"}, []any{"spooler", "0/1", "CrashLoopBackOff", "3 (25s ago)", "5m5s"},
			[]any{"spooler", "0/1", "CrashLoopBackOff", "3 (70s ago)", "5m50s"}, false, "cells", "age in Restarts, Age"},
		{"an age smaller than the later read's", []any{"spooler", "0/1", "CrashLoopBackOff", "3", "5m"}, []any{"spooler", "0/1", "CrashLoopBackOff", "3", "5m5s"},
			[]any{"spooler", "0/1", "CrashLoopBackOff", "3", "4m"}, false, "cell", ""},
		{"restarted between the reads", []any{"spooler", "0/1", "CrashLoopBackOff", "3 (20s ago)", "5m"}, []any{"spooler", "0/1", "CrashLoopBackOff", "4 (2s ago)", "5m5s"},
			[]any{"spooler", "1/1", "Running", "4 (5s ago)", "5m9s"}, true, "cells", "age in Restarts, Age; restarted in Ready, Status"},
		{"running at collection, the same count", []any{"spooler", "0/1", "CrashLoopBackOff", "4 (20s ago)", "5m"}, []any{"spooler", "0/1", "CrashLoopBackOff", "4 (25s ago)", "5m5s"},
			[]any{"spooler", "1/1", "Running", "4 (30s ago)", "5m9s"}, true, "cells", "age in Restarts, Age; restarted in Ready, Status"},
		{"a state no restart explains", []any{"spooler", "0/1", "CrashLoopBackOff", "4", "5m"}, []any{"spooler", "0/1", "CrashLoopBackOff", "4", "5m5s"},
			[]any{"spooler", "1/1", "Running", "4", "5m9s"}, false, "cell", ""},
		{"a state that changed between the reads", []any{"spooler", "1/1", "Running", "4", "5m"}, []any{"spooler", "0/1", "CrashLoopBackOff", "4", "5m5s"},
			[]any{"spooler", "0/1", "Error", "4", "5m9s"}, false, "cells", "age in Age; changed in Status"},
		{"a count beyond both reads", []any{"spooler", "0/1", "CrashLoopBackOff", "3", "5m"}, []any{"spooler", "0/1", "CrashLoopBackOff", "4", "5m5s"},
			[]any{"spooler", "0/1", "CrashLoopBackOff", "5", "5m9s"}, true, "cell", ""},
		{"a secret redacted", []any{"spooler", "0/1", "Bearer PFCANARY-pb-Hd4Wz8Qe1Ls6", "3", "5m"}, []any{"spooler", "0/1", "Bearer PFCANARY-pb-Hd4Wz8Qe1Ls6", "3", "5m5s"},
			[]any{"spooler", "0/1", "Bearer <redacted:bearer-token:833644>", "3", "5m9s"}, false, "cells", "age in Age; redacted in Status"},
		{"a redaction mark over other text", []any{"spooler", "0/1", "Bearer abc and more", "3", "5m"}, []any{"spooler", "0/1", "Bearer abc and more", "3", "5m5s"},
			[]any{"spooler", "0/1", "Bearer <redacted:bearer-token:833644> and less", "3", "5m9s"}, false, "cell", ""},
		{"a wrong constant", []any{"spooler", "0/1", "CrashLoopBackOff", "3", "5m"}, []any{"spooler", "0/1", "CrashLoopBackOff", "3", "5m5s"},
			[]any{"spooler", "0/0", "CrashLoopBackOff", "3", "5m9s"}, true, "cell", ""},
		{"a pull tried again at collection", []any{"spooler", "0/1", "ImagePullBackOff", "0", "5m"}, []any{"spooler", "0/1", "ImagePullBackOff", "0", "5m5s"},
			[]any{"spooler", "0/1", "ErrImagePull", "0", "5m9s"}, false, "cells", "age in Age; pull retried in Status"},
		{"a pull phase where the pod crash-loops", []any{"spooler", "0/1", "CrashLoopBackOff", "3", "5m"}, []any{"spooler", "0/1", "CrashLoopBackOff", "3", "5m5s"},
			[]any{"spooler", "0/1", "ErrImagePull", "3", "5m9s"}, false, "cell", ""},
	}
	for _, c := range cases {
		diff, n := compareTable(podTable(t, c.l1...), podTable(t, c.l2...), podTable(t, c.s...), func(string) bool { return c.restarted })
		kind, detail, _ := strings.Cut(diff, ": ")
		if kind != c.want || (c.wantDetail != "" && detail != c.wantDetail) {
			t.Errorf("%s: compareTable = %q, want %s: %s", c.name, diff, c.want, c.wantDetail)
		}
		if n != 5 {
			t.Errorf("%s: %d cells compared, want 5", c.name, n)
		}
		if c.want == "cells" && cellsReason(diff) == "" {
			t.Errorf("%s: %q has no reason in the allow-list", c.name, diff)
		}
	}
}

// A refusal of a waiting container's log may name the other phase of the same failing
// pull; any other difference of wording is serve's.
func TestPullRetried(t *testing.T) {
	const prefix = `container "app" in pod "app" is waiting to start: `
	cases := []struct {
		a, b string
		want bool
	}{
		{"ImagePullBackOff", "ErrImagePull", true},
		{"ErrImagePull", "ErrImagePull", false},
		{"ErrImagePull", "CrashLoopBackOff", false},
		{prefix + "trying and failing to pull image", prefix + "image can't be pulled", true},
		{prefix + "image can't be pulled", prefix + "trying and failing to pull image", true},
		{prefix + "trying and failing to pull image", `container "web" in pod "app" is waiting to start: image can't be pulled`, false},
		{prefix + "trying and failing to pull image", prefix + "ContainerCreating", false},
	}
	for _, c := range cases {
		if got := pullRetried(c.a, c.b); got != c.want {
			t.Errorf("pullRetried(%q, %q) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}

func TestHumanDuration(t *testing.T) {
	for in, want := range map[string]int64{"45s": 45, "3m20s": 200, "12m": 720, "5h": 18000, "2d3h": 183600, "1y10d": 32400000} {
		if got, ok := humanDuration(in); !ok || got != want {
			t.Errorf("humanDuration(%q) = %d, %v, want %d", in, got, ok, want)
		}
	}
	for _, in := range []string{"", "<unknown>", "5 m", "Running"} {
		if _, ok := humanDuration(in); ok {
			t.Errorf("humanDuration(%q) parsed", in)
		}
	}
}
