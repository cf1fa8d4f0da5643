package importer

import (
	"bytes"
	"encoding/json"
	"regexp"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"podflow.dev/podflow/bundle"
)

// rankPartial is the rank of a pod known only from an event's object or a fragment:
// any fuller source replaces it, and it fills in what the fuller one lacks.
const rankPartial = 0

// Values of bundle.PartialAnnotation.
const (
	partialName      = "name"
	partialNamespace = "namespace"
	partialSpec      = "spec"
	partialStatus    = "status"
)

// fileCtx is what one input file tells about the pod its fragments belong to.
type fileCtx struct {
	name string
	// pods are the pods the file's whole outputs, rows and event objects name.
	pods    map[string]bool
	pending []pendingFrag
	// rows are event rows naming their object whose namespace is kubectl's default
	// guess: a pod of that name the file shows in one namespace takes them.
	rows []parsedEvent
	// final marks the pass over fragments no file named a pod for: then the pods the
	// whole paste names are its pods, and a fragment without one gets a placeholder.
	final bool
	// prosePod and proseNS are the one pod the file's text names (prosePod).
	prosePod, proseNS string
}

// pendingFrag is a describe fragment or a run of describe event rows whose pod is
// decided once the whole file is read.
type pendingFrag struct {
	d        *describedPod
	pod, ns  string // from the command before it
	nsKnown  bool
	fragment bool // a describe fragment (not only event rows)
}

// reCmdPod finds the pod a command names: describe pod NAME, logs NAME, get pod NAME,
// involvedObject.name=NAME.
var (
	reCmdPod  = regexp.MustCompile(`\b(?:describe|get)\s+(?:pods?|po)(?:\s+|/)([a-z0-9][-a-z0-9.]*)`)
	reCmdPod2 = regexp.MustCompile(`\b(?:describe|get)\s+(?:pods?|po)/([a-z0-9][-a-z0-9.]*)`)
	reCmdObj  = regexp.MustCompile(`involvedObject\.name=([a-z0-9][-a-z0-9.]*)`)
)

// reCmdClaim finds the claim a command describes: describe pvc NAME.
var reCmdClaim = regexp.MustCompile(`\bdescribe\s+(?:pvc|persistentvolumeclaims?)(?:\s+|/)([a-z0-9][-a-z0-9.]*)`)

func commandClaim(cmd string) string {
	if m := reCmdClaim.FindStringSubmatch(cmd); m != nil {
		return m[1]
	}
	return ""
}

func commandPod(cmd string) string {
	kubectl, piped, _ := strings.Cut(cmd, "|")
	for _, re := range []*regexp.Regexp{reCmdPod2, reCmdPod, reCmdObj} {
		if m := re.FindStringSubmatch(kubectl); m != nil && !strings.HasPrefix(m[1], "-") {
			return m[1]
		}
	}
	if lc, ok := parseLogsCommand(kubectl); ok {
		return lc.pod
	}
	if name := podArgument(kubectl); name != "" {
		return name
	}
	// kubectl get pods -n shop | grep web-7d9f: the pattern names the pod when it
	// looks like a generated pod name (a name with a dash, not a word such as Error).
	if reCmdPodsList.MatchString(kubectl) {
		f := strings.Fields(piped)
		if len(f) >= 2 && f[0] == "grep" {
			pattern := strings.Trim(f[len(f)-1], `'"`)
			if rePodLike.MatchString(pattern) {
				return pattern
			}
		}
	}
	return ""
}

// podArgument finds the pod a describe or get of pods names after its flags:
// kubectl describe pod -n shop web-1, kubectl -n shop get po --show-labels web-1.
func podArgument(cmd string) string {
	f := strings.Fields(cmd)
	verb, resource := false, false
	for i := 0; i < len(f); i++ {
		a := f[i]
		switch {
		case valuedFlags[a]:
			i++
		case strings.HasPrefix(a, "-"):
		case !verb:
			verb = a == "describe" || a == "get"
		case !resource:
			if a != "pod" && a != "pods" && a != "po" {
				return ""
			}
			resource = true
		default:
			if isDNSName(a) {
				return a
			}
			return ""
		}
	}
	return ""
}

// reCmdPodsList is a command listing pods or events without naming one.
var reCmdPodsList = regexp.MustCompile(`\b(?:get|describe)\s+(?:pods?|po|events?|ev)\b`)

// rePodLike is a pod name as a grep pattern gives it: lower case with a dash.
var rePodLike = regexp.MustCompile(`^[a-z0-9]+(?:-[a-z0-9]+)+$`)

// reInPod is the kubelet's naming of a pod in its events: "in pod NAME_NAMESPACE(UID)".
var reInPod = regexp.MustCompile(`\bin pod ([a-z0-9][-a-z0-9.]*)_([a-z0-9][-a-z0-9]*)\(`)

// reQuotedPodNS is the kubelet's quoting of a pod as format.Pod writes it, in its
// events before 1.11 ("Unable to mount volumes for pod \"web-1_shop(UID)\"").
var reQuotedPodNS = regexp.MustCompile(`\bpod \\?"([a-z0-9][-a-z0-9.]*)_([a-z0-9][-a-z0-9]*)\(`)

// rePodKey is a structured log's pod="namespace/name".
var rePodKey = regexp.MustCompile(`\bpod="([a-z0-9][-a-z0-9]*)/([a-z0-9][-a-z0-9.]*)"`)

// namedPod returns the namespace and pod an event message names in the kubelet's
// words, if it does.
func namedPod(msg string) (ns, name string, ok bool) {
	if m := reAssigned.FindStringSubmatch(msg); m != nil {
		return m[1], m[2], true
	}
	if m := reInPod.FindStringSubmatch(msg); m != nil {
		return m[2], m[1], true
	}
	if m := reQuotedPodNS.FindStringSubmatch(msg); m != nil {
		return m[2], m[1], true
	}
	if m := rePodKey.FindStringSubmatch(msg); m != nil {
		return m[1], m[2], true
	}
	return "", "", false
}

// controllerEventKinds are the event sources of the workload controllers and the kind
// of object each records its events on (the EventSource each controller's recorder is
// made with in k8s.io/kubernetes pkg/controller, v1.37.2: podautoscaler/horizontal.go,
// deployment/deployment_controller.go, replicaset/replica_set.go,
// replication/replication_controller.go, statefulset/stateful_set.go,
// daemon/daemon_controller.go, job/job_controller.go, cronjob/cronjob_controllerv2.go).
var controllerEventKinds = map[string]string{
	"horizontal-pod-autoscaler": "HorizontalPodAutoscaler",
	"deployment-controller":     "Deployment",
	"replicaset-controller":     "ReplicaSet",
	"replication-controller":    "ReplicationController",
	"statefulset-controller":    "StatefulSet",
	"daemonset-controller":      "DaemonSet",
	"job-controller":            "Job",
	"cronjob-controller":        "CronJob",
}

// reStatefulSetPodEvent is the StatefulSet controller's event about one of its pods or
// claims, which names the StatefulSet (stateful_pod_control.go recordPodEvent and
// recordClaimEvent: "create Pod %s in StatefulSet %s failed error: %s").
var reStatefulSetPodEvent = regexp.MustCompile(`^(?:create|update|delete|get) (?:Claim \S+ for )?Pod \S+ in StatefulSet ([a-z0-9][-a-z0-9.]*) (?:failed|successful)`)

// unnamedObject names an object whose events a paste shows without its name.
const unnamedObject = "(unknown)"

// reAssigned is the scheduler's event that names a pod and its node.
var reAssigned = regexp.MustCompile(`^Successfully assigned ([a-z0-9][-a-z0-9.]*)/([a-z0-9][-a-z0-9.]*) to (\S+)`)

// eventRows reads a run of event rows without header. Rows naming their object are
// events of that object; describe rows wait for the file's pod.
func (li *looseImport) eventRows(ctx *fileCtx, name string, b segmentBlock, cmd string) bool {
	ns := commandNamespace(cmd)
	var pending *pendingFrag
	var last *corev1.Event
	n := 0
	var kept []parsedEvent
	width, prev := widestLine(b.lines), ""
	for _, l := range b.lines {
		if strings.TrimSpace(l.s) == "" {
			continue
		}
		ev, known, nsKnown, ok := headerlessEvent(l.s)
		if !ok {
			if last != nil {
				last.Message = joinContinuation(last.Message, prev, l.s, width)
			}
			prev = l.s
			continue
		}
		prev = l.s
		if known {
			if !nsKnown {
				ev.Namespace = nsOr(ns)
			}
			if ev.InvolvedObject.Kind != "Node" && ev.InvolvedObject.Kind != "Namespace" && ev.InvolvedObject.Kind != "PersistentVolume" {
				ev.InvolvedObject.Namespace = ev.Namespace
			}
			if ev.InvolvedObject.Kind == "Pod" {
				ev.InvolvedObject.APIVersion = "v1"
				if !nsKnown && ns == "" {
					ctx.rows = append(ctx.rows, parsedEvent{ev: ev, line: l.n})
					last = &ctx.rows[len(ctx.rows)-1].ev
					n++
					continue
				}
				ctx.pods[ev.Namespace+"/"+ev.InvolvedObject.Name] = true
			}
			kept = append(kept, parsedEvent{ev: ev, line: l.n})
			last = &kept[len(kept)-1].ev
			n++
			continue
		}
		n++
		if claim := commandClaim(cmd); claim != "" {
			// describe pvc NAME: its Events rows are the claim's.
			ev.Namespace = nsOr(ns)
			ev.InvolvedObject = corev1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: ev.Namespace, Name: claim}
			kept = append(kept, parsedEvent{ev: ev, line: l.n})
			last = &kept[len(kept)-1].ev
			continue
		}
		if kind := controllerEventKinds[ev.Source.Component]; kind != "" {
			// A describe's row a workload controller reported: the event is its
			// object's, never a pod's.
			ev.Namespace = nsOr(ns)
			name := ""
			if a := commandObject(cmd); a != nil && a.Kind == kind {
				name = a.Name
			}
			if m := reStatefulSetPodEvent.FindStringSubmatch(ev.Message); name == "" && kind == "StatefulSet" && m != nil {
				name = m[1]
			}
			if name == "" {
				name = unnamedObject
			}
			ev.InvolvedObject = corev1.ObjectReference{Kind: kind, Namespace: ev.Namespace, Name: name}
			kept = append(kept, parsedEvent{ev: ev, line: l.n})
			last = &kept[len(kept)-1].ev
			continue
		}
		if pending == nil {
			ctx.pending = append(ctx.pending, pendingFrag{d: &describedPod{line: l.n}, pod: commandPod(cmd), ns: ns, nsKnown: ns != ""})
			pending = &ctx.pending[len(ctx.pending)-1]
		}
		ev.InvolvedObject.FieldPath, ev.Message = splitFieldPathKeep(ev.InvolvedObject.FieldPath, ev.Message)
		pending.d.events = append(pending.d.events, parsedEvent{ev: ev, line: l.n})
		last = &pending.d.events[len(pending.d.events)-1].ev
	}
	for _, e := range kept {
		li.addEvent(name, e)
	}
	if n > 0 {
		li.found["events"] = true
	}
	return n > 0
}

// splitFieldPathKeep takes the container field path from the message unless the row
// had its own column for it.
func splitFieldPathKeep(fp, msg string) (string, string) {
	if fp != "" {
		return fp, msg
	}
	return splitFieldPath(msg)
}

// podRows reads `kubectl get pods` rows without their header.
func (li *looseImport) podRows(ctx *fileCtx, name string, b segmentBlock, cmd string) bool {
	ns := commandNamespace(cmd)
	n := 0
	for _, l := range b.lines {
		p, nsKnown, ok := headerlessPod(l.s)
		if !ok {
			continue
		}
		n++
		missing := []string{partialSpec}
		if !nsKnown {
			p.Namespace = nsOr(ns)
			if ns == "" {
				missing = append([]string{partialNamespace}, missing...)
				li.guessedPods[p.Namespace+"/"+p.Name] = true
			}
		}
		ctx.pods[p.Namespace+"/"+p.Name] = true
		li.pasteStatus[p.Namespace+"/"+p.Name] = statusCell(p)
		li.addPartialPod(name, p, l.n, rankTable, missing)
	}
	li.found["pods"] = li.found["pods"] || n > 0
	return n > 0
}

// describeFragment reads a describe fragment; its pod is decided at the end of the file.
func (li *looseImport) describeFragment(ctx *fileCtx, b segmentBlock, cmd string) (bool, []string) {
	if namespaceDescribe(b.lines) {
		// A namespace's describe (its deletion conditions) is no pod: its lines stay
		// text, where the namespace controller's messages are read.
		return false, nil
	}
	lines := wrapFragment(b.lines, "unknown")
	if len(lines) == 0 {
		return false, nil
	}
	d := parseDescribe(lines)
	ns := commandNamespace(cmd)
	if d.pod.Namespace != "" {
		ns = d.pod.Namespace
	}
	pod := d.pod.Name
	if pod == "" {
		pod = commandPod(cmd)
	}
	ctx.pending = append(ctx.pending, pendingFrag{d: d, pod: pod, ns: ns, nsKnown: ns != "", fragment: true})
	return true, d.problems
}

// resolve gives every pending fragment of a file its pod: the one its command named,
// else the only pod the file names, else the one the scheduler's event names, else a
// pod named after the file, marked as not knowing its name.
func (li *looseImport) resolve(ctx *fileCtx) {
	if !ctx.final {
		defer func() {
			for k := range ctx.pods {
				li.pastePods[k] = true
			}
		}()
	}
	// Rows whose namespace was guessed take the namespace the file shows their pod in.
	shown := map[string][]string{}
	for k := range ctx.pods {
		ns, name, _ := strings.Cut(k, "/")
		shown[name] = append(shown[name], ns)
	}
	for _, e := range ctx.rows {
		name := e.ev.InvolvedObject.Name
		if nss := shown[name]; len(nss) == 1 {
			e.ev.Namespace, e.ev.InvolvedObject.Namespace = nss[0], nss[0]
		} else {
			li.guessedNS[e.ev.Namespace+"/"+name] = true
			ctx.pods[e.ev.Namespace+"/"+name] = true
			li.guessedPods[e.ev.Namespace+"/"+name] = true
		}
		li.addEvent(ctx.name, e)
	}
	for _, pf := range ctx.pending {
		name, ns, nsKnown, nameKnown := pf.pod, pf.ns, pf.nsKnown, pf.pod != ""
		node := ""
		for _, e := range pf.d.events {
			if m := reAssigned.FindStringSubmatch(e.ev.Message); m != nil && (name == "" || name == m[2]) {
				name, ns, nsKnown, nameKnown, node = m[2], m[1], true, true, m[3]
				break
			}
		}
		if node == "" {
			node = kubeletHost(pf.d.events)
		}
		// The kubelet names the pod and its namespace in its own events ("Back-off
		// restarting failed container app in pod web-1_shop(UID)", pod="shop/web-1").
		for _, e := range pf.d.events {
			if nsKnown && nameKnown {
				break
			}
			if pns, pname, ok := namedPod(e.ev.Message); ok && (name == "" || name == pname) {
				name, nameKnown = pname, true
				if !nsKnown {
					ns, nsKnown = pns, true
				}
			}
		}
		if name == "" && len(ctx.pods) == 1 && !li.allReadyRow(ctx.pods) {
			for k := range ctx.pods {
				n, p, _ := strings.Cut(k, "/")
				name, nameKnown = p, true
				if !nsKnown {
					ns, nsKnown = n, !li.guessedPods[k]
				}
			}
		}
		if name == "" && ctx.prosePod != "" {
			// The reporter's words name one pod, and nothing else in the file does.
			name, nameKnown = ctx.prosePod, true
			if !nsKnown && ctx.proseNS != "" {
				ns, nsKnown = ctx.proseNS, true
			}
		}
		if name == "" && ctx.final && len(ctx.pods) > 1 {
			// Of the several pods the paste lists, the events are of the one whose STATUS
			// shows the trouble they report: a FailedScheduling row is the Pending pod's
			// when only one is Pending.
			if k := li.podInStatus(ctx.pods, pf.d.events); k != "" {
				n, p, _ := strings.Cut(k, "/")
				name, nameKnown = p, true
				if !nsKnown {
					ns, nsKnown = n, !li.guessedPods[k]
				}
			}
		}
		if name == "" && !ctx.final {
			// Another file of the paste may name the pod (`kubectl get pods` in one,
			// the describe excerpt in another): decided once every file is read.
			li.deferUnnamed(ctx.name, pf)
			continue
		}
		if name == "" {
			name = placeholderPod(ctx.name)
		}
		if ns == "" {
			ns = "default"
		}
		d := pf.d
		pod := d.pod
		pod.APIVersion, pod.Kind = "v1", "Pod"
		pod.Name, pod.Namespace = name, ns
		if pod.Spec.NodeName == "" {
			pod.Spec.NodeName = node
		}
		var missing []string
		if !nameKnown {
			missing = append(missing, partialName)
		}
		if !nsKnown {
			missing = append(missing, partialNamespace)
		}
		missing = append(missing, partialSpec)
		if len(pod.Status.ContainerStatuses) == 0 && len(pod.Status.InitContainerStatuses) == 0 && pod.Status.Phase == "" {
			missing = append(missing, partialStatus)
		}
		li.addPartialPod(ctx.name, pod, d.line, rankPartial+1, missing)
		for _, e := range d.events {
			e.ev.InvolvedObject.Kind, e.ev.InvolvedObject.APIVersion = "Pod", "v1"
			e.ev.InvolvedObject.Name, e.ev.InvolvedObject.Namespace, e.ev.Namespace = name, ns, ns
			li.addEvent(ctx.name, e)
		}
		if len(d.events) > 0 {
			li.found["events"] = true
		}
		li.found["pods"] = true
	}
}

// allReadyRow reports whether the one pod of pods is one a get row shows Running with
// every container ready ("3/3 Running"): the trouble of events without a pod is not
// its (a FailedMount keeps a pod's containers from starting).
func (li *looseImport) allReadyRow(pods map[string]bool) bool {
	for k := range pods {
		it := li.byKey["Pod/"+k]
		if it == nil {
			return false
		}
		var p corev1.Pod
		if json.Unmarshal(it.data, &p) != nil {
			return false
		}
		var row bundle.KubectlRow
		if json.Unmarshal([]byte(p.Annotations[bundle.KubectlRowAnnotation]), &row) != nil {
			return false
		}
		ready, total, ok := strings.Cut(row.Ready, "/")
		return ok && ready == total && ready != "0" && row.Status == "Running"
	}
	return false
}

// statusCell is what a pods table's STATUS cell showed for p: the reason it printed, or
// the phase.
func statusCell(p corev1.Pod) string {
	if p.Status.Reason != "" {
		return p.Status.Reason
	}
	return string(p.Status.Phase)
}

// eventStatus are the STATUS cells that show the trouble of an event, by its reason and
// the start of its message.
var eventStatus = []struct {
	reason, message string
	status          []string
}{
	{"FailedScheduling", "", []string{"Pending"}},
	{"Failed", "Failed to pull image", []string{"ErrImagePull", "ImagePullBackOff"}},
	{"Failed", "Error: ErrImagePull", []string{"ErrImagePull", "ImagePullBackOff"}},
	{"Failed", "Error: ImagePullBackOff", []string{"ErrImagePull", "ImagePullBackOff"}},
	{"BackOff", "Back-off pulling image", []string{"ErrImagePull", "ImagePullBackOff"}},
	{"InspectFailed", "", []string{"InvalidImageName"}},
	{"BackOff", "Back-off restarting failed container", []string{"CrashLoopBackOff", "Error"}},
	{"FailedMount", "", []string{"ContainerCreating"}},
	{"FailedAttachVolume", "", []string{"ContainerCreating"}},
	{"FailedCreatePodSandBox", "", []string{"ContainerCreating"}},
}

// podInStatus is the one pod of pods whose STATUS shows the trouble of the first warning
// event that says which, or "".
func (li *looseImport) podInStatus(pods map[string]bool, events []parsedEvent) string {
	for _, e := range events {
		for _, es := range eventStatus {
			if e.ev.Reason != es.reason || !strings.HasPrefix(e.ev.Message, es.message) {
				continue
			}
			found := ""
			for k := range pods {
				if slices.Contains(es.status, li.pasteStatus[k]) {
					if found != "" {
						return ""
					}
					found = k
				}
			}
			return found
		}
	}
	return ""
}

// deferUnnamed keeps a fragment whose file names no pod for resolveUnnamed.
func (li *looseImport) deferUnnamed(file string, pf pendingFrag) {
	for _, c := range li.unnamed {
		if c.name == file {
			c.pending = append(c.pending, pf)
			return
		}
	}
	li.unnamed = append(li.unnamed, &fileCtx{name: file, final: true, pending: []pendingFrag{pf}})
}

// resolveUnnamed gives the fragments no file named a pod for the one pod the whole
// paste names, when it names exactly one; a placeholder otherwise.
func (li *looseImport) resolveUnnamed() {
	for _, c := range li.unnamed {
		c.pods = li.pastePods
		li.resolve(c)
	}
	li.unnamed = nil
}

// placeholderPod names a pod no line of the file names, after the file.
func placeholderPod(file string) string {
	base := strings.ToLower(file[strings.LastIndexByte(file, '/')+1:])
	var b strings.Builder
	b.WriteString("unnamed-")
	for _, r := range base {
		switch {
		case r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	s := strings.TrimRight(b.String(), "-")
	if len(s) > 63 {
		s = strings.TrimRight(s[:63], "-")
	}
	return s
}

// addPartialPod adds a pod built from a fragment, marked with what it does not show.
func (li *looseImport) addPartialPod(path string, pod corev1.Pod, line, rank int, missing []string) {
	if len(missing) > 0 {
		if pod.Annotations == nil {
			pod.Annotations = map[string]string{}
		}
		pod.Annotations[bundle.PartialAnnotation] = strings.Join(missing, ",")
	}
	li.addPod(path, pod, line, rank)
}

// mergePods fills what the kept pod lacks from another reading of the same pod, and
// narrows its partial mark to what neither shows.
func mergePods(kept, other *corev1.Pod) {
	if kept.Spec.NodeName == "" {
		kept.Spec.NodeName = other.Spec.NodeName
	}
	if kept.Status.Phase == "" {
		kept.Status.Phase = other.Status.Phase
	}
	if kept.Status.Reason == "" || kept.Status.Reason == other.Status.Reason {
		// A get row shows the reason (Evicted) and a describe excerpt of the same
		// pod its message, which says why.
		kept.Status.Reason = other.Status.Reason
		if kept.Status.Message == "" {
			kept.Status.Message = other.Status.Message
		}
	}
	if kept.Status.PodIP == "" {
		kept.Status.PodIP = other.Status.PodIP
	}
	if len(kept.Spec.Containers) == 0 || kept.Spec.Containers[0].Name == "unknown" && len(other.Spec.Containers) > 0 {
		if len(other.Spec.Containers) > 0 {
			kept.Spec.Containers = other.Spec.Containers
		}
	}
	if len(kept.Status.ContainerStatuses) == 0 || kept.Status.ContainerStatuses[0].Name == "unknown" && len(other.Status.ContainerStatuses) > 0 {
		if len(other.Status.ContainerStatuses) > 0 {
			kept.Status.ContainerStatuses = other.Status.ContainerStatuses
		}
	}
	if len(kept.Status.Conditions) == 0 {
		kept.Status.Conditions = other.Status.Conditions
	}
	if len(kept.Spec.Volumes) == 0 {
		kept.Spec.Volumes = other.Spec.Volumes
	}
	if row, ok := other.Annotations[bundle.KubectlRowAnnotation]; ok && kept.Annotations[bundle.KubectlRowAnnotation] == "" {
		// What the get row showed (READY, STATUS, RESTARTS) stays with the pod.
		if kept.Annotations == nil {
			kept.Annotations = map[string]string{}
		}
		kept.Annotations[bundle.KubectlRowAnnotation] = row
	}
	km, kok := kept.Annotations[bundle.PartialAnnotation]
	if !kok {
		return
	}
	om, ook := other.Annotations[bundle.PartialAnnotation]
	var both []string
	if ook {
		for _, m := range strings.Split(km, ",") {
			if slices.Contains(strings.Split(om, ","), m) {
				both = append(both, m)
			}
		}
	}
	if len(both) == 0 {
		delete(kept.Annotations, bundle.PartialAnnotation)
		if len(kept.Annotations) == 0 {
			kept.Annotations = nil
		}
		return
	}
	kept.Annotations[bundle.PartialAnnotation] = strings.Join(both, ",")
}

// mergeInto merges a new pod reading into the kept item of the same pod.
func mergeInto(old *looseItem, data []byte, rank int, path string, line int) {
	var a, b corev1.Pod
	if json.Unmarshal(old.data, &a) != nil || json.Unmarshal(data, &b) != nil {
		return
	}
	richer, poorer := &a, &b
	if rank > old.rank {
		richer, poorer = &b, &a
		old.rank, old.path, old.line = rank, path, line
	}
	mergePods(richer, poorer)
	if out, err := json.Marshal(richer); err == nil {
		old.data = out
	}
}

// eventPods adds a partial pod for every pod an event names and no output shows.
func (li *looseImport) eventPods() {
	for ns, evs := range li.events {
		for _, e := range evs {
			o := e.ev.InvolvedObject
			if o.Kind != "Pod" || o.Name == "" {
				continue
			}
			if _, ok := li.byKey["Pod/"+ns+"/"+o.Name]; ok {
				continue
			}
			var p corev1.Pod
			p.APIVersion, p.Kind = "v1", "Pod"
			p.Name, p.Namespace = o.Name, ns
			missing := []string{partialSpec, partialStatus}
			if li.guessedNS[ns+"/"+o.Name] {
				missing = append([]string{partialNamespace}, missing...)
			}
			if m := reAssigned.FindStringSubmatch(e.ev.Message); m != nil && m[2] == o.Name {
				p.Spec.NodeName = m[3]
			}
			li.addPartialPod(e.path, p, e.line, rankPartial, missing)
		}
	}
}

// reasonNodeNotReady is the event the node controller records on every pod of a node
// whose Ready condition stops being True (pkg/controller/nodelifecycle, MarkPodsNotReady:
// "Node is not ready"), and the kubelet on its Node ("Node X status is now: NodeNotReady").
const reasonNodeNotReady = "NodeNotReady"

// notReadyNodes adds a partial Node for every node the evidence shows not Ready only
// through NodeNotReady events, on the node or on a pod bound to it, when no output
// shows the Node itself: its name is known, its spec and status are not.
func (li *looseImport) notReadyNodes() {
	podNodes := li.podNodes()
	nss := make([]string, 0, len(li.events))
	for ns := range li.events {
		nss = append(nss, ns)
	}
	sort.Strings(nss)
	for _, ns := range nss {
		for _, e := range li.events[ns] {
			if e.ev.Reason != reasonNodeNotReady {
				continue
			}
			o := e.ev.InvolvedObject
			node := ""
			switch o.Kind {
			case "Pod":
				node = podNodes[ns+"/"+o.Name]
			case "Node":
				node = o.Name
			}
			if node == "" || !isDNSName(node) {
				continue
			}
			if _, ok := li.byKey["Node//"+node]; ok {
				continue
			}
			var n corev1.Node
			n.APIVersion, n.Kind, n.Name = "v1", "Node", node
			n.Annotations = map[string]string{bundle.PartialAnnotation: partialSpec + "," + partialStatus}
			data, err := json.Marshal(n)
			if err != nil {
				continue
			}
			li.put(bundle.ClusterResourcePath(bundle.KindNodes), &looseItem{data: data, path: e.path, line: e.line, rank: rankPartial, key: "Node//" + node})
		}
	}
}

// fragment keeps a block's lines as a fragment file, so they can be cited at their
// original lines.
type fragment struct {
	kind  string
	path  string
	lines []textLine
	// about is what the lines are about, when the block or its command says.
	about *bundle.FragmentAbout
}

// keepFragment records a block as a fragment and returns the fragment path.
func (li *looseImport) keepFragment(kind, path string, lines []textLine) string {
	return li.keepFragmentAbout(kind, path, lines, nil)
}

// keepFragmentAbout is keepFragment for a block whose subject the import could tell.
func (li *looseImport) keepFragmentAbout(kind, path string, lines []textLine, about *bundle.FragmentAbout) string {
	lines = trimBlank(lines)
	if len(lines) == 0 {
		return ""
	}
	ext := ".log"
	if kind == bundle.FragmentText {
		ext = ".txt"
	}
	p := bundle.FragmentPath(kind, blockName(path, lines[0].n, ext))
	li.fragments = append(li.fragments, fragment{kind: kind, path: path, lines: lines, about: about})
	return p
}

// layoutFragments writes every fragment file, its lines as in the input (a message's
// continuation lines joined into its first), and its origin.
func (li *looseImport) layoutFragments(files map[string][]byte) {
	for _, f := range li.fragments {
		out := bundle.FragmentPath(f.kind, blockName(f.path, f.lines[0].n, map[bool]string{true: ".txt", false: ".log"}[f.kind == bundle.FragmentText]))
		size := 0
		for _, l := range f.lines {
			size += len(l.s) + 1
		}
		var buf bytes.Buffer
		buf.Grow(size + f.lines[len(f.lines)-1].n - f.lines[0].n + 1)
		next := f.lines[0].n
		// A message continued on the lines below it reads whole on its first line.
		for _, l := range joinContinuations(f.lines) {
			// Lines a chunk left out (none inside a block) would shift every later line.
			for ; next < l.n; next++ {
				buf.WriteByte('\n')
			}
			buf.WriteString(l.s)
			buf.WriteByte('\n')
			next = l.n + 1
		}
		files[out] = buf.Bytes()
		li.r.Origins[out] = Origin{Path: f.path, LineOffset: f.lines[0].n - 1, About: f.about}
		if r := li.r.File(f.path); r != nil && !slices.Contains(r.Produced, out) {
			r.Produced = append(r.Produced, out)
		}
	}
}

func blockRange(b segmentBlock) (int, int) {
	lines := trimBlank(b.lines)
	if len(lines) == 0 {
		return 0, 0
	}
	return lines[0].n, lines[len(lines)-1].n
}

// namespaceDescribe tells the describe of a namespace by the conditions only the
// namespace controller sets (pkg/controller/namespace/deletion: NamespaceDeletion*,
// NamespaceContentRemaining, NamespaceFinalizersRemaining).
func namespaceDescribe(lines []textLine) bool {
	for _, l := range lines {
		f := strings.Fields(l.s)
		if len(f) >= 2 && strings.HasPrefix(f[0], "Namespace") && (f[1] == "True" || f[1] == "False" || f[1] == "Unknown") {
			return true
		}
	}
	return false
}

// kubeletHost is the node the kubelet recorded a pod's events from, when its events
// name one ("kubelet, worker-1" in the FROM column before 1.14, "{kubelet worker-1}"
// before 1.6): a pod's kubelet runs on its node. "" when none does, or they disagree.
func kubeletHost(events []parsedEvent) string {
	host := ""
	for _, e := range events {
		h := e.ev.Source.Host
		if e.ev.Source.Component != "kubelet" || h == "" {
			continue
		}
		if host != "" && host != h {
			return ""
		}
		host = h
	}
	return host
}
