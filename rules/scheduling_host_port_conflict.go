package rules

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"podflow.dev/podflow/analyze"
	"podflow.dev/podflow/internal/phrase"
)

// SchedulingHostPortConflict finds pending pods whose hostPort is taken on every node
// they could use.
var SchedulingHostPortConflict = &analyze.Rule{
	ID:       "scheduling-host-port-conflict",
	Stage:    analyze.StageScheduling,
	Title:    "the hostPort the pod asks for is taken on the nodes it could use",
	Doc:      schedulingHostPortConflictDoc,
	Severity: analyze.SeverityError,
	Needs: analyze.Needs{
		Required: []analyze.Kind{analyze.Pods},
		Optional: []analyze.Kind{analyze.Events, analyze.Nodes, analyze.ReplicaSets, analyze.Jobs},
	},
	Run: schedulingHostPortConflict,
}

const schedulingHostPortConflictDoc = `A container port with hostPort binds that port on the node's own address, so only one
pod per node can hold a given hostPort, protocol and host IP. The scheduler rejects a
node where a pod already bound to it holds the port: "N node(s) didn't have free ports
for the requested pod ports". Two replicas of a Deployment with a hostPort need two
nodes; a second copy of a node agent (a DaemonSet pod, a proxy, an ingress controller)
or a canary next to the real one collides with it.

podflow names the port and the pod holding it on each node.

## Confirm on a live cluster

    kubectl get pod -n NAMESPACE POD -o jsonpath='{.spec.containers[*].ports}'
    kubectl get pods -A -o wide --field-selector spec.nodeName=NODE   # who runs there
    kubectl get pods -A -o jsonpath='{range .items[*]}{.metadata.namespace}/{.metadata.name} {.spec.containers[*].ports[*].hostPort}{"\n"}{end}'

## Fix

Drop hostPort unless the pod must be reached on the node's address (a Service or an
Ingress reaches pods without it), choose another port, run fewer replicas than nodes
(or a DaemonSet), or stop the pod that holds the port.
`

// hostPortReason is the NodePorts filter's reason
// (pkg/scheduler/framework/plugins/nodeports/node_ports.go, ErrReason).
const hostPortReason = "didn't have free ports for the requested pod ports"

// hostPort is one port a container asks the node for.
type hostPort struct {
	port      corev1.ContainerPort
	container string
	loc       analyze.Location
}

func (h hostPort) String() string {
	s := fmt.Sprintf("%d/%s", h.port.HostPort, protocolOf(h.port))
	if ip := h.port.HostIP; ip != "" && ip != "0.0.0.0" {
		s = ip + ":" + s
	}
	return s
}

func protocolOf(p corev1.ContainerPort) corev1.Protocol {
	if p.Protocol == "" {
		return corev1.ProtocolTCP
	}
	return p.Protocol
}

// hostPortsOf lists the host ports of a pod's containers and init containers.
func hostPortsOf(p *analyze.Pod) []hostPort {
	var out []hostPort
	for _, c := range analyze.Containers(p) {
		for i, port := range c.Spec.Ports {
			if port.HostPort > 0 {
				out = append(out, hostPort{port: port, container: c.Name, loc: c.SpecLoc().At("ports", i)})
			}
		}
	}
	return out
}

// portsConflict follows the scheduler's HostPortInfo: the same port and protocol, and
// host IPs that overlap (equal, or either is the wildcard).
func portsConflict(a, b corev1.ContainerPort) bool {
	if a.HostPort != b.HostPort || protocolOf(a) != protocolOf(b) {
		return false
	}
	wild := func(ip string) bool { return ip == "" || ip == "0.0.0.0" || ip == "::" }
	return wild(a.HostIP) || wild(b.HostIP) || a.HostIP == b.HostIP
}

func schedulingHostPortConflict(v *analyze.View) []analyze.Finding {
	var out []analyze.Finding
	for _, u := range v.UnscheduledPods() {
		p, pod := u.Subject.Pod, u.Subject.Pod.Obj
		total, reasons := u.Nodes, u.Reasons
		if analyze.FitReasonCount(reasons, hostPortReason) <= 0 {
			continue
		}
		wanted := hostPortsOf(p)
		if len(wanted) == 0 {
			continue
		}
		evidence := u.SchedulerEvidence()
		subjects, group := v.PodAndWorkload(p)
		var ports, holders []string
		for _, w := range wanted {
			ports = append(ports, w.String())
			evidence = append(evidence, w.loc.Evidence(fmt.Sprintf("container %s asks for hostPort %s", w.container, w), pod.CreationTimestamp.Time))
		}
		for _, q := range v.Pods() {
			if q.Obj.Spec.NodeName == "" || q.Obj.UID == pod.UID || analyze.PodFinished(q) {
				continue
			}
			for _, held := range hostPortsOf(q) {
				if !hostPortWanted(wanted, held) {
					continue
				}
				line := fmt.Sprintf("pod %s/%s holds %s on node %s", q.Obj.Namespace, q.Obj.Name, held, q.Obj.Spec.NodeName)
				holders = append(holders, line)
				// The holder is named in the cause and cited, not listed as a subject:
				// the report counts a subject pod as affected, and it runs fine.
				subjects = append(subjects, analyze.NodeRef(q.Obj.Spec.NodeName))
				evidence = append(evidence, held.loc.Evidence(line, q.Obj.CreationTimestamp.Time))
			}
		}
		cause := fmt.Sprintf("the pod asks for hostPort %s, which is taken on the nodes it could use: 0/%s nodes are available: %s",
			strings.Join(ports, ", "), total, strings.Join(reasons, ", "))
		if len(holders) > 0 {
			cause += "; " + phrase.JoinCapped(holders, "pod(s)")
		}
		out = append(out, analyze.Finding{
			Subjects: subjects,
			Cause:    cause,
			Evidence: evidence,
			Remediation: fmt.Sprintf("Drop hostPort %s from %s unless it must be reached on the node's address (a Service reaches it without one), "+
				"choose a free port, run no more replicas than nodes, or stop the pod holding the port.", ports[0], group),
			Confirm: []string{
				analyze.Command("kubectl get pod -n %s %s -o jsonpath='{.spec.containers[*].ports}'", pod.Namespace, pod.Name),
				"kubectl get pods -A -o jsonpath='{range .items[*]}{.metadata.namespace}/{.metadata.name} {.spec.nodeName} {.spec.containers[*].ports[*].hostPort}{\"\\n\"}{end}'",
			},
			GroupKey: group + "\x00" + strings.Join(ports, ","),
		})
	}
	return out
}

func hostPortWanted(wanted []hostPort, held hostPort) bool {
	for _, w := range wanted {
		if portsConflict(w.port, held.port) {
			return true
		}
	}
	return false
}
