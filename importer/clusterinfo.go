package importer

import (
	"bytes"
	"fmt"
	"strings"

	"podflow.dev/podflow/bundle"
)

// dumpKinds maps the list names `kubectl cluster-info dump` writes per namespace to
// podflow's; an empty value is a list podflow has no input for.
var dumpKinds = map[string]string{
	"events":                  bundle.KindEvents,
	"services":                bundle.KindServices,
	"daemonsets":              bundle.KindDaemonSets,
	"deployments":             bundle.KindDeployments,
	"replicasets":             bundle.KindReplicaSets,
	"pods":                    bundle.KindPods,
	"replication-controllers": "",
}

// dumpNotCarried is what `kubectl cluster-info dump` never writes.
var dumpNotCarried = []string{
	"previous container logs",
	"endpointslices",
	"namespaces",
	"persistent volume claims, volumes and storage classes",
	"resource quotas and limit ranges",
	"service accounts, configmaps and secrets",
	"jobs, cronjobs and statefulsets",
	"node leases",
	"webhook configurations",
	"kubelet journals, CRI state and kubelet configuration",
}

// importClusterInfoDump maps `kubectl cluster-info dump --output-directory=D` (JSON, the
// default, or YAML): D/nodes.json, D/<ns>/<list>.json and D/<ns>/<pod>/logs.txt.
func importClusterInfoDump(src *bundle.Bundle, r *Report) map[string][]byte {
	files := map[string][]byte{}
	for _, name := range src.Names() {
		data, _ := src.ReadFile(name) // listed by Names, so present
		parts := strings.Split(name, "/")
		switch {
		case len(parts) == 1 && (name == "nodes.json" || name == "nodes.yaml"):
			dumpList(name, data, bundle.ClusterResourcePath(bundle.KindNodes), files, r)
		case len(parts) == 2 && isListFile(parts[1]):
			list := strings.TrimSuffix(strings.TrimSuffix(parts[1], ".json"), ".yaml")
			kind, ok := dumpKinds[list]
			switch {
			case !ok:
				r.ignored(name, list+" list", "not a list kubectl cluster-info dump writes")
			case kind == "":
				r.ignored(name, list+" list", "podflow reads no "+list+" evidence")
			default:
				dumpList(name, data, bundle.NamespacedResourcePath(kind, parts[0]), files, r)
			}
		case len(parts) == 3 && parts[2] == "logs.txt":
			dumpLogs(name, data, parts[0], parts[1], files, r)
		case len(parts) <= 2 && strings.HasSuffix(name, ".txt"):
			r.ignored(name, "table output", "cluster-info dump in the default text form holds tables; dump with -o json (the default) or -o yaml")
		default:
			r.ignored(name, describeOther(name), "not part of a kubectl cluster-info dump")
		}
	}
	r.NotCarried = append(r.NotCarried, dumpNotCarried...)
	return files
}

func isListFile(base string) bool {
	return strings.HasSuffix(base, ".json") || strings.HasSuffix(base, ".yaml")
}

// dumpList converts one list to the JSON podflow reads, keeping each item's line.
func dumpList(name string, data []byte, out string, files map[string][]byte, r *Report) {
	what := bundle.ParsePath(out).Kind + " list"
	var lines []int
	var err error
	if strings.HasSuffix(name, ".yaml") {
		data, lines, err = yamlToJSON(data)
	} else {
		lines, err = jsonItemLines(data)
	}
	if err != nil {
		r.unreadable(name, what, err)
		return
	}
	files[out] = data
	r.Origins[out] = Origin{Path: name, ItemLines: lines, SameShape: true}
	r.used(name, what, out)
}

// logEndFormat is the marker kubectl writes after each container's log in logs.txt.
const logEndFormat = "==== END logs for container %s of pod %s/%s ===="

// kubectl writes these instead of a log it could not fetch.
var logErrorPrefixes = []string{"Create log request error: ", "Request log error: "}

// dumpLogs splits D/<ns>/<pod>/logs.txt into one current log per container.
func dumpLogs(name string, data []byte, ns, pod string, files map[string][]byte, r *Report) {
	lines := bytes.SplitAfter(data, []byte{'\n'})
	var produced, problems []string
	for i := 0; i < len(lines); i++ {
		container, ok := startMarker(string(bytes.TrimRight(lines[i], "\r\n")), ns, pod)
		if !ok {
			continue
		}
		startLine := i + 1
		end := fmt.Sprintf(logEndFormat, container, ns, pod)
		var body bytes.Buffer
		closed := false
		for i++; i < len(lines); i++ {
			line := string(bytes.TrimRight(lines[i], "\r\n"))
			if strings.HasSuffix(line, end) {
				// A log without a final newline runs into the marker.
				body.WriteString(strings.TrimSuffix(line, end))
				closed = true
				break
			}
			body.Write(lines[i])
		}
		if !closed {
			problems = append(problems, fmt.Sprintf("container %s: log cut short (no END marker)", container))
		}
		text := body.Bytes()
		if msg, failed := logError(text); failed {
			problems = append(problems, fmt.Sprintf("container %s: kubectl could not fetch the log: %s", container, msg))
			continue
		}
		out := bundle.LogPath(ns, pod, container, false)
		files[out] = append([]byte(nil), text...)
		r.Origins[out] = Origin{Path: name, LineOffset: startLine}
		produced = append(produced, out)
	}
	switch {
	case len(produced) == 0 && len(problems) == 0:
		r.ignored(name, "container logs", "no START logs marker for a container of pod "+ns+"/"+pod)
	case len(produced) == 0:
		r.ignored(name, "container logs", strings.Join(problems, "; "))
	default:
		r.add(FileReport{Path: name, Detected: "container logs of pod " + ns + "/" + pod, Status: StatusUsed,
			Reason: strings.Join(problems, "; "), Produced: produced})
	}
}

// startMarker returns the container a START marker names, when it is for ns/pod.
func startMarker(line, ns, pod string) (string, bool) {
	rest, ok := strings.CutPrefix(line, "==== START logs for container ")
	if !ok {
		return "", false
	}
	suffix := " of pod " + ns + "/" + pod + " ===="
	container, ok := strings.CutSuffix(rest, suffix)
	if !ok || container == "" || strings.ContainsAny(container, " /") {
		return "", false
	}
	return container, true
}

// logError recognises a section that holds only kubectl's note that the log was unavailable.
func logError(text []byte) (string, bool) {
	s := strings.TrimSpace(string(text))
	if strings.Contains(s, "\n") {
		return "", false
	}
	for _, p := range logErrorPrefixes {
		if msg, ok := strings.CutPrefix(s, p); ok {
			return msg, true
		}
	}
	return "", false
}
