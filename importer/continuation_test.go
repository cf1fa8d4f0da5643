package importer

import (
	"strings"
	"testing"

	"podflow.dev/podflow/bundle"
)

// TestContinuationsJoined reads a klog multi-line value whose paste lost its tab
// indentation (kube-proxy's iptables-restore failure) and a journal whose kubelet
// printed one: the value's lines stay in the log block and read as one message on the
// line that opens it, every later line keeps its number, and the lines after the value
// stay messages of their own.
func TestContinuationsJoined(t *testing.T) {
	proxy := "Some context from the ticket.\n" +
		"E0914 09:31:22.184101       1 proxier.go:1551] \"Failed to execute iptables-restore\" err=<\n" +
		"exit status 2: Warning: iptables-legacy tables present, use iptables-legacy-save to see them\n" +
		"iptables-restore v1.8.7 (nf_tables): Couldn't load match `mark':No such file or directory\n" +
		"Error occurred at line: 8\n" +
		">\n" +
		"I0914 09:31:22.184136       1 proxier.go:811] \"Sync failed\" retryingTime=\"30s\"\n"
	journal := "Feb 05 10:58:14 bmoore-v-1 kubelet[12704]: I0205 10:58:14.917220   12704 swap_util.go:115] \"Swap is on\" /proc/swaps contents=<\n" +
		"Feb 05 10:58:14 bmoore-v-1 kubelet[12704]:         Filename                                Type                Size                Used                Priority\n" +
		"Feb 05 10:58:14 bmoore-v-1 kubelet[12704]:         /swapfile                               file                3991548                0                -2\n" +
		"Feb 05 10:58:14 bmoore-v-1 kubelet[12704]:  >\n" +
		"Feb 05 10:58:14 bmoore-v-1 kubelet[12704]: E0205 10:58:14.917245   12704 run.go:72] \"command failed\" err=\"failed to run Kubelet: running with swap on is not supported, please disable swap!\"\n"
	b, rep := importDir(t, map[string][]byte{"ticket": []byte(proxy), "journal.txt": []byte(journal)}, FormatAuto)

	var frag string
	for _, bl := range rep.File("ticket").Blocks {
		if strings.HasPrefix(bl.Fragment, bundle.FragmentsDir+"/"+bundle.FragmentJournal) {
			frag = bl.Fragment
		}
	}
	data, err := b.ReadFile(frag)
	if err != nil {
		t.Fatalf("no journal fragment (%q): %v", frag, err)
	}
	if o := rep.Origins[frag]; o.LineOffset != 1 {
		t.Errorf("fragment origin %+v, want line offset 1", o)
	}
	lines := strings.Split(string(data), "\n")
	want := "E0914 09:31:22.184101       1 proxier.go:1551] \"Failed to execute iptables-restore\" err=<exit status 2: " +
		"Warning: iptables-legacy tables present, use iptables-legacy-save to see them iptables-restore v1.8.7 (nf_tables): " +
		"Couldn't load match `mark':No such file or directory Error occurred at line: 8>"
	if lines[0] != want {
		t.Errorf("line 1 of the fragment:\n%s\nwant:\n%s", lines[0], want)
	}
	if len(lines) < 6 || lines[1] != "" || lines[4] != "" || !strings.HasPrefix(lines[5], "I0914 09:31:22.184136") {
		t.Errorf("the value's lines are not blank, or the next entry moved: %q", lines)
	}

	var kubelet []byte
	for _, name := range b.Names() {
		if strings.Contains(name, "journal") || strings.HasSuffix(name, bundle.NodeKubeletLog) {
			if d, _ := b.ReadFile(name); strings.Contains(string(d), "Swap is on") {
				kubelet = d
			}
		}
	}
	jl := strings.Split(string(kubelet), "\n")
	if len(jl) < 5 || !strings.HasSuffix(jl[0], "contents=<Filename                                Type                Size                Used                Priority /swapfile                               file                3991548                0                -2>") {
		t.Fatalf("journal not joined: %q", jl)
	}
	if jl[3] != "" || !strings.Contains(jl[4], "\"command failed\"") {
		t.Errorf("the entry after the value moved or was joined: %q", jl)
	}
}

// TestContinuationsNotJoined keeps apart lines that continue no message: entries one
// after another, prose after a log line, and a short systemctl status line before a
// line at the margin.
func TestContinuationsNotJoined(t *testing.T) {
	in := []textLine{
		{"Jun 16 11:03:05 n kubelet[1]: E0616 11:03:05.1 1 kuberuntime_manager.go:1] \"one\"", 1},
		{"Jun 16 11:03:05 n kubelet[1]: E0616 11:03:05.2 1 kuberuntime_manager.go:1] \"two\"", 2},
		{"This is what we saw after the upgrade.", 3},
		{"     Active: failed (Result: exit-code)", 4},
		{"Hint: Some lines were ellipsized, use -l to show in full.", 5},
		{"pod (deis-router-1715979499-afi8x) failed to fit in any node", 6},
		{"fit failure on node (ip-10-51-0-162.ec2.internal): PodFitsHostPorts", 7},
	}
	out := joinContinuations(in)
	for i := range in {
		if out[i] != in[i] {
			t.Errorf("line %d changed: %q", in[i].n, out[i].s)
		}
	}
}
