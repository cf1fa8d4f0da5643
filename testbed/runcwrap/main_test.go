package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

func TestSpecFileFindsTheFileRuncReads(t *testing.T) {
	for _, tc := range []struct {
		args      []string
		file, key string
	}{
		{[]string{"--root", "/run/r", "--log", "l.json", "create", "--bundle", "/b", "--pid-file", "p", "id"}, "/b/config.json", "process"},
		{[]string{"create", "--bundle=/b2", "id"}, "/b2/config.json", "process"},
		{[]string{"run", "-b", "/b3", "id"}, "/b3/config.json", "process"},
		{[]string{"create", "id"}, "config.json", "process"},
		{[]string{"--root", "/r", "exec", "--process", "/tmp/p.json", "--detach", "id"}, "/tmp/p.json", ""},
		{[]string{"exec", "id", "ls"}, "", ""},
		{[]string{"--root", "/r", "state", "id"}, "", ""},
		{[]string{"--version"}, "", ""},
	} {
		file, key := specFile(tc.args)
		if file != tc.file || key != tc.key {
			t.Errorf("specFile(%q) = %q, %q; want %q, %q", tc.args, file, key, tc.file, tc.key)
		}
	}
}

func TestRaiseOOMScoreAdj(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, in, key string
		want          any
	}{
		{"sandbox", `{"ociVersion":"1.2.0","process":{"oomScoreAdj":-998,"args":["/pause"]},"linux":{"resources":{"memory":{"limit":9223372036854775807}}}}`, "process", float64(0)},
		{"burstable kept", `{"process":{"oomScoreAdj":999}}`, "process", float64(999)},
		{"exec process", `{"oomScoreAdj":-997,"args":["cat","/tmp/ready"]}`, "", float64(0)},
		{"absent", `{"process":{"args":["sh"]}}`, "process", nil},
	} {
		p := filepath.Join(dir, tc.name+".json")
		if err := os.WriteFile(p, []byte(tc.in), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := raiseOOMScoreAdj(p, tc.key); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var doc map[string]any
		if err := json.Unmarshal(data, &doc); err != nil {
			t.Fatal(err)
		}
		proc := doc
		if tc.key != "" {
			proc = doc[tc.key].(map[string]any)
		}
		if got := proc["oomScoreAdj"]; got != tc.want {
			t.Errorf("%s: oomScoreAdj = %v, want %v", tc.name, got, tc.want)
		}
		if tc.name == "sandbox" {
			// Large integers must survive the rewrite exactly.
			var raw struct {
				Linux struct {
					Resources struct {
						Memory struct{ Limit json.Number } `json:"memory"`
					} `json:"resources"`
				} `json:"linux"`
			}
			if err := json.Unmarshal(data, &raw); err != nil {
				t.Fatal(err)
			}
			if raw.Linux.Resources.Memory.Limit != "9223372036854775807" {
				t.Errorf("memory limit rewritten to %s", raw.Linux.Resources.Memory.Limit)
			}
		}
	}
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := raiseOOMScoreAdj(bad, "process"); err == nil {
		t.Error("a truncated config.json was accepted")
	}
	if err := raiseOOMScoreAdj(filepath.Join(dir, "missing.json"), "process"); err == nil {
		t.Error("a missing config.json was accepted")
	}
}

func TestRealRuncSkipsItself(t *testing.T) {
	dir := t.TempDir()
	fake := filepath.Join(dir, "runc")
	if err := os.WriteFile(fake, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PODFLOW_REAL_RUNC", "")
	t.Setenv("PATH", dir)
	got, err := realRunc()
	if err != nil || got != fake {
		t.Errorf("realRunc() = %q, %v; want %q", got, err, fake)
	}
	t.Setenv("PODFLOW_REAL_RUNC", "/opt/runc")
	if got, _ := realRunc(); got != "/opt/runc" {
		t.Errorf("PODFLOW_REAL_RUNC ignored: %q", got)
	}
	t.Setenv("PODFLOW_REAL_RUNC", "")
	t.Setenv("PATH", t.TempDir())
	if _, err := realRunc(); err == nil {
		t.Error("found a runc in an empty PATH")
	}
}
