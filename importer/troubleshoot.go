package importer

import (
	"encoding/json"
	"fmt"
	"path"
	"sort"
	"strings"

	"podflow.dev/podflow/bundle"
)

// hostCollectorsDir holds Troubleshoot host collector output: host-collectors/<type>/
// [<node>/]<name>.txt, with journald and run-host the types that can carry a journal.
const hostCollectorsDir = "host-collectors"

// importTroubleshoot maps a Troubleshoot support bundle. podflow's cluster layout is
// Troubleshoot's, so resource lists, logs and per-kind error files pass through; kubelet
// journals captured by host collectors become node journals.
func importTroubleshoot(src *bundle.Bundle, r *Report) map[string][]byte {
	files := map[string][]byte{}
	nodes := nodeNames(src)
	podNodes := podNodes(src)
	journals := 0
	for _, name := range src.Names() {
		data, _ := src.ReadFile(name) // listed by Names, so present
		if strings.HasPrefix(name, hostCollectorsDir+"/") {
			if hostJournal(name, data, nodes, podNodes, files, r) {
				journals++
			}
			continue
		}
		passTroubleshootFile(name, data, files, r)
	}
	if journals == 0 {
		r.NotCarried = append(r.NotCarried, "kubelet journals (no host collector output named after the kubelet)")
	}
	r.NotCarried = append(r.NotCarried, "CRI state (crictl pods, ps, inspect)", "kubelet configuration", "kernel OOM lines")
	return files
}

func passTroubleshootFile(name string, data []byte, files map[string][]byte, r *Report) {
	switch name {
	case bundle.VersionMarkerPath:
		files[name] = data
		r.used(name, "Troubleshoot layout marker", name)
		return
	case bundle.ClusterVersionPath:
		files[name] = data
		r.used(name, "cluster version", name)
		return
	}
	if kind, ok := errorsKind(name); ok {
		files[name] = data
		r.Origins[name] = Origin{Path: name}
		r.add(FileReport{Path: name, Detected: kind + " collection errors", Status: StatusFailed,
			Reason: "the collector could not list " + kind + ": " + errorsText(data), Produced: []string{name}})
		return
	}
	info := bundle.ParsePath(name)
	switch {
	case info.Area == "log":
		files[name] = data
		r.Origins[name] = Origin{Path: name}
		r.used(name, "container log", name)
	case (info.Area == "cluster" || info.Area == "namespaced") && knownKinds[info.Kind]:
		lines, err := jsonItemLines(data)
		if err != nil {
			r.unreadable(name, info.Kind+" list", err)
			return
		}
		files[name] = data
		r.Origins[name] = Origin{Path: name, ItemLines: lines, SameShape: true}
		r.used(name, info.Kind+" list", name)
	case info.Area == "cluster" || info.Area == "namespaced":
		r.ignored(name, info.Kind+" list", "podflow reads no "+info.Kind+" evidence")
	default:
		r.ignored(name, describeOther(name), "not part of the evidence podflow reads")
	}
}

// errorsKind recognises cluster-resources/<kind>-errors.json and
// cluster-resources/<kind>/<namespace>-errors.json.
func errorsKind(name string) (string, bool) {
	rest, ok := strings.CutPrefix(name, bundle.ClusterResources+"/")
	if !ok || !strings.HasSuffix(rest, "-errors.json") {
		return "", false
	}
	kind, _, _ := strings.Cut(strings.TrimSuffix(rest, "-errors.json"), "/")
	return kind, true
}

// errorsText renders a Troubleshoot errors file (a JSON array of strings) on one line.
func errorsText(data []byte) string {
	var msgs []string
	if err := json.Unmarshal(data, &msgs); err != nil || len(msgs) == 0 {
		return strings.TrimSpace(string(data))
	}
	return strings.Join(msgs, "; ")
}

func describeOther(name string) string {
	switch {
	case strings.HasSuffix(name, ".json"):
		return "JSON file"
	case strings.HasSuffix(name, ".yaml"), strings.HasSuffix(name, ".yml"):
		return "YAML file"
	case strings.HasSuffix(name, ".log"), strings.HasSuffix(name, ".txt"):
		return "text file"
	}
	return "file"
}

// hostJournal turns host collector output named after the kubelet into the kubelet
// journal of its node; true when it did.
func hostJournal(name string, data []byte, nodes []string, podNodes map[string]string, files map[string][]byte, r *Report) bool {
	parts := strings.Split(name, "/")
	base := path.Base(name)
	isText := strings.HasSuffix(base, ".txt") || strings.HasSuffix(base, ".log")
	if len(parts) < 3 || !isText || !strings.Contains(strings.ToLower(base), "kubelet") {
		r.ignored(name, "host collector output", "only host collector output named after the kubelet is read, as its journal")
		return false
	}
	node := ""
	switch {
	case len(parts) >= 4:
		// Remote host collectors add a directory per node.
		node = parts[len(parts)-2]
	case len(nodes) == 1:
		node = nodes[0]
	default:
		node = journalNode(data, podNodes)
	}
	if node == "" {
		r.ignored(name, "kubelet journal", fmt.Sprintf("cannot tell which node it is from: the bundle lists %d nodes, and neither the path nor the pods the journal names point at one", len(nodes)))
		return false
	}
	out := bundle.NodePath(node, bundle.NodeKubeletLog)
	if _, dup := files[out]; dup {
		r.ignored(name, "kubelet journal", "node "+node+" already has a kubelet journal from another file")
		return false
	}
	files[out] = data
	r.Origins[out] = Origin{Path: name}
	r.used(name, "kubelet journal of node "+node, out)
	return true
}

// nodeNames reads the node names from the bundle's node list, if any.
func nodeNames(src *bundle.Bundle) []string {
	data, err := src.ReadFile(bundle.ClusterResourcePath(bundle.KindNodes))
	if err != nil {
		return nil
	}
	out := bundle.NodeNames(data)
	sort.Strings(out)
	return out
}

// podNodes maps namespace/name of every pod in the bundle to the node it is bound to.
func podNodes(src *bundle.Bundle) map[string]string {
	out := map[string]string{}
	for _, name := range src.Names() {
		info := bundle.ParsePath(name)
		if info.Area != "namespaced" || info.Kind != bundle.KindPods {
			continue
		}
		data, _ := src.ReadFile(name) // listed by Names, so present
		var list struct {
			Items []struct {
				Metadata struct{ Namespace, Name string }
				Spec     struct {
					NodeName string `json:"nodeName"`
				}
			}
		}
		if json.Unmarshal(data, &list) != nil {
			continue
		}
		for _, p := range list.Items {
			if p.Spec.NodeName != "" {
				out[p.Metadata.Namespace+"/"+p.Metadata.Name] = p.Spec.NodeName
			}
		}
	}
	return out
}

// journalNode picks the node whose pods a kubelet journal names most often: journald's
// host name is the machine's, which need not be the node name.
func journalNode(data []byte, podNodes map[string]string) string {
	votes := map[string]int{}
	// One pass over the journal: it can run to hundreds of megabytes.
	text := string(data)
	for {
		i := strings.Index(text, `pod="`)
		if i < 0 {
			break
		}
		text = text[i+len(`pod="`):]
		end := strings.IndexByte(text, '"')
		if end < 0 {
			break
		}
		if node, ok := podNodes[text[:end]]; ok {
			votes[node]++
		}
		text = text[end:]
	}
	best, bestVotes := "", 0
	for node, v := range votes {
		if v > bestVotes || (v == bestVotes && node < best) {
			best, bestVotes = node, v
		}
	}
	return best
}
