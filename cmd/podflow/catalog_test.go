package main

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestCatalogSearch(t *testing.T) {
	msg := `Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup network for sandbox "abc": plugin type="calico" failed (add): error getting ClusterInformation: connection is unauthorized: Unauthorized`
	code, out, errOut := runPodflow(t, "catalog", "search", msg)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"Failed to create pod sandbox: %v", "failed to setup network for sandbox %q: %w",
		"error getting ClusterInformation", "Layers of the text", "kubelet", "containerd", "calico", "sandbox"} {
		if !strings.Contains(out, want) {
			t.Errorf("search output lacks %q:\n%s", want, out)
		}
	}
	code, out, errOut = runPodflow(t, "catalog", "search", "-o", "json", msg)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var hits []catalogHit
	if err := json.Unmarshal([]byte(out), &hits); err != nil || len(hits) == 0 || hits[0].Entry.Component != "kubelet" || hits[0].By != "match" {
		t.Fatalf("json search: %v %+v", err, hits)
	}
	// show the first hit
	code, out, _ = runPodflow(t, "catalog", "show", hits[0].Entry.ID)
	if code != 0 || !strings.Contains(out, "Printed by") || !strings.Contains(out, "Releases") || !strings.Contains(out, hits[0].Entry.Template) {
		t.Fatalf("show %s: exit %d\n%s", hits[0].Entry.ID, code, out)
	}
}

func TestCatalogShowUnknownAndEscapes(t *testing.T) {
	code, _, errOut := runPodflow(t, "catalog", "show", "kubelet/\x1b[31mnope")
	if code != exitUsage || strings.Contains(errOut, "\x1b") || !strings.Contains(errOut, "no catalog entry") {
		t.Fatalf("unknown id: exit %d, stderr %q", code, errOut)
	}
	code, out, _ := runPodflow(t, "catalog", "search", "Back-off pulling image \"x\x1b]0;owned\x07\"")
	if code != 0 || strings.ContainsAny(out, "\x1b\x07") {
		t.Fatalf("search printed control characters: exit %d %q", code, out)
	}
	if code, _, _ := runPodflow(t, "catalog", "search", "-o", "yaml", "x"); code != exitUsage {
		t.Fatalf("-o yaml: exit %d, want usage", code)
	}
}

func TestCatalogStats(t *testing.T) {
	code, out, errOut := runPodflow(t, "catalog", "stats")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"COMPONENT", "kubelet", "containerd", "STAGE", "scheduling", "Pinned releases", "k8s.io/kubernetes", "v1.14.10", "cri-o"} {
		if !strings.Contains(out, want) {
			t.Errorf("stats lacks %q:\n%s", want, out)
		}
	}
	code, out, _ = runPodflow(t, "catalog", "stats", "-o", "json")
	var st catalogStats
	if err := json.Unmarshal([]byte(out), &st); code != 0 || err != nil || st.Entries == 0 || len(st.Components) == 0 {
		t.Fatalf("stats json: exit %d %v %+v", code, err, st)
	}
	sum := 0
	for _, c := range st.Components {
		sum += c.Entries
	}
	if sum != st.Entries {
		t.Errorf("components add up to %d, catalog has %d", sum, st.Entries)
	}
}

// TestCatalogShowCurated: an entry copied from a C source (systemd) says it is curated
// and cites its file, without a line or release it was not read from.
func TestCatalogShowCurated(t *testing.T) {
	code, out, errOut := runPodflow(t, "catalog", "search", "-o", "json", "Apr 05 05:33:40 master systemd[1]: Unit kubelet.service entered failed state.")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var hits []catalogHit
	if err := json.Unmarshal([]byte(out), &hits); err != nil || len(hits) == 0 || hits[0].Entry.Component != "systemd" {
		t.Fatalf("json search: %v %s", err, out)
	}
	code, out, _ = runPodflow(t, "catalog", "show", hits[0].Entry.ID)
	if code != 0 || !strings.Contains(out, "src/core/unit.c in github.com/systemd/systemd (curated") || strings.Contains(out, "unit.c:0") {
		t.Fatalf("show %s: exit %d\n%s", hits[0].Entry.ID, code, out)
	}
}
