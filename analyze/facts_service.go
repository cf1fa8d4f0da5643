package analyze

import (
	"regexp"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// What Services are compared with: the Services whose endpoints come from a pod
// selector, and the pods that should be their endpoints. The service rules and the
// controller and scheduling rules that skip finished pods read these.

// PodFinished reports whether a pod is done: Succeeded, Failed, or being deleted. A
// finished pod is no endpoint and holds no node's ports or spread.
func PodFinished(p *Pod) bool {
	ph := p.Obj.Status.Phase
	return ph == corev1.PodSucceeded || ph == corev1.PodFailed || p.Obj.DeletionTimestamp != nil
}

// SelectorServices lists the Services whose endpoints come from a pod selector: not
// ExternalName, and with a selector (one without manages its endpoints by hand).
func (v *View) SelectorServices() []*Service {
	var out []*Service
	for _, s := range v.Services() {
		if s.Obj.Spec.Type != corev1.ServiceTypeExternalName && len(s.Obj.Spec.Selector) > 0 {
			out = append(out, s)
		}
	}
	return out
}

// ReadyPodsSelectedBy lists the ready pods, not finished, that a Service's selector
// picks: the pods that should be its endpoints.
func (v *View) ReadyPodsSelectedBy(svc *corev1.Service) []*Pod {
	var ready []*Pod
	for _, p := range v.PodsSelectedBy(svc.Namespace, svc.Spec.Selector) {
		if !PodFinished(p) && IsReady(p) {
			ready = append(ready, p)
		}
	}
	return ready
}

// RefusedConnection is a client's report, in pasted evidence or a container's log, that
// a TCP connection to an address was refused: the host it dialled and, when the line
// or the command before it says, the port. A refusal means something answered at that
// address and nothing listened on the port: through a Service with endpoints,
// kube-proxy forwarded the connection to a pod's targetPort and the pod refused it;
// through a Service without endpoints, kube-proxy itself rejects it.
type RefusedConnection struct {
	Host string
	// Port is 0 when the evidence does not say.
	Port     int
	Evidence Evidence
}

// The clients' wordings of a refused connection, each from the program that prints it:
// Go's net package ("dial tcp 10.0.0.1:80: connect: connection refused"), curl
// (lib/connect.c: "Failed to connect to %s port %u after %d ms: %s", older releases
// without "after"), OpenBSD netcat ("connect to %s port %s (%s) failed: %s"), and
// telnet, which prints "Trying %s..." then "Unable to connect to remote host: %s"
// and leaves the port to its command line.
var (
	reDialRefused   = regexp.MustCompile(`dial tcp \[?([0-9A-Za-z.:_-]+?)\]?:(\d+): connect: connection refused`)
	reCurlRefused   = regexp.MustCompile(`Failed to connect to (\S+?) port (\d+)\b[^:]*: Connection refused`)
	reNcRefused     = regexp.MustCompile(`connect to (\S+) port (\d+) \(tcp\) failed: Connection refused`)
	reTelnetRefused = regexp.MustCompile(`Unable to connect to remote host: Connection refused`)
	reTelnetTrying  = regexp.MustCompile(`^\s*Trying (\S+?)\.\.\.`)
	reTelnetCommand = regexp.MustCompile(`\btelnet\s+(\S+)\s+(\d+)\s*$`)
)

// telnetLookback is how many lines above telnet's refusal its command and "Trying"
// line are looked for.
const telnetLookback = 4

// RefusedConnections lists the refused connections that pasted fragments and
// container logs report, in the order of the evidence.
func (v *View) RefusedConnections() []RefusedConnection {
	var out []RefusedConnection
	scan := func(lines []string, command string, at func(i int) Location) {
		for i, s := range lines {
			if !strings.Contains(s, "efused") {
				continue
			}
			var m []string
			for _, re := range []*regexp.Regexp{reDialRefused, reCurlRefused, reNcRefused} {
				if m = re.FindStringSubmatch(s); m != nil {
					break
				}
			}
			if m != nil {
				port, _ := strconv.Atoi(m[2])
				out = append(out, RefusedConnection{Host: m[1], Port: port, Evidence: at(i).Evidence(s, time.Time{})})
				continue
			}
			if !reTelnetRefused.MatchString(s) {
				continue
			}
			rc := RefusedConnection{Evidence: at(i).Evidence(s, time.Time{})}
			for j := i - 1; j >= 0 && j >= i-telnetLookback; j-- {
				if t := reTelnetTrying.FindStringSubmatch(lines[j]); t != nil && rc.Host == "" {
					rc.Host = t[1]
				}
				if c := reTelnetCommand.FindStringSubmatch(lines[j]); c != nil {
					if rc.Host == "" || rc.Host == c[1] {
						rc.Host = c[1]
						rc.Port, _ = strconv.Atoi(c[2])
					}
					break
				}
			}
			if rc.Port == 0 {
				// The prompt's command line, kept with the fragment rather than in it.
				if c := reTelnetCommand.FindStringSubmatch(command); c != nil && (rc.Host == "" || rc.Host == c[1]) {
					rc.Host = c[1]
					rc.Port, _ = strconv.Atoi(c[2])
				}
			}
			if rc.Host != "" {
				out = append(out, rc)
			}
		}
	}
	if v.Has(Fragments) {
		for _, f := range v.g.fragments {
			loc := f.loc
			command := ""
			if f.about != nil {
				command = f.about.Command
			}
			scan(f.lines, command, func(i int) Location { return loc.Lines(i+1, 0) })
		}
	}
	if v.Has(ContainerLogs) {
		for _, key := range sortedKeys(v.g.logs) {
			lines, loc := v.g.logs[key].Tail(logTailLines)
			scan(lines, "", func(i int) Location { return loc.lineBelow(i) })
		}
	}
	return out
}

// ServiceAddresses are the hosts a client reaches a Service by: its cluster IPs, its
// DNS names and its load balancers' addresses.
func ServiceAddresses(svc *corev1.Service) []string {
	var out []string
	for _, ip := range append([]string{svc.Spec.ClusterIP}, svc.Spec.ClusterIPs...) {
		if ip != "" && ip != corev1.ClusterIPNone {
			out = append(out, ip)
		}
	}
	out = append(out, svc.Spec.ExternalIPs...)
	for _, in := range svc.Status.LoadBalancer.Ingress {
		if in.IP != "" {
			out = append(out, in.IP)
		}
		if in.Hostname != "" {
			out = append(out, in.Hostname)
		}
	}
	if svc.Name != "" {
		out = append(out, svc.Name)
		if svc.Namespace != "" {
			dns := svc.Name + "." + svc.Namespace
			out = append(out, dns, dns+".svc", dns+".svc.cluster.local")
		}
	}
	return out
}

// StandIn is a workload's pod template read as the pods it makes, for a namespace the
// evidence holds no pod of: a user who pastes a Service and the Deployment meant to
// serve it shows the pods' labels and ports through the template, which the controller
// copies into every pod it makes (admission may add labels and ports, never remove them).
type StandIn struct {
	// Owner is the workload.
	Owner ObjectRef
	// Template is its pod template.
	Template *corev1.PodTemplateSpec
	// Loc is where the template was read.
	Loc Location
	// LabelsUnknown is set when the paste cut the workload short and shows none of its
	// template's labels: they may be there.
	LabelsUnknown bool
}

// StandInTemplates lists the pod templates of a namespace's Deployments, StatefulSets,
// DaemonSets and ReplicaSets (a Deployment's own ReplicaSets left out: they hold its
// template again) when the evidence holds no pod of that namespace; nil otherwise.
func (v *View) StandInTemplates(namespace string) []StandIn {
	if len(v.g.podsByNS[namespace]) > 0 && v.allow(Pods) {
		return nil
	}
	var out []StandIn
	add := func(ref ObjectRef, meta *metav1.ObjectMeta, loc Location, t *corev1.PodTemplateSpec) {
		if ref.Namespace == namespace {
			out = append(out, StandIn{Owner: ref, Template: t, Loc: loc.At("spec", "template"),
				LabelsUnknown: len(t.Labels) == 0 && Partial(*meta, "cut")})
		}
	}
	for _, d := range v.Deployments() {
		add(d.Ref(), d.meta, d.Loc, &d.Obj.Spec.Template)
	}
	for _, s := range v.StatefulSets() {
		add(s.Ref(), s.meta, s.Loc, &s.Obj.Spec.Template)
	}
	for _, d := range v.DaemonSets() {
		add(d.Ref(), d.meta, d.Loc, &d.Obj.Spec.Template)
	}
	// The derived ReplicaSets (derivedReplicaSet) are all a Deployment's: only whole
	// ones can stand in.
	for _, r := range only(v, ReplicaSets, v.g.replicaSets) {
		if c := v.Controller(&r.Obj.ObjectMeta); c != nil && c.Kind == "Deployment" {
			continue
		}
		add(r.Ref(), r.meta, r.Loc, &r.Obj.Spec.Template)
	}
	return out
}

// StandInsSelectedBy lists the stand-ins whose template labels a Service-style selector
// matches. An empty selector selects nothing, as for Services.
func StandInsSelectedBy(all []StandIn, selector map[string]string) []StandIn {
	if len(selector) == 0 {
		return nil
	}
	var out []StandIn
	for _, s := range all {
		if setSelects(selector, s.Template.Labels) {
			out = append(out, s)
		}
	}
	return out
}

// CutServices lists the Services a paste cut short ("cut" partial) whose selector it
// does not show: their selector may have been left out with the rest.
func (v *View) CutServices() []*Service {
	var out []*Service
	for _, s := range v.Services() {
		if s.Obj.Spec.Type != corev1.ServiceTypeExternalName && len(s.Obj.Spec.Selector) == 0 && Partial(s.Obj.ObjectMeta, "cut") {
			out = append(out, s)
		}
	}
	return out
}
