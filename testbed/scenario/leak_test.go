package scenario

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"podflow.dev/podflow/bundle"
)

const (
	canaryA = "PFCANARY-aa-q7Xw2Lm9Rt4Z"
	canaryB = "PFCANARY-bb-K3vN8pYd5Hc1"
	canaryC = "PFCANARY-cc-Hd4Wz8Qe1Ls6"
	canaryD = "PFCANARY-dd-Nx5Ck9Ua3Vb7"
)

func gz(t *testing.T, data []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	if _, err := zw.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func tarOf(t *testing.T, files [][2]string) []byte {
	t.Helper()
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	for _, f := range files {
		if err := tw.WriteHeader(&tar.Header{Name: f[0], Mode: 0o644, Size: int64(len(f[1])), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(f[1])); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func leakLines(leaks []Leak) string {
	var out []string
	for _, l := range leaks {
		out = append(out, l.String())
	}
	return strings.Join(out, "\n")
}

// A canary is found as written, base64-encoded, inside a compressed member, and in a
// member's name; clean members and values that are absent report nothing.
func TestFindLeaksInAnArchive(t *testing.T) {
	b64 := base64.StdEncoding.EncodeToString([]byte(canaryB))
	rotated := gz(t, []byte("old line\nsession token="+canaryC+"\n"))
	archive := gz(t, tarOf(t, [][2]string{
		{"b/podflow.json", `{"formatVersion":"1.0"}`},
		{"b/cluster-resources/pods/shop.json", `{"items":[{"env":[{"name":"DB_PASSWORD","value":"<redacted:credential-env:3f9a1c>"}]}]}`},
		{"b/cluster-resources/pods/logs/shop/web/app.log", "login password=" + canaryA + "\n"},
		{"b/cluster-resources/secrets/shop.json", `{"items":[{"data":{"password":"` + b64 + `"}}]}`},
		{"b/nodes/n1/kubelet.log.1.gz", string(rotated)},
		{"b/nodes/n1/" + canaryD + ".log", "clean\n"},
	}))
	path := filepath.Join(t.TempDir(), "bundle.tar.gz")
	if err := os.WriteFile(path, archive, 0o600); err != nil {
		t.Fatal(err)
	}
	leaks, err := FindLeaks(path, []string{canaryA, canaryB, canaryC, canaryD, "PFCANARY-zz-absent00000"})
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Join([]string{
		`b/cluster-resources/pods/logs/shop/web/app.log: canary "` + canaryA + `" (plain)`,
		`b/cluster-resources/secrets/shop.json: canary "` + canaryB + `" (base64)`,
		`b/nodes/n1/kubelet.log.1.gz (decompressed): canary "` + canaryC + `" (plain)`,
		`tar header of b/nodes/n1/` + canaryD + `.log: canary "` + canaryD + `" (plain)`,
	}, "\n")
	if got := leakLines(leaks); got != want {
		t.Errorf("leaks:\n%s\nwant:\n%s", got, want)
	}
	var leakErr error = &LeakError{Bundle: path, Leaks: leaks}
	if err := leakErr.Error(); !strings.Contains(err, "4 canary value(s) leaked") || !strings.Contains(err, "b/cluster-resources/secrets/shop.json") {
		t.Errorf("leak error does not name the files: %s", err)
	}
}

func TestFindLeaksInADirectoryAndACleanArchive(t *testing.T) {
	dir := t.TempDir()
	logDir := filepath.Join(dir, "cluster-resources", "pods", "logs", "shop", "web")
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		t.Fatal(err)
	}
	url := base64.RawURLEncoding.EncodeToString([]byte("PFCANARY-url-000>?~"))
	if err := os.WriteFile(filepath.Join(logDir, "app.log"), []byte("cookie="+url+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	leaks, err := FindLeaks(dir, []string{"PFCANARY-url-000>?~", canaryA})
	if err != nil {
		t.Fatal(err)
	}
	want := `cluster-resources/pods/logs/shop/web/app.log: canary "PFCANARY-url-000>?~" (base64url)`
	if got := leakLines(leaks); got != want {
		t.Errorf("leaks:\n%s\nwant:\n%s", got, want)
	}

	clean := filepath.Join(t.TempDir(), "clean.tar.gz")
	if err := os.WriteFile(clean, gz(t, tarOf(t, [][2]string{{"b/app.log", "password=<redacted:credential-assignment:e66e0b>\n"}})), 0o600); err != nil {
		t.Fatal(err)
	}
	if leaks, err := FindLeaks(clean, []string{canaryA}); err != nil || len(leaks) != 0 {
		t.Errorf("a clean bundle: leaks %v, error %v", leaks, err)
	}
}

// A damaged archive is an error naming it, never a panic or a silent pass; what was
// readable is still searched.
func TestFindLeaksInADamagedArchive(t *testing.T) {
	// Incompressible filler, so the cut falls well after the canary's bytes.
	filler := make([]byte, 64<<10)
	if _, err := rand.NewChaCha8([32]byte{1}).Read(filler); err != nil {
		t.Fatal(err)
	}
	whole := gz(t, tarOf(t, [][2]string{{"b/app.log", "password=" + canaryA + "\n" + base64.StdEncoding.EncodeToString(filler)}}))
	path := filepath.Join(t.TempDir(), "cut.tar.gz")
	if err := os.WriteFile(path, whole[:len(whole)/2], 0o600); err != nil {
		t.Fatal(err)
	}
	leaks, err := FindLeaks(path, []string{canaryA})
	if err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("error %v, want one naming %s", err, path)
	}
	if len(leaks) != 1 {
		t.Errorf("leaks in the readable part: %v", leaks)
	}
	if _, err := FindLeaks(filepath.Join(t.TempDir(), "missing.tar.gz"), []string{canaryA}); err == nil {
		t.Error("a missing bundle searched clean")
	}
}

// The no-leak check runs on a bundle's files like the other evidence checks.
func TestNoLeakCheck(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "b")
	w, err := bundle.Create(dir, bundle.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteFile(bundle.LogPath("shop", "web", "app", false), []byte("Authorization: Bearer "+canaryB+"\n")); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteFile(bundle.NodePath("n1", bundle.NodeKubeletLog), []byte("clean\n")); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(&bundle.Manifest{PodflowVersion: "test"}); err != nil {
		t.Fatal(err)
	}
	b, err := bundle.Open(dir, bundle.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	snap := &Snapshot{Namespace: "shop", Bundle: b}
	if err := snap.Eval(Check{File: FileNoLeak, Values: Strings{canaryA}}); err != nil {
		t.Errorf("a clean bundle fails: %v", err)
	}
	err = snap.Eval(Check{File: FileNoLeak, Values: Strings{canaryA, canaryB}})
	if err == nil || !strings.Contains(err.Error(), bundle.LogPath("shop", "web", "app", false)+`: canary "`+canaryB+`" (plain)`) {
		t.Errorf("error %v, want it to name the log and the canary", err)
	}
	live := &Snapshot{Namespace: "shop"}
	if err := live.Eval(Check{File: FileNoLeak, Values: Strings{canaryA}}); err == nil || !strings.Contains(err.Error(), "needs a bundle") {
		t.Errorf("live snapshot: %v", err)
	}
	if got := NoLeakValues([]Check{{File: FileLog, Contains: Strings{"x"}}, {File: FileNoLeak, Values: Strings{canaryA, canaryB}}}); strings.Join(got, ",") != canaryA+","+canaryB {
		t.Errorf("NoLeakValues: %v", got)
	}
}

func TestNoLeakCheckValidation(t *testing.T) {
	for _, c := range []struct {
		check Check
		want  string
	}{
		{Check{File: FileNoLeak}, "values is required"},
		{Check{File: FileNoLeak, Values: Strings{"hunter2"}}, "shorter than 12"},
		{Check{File: FileNoLeak, Values: Strings{canaryA, canaryA + "-longer"}}, "is part of"},
		{Check{File: FileNoLeak, Values: Strings{canaryA}, Contains: Strings{"x"}}, `does not use "contains"`},
		{Check{File: FileLog, Contains: Strings{"x"}, Values: Strings{canaryA}}, `does not use "values"`},
	} {
		if err := c.check.validate(false); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.check, err, c.want)
		}
	}
	if err := (Check{File: FileNoLeak, Values: Strings{canaryA, canaryB}}).validate(true); err == nil || !strings.Contains(err.Error(), "cannot be checked live") {
		t.Errorf("no-leak in until: %v", err)
	}
	if err := (Check{File: FileNoLeak, Values: Strings{canaryA, canaryB}}).validate(false); err != nil {
		t.Errorf("valid check refused: %v", err)
	}
}
