package importer

import (
	"fmt"
	"path"
	"regexp"
	"sort"
	"strings"

	"podflow.dev/podflow/bundle"
)

// sosCommands holds a sosreport's command output: sos_commands/<plugin>/<command>, the
// command line mangled into a file name (spaces to "_", "/" to "."; sos's
// Plugin._mangle_command). Copied files sit at their original path below the root.
const sosCommands = "sos_commands"

// Files a sosreport copies from the host at their original paths.
const (
	sosKubeletConfig = "var/lib/kubelet/config.yaml"
	sosEtcHostname   = "etc/hostname"
	sosHostname      = "sos_commands/host/hostname"
)

// isSosreport accepts a tree with sos_commands/ at its root.
func isSosreport(src *bundle.Bundle) bool {
	for _, n := range src.Names() {
		if strings.HasPrefix(n, sosCommands+"/") {
			return true
		}
	}
	return false
}

// sosJournal matches the journal of a unit as sos's add_journal names it:
// journalctl_--no-pager_--unit_<unit>, with optional --since/--lines arguments.
var sosJournal = regexp.MustCompile(`^journalctl_--no-pager(?:_--[a-z]+_\S+?)*_--unit_([A-Za-z0-9@_.-]+?)(?:_--.*)?$`)

// sosUnknownHost names the node of a sosreport that records no host name.
const sosUnknownHost = "unknown-host"

var reSosArchive = regexp.MustCompile(`^sosreport-(.+)-\d{4}-\d{2}-\d{2}-[a-z0-9]+$`)

// sosFile is what one sosreport file was recognised as.
type sosFile struct {
	name string
	data []byte
}

// sosImport gathers one sosreport: files placed at once, and the crictl output that is
// joined once every inspect document was read.
type sosImport struct {
	r                   *Report
	node, how           string
	files               map[string][]byte
	found               map[string]bool
	psTables, podTables []sosFile
	inspects            []sosFile
	docs                []criInspectDoc
}

// importSosreport maps one node's sosreport to that node's evidence: kubelet and runtime
// journals, crictl state and the kubelet config. A sosreport holds no API objects.
func importSosreport(src *bundle.Bundle, r *Report) map[string][]byte {
	si := &sosImport{r: r, files: map[string][]byte{}, found: map[string]bool{}}
	si.node, si.how = sosNode(src)
	if si.node == sosUnknownHost {
		r.NotCarried = append(r.NotCarried, "the node's name: the sosreport records no host name, so its evidence is filed under node "+sosUnknownHost)
	}
	for _, name := range src.Names() {
		data, _ := src.ReadFile(name) // listed by Names, so present
		si.file(name, data)
	}
	si.layoutCRI()
	sosNotCarried(r, si.found)
	return si.files
}

// file places or sets aside one file of the sosreport.
func (si *sosImport) file(name string, data []byte) {
	r, node := si.r, si.node
	base := path.Base(name)
	inCommands := strings.HasPrefix(name, sosCommands+"/")
	switch {
	case name == sosHostname || name == sosEtcHostname:
		r.add(FileReport{Path: name, Detected: "host name", Status: StatusUsed, Reason: "the node is " + node + " (" + si.how + ")"})
	case inCommands && (base == "crictl_ps_-a" || base == "crictl_ps"):
		si.psTables = append(si.psTables, sosFile{name, data})
	case inCommands && base == "crictl_pods":
		si.podTables = append(si.podTables, sosFile{name, data})
	case inCommands && (strings.HasPrefix(base, "crictl_inspect_") || strings.HasPrefix(base, "crictl_inspectp_")):
		d, ok := parseCRIInspect(data)
		if !ok {
			r.ignored(name, "crictl inspect output", "not crictl inspect JSON (the runtime may have refused the command)")
			return
		}
		si.docs = append(si.docs, d...)
		si.inspects = append(si.inspects, sosFile{name, data})
	case inCommands && sosJournal.MatchString(base):
		si.journal(name, sosJournal.FindStringSubmatch(base)[1], data)
	case inCommands && (name == sosCommands+"/kernel/dmesg" || name == sosCommands+"/logs/journalctl_--no-pager_--catalog_--boot_--dmesg"):
		sosPlace(name, data, bundle.NodePath(node, bundle.NodeDmesg), "kernel ring buffer", si.files, r, si.found)
	case name == sosKubeletConfig:
		sosPlace(name, data, bundle.NodePath(node, bundle.NodeKubeletConfig), "kubelet config", si.files, r, si.found)
	case inCommands:
		r.ignored(name, "output of "+sosCommandLine(base), "not evidence podflow reads")
	default:
		r.ignored(name, "copied file /"+name, "not evidence podflow reads")
	}
}

// journal places the journal of the kubelet or container runtime unit.
func (si *sosImport) journal(name, unit string, data []byte) {
	out := ""
	switch strings.TrimSuffix(unit, ".service") {
	case "kubelet", "atomic-openshift-node":
		out = bundle.NodeKubeletLog
	case "containerd", "crio", "cri-o", "docker":
		out = bundle.NodeRuntimeLog
	}
	if out == "" {
		si.r.ignored(name, "journal of unit "+unit, "podflow reads the kubelet and container runtime journals only")
		return
	}
	sosPlace(name, data, bundle.NodePath(si.node, out), "journal of unit "+unit, si.files, si.r, si.found)
}

// layoutCRI places crictl inspect output, then the tables joined with it.
func (si *sosImport) layoutCRI() {
	join := criJoin{docs: si.docs}
	for _, f := range si.inspects {
		d, _ := parseCRIInspect(f.data)
		out := bundle.NodeCRIInspectPath(si.node, d[0].ID)
		what := "crictl inspect of container " + d[0].ID
		if d[0].sandbox {
			out, what = bundle.NodeCRIInspectPodPath(si.node, d[0].ID), "crictl inspectp of pod sandbox "+d[0].ID
		}
		si.files[out] = f.data
		si.r.Origins[out] = Origin{Path: f.name, SameShape: len(d) == 1 && !strings.HasPrefix(strings.TrimSpace(string(f.data)), "[")}
		si.r.used(f.name, what, out)
		si.found["cri"] = true
	}
	// crictl ps -a lists exited containers too; plain crictl ps only the running ones.
	sort.SliceStable(si.psTables, func(i, j int) bool {
		return strings.HasSuffix(si.psTables[i].name, "_-a") && !strings.HasSuffix(si.psTables[j].name, "_-a")
	})
	for _, f := range si.psTables {
		sosCRITable(f, si.node, join, si.files, si.r, si.found, true)
	}
	for _, f := range si.podTables {
		sosCRITable(f, si.node, join, si.files, si.r, si.found, false)
	}
}

// sosPlace copies one file to its node evidence path; the first of several wins.
func sosPlace(name string, data []byte, out, what string, files map[string][]byte, r *Report, found map[string]bool) {
	if _, dup := files[out]; dup {
		r.ignored(name, what, "another file of the sosreport already gave "+out)
		return
	}
	files[out] = data
	r.Origins[out] = Origin{Path: name}
	r.used(name, what, out)
	found[out] = true
}

// sosCRITable turns a crictl ps or pods table into the JSON podflow reads, with full IDs
// and pod UIDs taken from the inspect output of the same sosreport.
func sosCRITable(f sosFile, node string, join criJoin, files map[string][]byte, r *Report, found map[string]bool, containers bool) {
	lines := fileLines(f.data)
	kind, out, what := tableCRIPods, bundle.NodePath(node, bundle.NodeCRIPods), "crictl pods table"
	if containers {
		kind, out, what = tableCRIContainers, bundle.NodePath(node, bundle.NodeCRIContainers), "crictl ps table"
	}
	start := -1
	for i, l := range lines {
		if tableKind(l.s) == kind {
			start = i
			break
		}
	}
	if start < 0 {
		r.ignored(f.name, what, "no crictl table header (the runtime may have refused the command)")
		return
	}
	if _, dup := files[out]; dup {
		r.ignored(f.name, what, "another file of the sosreport already gave "+out)
		return
	}
	var data []byte
	var itemLines []int
	var problems []string
	missing, n := 0, 0
	if containers {
		rows, probs := parseCRIContainers(lines[start:])
		missing, n, problems = join.containers(rows), len(rows), probs
		for _, c := range rows {
			itemLines = append(itemLines, c.line)
		}
		data = criListJSON("containers", rows)
	} else {
		rows, probs := parseCRISandboxes(lines[start:])
		missing, n, problems = join.sandboxes(rows), len(rows), probs
		for _, s := range rows {
			itemLines = append(itemLines, s.line)
		}
		data = criListJSON("items", rows)
	}
	if missing > 0 {
		problems = append(problems, fmt.Sprintf("%d of %d rows name no pod UID (no crictl inspect output for them), so they cannot be linked to pods", missing, n))
	}
	files[out] = data
	r.Origins[out] = Origin{Path: f.name, ItemLines: itemLines}
	r.add(FileReport{Path: f.name, Detected: what, Status: StatusUsed, Reason: strings.Join(problems, "; "), Produced: []string{out}})
	found["cri"] = true
}

// sosNode names the node: the host name sos recorded (a kubelet without
// --hostname-override registers under it), else the report's directory is all there is.
func sosNode(src *bundle.Bundle) (string, string) {
	for _, p := range []string{sosHostname, sosEtcHostname} {
		if data, err := src.ReadFile(p); err == nil {
			if h := strings.ToLower(strings.TrimSpace(string(data))); h != "" && !strings.ContainsAny(h, "/ \n") {
				return h, "from " + p
			}
		}
	}
	// sosreport-<host>[-<label>]-<yyyy-mm-dd>-<random>: without a label, the host.
	if m := reSosArchive.FindStringSubmatch(src.Root); m != nil {
		return strings.ToLower(m[1]), "from the archive name " + src.Root + ", which sos starts with the host name"
	}
	return sosUnknownHost, "the sosreport records no host name"
}

// sosCommandLine undoes the mangling of a command file name well enough to show it.
func sosCommandLine(base string) string {
	return strings.ReplaceAll(base, "_", " ")
}

func sosNotCarried(r *Report, found map[string]bool) {
	r.NotCarried = append(r.NotCarried, "API objects (pods, owners, events, nodes): a sosreport is taken on one node; analyze it together with a cluster bundle")
	var missing []string
	for _, m := range []struct{ file, what string }{
		{bundle.NodeKubeletLog, "kubelet journal"},
		{bundle.NodeRuntimeLog, "container runtime journal"},
		{bundle.NodeKubeletConfig, "kubelet configuration"},
		{bundle.NodeDmesg, "kernel ring buffer"},
	} {
		has := false
		for k := range found {
			if strings.HasSuffix(k, "/"+m.file) {
				has = true
			}
		}
		if !has {
			missing = append(missing, m.what)
		}
	}
	if !found["cri"] {
		missing = append(missing, "CRI state (no crictl output: the crio plugin did not run)")
	}
	sort.Strings(missing)
	r.NotCarried = append(r.NotCarried, missing...)
}
