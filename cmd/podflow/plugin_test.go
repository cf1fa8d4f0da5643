package main

import (
	"bytes"
	"context"
	"encoding/json"
	"runtime"
	"strings"
	"testing"
)

func TestRunsAsKubectlPlugin(t *testing.T) {
	for _, argv0 := range []string{"/home/u/.krew/bin/kubectl-podflow", `C:\krew\bin\kubectl-podflow.exe`, "kubectl-podflow"} {
		var out, errOut bytes.Buffer
		code := runAs(context.Background(), argv0, []string{"analyze", "--help"}, streams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
		if code != exitOK {
			t.Fatalf("%s: exit %d: %s", argv0, code, errOut.String())
		}
		for _, want := range []string{"kubectl podflow analyze INPUT... [flags]", "  kubectl podflow analyze shop.tar.gz\n"} {
			if !strings.Contains(out.String(), want) {
				t.Errorf("%s: help lacks %q:\n%s", argv0, want, out.String())
			}
		}
	}
	var out, errOut bytes.Buffer
	runAs(context.Background(), "/usr/local/bin/podflow", []string{"analyze", "--help"}, streams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
	if strings.Contains(out.String(), "kubectl podflow") {
		t.Error("plain podflow presents itself as the kubectl plugin")
	}
}

func TestVersion(t *testing.T) {
	code, out, _ := runPodflow(t, "version")
	if code != exitOK || !strings.HasPrefix(out, "podflow dev (commit ") || !strings.Contains(out, runtime.Version()) {
		t.Errorf("version = %d %q", code, out)
	}
	code, out, _ = runPodflow(t, "version", "-o", "json")
	var v versionInfo
	if err := json.Unmarshal([]byte(out), &v); code != exitOK || err != nil {
		t.Fatalf("version -o json = %d %q (%v)", code, out, err)
	}
	if v.Version != "dev" || v.Commit == "" || v.GoVersion != runtime.Version() || v.Platform != runtime.GOOS+"/"+runtime.GOARCH || v.BundleFormat == "" {
		t.Errorf("version -o json = %+v", v)
	}
	if code, _, _ := runPodflow(t, "version", "-o", "yaml"); code != exitUsage {
		t.Errorf("version -o yaml: exit %d, want %d", code, exitUsage)
	}
}
