package importer

import (
	"fmt"
	"path"
	"regexp"
	"sort"
	"strings"
	"time"

	"podflow.dev/podflow/bundle"
)

// Top-level entries of an OpenShift must-gather (the output of `oc adm inspect` per
// gathering image): a timestamp file, namespaced objects, cluster-scoped objects and the
// journals of host services.
const (
	mgTimestamp      = "timestamp"
	mgNamespaces     = "namespaces"
	mgClusterScoped  = "cluster-scoped-resources"
	mgHostLogs       = "host_service_logs"
	mgKubeletJournal = "kubelet_service.log"
)

// mustGatherRel returns a must-gather file's path below the gathering image's directory
// (must-gather.local.<n>/<image>/...), or false when it is not inside one.
func mustGatherRel(name string) (string, bool) {
	parts := strings.Split(name, "/")
	for i, p := range parts {
		switch p {
		case mgNamespaces, mgClusterScoped, mgHostLogs:
			if i < len(parts)-1 {
				return strings.Join(parts[i:], "/"), true
			}
		case mgTimestamp:
			if i == len(parts)-1 {
				return p, true
			}
		}
	}
	return "", false
}

// isMustGather accepts a tree with the layout `oc adm must-gather` writes.
func isMustGather(src *bundle.Bundle) bool {
	for _, n := range src.Names() {
		if rel, ok := mustGatherRel(n); ok && strings.HasPrefix(rel, mgClusterScoped+"/") {
			return true
		}
		// namespaces/<ns>/<file>.yaml at least: a cluster-info dump of a namespace called
		// "namespaces" has namespaces/<list>.yaml only.
		if rel, ok := mustGatherRel(n); ok && strings.HasPrefix(rel, mgNamespaces+"/") && strings.HasSuffix(rel, ".yaml") && strings.Count(rel, "/") >= 2 {
			return true
		}
	}
	return false
}

// mgLogFile matches a container log: namespaces/<ns>/pods/<pod>/<container>/<container>/logs/<which>.log.
var mgLogFile = regexp.MustCompile(`^namespaces/([^/]+)/pods/([^/]+)/([^/]+)/([^/]+)/logs/(current|previous)(\.insecure)?\.log$`)

// importMustGather maps an OpenShift must-gather: every YAML object file is routed by the
// kind of its objects (so group and plural directories need no table), container logs
// become podflow logs, and the masters' kubelet journal is split by host onto nodes.
func importMustGather(src *bundle.Bundle, r *Report) map[string][]byte {
	li := newLooseImport(r)
	var journals []string
	empty := map[string]string{} // produced list path -> the empty list file that says so
	for _, name := range src.Names() {
		data, _ := src.ReadFile(name) // listed by Names, so present
		rel, ok := mustGatherRel(name)
		switch {
		case !ok:
			r.ignored(name, describeOther(name), "outside the must-gather layout (namespaces/, cluster-scoped-resources/, host_service_logs/)")
		case rel == mgTimestamp:
			if end, ok := mustGatherEnd(data); ok {
				r.CollectedAt = &end
				r.used(name, "must-gather timestamp", bundle.ManifestPath)
			} else {
				r.ignored(name, "must-gather timestamp", "no time in it; ages are measured against the latest evidence instead")
			}
		case mgLogFile.MatchString(rel):
			m := mgLogFile.FindStringSubmatch(rel)
			mustGatherLog(name, data, m[1], m[2], m[4], m[5] == "previous", li.files, r)
		case path.Base(rel) == mgKubeletJournal:
			journals = append(journals, name)
		case strings.HasSuffix(rel, ".yaml") || strings.HasSuffix(rel, ".yml") || strings.HasSuffix(rel, ".json"):
			if !li.objectFile(name, data) {
				mustGatherEmptyList(name, rel, empty, r)
			}
		default:
			r.ignored(name, describeOther(name), "not part of the evidence podflow reads")
		}
	}
	li.layoutEvents()
	li.layoutLists(li.files)
	// A list gathered empty says there are none, which differs from not gathered.
	for out, from := range empty {
		if _, ok := li.files[out]; !ok {
			li.files[out] = []byte(`{"apiVersion":"v1","kind":"List","items":[]}` + "\n")
			r.Origins[out] = Origin{Path: from}
		}
	}
	nodes := li.nodeNames()
	podNodes := li.podNodes()
	for _, name := range journals {
		data, _ := src.ReadFile(name) // listed by Names, so present
		splitJournal(name, data, nodes, podNodes, li.files, r)
	}
	r.NotCarried = append(r.NotCarried, "CRI state (crictl pods, ps, inspect): a must-gather holds no node runtime state",
		"kubelet configuration", "kernel OOM lines")
	if len(journals) == 0 {
		r.NotCarried = append(r.NotCarried, "kubelet journals (no host_service_logs/*/kubelet_service.log)")
	} else {
		r.NotCarried = append(r.NotCarried, "kubelet journals of worker nodes: must-gather gathers the masters' only")
	}
	r.NotCarried = append(r.NotCarried, "cluster-scoped kinds with no objects: a must-gather writes one file per object, so none gathered cannot be told from none existing")
	if !li.found[bundle.KindSecrets] {
		r.NotCarried = append(r.NotCarried, "secrets: oc adm inspect does not gather them")
	}
	return li.files
}

// mustGatherPlurals maps the plural of namespaces/<ns>/<group>/<plural>.yaml to podflow's
// list, so a list gathered empty is known to be empty.
var mustGatherPlurals = map[string]string{
	"core/pods": bundle.KindPods, "apps/deployments": bundle.KindDeployments, "apps/replicasets": bundle.KindReplicaSets,
	"apps/statefulsets": bundle.KindStatefulSets, "apps/daemonsets": bundle.KindDaemonSets, "batch/jobs": bundle.KindJobs,
	"batch/cronjobs": bundle.KindCronJobs, "core/services": bundle.KindServices,
	"discovery.k8s.io/endpointslices": bundle.KindEndpointSlices, "core/events": bundle.KindEvents,
	"core/persistentvolumeclaims": bundle.KindPVCs, "core/resourcequotas": bundle.KindResourceQuotas,
	"core/limitranges": bundle.KindLimitRanges, "core/serviceaccounts": bundle.KindServiceAccounts,
	"core/configmaps": bundle.KindConfigMaps, "core/secrets": bundle.KindSecrets,
	"coordination.k8s.io/leases": bundle.KindLeases, "policy/poddisruptionbudgets": bundle.KindPodDisruptionBudgets,
	"networking.k8s.io/networkpolicies": bundle.KindNetworkPolicies,
}

// mustGatherEmptyList notes a namespaced list file that holds no objects.
func mustGatherEmptyList(name, rel string, empty map[string]string, r *Report) {
	parts := strings.Split(strings.TrimSuffix(rel, path.Ext(rel)), "/")
	if len(parts) != 4 || parts[0] != mgNamespaces {
		r.ignored(name, "empty list", "holds no objects")
		return
	}
	kind, ok := mustGatherPlurals[parts[2]+"/"+parts[3]]
	if !ok {
		r.ignored(name, "empty "+parts[3]+" list", "holds no objects, and podflow reads no "+parts[3]+" evidence")
		return
	}
	out := bundle.NamespacedResourcePath(kind, parts[1])
	empty[out] = name
	r.used(name, "empty "+parts[3]+" list", out)
}

// objectFile reads a file of YAML or JSON objects (one object or a List) and routes each
// object by kind; the report says which kinds were used and which podflow has no input for.
// false when the file holds no object at all and no error, so its caller can tell an
// empty list from a missing one.
func (li *looseImport) objectFile(name string, data []byte) bool {
	objs, err := parseObjects(fileLines(data))
	var used, unknown []string
	for _, o := range objs {
		if _, ok := bundle.ListOfKind(o.kind); ok && o.name != "" {
			li.addObject(name, o)
			used = append(used, o.kind)
		} else {
			unknown = append(unknown, o.kind)
		}
	}
	used, unknown = dedupe(used), dedupe(unknown)
	sort.Strings(used)
	sort.Strings(unknown)
	switch {
	case err != nil && len(used) == 0:
		li.r.unreadable(name, "YAML or JSON objects", err)
	case len(used) > 0:
		rep := FileReport{Path: name, Detected: strings.Join(used, ", ") + " objects", Status: StatusUsed}
		if err != nil {
			rep.Reason = "read up to an error: " + err.Error()
		}
		li.r.add(rep)
	case len(unknown) > 0:
		li.r.ignored(name, strings.Join(unknown, ", ")+" objects", "podflow reads no "+strings.Join(unknown, ", ")+" evidence")
	default:
		return false
	}
	return true
}

// fileLines splits a file into numbered lines, undoing Windows line endings only.
func fileLines(data []byte) []textLine {
	raw := strings.Split(strings.ReplaceAll(string(data), "\r\n", "\n"), "\n")
	out := make([]textLine, len(raw))
	for i, s := range raw {
		out[i] = textLine{s: s, n: i + 1}
	}
	return out
}

// reLogTimestamp is the RFC 3339 time `oc logs --timestamps` puts before every line.
var reLogTimestamp = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d) `)

// mustGatherLog places one container log. oc adm inspect gathers logs with timestamps;
// they are cut off so the log reads as podflow collects it, line for line.
func mustGatherLog(name string, data []byte, ns, pod, container string, previous bool, files map[string][]byte, r *Report) {
	lines := strings.SplitAfter(string(data), "\n")
	stamped := 0
	for _, l := range lines {
		if reLogTimestamp.MatchString(l) {
			stamped++
		}
	}
	if stamped > 0 && stamped >= len(lines)-1 {
		for i, l := range lines {
			lines[i] = reLogTimestamp.ReplaceAllString(l, "")
		}
		data = []byte(strings.Join(lines, ""))
	}
	out := bundle.LogPath(ns, pod, container, previous)
	files[out] = data
	r.Origins[out] = Origin{Path: name}
	what := "current"
	if previous {
		what = "previous"
	}
	r.used(name, fmt.Sprintf("%s log of container %s of pod %s/%s", what, container, ns, pod), out)
}

// splitJournal places a journal gathered from several hosts (oc adm node-logs) on nodes:
// each node's file keeps every line at its number and blanks the other hosts' lines, so
// citations still point at the original file and line.
func splitJournal(name string, data []byte, nodes []string, podNodes map[string]string, files map[string][]byte, r *Report) {
	lines := strings.Split(string(data), "\n")
	hosts := map[string][]int{}
	var order []string
	for i, l := range lines {
		h := journalHost(l)
		if h == "" {
			continue
		}
		if _, ok := hosts[h]; !ok {
			order = append(order, h)
		}
		hosts[h] = append(hosts[h], i)
	}
	if len(order) == 0 {
		r.ignored(name, "kubelet journal", "no journal line with a host name")
		return
	}
	var produced, problems []string
	for _, h := range order {
		text := data
		if len(order) > 1 {
			keep := make([]string, len(lines))
			for _, i := range hosts[h] {
				keep[i] = lines[i]
			}
			text = []byte(strings.Join(keep, "\n"))
		}
		node := journalHostNode(h, text, nodes, podNodes)
		if node == "" {
			problems = append(problems, fmt.Sprintf("host %s: not a node in the must-gather, and the pods it names point at none", h))
			continue
		}
		out := bundle.NodePath(node, bundle.NodeKubeletLog)
		if _, dup := files[out]; dup {
			problems = append(problems, fmt.Sprintf("host %s: node %s already has a kubelet journal", h, node))
			continue
		}
		files[out] = text
		r.Origins[out] = Origin{Path: name}
		produced = append(produced, out)
	}
	if len(produced) == 0 {
		r.ignored(name, "kubelet journal", strings.Join(problems, "; "))
		return
	}
	r.add(FileReport{Path: name, Detected: "kubelet journal", Status: StatusUsed, Reason: strings.Join(problems, "; "), Produced: produced})
}

// journalHostNode is the node a host's journal lines are from: the node of that name, the
// only node, or the node whose pods the lines name most.
func journalHostNode(host string, text []byte, nodes []string, podNodes map[string]string) string {
	for _, n := range nodes {
		if n == host || strings.HasPrefix(n, host+".") {
			return n
		}
	}
	if len(nodes) == 1 {
		return nodes[0]
	}
	return journalNode(text, podNodes)
}

// journalHost returns the host field of a journal line in short or short-iso form:
// the word before "program[pid]:".
func journalHost(line string) string {
	f := strings.Fields(line)
	for i := 1; i < len(f) && i < 6; i++ {
		if strings.HasSuffix(f[i], ":") && strings.Contains(f[i], "[") {
			return f[i-1]
		}
	}
	return ""
}

// mustGatherEnd reads when the gathering finished: the timestamp file holds the start and
// end times as Go prints a time.Time ("2026-11-29 22:35:01.123 +0000 UTC m=+38.112").
func mustGatherEnd(data []byte) (time.Time, bool) {
	var end time.Time
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if i := strings.Index(line, " m="); i >= 0 {
			line = line[:i]
		}
		if t, err := time.Parse("2006-01-02 15:04:05.999999999 -0700 MST", line); err == nil && t.After(end) {
			end = t
		}
	}
	return end.UTC(), !end.IsZero()
}
