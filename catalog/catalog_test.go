package catalog

import (
	"slices"
	"strings"
	"testing"
)

func TestEmbeddedCatalogLoads(t *testing.T) {
	if err := Err(); err != nil {
		t.Fatalf("embedded catalog: %v", err)
	}
	c := Default()
	if c.Len() < 1000 {
		t.Fatalf("embedded catalog has %d entries, want the generated thousands", c.Len())
	}
	h := c.Header()
	if h.Format != FormatVersion || h.Entries != c.Len() || len(h.Pins) == 0 {
		t.Fatalf("header %+v does not describe %d entries", h, c.Len())
	}
	kinds := []string{"event", "error", "log", "status", "message", "reason"}
	levels := []string{"", "error", "warning", "info"}
	for _, e := range c.Entries() {
		switch {
		case e.Component == "" || e.Template == "" || e.Module == "" || e.First == "" || e.Last == "":
			t.Errorf("%s: incomplete entry %+v", e.ID, e)
		case !strings.HasPrefix(e.ID, e.Component+"/"):
			t.Errorf("%s: id does not name component %s", e.ID, e.Component)
		case e.Stage != "" && !slices.Contains(Stages, e.Stage):
			t.Errorf("%s: unknown stage %q", e.ID, e.Stage)
		case !slices.Contains(Classes, e.Class):
			t.Errorf("%s: unknown class %q", e.ID, e.Class)
		case !slices.Contains(kinds, e.Kind):
			t.Errorf("%s: unknown kind %q", e.ID, e.Kind)
		case !slices.Contains(levels, e.Level):
			t.Errorf("%s: unknown level %q", e.ID, e.Level)
		case e.File == "" || e.Package == "" || e.Line <= 0 && e.Source != "curated":
			t.Errorf("%s: no source location", e.ID)
		}
		if c.Lookup(e.ID) != e {
			t.Errorf("%s: Lookup does not find it", e.ID)
		}
	}
}

// TestMatchersAcceptOwnExamples fills each template's verbs with sample values and checks
// that Read names the entry for the message.
func TestMatchersAcceptOwnExamples(t *testing.T) {
	c := Default()
	bad := 0
	for _, e := range c.Entries() {
		if m := e.matcher(); m.err != nil {
			t.Errorf("%s: template %q does not compile: %v", e.ID, e.Template, m.err)
			continue
		}
		ex := e.Example()
		found := false
		for _, m := range c.Read(ex) {
			if m.Entry == e {
				found = true
				break
			}
		}
		if !found {
			bad++
			if bad <= 20 {
				t.Errorf("%s: Read does not name the entry for its own example %q (template %q)", e.ID, ex, e.Template)
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d entries do not match their own example", bad, c.Len())
	}
}

// TestPrecedence checks that when entries of different stages match the same example
// equally well (the same literal characters), the stage precedence table orders them.
func TestPrecedence(t *testing.T) {
	c := Default()
	tied := 0
	for _, e := range c.Entries() {
		if e.Stage == "" {
			continue
		}
		ms := c.Read(e.Example())
		var self *Match
		for i := range ms {
			if ms[i].Entry == e {
				self = &ms[i]
			}
		}
		if self == nil {
			continue // TestMatchersAcceptOwnExamples reports it
		}
		ties := 0
		for j, m := range ms {
			o := m.Entry
			if o == e || o.Stage == "" || o.Stage == e.Stage || m.Layer != self.Layer || m.Text != self.Text || o.Literals() != e.Literals() {
				continue
			}
			ties++
			ro, re := stageRank(o.Stage), stageRank(e.Stage)
			if ro == len(stagePrecedence) || re == len(stagePrecedence) {
				t.Errorf("%s (%s) and %s (%s) tie on %q and the precedence table does not order their stages",
					e.ID, e.Stage, o.ID, o.Stage, m.Text)
				continue
			}
			// Read must put the entry of the earlier stage in the table first.
			selfAt := slices.IndexFunc(ms, func(x Match) bool { return x.Entry == e })
			if (ro < re) != (j < selfAt) {
				t.Errorf("%s (%s) and %s (%s) tie on %q and Read does not order them by the precedence table",
					e.ID, e.Stage, o.ID, o.Stage, m.Text)
			}
		}
		tied += ties
	}
	t.Logf("%d ties between entries of different stages, each ordered by the stage precedence table", tied)
	seen := map[string]bool{}
	for _, p := range stagePrecedence {
		if seen[p.Stage] || !slices.Contains(Stages, p.Stage) || p.Why == "" {
			t.Errorf("precedence table: stage %q duplicated, unknown or without a reason", p.Stage)
		}
		seen[p.Stage] = true
	}
	if len(seen) != len(Stages) {
		t.Errorf("precedence table orders %d of %d stages", len(seen), len(Stages))
	}
}

func TestLayers(t *testing.T) {
	cases := []struct {
		msg  string
		want []string // layers that must be present, in this order
	}{
		{
			msg: `Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup network for sandbox "abc": plugin type="calico" failed (add): error getting ClusterInformation: connection is unauthorized: Unauthorized`,
			want: []string{
				`Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup network for sandbox "abc": plugin type="calico" failed (add): error getting ClusterInformation: connection is unauthorized: Unauthorized`,
				`rpc error: code = Unknown desc = failed to setup network for sandbox "abc": plugin type="calico" failed (add): error getting ClusterInformation: connection is unauthorized: Unauthorized`,
				`failed to setup network for sandbox "abc": plugin type="calico" failed (add): error getting ClusterInformation: connection is unauthorized: Unauthorized`,
				`plugin type="calico" failed (add): error getting ClusterInformation: connection is unauthorized: Unauthorized`,
				`error getting ClusterInformation: connection is unauthorized: Unauthorized`,
				`connection is unauthorized: Unauthorized`,
				`Unauthorized`,
			},
		},
		{
			msg: `E0101 12:00:00.123456    1234 pod_workers.go:1298] "Error syncing pod, skipping" err="failed to \"StartContainer\" for \"app\" with ImagePullBackOff: \"Back-off pulling image \\\"x\\\"\"" pod="ns/p" podUID="123"`,
			want: []string{
				`"Error syncing pod, skipping" err="failed to \"StartContainer\" for \"app\" with ImagePullBackOff: \"Back-off pulling image \\\"x\\\"\"" pod="ns/p" podUID="123"`,
				`Error syncing pod, skipping`,
				`failed to "StartContainer" for "app" with ImagePullBackOff: "Back-off pulling image \"x\""`,
				`Back-off pulling image "x"`,
			},
		},
		{
			msg: `Dec 05 10:00:01 node-1 containerd[812]: time="2026-12-05T10:00:01Z" level=error msg="PullImage \"nginx:latst\" failed" error="rpc error: code = NotFound desc = failed to pull and unpack image \"docker.io/library/nginx:latst\": not found"`,
			want: []string{
				`PullImage "nginx:latst" failed`,
				`rpc error: code = NotFound desc = failed to pull and unpack image "docker.io/library/nginx:latst": not found`,
				`failed to pull and unpack image "docker.io/library/nginx:latst": not found`,
				`not found`,
			},
		},
		{
			msg: `{"level":"error","ts":"2026-12-05T10:00:00Z","caller":"ipamd/ipamd.go:1","msg":"Failed to allocate a private IP address","error":"InsufficientCidrBlocks: There are not enough free cidr blocks in the specified subnet"}`,
			want: []string{
				`Failed to allocate a private IP address: InsufficientCidrBlocks: There are not enough free cidr blocks in the specified subnet`,
				`Failed to allocate a private IP address`,
				`InsufficientCidrBlocks: There are not enough free cidr blocks in the specified subnet`,
				`There are not enough free cidr blocks in the specified subnet`,
			},
		},
		{
			msg:  `failed to \"KillPodSandbox\" for \"uid\" with KillPodSandboxError: \"rpc error: code = Unknown desc = networkPlugin cni failed\"`,
			want: []string{`failed to "KillPodSandbox" for "uid" with KillPodSandboxError: "rpc error: code = Unknown desc = networkPlugin cni failed"`, `networkPlugin cni failed`},
		},
		{
			// runc before 1.0: each level's cause quoted after " caused ", escaped once more.
			msg: `OCI runtime create failed: container_linux.go:348: starting container process caused "process_linux.go:402: container init caused \"process_linux.go:367: setting cgroup config for procHooks process caused \\\"failed to write 10485760 to memory.limit_in_bytes: write /sys/fs/cgroup/memory/kubepods/x/memory.limit_in_bytes: device or resource busy\\\"\"": unknown`,
			want: []string{
				`process_linux.go:402: container init caused "process_linux.go:367: setting cgroup config for procHooks process caused \"failed to write 10485760 to memory.limit_in_bytes: write /sys/fs/cgroup/memory/kubepods/x/memory.limit_in_bytes: device or resource busy\""`,
				`setting cgroup config for procHooks process caused "failed to write 10485760 to memory.limit_in_bytes: write /sys/fs/cgroup/memory/kubepods/x/memory.limit_in_bytes: device or resource busy"`,
				`failed to write 10485760 to memory.limit_in_bytes: write /sys/fs/cgroup/memory/kubepods/x/memory.limit_in_bytes: device or resource busy`,
				`device or resource busy`,
			},
		},
		{
			// fluentd: a time with its zone after a space, and "[error]:".
			msg:  `2018-12-28 14:22:30 +0000 [error]: config error file="/fluentd/etc/fluent.conf" error="Unexpected error: failed to read data"`,
			want: []string{`config error file="/fluentd/etc/fluent.conf" error="Unexpected error: failed to read data"`, `failed to read data`},
		},
		{
			// The same cut before its closing quotes: the rest, unescaped once.
			msg:  `starting container process caused "process_linux.go:402: container init caused \"setting cgroup config`,
			want: []string{`process_linux.go:402: container init caused "setting cgroup config`},
		},
	}
	for _, tc := range cases {
		got := Layers(tc.msg)
		at := 0
		for _, w := range tc.want {
			i := slices.Index(got[at:], w)
			if i < 0 {
				t.Errorf("Layers(%q):\n%s\nmissing, or out of order, layer %q", tc.msg, strings.Join(got, "\n"), w)
				break
			}
			at += i + 1
		}
	}
}

func TestLayersBounded(t *testing.T) {
	msg := strings.Repeat(`a: "b: \"c: `, 2000)
	if n := len(Layers(msg)); n > maxLayers {
		t.Fatalf("%d layers, want at most %d", n, maxLayers)
	}
	for _, s := range []string{"", " ", `"`, `{`, `{"msg":1}`, `err="`, `\`, `rpc error: code = `} {
		Layers(s)
		Default().Read(s)
	}
}

func TestReadNestedChain(t *testing.T) {
	c := Default()
	msg := `Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup network for sandbox "abc": plugin type="calico" failed (add): error getting ClusterInformation: connection is unauthorized: Unauthorized`
	ms := c.Read(msg)
	if len(ms) == 0 {
		t.Fatalf("Read(%q): no match", msg)
	}
	var comps []string
	for _, m := range ms {
		comps = append(comps, m.Entry.Component)
		if m.Layer < 0 || m.Layer >= len(Layers(msg)) || !strings.Contains(Layers(msg)[m.Layer], m.Text) {
			t.Errorf("match %s: layer %d text %q not in that layer", m.Entry.ID, m.Layer, m.Text)
		}
	}
	for i := 1; i < len(ms); i++ {
		if ms[i].Layer < ms[i-1].Layer {
			t.Errorf("matches not outermost first: %d after %d", ms[i].Layer, ms[i-1].Layer)
		}
	}
	for _, want := range []string{"kubelet", "containerd"} {
		if !slices.Contains(comps, want) {
			t.Errorf("Read(%q): components %v, want %s among them", msg, comps, want)
		}
	}
	// the outermost match is the kubelet's, and it is a sandbox failure
	if ms[0].Entry.Component != "kubelet" || ms[0].Entry.Stage != "sandbox" {
		t.Errorf("outermost match %s (%s, %s), want the kubelet's sandbox message", ms[0].Entry.ID, ms[0].Entry.Component, ms[0].Entry.Stage)
	}
}

func TestReadCaptures(t *testing.T) {
	c := Default()
	ms := c.Read(`Failed to pull image "nginx:latst": rpc error: code = NotFound desc = failed to pull and unpack image "docker.io/library/nginx:latst": not found`)
	var got *Match
	for i := range ms {
		if ms[i].Entry.Component == "kubelet" && ms[i].Entry.Stage == "image" && ms[i].Layer == 0 {
			got = &ms[i]
			break
		}
	}
	if got == nil {
		t.Fatalf("no kubelet image entry at layer 0 in %+v", ms)
	}
	if got.Captures["image"] != `"nginx:latst"` {
		t.Errorf("captures %v, want image=\"nginx:latst\"", got.Captures)
	}
}

// A %q verb reads a quoted value, or an unquoted one that is a name (a release that
// printed it with %s): never a plain word of a sentence.
func TestQuotedVerbReadsNamesNotWords(t *testing.T) {
	e := &Entry{Template: "could not find %v %q"}
	for text, want := range map[string]bool{
		`could not find volume "pvc-1a2b"`:                     true,
		`could not find driver rbd.csi.ceph.com`:               true,
		`could not find anything related in docs`:              false,
		`could not find the answer in the docs, so I ask here`: false,
	} {
		if _, _, got := e.match(text, strings.ToLower(text)); got != want {
			t.Errorf("%q read by %q: %v, want %v", text, e.Template, got, want)
		}
	}
}

// The word a template prints before a value ends there: "provider %v is not registered"
// (an old scheduler's) does not read Azure's "…/providers/Microsoft.ContainerInstance/…
// The subscription is not registered …", whose "providers" only starts with it.
func TestAWordBeforeAValueEndsThere(t *testing.T) {
	e := &Entry{Template: "provider %v is not registered"}
	for text, want := range map[string]bool{
		`provider DefaultProvider is not registered`: true,
		`provider "x" is not registered`:             true,
		`api call to https://management.azure.com/x/providers/Microsoft.ContainerInstance/containerGroups/web: got HTTP response status code 409: The subscription is not registered to use namespace 'Microsoft.ContainerInstance'`: false,
	} {
		if _, _, got := e.match(text, lowerASCII(text)); got != want {
			t.Errorf("%q read by %q: %v, want %v", text, e.Template, got, want)
		}
	}
}

// A value the template appends with its label (", message: %q") holds what a failed
// command printed and is often cut at its first line break: the text up to the break
// still reads as the entry, its value before the label running to the end.
func TestALabelledTailMayBeCut(t *testing.T) {
	e := &Entry{Template: "Exec lifecycle hook (%v) for Container %q in Pod %q failed - error: %v, message: %q"}
	whole := `Exec lifecycle hook ([chown ceph /var/log/ceph]) for Container "mgr" in Pod "mgr-a_rook(1)" failed - error: command 'chown ceph /var/log/ceph' exited with 1: chown: Permission denied, message: "chown: Permission denied\n"`
	cut := `Exec lifecycle hook ([chown ceph /var/log/ceph]) for Container "mgr" in Pod "mgr-a_rook(1)" failed - error: command 'chown ceph /var/log/ceph' exited with 1: chown: Permission denied`
	for _, text := range []string{whole, cut} {
		span, _, ok := e.match(text, lowerASCII(text))
		if !ok {
			t.Errorf("no match of %q", text)
			continue
		}
		if span[1] != len(text) {
			t.Errorf("match of %q ends at %d, want the end %d", text, span[1], len(text))
		}
	}
	if _, _, ok := e.match(`Exec lifecycle hook ([x]) for Container "a" in Pod "b" failed`, "exec lifecycle hook ([x]) for container \"a\" in pod \"b\" failed"); ok {
		t.Error("a text without the error matched")
	}
}

// TestGenericTemplates: a template of only the words any program's error says tells no
// component; one word that names a thing or a step does.
func TestGenericTemplates(t *testing.T) {
	for tmpl, want := range map[string]bool{
		"unexpected error: %v":      true,
		"failed to read %s: %w":     true,
		"field not found, node: %s": false,
		"Error getting node":        false,
		"failed to decode %s":       true,
		"%s %q not found":           false,
		"failed to pull image %q":   false,
	} {
		e := &Entry{Template: tmpl}
		if e.Generic() != want {
			t.Errorf("Generic(%q) = %v, want %v", tmpl, !want, want)
		}
	}
}
