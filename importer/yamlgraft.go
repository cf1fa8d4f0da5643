package importer

import (
	"encoding/json"
	"strings"

	"podflow.dev/podflow/bundle"
	"podflow.dev/podflow/untrusted/yamlbudget"
)

// Objects a ticket cut short. A user pastes `kubectl get -o yaml` or a manifest with
// its middle left out ("...", "[...]") and keeps the part that matters, often far
// deeper than the line above the cut: a Deployment's metadata, then the container's
// ports. Joined, the tail would land under the wrong key (a Service's ports under its
// metadata), so a tail that starts deeper than where the head stopped is put back
// where its indentation and first key say it belongs in an object of that kind, as
// kubectl prints it (two spaces a level, list items at their key's indentation).

// graftPlace is where a tail that starts at an indentation with one of keys belongs:
// path leads to it from the object's root ("[]" is a list's first item).
type graftPlace struct {
	indent int
	keys   []string
	path   []string
}

// The fields of the places a tail is put back into (core/v1 and apps/v1 field names).
var (
	podSpecKeys = []string{"containers", "initContainers", "volumes", "serviceAccountName", "serviceAccount", "nodeSelector",
		"affinity", "tolerations", "securityContext", "hostNetwork", "restartPolicy", "terminationGracePeriodSeconds",
		"dnsPolicy", "imagePullSecrets", "nodeName", "priorityClassName", "schedulerName", "topologySpreadConstraints"}
	containerKeys = []string{"image", "imagePullPolicy", "command", "args", "ports", "env", "envFrom", "resources",
		"livenessProbe", "readinessProbe", "startupProbe", "volumeMounts", "workingDir", "lifecycle"}
	serviceSpecKeys = []string{"ports", "selector", "type", "clusterIP", "clusterIPs", "sessionAffinity",
		"externalTrafficPolicy", "internalTrafficPolicy", "ipFamilies", "ipFamilyPolicy", "loadBalancerIP",
		"externalIPs", "publishNotReadyAddresses", "externalName"}
	workloadSpecKeys = []string{"replicas", "selector", "template", "strategy", "updateStrategy", "serviceName",
		"minReadySeconds", "progressDeadlineSeconds", "revisionHistoryLimit", "podManagementPolicy",
		"volumeClaimTemplates", "backoffLimit", "completions", "parallelism"}
)

// workloadPlaces are the places of a workload's pod template.
var workloadPlaces = []graftPlace{
	{2, workloadSpecKeys, []string{"spec"}},
	{4, []string{"matchLabels", "matchExpressions"}, []string{"spec", "selector"}},
	{4, []string{"metadata", "spec"}, []string{"spec", "template"}},
	{6, []string{"labels", "annotations"}, []string{"spec", "template", "metadata"}},
	{6, podSpecKeys, []string{"spec", "template", "spec"}},
	{8, containerKeys, []string{"spec", "template", "spec", "containers", "[]"}},
}

// graftPlaces lists, by kind, where a cut object's tails go.
var graftPlaces = map[string][]graftPlace{
	"Service": {{2, serviceSpecKeys, []string{"spec"}}},
	"Pod": {
		{2, podSpecKeys, []string{"spec"}},
		{4, containerKeys, []string{"spec", "containers", "[]"}},
	},
	"Deployment":  workloadPlaces,
	"StatefulSet": workloadPlaces,
	"DaemonSet":   workloadPlaces,
	"ReplicaSet":  workloadPlaces,
}

// isElision tells the line a ticket puts where it cut an object: "[...]", "<snip>", an
// indented "...", or "..." at the margin with an indented line right after it (at the
// margin alone it is YAML's end of a document).
func isElision(lines []textLine, i int) bool {
	t := strings.TrimSpace(lines[i].s)
	if len(t) >= 4 && strings.Trim(t, ".") == "" {
		// "....": more dots than YAML's document end marker, a cut whatever its indent.
		return true
	}
	switch t {
	case "[...]", "[…]", "<snip>", "<snipped>", "# ...", "…":
		return true
	case "...":
		if len(lines[i].s) > len(strings.TrimLeft(lines[i].s, " \t")) {
			return true
		}
		for _, l := range lines[i+1:] {
			if strings.TrimSpace(l.s) == "" {
				continue
			}
			return strings.HasPrefix(l.s, " ")
		}
	}
	return false
}

// graftedObjects reads YAML documents some of whose tails a cut put out of place; ok
// is false when no tail needs putting back, and the documents are read joined as before.
func graftedObjects(lines []textLine) ([]rawObject, bool) {
	cut := false
	for i := range lines {
		cut = cut || isElision(lines, i)
	}
	if !cut {
		return nil, false
	}
	var docs [][]textLine
	cur := []textLine{}
	for _, l := range lines {
		if l.s == "---" || strings.HasPrefix(l.s, "--- ") {
			docs = append(docs, cur)
			cur = []textLine{}
			continue
		}
		cur = append(cur, l)
	}
	docs = append(docs, cur)
	var out []rawObject
	grafted := false
	for _, doc := range docs {
		objs, g := graftDoc(doc)
		grafted = grafted || g
		out = append(out, objs...)
	}
	return out, grafted
}

// graftDoc reads one document: its head (the lines before the first cut) and each tail.
func graftDoc(doc []textLine) ([]rawObject, bool) {
	var pieces [][]textLine
	cur := []textLine{}
	for i := range doc {
		if isElision(doc, i) {
			pieces = append(pieces, cur)
			cur = []textLine{}
			continue
		}
		cur = append(cur, doc[i])
	}
	pieces = append(pieces, cur)
	first := -1
	for i, l := range doc {
		if strings.TrimSpace(l.s) != "" {
			first = i
			break
		}
	}
	if first < 0 {
		return nil, false
	}
	if len(pieces) == 1 {
		objs, _ := yamlPiece(doc)
		return objs, false
	}
	head := map[string]any{}
	if yamlbudget.Unmarshal([]byte(yamlText(pieces[0])), &head) != nil {
		return nil, false
	}
	kind, _ := head["kind"].(string)
	places := graftPlaces[kind]
	grafted := false
	var joined []textLine
	joined = append(joined, pieces[0]...)
	for _, tail := range pieces[1:] {
		indent, key := tailStart(tail)
		place, ok := placeOf(places, indent, key)
		if !ok {
			joined = append(joined, tail...)
			continue
		}
		var m map[string]any
		if yamlbudget.Unmarshal([]byte(dedent(tail, indent)), &m) != nil || len(m) == 0 {
			joined = append(joined, tail...)
			continue
		}
		mergeMaps(head, wrapAt(place.path, m))
		grafted = true
	}
	if !grafted {
		objs, _ := yamlPiece(joined)
		return objs, false
	}
	// The tails put back are read from the head's document: its own lines that were
	// not put back stay joined to it.
	if len(joined) > len(pieces[0]) {
		var rest map[string]any
		if yamlbudget.Unmarshal([]byte(yamlText(joined)), &rest) == nil {
			mergeMaps(rest, head)
			head = rest
		}
	}
	markCut(head)
	data, err := json.Marshal(head)
	if err != nil {
		return nil, false
	}
	objs, err := flatten(data, doc[first].n, func(int) int { return 0 })
	if err != nil {
		return nil, false
	}
	return objs, true
}

// markCut marks an object the paste cut short: a field it does not show may be there.
func markCut(obj map[string]any) {
	meta, _ := obj["metadata"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
		obj["metadata"] = meta
	}
	ann, _ := meta["annotations"].(map[string]any)
	if ann == nil {
		ann = map[string]any{}
		meta["annotations"] = ann
	}
	if v, _ := ann[bundle.PartialAnnotation].(string); v != "" {
		ann[bundle.PartialAnnotation] = v + ",cut"
	} else {
		ann[bundle.PartialAnnotation] = "cut"
	}
}

// yamlPiece reads lines as one YAML document with their own line numbers.
func yamlPiece(lines []textLine) ([]rawObject, error) {
	if len(lines) == 0 {
		return nil, nil
	}
	lineOf := func(rel int) int { return lines[min(max(rel-1, 0), len(lines)-1)].n }
	return yamlObjects([]byte(yamlText(lines)), lineOf)
}

// yamlText is the lines of a piece, tabs made spaces, for the YAML reader.
func yamlText(lines []textLine) string {
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(detab(l.s))
		b.WriteByte('\n')
	}
	return b.String()
}

// tailStart is the indentation and key of a tail's first line ("- " of a list item is
// part of the indentation of its key).
func tailStart(tail []textLine) (int, string) {
	for _, l := range tail {
		s := detab(l.s)
		t := strings.TrimLeft(s, " ")
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		key, _, ok := strings.Cut(t, ":")
		if !ok || strings.ContainsAny(key, " -") {
			return -1, ""
		}
		return len(s) - len(t), key
	}
	return -1, ""
}

func placeOf(places []graftPlace, indent int, key string) (graftPlace, bool) {
	for _, p := range places {
		if p.indent != indent {
			continue
		}
		for _, k := range p.keys {
			if k == key {
				return p, true
			}
		}
	}
	return graftPlace{}, false
}

// dedent takes indent spaces off every line of a tail.
func dedent(tail []textLine, indent int) string {
	var b strings.Builder
	pad := strings.Repeat(" ", indent)
	for _, l := range tail {
		s := detab(l.s)
		b.WriteString(strings.TrimPrefix(s, pad))
		b.WriteByte('\n')
	}
	return b.String()
}

// wrapAt puts m at path.
func wrapAt(path []string, m map[string]any) map[string]any {
	var v any = m
	for i := len(path) - 1; i >= 0; i-- {
		if path[i] == "[]" {
			v = []any{v}
			continue
		}
		v = map[string]any{path[i]: v}
	}
	return v.(map[string]any)
}

// mergeMaps merges src into dst: maps key by key, lists item by item (a tail's
// container is the head's first container), values of src where dst has none.
func mergeMaps(dst, src map[string]any) {
	for k, sv := range src {
		dv, ok := dst[k]
		if !ok {
			dst[k] = sv
			continue
		}
		switch d := dv.(type) {
		case map[string]any:
			if s, ok := sv.(map[string]any); ok {
				mergeMaps(d, s)
			}
		case []any:
			if s, ok := sv.([]any); ok {
				for i := range s {
					if i >= len(d) {
						d = append(d, s[i])
						continue
					}
					dm, ok1 := d[i].(map[string]any)
					sm, ok2 := s[i].(map[string]any)
					if ok1 && ok2 {
						mergeMaps(dm, sm)
					}
				}
				dst[k] = d
			}
		}
	}
}

// Objects pasted without their kind: `spec:` (or `metadata:`) at the margin, as a
// ticket quotes the part of a manifest or of `kubectl get -o yaml` that matters. The
// kind is read from what only that kind's spec holds: a pod template (a workload), a
// pod's containers, or a Service's ports with port and targetPort. A workload is a
// Deployment unless its fields, or the file or command that holds it, say which.

// startsKindless tells whether a chunk opens with a spec or metadata at the margin.
func startsKindless(lines []textLine) bool {
	for _, l := range lines {
		s := strings.TrimSpace(l.s)
		if s == "" || s == "---" {
			continue
		}
		return l.s == "spec:" || l.s == "metadata:"
	}
	return false
}

// inferKind names the kind of a kindless object's spec, or "".
func inferKind(obj map[string]any, hint string) (kind, apiVersion string) {
	spec, ok := obj["spec"].(map[string]any)
	if !ok {
		return "", ""
	}
	hint = strings.ToLower(hint)
	if _, ok := spec["template"].(map[string]any); ok {
		switch {
		case strings.Contains(hint, "statefulset") || spec["serviceName"] != nil || spec["volumeClaimTemplates"] != nil:
			return "StatefulSet", "apps/v1"
		case strings.Contains(hint, "daemonset"):
			return "DaemonSet", "apps/v1"
		case strings.Contains(hint, "replicaset"):
			return "ReplicaSet", "apps/v1"
		case strings.Contains(hint, "cronjob") || strings.Contains(hint, "job"):
			return "", ""
		}
		return "Deployment", "apps/v1"
	}
	if _, ok := spec["containers"].([]any); ok {
		return "Pod", "v1"
	}
	ports, _ := spec["ports"].([]any)
	for _, p := range ports {
		m, ok := p.(map[string]any)
		if !ok {
			continue
		}
		if _, ok := m["containerPort"]; ok {
			return "", ""
		}
		if _, ok := m["targetPort"]; ok {
			return "Service", "v1"
		}
		if _, ok := m["port"]; ok {
			return "Service", "v1"
		}
	}
	return "", ""
}

// kindlessObjects reads such a chunk; the objects are named after the file when the
// metadata does not name them, and marked with what the paste does not show.
func kindlessObjects(file, cmd string, lines []textLine) []rawObject {
	var out []rawObject
	for _, doc := range splitDocs(withoutElisions(lines)) {
		var obj map[string]any
		if yamlbudget.Unmarshal([]byte(yamlText(doc)), &obj) != nil || obj == nil {
			continue
		}
		if o, ok := kindless(file, cmd, obj, doc[0].n); ok {
			out = append(out, o)
		}
	}
	return out
}

func splitDocs(lines []textLine) [][]textLine {
	var docs [][]textLine
	cur := []textLine{}
	for _, l := range lines {
		if l.s == "---" || strings.HasPrefix(l.s, "--- ") {
			if len(cur) > 0 {
				docs = append(docs, cur)
			}
			cur = []textLine{}
			continue
		}
		cur = append(cur, l)
	}
	if len(cur) > 0 {
		docs = append(docs, cur)
	}
	return docs
}

// kindless makes a kindless object one of the kind its spec shows.
func kindless(file, cmd string, obj map[string]any, line int) (rawObject, bool) {
	kind, apiVersion := inferKind(obj, cmd+" "+file)
	if kind == "" {
		return rawObject{}, false
	}
	meta, _ := obj["metadata"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
	}
	var missing []string
	name, _ := meta["name"].(string)
	if name == "" {
		name = placeholderPod(file)
		meta["name"] = name
		missing = append(missing, "name")
	}
	ns, _ := meta["namespace"].(string)
	if ns == "" {
		ns = nsOr(commandNamespace(cmd))
		meta["namespace"] = ns
		if commandNamespace(cmd) == "" {
			missing = append(missing, "namespace")
		}
	}
	if len(missing) > 0 {
		ann, _ := meta["annotations"].(map[string]any)
		if ann == nil {
			ann = map[string]any{}
		}
		ann[bundle.PartialAnnotation] = strings.Join(missing, ",")
		meta["annotations"] = ann
	}
	obj["metadata"] = meta
	obj["kind"], obj["apiVersion"] = kind, apiVersion
	data, err := json.Marshal(obj)
	if err != nil {
		return rawObject{}, false
	}
	return rawObject{kind: kind, namespace: ns, name: name, data: data, line: line}, true
}
