package main

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"podflow.dev/podflow/bundle"
	"podflow.dev/podflow/collect/node"
)

// journalOnlyRunner has a kubelet journal and nothing else installed.
type journalOnlyRunner struct{}

func (journalOnlyRunner) Run(_ context.Context, name string, args ...string) (node.Output, error) {
	if name == "journalctl" && args[0] == "-u" && args[1] == "kubelet" {
		return node.Output{Stdout: []byte("2026-11-29T10:00:00+0000 w1 kubelet[1]: started with password=hunter2\n")}, nil
	}
	return node.Output{}, exec.ErrNotFound
}

func testStreams() (streams, *bytes.Buffer, *bytes.Buffer) {
	out, errOut := &bytes.Buffer{}, &bytes.Buffer{}
	return streams{In: strings.NewReader(""), Out: out, ErrOut: errOut}, out, errOut
}

func TestCollectNodeWritesPartialBundleAndExits4(t *testing.T) {
	s, out, errOut := testStreams()
	_, g := newRootCmd(s)
	g.logger.SetOutput(errOut)
	root := t.TempDir()
	dir := t.TempDir()
	t.Chdir(dir)
	o := &collectNodeOptions{globalOptions: g, node: node.Options{
		NodeName: "w1", HostRoot: root, Since: time.Hour, MaxLogBytes: 1 << 20,
		Runner: journalOnlyRunner{}, KmsgPath: filepath.Join(root, "kmsg"),
	}, now: func() time.Time { return time.Date(2026, 11, 29, 10, 15, 0, 0, time.UTC) }}
	err := runCollectNode(context.Background(), o)
	var se *silentExit
	if !errors.As(err, &se) || se.code != exitPartial {
		t.Fatalf("err = %v, want exit %d: the runtime socket and dmesg are missing", err, exitPartial)
	}
	want := "podflow-node-w1-20261129T101500Z.tar.gz"
	if strings.TrimSpace(out.String()) != want {
		t.Fatalf("stdout = %q, want the bundle path %s", out.String(), want)
	}
	if !strings.Contains(errOut.String(), "some sources are incomplete") || !strings.Contains(errOut.String(), "cri") {
		t.Errorf("stderr = %q", errOut.String())
	}
	b, err := bundle.Open(filepath.Join(dir, want), bundle.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	if p := bundle.Verify(b); len(p) != 0 {
		t.Fatal(p)
	}
	log, _ := b.ReadFile(bundle.NodePath("w1", bundle.NodeKubeletLog))
	if strings.Contains(string(log), "hunter2") {
		t.Errorf("the default redaction policy must mask journal secrets: %q", log)
	}
	if !b.Manifest.Redaction.Enabled || b.Manifest.Redaction.Total == 0 {
		t.Errorf("redaction = %+v", b.Manifest.Redaction)
	}
}

func TestCollectNodeFlagErrorsAreUsage(t *testing.T) {
	for _, args := range [][]string{
		{"node", "--since", "0s"},
		{"node", "--node-name", "a/b"},
		{"node", "--no-redact"},
		{"node", "extra-arg"},
	} {
		s, _, errOut := testStreams()
		if code := run(context.Background(), append([]string{"collect"}, args...), s); code != exitUsage {
			t.Errorf("%q: exit %d (stderr %q), want a usage error", args, code, errOut.String())
		}
	}
}

func TestCollectNodeCommandLineRecordsFlags(t *testing.T) {
	s, _, _ := testStreams()
	root, g := newRootCmd(s)
	cmd := newCollectNodeCmd(g)
	root.AddCommand(cmd)
	if err := cmd.ParseFlags([]string{"--host-root", "/host", "-o", "x.tar.gz"}); err != nil {
		t.Fatal(err)
	}
	got := strings.Join(commandLine(cmd), " ")
	if got != "podflow node --host-root=/host --output=x.tar.gz" {
		t.Fatalf("command line = %q", got)
	}
}
