package importer

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"podflow.dev/podflow/bundle"
)

// describedPod is one pod read back from `kubectl describe pod`, with the events its
// table listed. Only what describe prints is set; nothing is guessed.
type describedPod struct {
	pod    corev1.Pod
	line   int
	events []parsedEvent
	// problems name lines that could not be read; the rest of the pod still counts.
	problems []string
}

// parsedEvent is an event read from a table, with the original line of its row.
type parsedEvent struct {
	ev   corev1.Event
	line int
}

// isDescribeStart tells whether lines[i] starts a `kubectl describe pod` block: "Name:"
// at the margin, then "Namespace:".
func isDescribeStart(lines []textLine, i int) bool {
	// A DaemonSet's describe prints no Namespace: its Selector and Node-Selector follow
	// the name (k8s.io/kubectl pkg/describe DaemonSetDescriber).
	return isDescribeBlockStart(lines, i, "Namespace:") ||
		isDescribeBlockStart(lines, i, "Selector:") && i+2 < len(lines) && strings.HasPrefix(lines[i+2].s, "Node-Selector:")
}

// isDescribeBlockStart tells whether lines[i] starts a kubectl describe block whose kind
// shows in its second key: "Name:" at the margin, then second within the next two lines.
func isDescribeBlockStart(lines []textLine, i int, second string) bool {
	if !strings.HasPrefix(lines[i].s, "Name:") {
		return false
	}
	for j := i + 1; j < len(lines) && j <= i+2; j++ {
		if strings.HasPrefix(strings.TrimSpace(lines[j].s), second) {
			return true
		}
	}
	return false
}

// reKey matches "Key:  value" as describe prints it; keys start with a capital letter
// and may hold spaces ("Restart Count") and dashes ("Node-Selectors").
var reKey = regexp.MustCompile(`^([A-Z][A-Za-z0-9 #/-]*?):(?:\s+(.*))?$`)

// reContainerName is a container heading: a DNS label followed by a colon.
var reContainerName = regexp.MustCompile(`^([a-z0-9]([-a-z0-9.]*[a-z0-9])?):$`)

// describe sections whose indented lines are parsed by their own reader.
const (
	secNone = iota
	secLabels
	secContainers
	secConditions
	secVolumes
	secEvents
	secSkip
)

type describeParser struct {
	d       *describedPod
	sec     int
	init    bool
	c       *corev1.Container
	st      *corev1.ContainerStatus
	state   *corev1.ContainerState
	sub     string // sub-list inside a container: Limits, Requests, Environment, Mounts, Command, Args
	vol     *corev1.Volume
	labels  map[string]string
	events  describeEventTable
	hasStat bool
}

// parseDescribe reads one pod's describe block.
func parseDescribe(lines []textLine) *describedPod {
	d := &describedPod{line: lines[0].n}
	d.pod.APIVersion, d.pod.Kind = "v1", "Pod"
	p := &describeParser{d: d}
	for _, l := range lines {
		p.line(l)
	}
	p.endContainer()
	return d
}

func (p *describeParser) problem(l textLine, format string, args ...any) {
	p.d.problems = append(p.d.problems, fmt.Sprintf("line %d: ", l.n)+fmt.Sprintf(format, args...))
}

func (p *describeParser) line(l textLine) {
	s := detab(l.s)
	if strings.TrimSpace(s) == "" {
		return
	}
	indent := len(s) - len(strings.TrimLeft(s, " "))
	body := strings.TrimSpace(s)
	if indent == 0 {
		if m := reKey.FindStringSubmatch(body); m != nil && p.top(m[1], strings.TrimSpace(m[2])) {
			return
		}
	}
	if p.sec != secEvents && indent > 0 {
		// An Events table whose "Events:" title and header a paste cut: its rows
		// still read as describe's (Type, Reason, Age, From, Message).
		if _, ok := describeEventCells(s, nil); ok && p.sec != secContainers && p.sec != secVolumes {
			p.sec = secEvents
		}
	}
	switch p.sec {
	case secLabels:
		if k, v, ok := strings.Cut(body, "="); ok && p.labels != nil {
			p.labels[k] = v
		}
	case secContainers:
		p.containerLine(body, indent, l)
	case secConditions:
		p.conditionLine(body)
	case secVolumes:
		p.volumeLine(body)
	case secEvents:
		p.eventLine(s, l)
	}
}

// top handles a key at the margin; false when it is no key describe prints there.
func (p *describeParser) top(key, val string) bool {
	pod := &p.d.pod
	switch key {
	case "Name":
		pod.Name = val
	case "Namespace":
		pod.Namespace = val
	case "Priority":
		if n, err := strconv.ParseInt(val, 10, 32); err == nil {
			v := int32(n)
			pod.Spec.Priority = &v
		}
	case "Priority Class Name":
		pod.Spec.PriorityClassName = val
	case "Service Account":
		pod.Spec.ServiceAccountName = val
	case "Node":
		if val != "<none>" {
			node, ip, _ := strings.Cut(val, "/")
			pod.Spec.NodeName, pod.Status.HostIP = node, ip
		}
	case "Start Time":
		if t, err := time.Parse(time.RFC1123Z, val); err == nil {
			mt := metav1.NewTime(t)
			pod.Status.StartTime = &mt
		}
	case "Labels":
		pod.Labels = map[string]string{}
		p.labels = pod.Labels
		p.sec = secLabels
		if k, v, ok := strings.Cut(val, "="); ok {
			p.labels[k] = v
		}
		return true
	case "Node-Selectors":
		pod.Spec.NodeSelector = map[string]string{}
		p.labels = pod.Spec.NodeSelector
		p.sec = secLabels
		if k, v, ok := strings.Cut(val, "="); ok {
			p.labels[k] = v
		}
		return true
	case "Status":
		// "Terminating (lasts 5m)" has no time to set deletionTimestamp from, and hides
		// the phase; a terminal phase hides whether the pod is being deleted.
		if ph := corev1.PodPhase(val); isPhase(ph) {
			pod.Status.Phase = ph
			if ph == corev1.PodSucceeded || ph == corev1.PodFailed {
				setAnnotation(&pod.ObjectMeta, bundle.DeletionAnnotation, "not shown")
			}
		} else if m := reTerminating.FindStringSubmatch(val); m != nil {
			if d, ok := parseHumanAge(m[1]); ok {
				setAnnotation(&pod.ObjectMeta, bundle.DeletionAnnotation, "terminating "+d.String())
			}
		}
	case "Reason":
		pod.Status.Reason = val
	case "Message":
		pod.Status.Message = val
	case "IP":
		pod.Status.PodIP = val
	case "Controlled By":
		if kind, name, ok := strings.Cut(val, "/"); ok {
			yes := true
			pod.OwnerReferences = []metav1.OwnerReference{{APIVersion: ownerAPIVersion(kind), Kind: kind, Name: name, Controller: &yes}}
		}
	case "NominatedNodeName":
		pod.Status.NominatedNodeName = val
	case "Containers", "Init Containers":
		p.endContainer()
		p.sec, p.init = secContainers, key == "Init Containers"
		return true
	case "Conditions":
		p.endContainer()
		p.sec = secConditions
		return true
	case "Volumes":
		p.endContainer()
		p.sec = secVolumes
		return true
	case "Events":
		p.endContainer()
		p.sec = secEvents
		return true
	case "Annotations", "IPs", "Tolerations", "Readiness Gates", "Topology Spread Constraints", "Resources", "Ephemeral Containers":
		p.endContainer()
		p.sec = secSkip
		return true
	case "Termination Grace Period":
		if d, ok := parseHumanAge(val); ok {
			g := int64(d / time.Second)
			pod.DeletionGracePeriodSeconds = &g
		}
	case "QoS Class", "SeccompProfile", "Runtime Class Name", "LocalhostProfile":
	default:
		return false
	}
	p.endContainer()
	p.sec = secNone
	return true
}

// reTerminating is describe's status of a deleted pod: "Terminating (lasts 5m16s)", the
// time since its deletionTimestamp (translateTimestampSince).
var reTerminating = regexp.MustCompile(`^Terminating \(lasts (\S+)\)$`)

// reHumanAge is kubectl's short duration (k8s.io/apimachinery duration.HumanDuration):
// "45s", "5m16s", "3h", "2d3h", "4y10d".
var reHumanAge = regexp.MustCompile(`^(?:(\d+)y)?(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$`)

// parseHumanAge reads a kubectl duration; false for "<invalid>", "<unknown>" and text.
func parseHumanAge(s string) (time.Duration, bool) {
	m := reHumanAge.FindStringSubmatch(s)
	if m == nil || s == "" {
		return 0, false
	}
	var d time.Duration
	for i, unit := range []time.Duration{365 * 24 * time.Hour, 24 * time.Hour, time.Hour, time.Minute, time.Second} {
		if m[i+1] == "" {
			continue
		}
		n, err := strconv.ParseInt(m[i+1], 10, 32)
		if err != nil {
			return 0, false
		}
		d += time.Duration(n) * unit
	}
	return d, true
}

func setAnnotation(meta *metav1.ObjectMeta, key, val string) {
	if meta.Annotations == nil {
		meta.Annotations = map[string]string{}
	}
	meta.Annotations[key] = val
}

func isPhase(ph corev1.PodPhase) bool {
	switch ph {
	case corev1.PodPending, corev1.PodRunning, corev1.PodSucceeded, corev1.PodFailed, corev1.PodUnknown:
		return true
	}
	return false
}

func ownerAPIVersion(kind string) string {
	switch kind {
	case "ReplicaSet", "Deployment", "StatefulSet", "DaemonSet":
		return "apps/v1"
	case "Job", "CronJob":
		return "batch/v1"
	}
	return "v1"
}

// endContainer stores the container being read into the pod.
func (p *describeParser) endContainer() {
	if p.c == nil {
		return
	}
	spec, pod := &p.d.pod.Spec, &p.d.pod
	if p.init {
		spec.InitContainers = append(spec.InitContainers, *p.c)
		if p.hasStat {
			pod.Status.InitContainerStatuses = append(pod.Status.InitContainerStatuses, *p.st)
		}
	} else {
		spec.Containers = append(spec.Containers, *p.c)
		if p.hasStat {
			pod.Status.ContainerStatuses = append(pod.Status.ContainerStatuses, *p.st)
		}
	}
	p.c, p.st, p.state, p.sub, p.hasStat = nil, nil, nil, "", false
}

func (p *describeParser) containerLine(body string, indent int, l textLine) {
	inEnv := p.sub == "Environment" || p.sub == "Environment Variables from"
	if m := reContainerName.FindStringSubmatch(body); m != nil && !(inEnv && indent > 4) && (indent <= 2 || p.c == nil) {
		p.endContainer()
		p.c = &corev1.Container{Name: m[1]}
		p.st = &corev1.ContainerStatus{Name: m[1]}
		return
	}
	if p.c == nil {
		p.problem(l, "container field before any container name: %q", body)
		return
	}
	key, val, hasKey := strings.Cut(body, ":")
	val = strings.TrimSpace(val)
	if hasKey && p.containerKey(key, val) {
		return
	}
	p.subLine(body, key, val, hasKey)
}

// containerKey handles the keys describe prints for every container; false for lines
// that belong to the sub-list being read.
func (p *describeParser) containerKey(key, val string) bool {
	c, st := p.c, p.st
	switch key {
	case "Container ID":
		st.ContainerID, p.hasStat = val, true
	case "Image":
		c.Image, st.Image = val, val
	case "Image ID":
		st.ImageID, p.hasStat = val, true
	case "Port", "Ports":
		c.Ports = containerPorts(val, c.Ports)
	case "Host Port", "Host Ports":
		setHostPorts(c.Ports, val)
	case "SeccompProfile":
	case "State":
		p.hasStat = true
		p.state = &st.State
		setState(p.state, val)
	case "Last State":
		p.hasStat = true
		p.state = &st.LastTerminationState
		setState(p.state, val)
	case "Ready":
		st.Ready, p.hasStat = val == "True", true
	case "Restart Count":
		if n, err := strconv.ParseInt(val, 10, 32); err == nil {
			st.RestartCount, p.hasStat = int32(n), true
		}
	case "Liveness", "Readiness", "Startup":
		pr := parseProbe(val)
		switch key {
		case "Liveness":
			c.LivenessProbe = pr
		case "Readiness":
			c.ReadinessProbe = pr
		default:
			c.StartupProbe = pr
		}
	case "Limits", "Requests", "Environment", "Environment Variables from", "Mounts", "Command", "Args", "Devices":
		p.sub, p.state = key, nil
	case "Reason", "Message", "Exit Code", "Signal", "Started", "Finished":
		if p.state == nil {
			return false
		}
		p.stateField(key, val)
	default:
		return false
	}
	if key != "Limits" && key != "Requests" && key != "Environment" && key != "Environment Variables from" &&
		key != "Mounts" && key != "Command" && key != "Args" && key != "Devices" &&
		key != "Reason" && key != "Message" && key != "Exit Code" && key != "Signal" && key != "Started" && key != "Finished" &&
		key != "State" && key != "Last State" {
		p.sub = ""
	}
	return true
}

// reContainerPort is one port of describe's Port(s) line, "80/TCP" or "80/TCP (web)"
// (describeContainerPorts); kubectl before 1.8 printed the number alone.
var reContainerPort = regexp.MustCompile(`^(\d+)(?:/([A-Z]+))?(?: \(([^)]*)\))?$`)

// containerPorts reads describe's Port or Ports value ("<none>" for none).
func containerPorts(val string, ports []corev1.ContainerPort) []corev1.ContainerPort {
	for _, p := range strings.Split(val, ",") {
		m := reContainerPort.FindStringSubmatch(strings.TrimSpace(p))
		if m == nil {
			continue
		}
		n, err := strconv.ParseInt(m[1], 10, 32)
		if err != nil || n <= 0 || n > 65535 {
			continue
		}
		proto := corev1.Protocol(m[2])
		if proto == "" {
			proto = corev1.ProtocolTCP
		}
		ports = append(ports, corev1.ContainerPort{ContainerPort: int32(n), Protocol: proto, Name: m[3]})
	}
	return ports
}

// setHostPorts reads describe's Host Port(s) value, one per container port in order
// ("0/TCP (web)" when the port has no host port).
func setHostPorts(ports []corev1.ContainerPort, val string) {
	for i, p := range strings.Split(val, ",") {
		m := reContainerPort.FindStringSubmatch(strings.TrimSpace(p))
		if m == nil || i >= len(ports) {
			continue
		}
		if n, err := strconv.ParseInt(m[1], 10, 32); err == nil && n > 0 && n <= 65535 {
			ports[i].HostPort = int32(n)
		}
	}
}

func setState(s *corev1.ContainerState, val string) {
	*s = corev1.ContainerState{}
	switch val {
	case "Running":
		s.Running = &corev1.ContainerStateRunning{}
	case "Terminated":
		s.Terminated = &corev1.ContainerStateTerminated{}
	default:
		s.Waiting = &corev1.ContainerStateWaiting{}
	}
}

func (p *describeParser) stateField(key, val string) {
	s := p.state
	parseTime := func() metav1.Time {
		if t, err := time.Parse(time.RFC1123Z, val); err == nil {
			return metav1.NewTime(t)
		}
		return metav1.Time{}
	}
	switch {
	case s.Waiting != nil && key == "Reason":
		s.Waiting.Reason = val
	case s.Waiting != nil && key == "Message":
		s.Waiting.Message = val
	case s.Running != nil && key == "Started":
		s.Running.StartedAt = parseTime()
	case s.Terminated != nil:
		t := s.Terminated
		switch key {
		case "Reason":
			t.Reason = val
		case "Message":
			t.Message = val
		case "Exit Code":
			if n, err := strconv.ParseInt(val, 10, 32); err == nil {
				t.ExitCode = int32(n)
			}
		case "Signal":
			if n, err := strconv.ParseInt(val, 10, 32); err == nil {
				t.Signal = int32(n)
			}
		case "Started":
			t.StartedAt = parseTime()
		case "Finished":
			t.FinishedAt = parseTime()
		}
	}
}

var (
	reSecretRef = regexp.MustCompile(`^<set to the key '([^']*)' in secret '([^']*)'>(?:\s+Optional: (true|false))?$`)
	reConfigRef = regexp.MustCompile(`^<set to the key '([^']*)' of config map '([^']*)'>(?:\s+Optional: (true|false))?$`)
	reEnvFrom   = regexp.MustCompile(`^(\S+)\s+(Secret|ConfigMap)(?: with prefix '([^']*)')?\s+Optional: (true|false)$`)
	reMount     = regexp.MustCompile(`^(\S+) from (\S+) \((r[ow])(?:,path="(.*)")?\)$`)
)

// subLine reads a line of a container's sub-list (resources, env, mounts).
func (p *describeParser) subLine(body, key, val string, hasKey bool) {
	c := p.c
	switch p.sub {
	case "Limits", "Requests":
		q, err := resource.ParseQuantity(val)
		if !hasKey || err != nil {
			return
		}
		list := &c.Resources.Limits
		if p.sub == "Requests" {
			list = &c.Resources.Requests
		}
		if *list == nil {
			*list = corev1.ResourceList{}
		}
		(*list)[corev1.ResourceName(key)] = q
	case "Environment":
		if !hasKey {
			return
		}
		e := corev1.EnvVar{Name: key}
		if m := reSecretRef.FindStringSubmatch(val); m != nil {
			e.ValueFrom = &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
				LocalObjectReference: corev1.LocalObjectReference{Name: m[2]}, Key: m[1], Optional: optional(m[3])}}
		} else if m := reConfigRef.FindStringSubmatch(val); m != nil {
			e.ValueFrom = &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
				LocalObjectReference: corev1.LocalObjectReference{Name: m[2]}, Key: m[1], Optional: optional(m[3])}}
		} else {
			e.Value = val
		}
		c.Env = append(c.Env, e)
	case "Environment Variables from":
		m := reEnvFrom.FindStringSubmatch(body)
		if m == nil {
			return
		}
		src := corev1.EnvFromSource{Prefix: m[3]}
		ref := corev1.LocalObjectReference{Name: m[1]}
		if m[2] == "Secret" {
			src.SecretRef = &corev1.SecretEnvSource{LocalObjectReference: ref, Optional: optional(m[4])}
		} else {
			src.ConfigMapRef = &corev1.ConfigMapEnvSource{LocalObjectReference: ref, Optional: optional(m[4])}
		}
		c.EnvFrom = append(c.EnvFrom, src)
	case "Mounts":
		if m := reMount.FindStringSubmatch(body); m != nil {
			c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{MountPath: m[1], Name: m[2], ReadOnly: m[3] == "ro", SubPath: m[4]})
		}
	case "Command":
		c.Command = append(c.Command, body)
	case "Args":
		c.Args = append(c.Args, body)
	}
}

func optional(s string) *bool {
	if s == "" {
		return nil
	}
	v := s == "true"
	return &v
}

var reProbe = regexp.MustCompile(`^(http-get|tcp-socket|exec|grpc) (.*?) ?delay=(\d+)s timeout=(\d+)s period=(\d+)s #?success(?:Threshold)?=(\d+) #?failure(?:Threshold)?=(\d+)$`)

// parseProbe reads describe's probe line, e.g. "http-get http://:8080/healthz delay=0s
// timeout=1s period=10s #success=1 #failure=3" (older kubectl) or with successThreshold=.
func parseProbe(s string) *corev1.Probe {
	m := reProbe.FindStringSubmatch(s)
	if m == nil {
		return &corev1.Probe{}
	}
	atoi := func(s string) int32 { n, _ := strconv.ParseInt(s, 10, 32); return int32(n) }
	pr := &corev1.Probe{InitialDelaySeconds: atoi(m[3]), TimeoutSeconds: atoi(m[4]), PeriodSeconds: atoi(m[5]),
		SuccessThreshold: atoi(m[6]), FailureThreshold: atoi(m[7])}
	target := strings.TrimSpace(m[2])
	switch m[1] {
	case "http-get":
		pr.HTTPGet = httpProbe(target)
	case "tcp-socket":
		_, port, _ := strings.Cut(target, ":")
		pr.TCPSocket = &corev1.TCPSocketAction{Port: intOrString(port)}
	case "exec":
		pr.Exec = &corev1.ExecAction{Command: strings.Fields(strings.Trim(target, "[]"))}
	case "grpc":
		_, port, _ := strings.Cut(strings.Fields(target + " ")[0], ":")
		n, _ := strconv.ParseInt(port, 10, 32)
		pr.GRPC = &corev1.GRPCAction{Port: int32(n)}
	}
	return pr
}

// workloadDescribeKeys are margin keys that kubectl describe prints for controllers and
// autoscalers but never for a pod (k8s.io/kubectl pkg/describe/describe.go:
// HorizontalPodAutoscalerDescriber, DeploymentDescriber, ReplicaSetDescriber,
// StatefulSetDescriber, DaemonSetDescriber, JobDescriber, CronJobDescriber), each mapped
// to the kind it shows.
var workloadDescribeKeys = map[string]string{
	"Reference":                         "hpa",
	"Min replicas":                      "hpa",
	"Max replicas":                      "hpa",
	"Metrics":                           "hpa",
	"Pod Template":                      "workload",
	"Replicas":                          "workload",
	"StrategyType":                      "deployment",
	"Update Strategy":                   "workload",
	"Desired Number of Nodes Scheduled": "daemonset",
	"Completions":                       "job",
	"Parallelism":                       "job",
	"Schedule":                          "cronjob",
	"Concurrency Policy":                "cronjob",
}

// describedNonPod reports the kind of a describe block that starts like a pod's ("Name:",
// "Namespace:") but shows a controller or an autoscaler: its lines are not a pod's, and
// stay text for the signatures (an HPA's ScalingActive False FailedGetResourceMetric).
func describedNonPod(lines []textLine) string {
	for _, l := range lines {
		if strings.HasPrefix(l.s, " ") || strings.HasPrefix(l.s, "\t") {
			continue
		}
		m := reKey.FindStringSubmatch(strings.TrimRight(l.s, " \r"))
		if m == nil {
			continue
		}
		if kind, ok := workloadDescribeKeys[m[1]]; ok {
			return kind
		}
	}
	return ""
}
