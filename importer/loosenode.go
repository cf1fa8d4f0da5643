package importer

import (
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"podflow.dev/podflow/bundle"
	"podflow.dev/podflow/internal/cmdline"
)

// Node evidence a paste can carry: crictl tables and inspect output, and container logs
// shown by `kubectl logs`. Neither names its node, so each is placed once every file was
// read, at the node the pods it names are bound to.

// crictlPaste is one pasted crictl output waiting for its node.
type crictlPaste struct {
	path       string
	first      int
	containers []criContainerRow
	sandboxes  []criSandboxRow
	inspect    []criInspectDoc
	raw        []byte // inspect JSON as pasted
}

// pods names the pods (namespace/name) a paste is about.
func (c *crictlPaste) pods() []string {
	var out []string
	for _, r := range c.containers {
		out = append(out, r.Labels[criLabelPodNamespace]+"/"+r.Labels[criLabelPodName])
	}
	for _, r := range c.sandboxes {
		out = append(out, r.Metadata.Namespace+"/"+r.Metadata.Name)
	}
	for _, d := range c.inspect {
		out = append(out, d.Namespace+"/"+d.Pod)
	}
	return out
}

// crictlBlock reads a crictl table; true when it gave rows.
func (li *looseImport) crictlBlock(name string, b segmentBlock) (bool, []string) {
	p := &crictlPaste{path: name, first: b.lines[0].n}
	var probs []string
	if b.kind == tableCRIContainers {
		p.containers, probs = parseCRIContainers(b.lines)
	} else {
		p.sandboxes, probs = parseCRISandboxes(b.lines)
	}
	if len(p.containers)+len(p.sandboxes) == 0 {
		return false, probs
	}
	li.crictl = append(li.crictl, p)
	return true, probs
}

// crictlInspect takes a chunk of JSON that is crictl inspect or inspectp output; false
// when it is not.
func (li *looseImport) crictlInspect(name string, lines []textLine) bool {
	var buf strings.Builder
	for _, l := range lines {
		buf.WriteString(l.s)
		buf.WriteByte('\n')
	}
	data := []byte(buf.String())
	docs, ok := parseCRIInspect(data)
	if !ok {
		return false
	}
	li.crictl = append(li.crictl, &crictlPaste{path: name, first: lines[0].n, inspect: docs, raw: data})
	return true
}

// podUIDs maps namespace/name of imported pod objects to their UID.
func (li *looseImport) podUIDs() map[string]string {
	return li.podIndex(func(p *corev1.Pod) string { return string(p.UID) })
}

// podIndex maps namespace/name of every imported pod object that decodes to what value
// takes from it, leaving out pods where that is empty.
func (li *looseImport) podIndex(value func(*corev1.Pod) string) map[string]string {
	out := map[string]string{}
	for key, it := range li.byKey {
		if !strings.HasPrefix(key, "Pod/") {
			continue
		}
		var p corev1.Pod
		if json.Unmarshal(it.data, &p) == nil {
			if v := value(&p); v != "" {
				out[p.Namespace+"/"+p.Name] = v
			}
		}
	}
	return out
}

// pasteNode picks the node of a paste: the node most of its pods are bound to, else the
// only node the input names.
func pasteNode(pods []string, podNodes map[string]string, nodes []string) string {
	votes := map[string]int{}
	for _, p := range pods {
		if n, ok := podNodes[p]; ok {
			votes[n]++
		}
	}
	best, bestVotes := "", 0
	for n, v := range votes {
		if v > bestVotes || (v == bestVotes && n < best) {
			best, bestVotes = n, v
		}
	}
	if best == "" && len(nodes) == 1 {
		return nodes[0]
	}
	return best
}

// layoutCrictl places pasted crictl output at its node, joining tables with inspect
// output and pod objects for full IDs and pod UIDs.
func (li *looseImport) layoutCrictl(files map[string][]byte) {
	podNodes := li.podNodes()
	nodeSet := map[string]bool{}
	for _, n := range podNodes {
		nodeSet[n] = true
	}
	for _, n := range li.nodeNames() {
		nodeSet[n] = true
	}
	nodes := slices.Sorted(maps.Keys(nodeSet))
	join := criJoin{podUIDs: li.podUIDs()}
	for _, p := range li.crictl {
		join.docs = append(join.docs, p.inspect...)
	}
	for _, p := range li.crictl {
		f := li.r.File(p.path)
		node := pasteNode(p.pods(), podNodes, nodes)
		if node == "" {
			f.Reason = joinReason(f.Reason, fmt.Sprintf("line %d: crictl output not used: no pod in the input tells which node it is from", p.first))
			continue
		}
		var out string
		var data []byte
		var o Origin
		missing := 0
		switch {
		case len(p.inspect) > 0:
			out = bundle.NodeCRIInspectPath(node, p.inspect[0].ID)
			if p.inspect[0].sandbox {
				out = bundle.NodeCRIInspectPodPath(node, p.inspect[0].ID)
			}
			// A single pasted document keeps its JSON pointers; the loader cites no line in it.
			single := !strings.HasPrefix(strings.TrimSpace(string(p.raw)), "[")
			data, o = p.raw, Origin{Path: p.path, LineOffset: p.first - 1, SameShape: single}
		case len(p.containers) > 0:
			missing = join.containers(p.containers)
			out, data = bundle.NodePath(node, bundle.NodeCRIContainers), criListJSON("containers", p.containers)
			o = Origin{Path: p.path}
			for _, c := range p.containers {
				o.ItemLines = append(o.ItemLines, c.line)
			}
		default:
			missing = join.sandboxes(p.sandboxes)
			out, data = bundle.NodePath(node, bundle.NodeCRIPods), criListJSON("items", p.sandboxes)
			o = Origin{Path: p.path}
			for _, s := range p.sandboxes {
				o.ItemLines = append(o.ItemLines, s.line)
			}
		}
		if _, dup := files[out]; dup {
			f.Reason = joinReason(f.Reason, fmt.Sprintf("line %d: node %s already has %s from another output", p.first, node, out))
			continue
		}
		if missing > 0 {
			f.Reason = joinReason(f.Reason, fmt.Sprintf("line %d: %d crictl rows name no pod UID (paste crictl inspect or kubectl get pod -o yaml to link them to their pods)", p.first, missing))
		}
		files[out] = data
		li.r.Origins[out] = o
		f.Produced = append(f.Produced, out)
		li.found["cri"] = true
	}
}

// logCommand is what a `kubectl logs` command line names.
type logCommand struct {
	namespace, pod, container string
	previous                  bool
	// nsGuessed says the command named no namespace: kubectl's context chose it.
	nsGuessed bool
}

// parseLogsCommand reads `kubectl logs [-n NS] POD [-c C] [-p]` (also `oc logs`,
// pod/NAME, NAME CONTAINER); false when cmd is no logs command.
func parseLogsCommand(cmd string) (logCommand, bool) {
	cmd, _, _ = strings.Cut(cmdline.Normalize(cmd), "|")
	f := strings.Fields(cmd)
	if len(f) > 0 && f[0] == "sudo" {
		f = f[1:]
	}
	// The subcommand follows the global flags: kubectl -n kube-system logs POD.
	sub := 1
	for sub < len(f) && strings.HasPrefix(f[sub], "-") {
		if valuedFlags[f[sub]] {
			sub++
		}
		sub++
	}
	if sub+1 >= len(f) || f[sub] != "logs" {
		return logCommand{}, false
	}
	lc := logCommand{namespace: commandNamespace(cmd)}
	var args []string
	for i := sub + 1; i < len(f); i++ {
		a := f[i]
		switch {
		case a == "-p" || a == "--previous" || a == "--previous=true":
			lc.previous = true
		case a == "-c" || a == "--container":
			if i+1 < len(f) {
				lc.container = f[i+1]
				i++
			}
		case strings.HasPrefix(a, "--container="):
			lc.container = strings.TrimPrefix(a, "--container=")
		case strings.HasPrefix(a, "-c") && len(a) > 2:
			lc.container = strings.TrimPrefix(a[2:], "=")
		case a == "-n" || a == "--namespace" || a == "--tail" || a == "--since" || a == "--since-time":
			i++
		case strings.HasPrefix(a, "-"):
		default:
			args = append(args, a)
		}
	}
	if len(args) == 0 {
		return logCommand{}, false
	}
	lc.pod = args[0]
	if kind, name, ok := strings.Cut(args[0], "/"); ok {
		// TYPE/NAME: a pod, or a workload or Service whose pod kubectl picks (and names
		// on stderr, "Found 2 pods, using pod/NAME", which logPodNamed reads).
		lc.pod = ""
		if podTypes[strings.ToLower(kind)] {
			lc.pod = name
		}
	}
	if !reObjectName.MatchString(lc.pod) {
		lc.pod = ""
	}
	if len(args) > 1 && lc.container == "" {
		lc.container = args[1]
	}
	if lc.namespace == "" {
		lc.namespace, lc.nsGuessed = "default", true
	}
	return lc, true
}

// rePrefixedLogLine is a line of `kubectl logs --prefix` (kubectl pkg/cmd/logs
// addPrefixIfNeeded, "[pod/%s/%s] "): every line of every container it streams, from a
// label selector or a workload, starts with the pod and container that printed it.
var rePrefixedLogLine = regexp.MustCompile(`^\[pod/([a-z0-9](?:[-a-z0-9.]{0,251}[a-z0-9])?)/([a-z0-9](?:[-a-z0-9]{0,61}[a-z0-9])?)\] ?`)

// prefixedLogs splits the output of `kubectl logs --prefix` into one log per pod and
// container, each line without its prefix, in the namespace the command names. A chunk
// is read so only when every line that is not blank carries the prefix: a ticket that
// quotes one such line among others is not the command's output.
func prefixedLogs(path string, c chunk) []pastedLog {
	var out []pastedLog
	at := map[[2]string]int{}
	// The namespace and --previous of the command, when the paste keeps it (a selector
	// given as --selector=… leaves parseLogsCommand no argument to read).
	base, ok := parseLogsCommand(c.cmd)
	if !ok {
		base = logCommand{namespace: commandNamespace(cmdline.Normalize(c.cmd))}
		if base.namespace == "" {
			base.namespace, base.nsGuessed = "default", true
		}
	}
	for _, l := range c.lines {
		if strings.TrimSpace(l.s) == "" {
			continue
		}
		m := rePrefixedLogLine.FindStringSubmatchIndex(l.s)
		if m == nil {
			return nil
		}
		key := [2]string{l.s[m[2]:m[3]], l.s[m[4]:m[5]]}
		i, ok := at[key]
		if !ok {
			i = len(out)
			at[key] = i
			lc := base
			lc.pod, lc.container = key[0], key[1]
			out = append(out, pastedLog{path: path, cmd: lc})
		}
		// Lines of other containers between two of this one's stay as blank lines, so
		// the log's line numbers still cite the paste's.
		if k := len(out[i].lines); k > 0 {
			for n := out[i].lines[k-1].n + 1; n < l.n; n++ {
				out[i].lines = append(out[i].lines, textLine{n: n})
			}
		}
		out[i].lines = append(out[i].lines, textLine{s: l.s[m[1]:], n: l.n})
	}
	return out
}

// podTypes are the names kubectl takes for the pod resource in TYPE/NAME.
var podTypes = map[string]bool{"pod": true, "pods": true, "po": true}

// reObjectName is a name an object may have (a DNS subdomain).
var reObjectName = regexp.MustCompile(`^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$`)

// reFoundPods is what kubectl prints on stderr when `kubectl logs TYPE/NAME` picks one
// of several pods (k8s.io/kubectl pkg/polymorphichelpers attachablePodForObject).
var reFoundPods = regexp.MustCompile(`^Found \d+ pods, using pod/([a-z0-9][-a-z0-9.]*)\s*$`)

// logPodNamed is the pod kubectl says it picked at the top of a log, or "".
func logPodNamed(lines []textLine) string {
	for i, l := range lines {
		if i > 2 {
			break
		}
		if m := reFoundPods.FindStringSubmatch(strings.TrimSpace(l.s)); m != nil {
			return m[1]
		}
	}
	return ""
}

// pastedLog is the output of one `kubectl logs` waiting for its container's name.
type pastedLog struct {
	path  string
	cmd   logCommand
	lines []textLine
}

// layoutLogs places pasted container logs; a log whose command named no container is
// placed when its pod is known to have one container.
func (li *looseImport) layoutLogs(files map[string][]byte) {
	for _, l := range li.logs {
		f := li.r.File(l.path)
		c := l.cmd
		if c.container == "" {
			c.container = li.onlyContainer(c.namespace, c.pod)
		}
		if len(l.lines) == 0 {
			continue
		}
		if c.container == "" {
			// Its container is not known, its pod is: the command named it.
			frag := li.keepFragmentAbout(bundle.FragmentLog, l.path, l.lines,
				&bundle.FragmentAbout{Kind: "Pod", Namespace: c.namespace, Name: c.pod})
			setBlockFragment(f, l.lines[0].n, frag)
			f.Reason = joinReason(f.Reason, fmt.Sprintf("kubectl logs output for pod %s/%s kept as a container's log fragment: the command names no container (-c) and the input does not show the pod has only one", c.namespace, c.pod))
			li.found["logs"] = true
			continue
		}
		out := bundle.LogPath(c.namespace, c.pod, c.container, c.previous)
		if _, dup := files[out]; dup {
			f.Reason = joinReason(f.Reason, "a second log of container "+c.container+" of pod "+c.namespace+"/"+c.pod+" is not used")
			continue
		}
		var buf strings.Builder
		for _, t := range l.lines {
			buf.WriteString(t.s)
			buf.WriteByte('\n')
		}
		files[out] = []byte(buf.String())
		li.r.Origins[out] = Origin{Path: l.path, LineOffset: l.lines[0].n - 1}
		f.Produced = append(f.Produced, out)
		li.found["logs"] = true
	}
}

// onlyContainer returns the pod's container when an imported pod shows exactly one.
func (li *looseImport) onlyContainer(ns, pod string) string {
	it, ok := li.byKey["Pod/"+ns+"/"+pod]
	if !ok {
		return ""
	}
	var p corev1.Pod
	if json.Unmarshal(it.data, &p) != nil || len(p.Spec.Containers) != 1 || len(p.Spec.InitContainers) != 0 {
		return ""
	}
	return p.Spec.Containers[0].Name
}

func trimBlank(lines []textLine) []textLine {
	for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1].s) == "" {
		lines = lines[:len(lines)-1]
	}
	for len(lines) > 0 && strings.TrimSpace(lines[0].s) == "" {
		lines = lines[1:]
	}
	return lines
}

// rePodLogPath matches the kubelet's container log files, copied from a node:
// /var/log/pods/<namespace>_<pod>_<uid>/<container>/<restart>.log.
var rePodLogPath = regexp.MustCompile(`(?:^|/)([a-z0-9][-a-z0-9]*)_([a-z0-9][-a-z0-9.]*)_[0-9a-f-]{36}/([a-z0-9][-a-z0-9]*)/\d+\.log$`)

// reCRILogLine is the prefix the runtime writes before every line of such a file
// (RFC 3339 time, stream, P or F for a partial or full line).
var reCRILogLine = regexp.MustCompile(`^\S+ (stdout|stderr) [PF] `)

// podLogFile reads a file named as the kubelet names container logs; its lines lose the
// runtime's prefix so it reads as `kubectl logs` prints it, line for line.
func podLogFile(name string, data []byte) (pastedLog, bool) {
	m := rePodLogPath.FindStringSubmatch(name)
	if m == nil {
		return pastedLog{}, false
	}
	lines := trimBlank(fileLines(data))
	for i := range lines {
		lines[i].s = reCRILogLine.ReplaceAllString(lines[i].s, "")
	}
	return pastedLog{path: name, cmd: logCommand{namespace: m[1], pod: m[2], container: m[3]}, lines: lines}, true
}

// podNodes maps namespace/name of every imported pod to the node it is bound to.
func (li *looseImport) podNodes() map[string]string {
	return li.podIndex(func(p *corev1.Pod) string { return p.Spec.NodeName })
}

// nodeNames lists the imported Node objects, sorted.
func (li *looseImport) nodeNames() []string {
	var out []string
	for key := range li.byKey {
		if name, ok := strings.CutPrefix(key, "Node//"); ok {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}
