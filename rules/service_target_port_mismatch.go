package rules

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"podflow.dev/podflow/analyze"
	"podflow.dev/podflow/internal/phrase"
)

// ServiceTargetPortMismatch finds Services whose targetPort matches no port the ready
// pods behind them declare.
var ServiceTargetPortMismatch = &analyze.Rule{
	ID:       "service-target-port-mismatch",
	Stage:    analyze.StageService,
	Title:    "service targetPort matches no container port of its pods",
	Doc:      serviceTargetPortMismatchDoc,
	Severity: analyze.SeverityError,
	Needs: analyze.Needs{
		Required: []analyze.Kind{analyze.Services},
		Optional: []analyze.Kind{analyze.Pods, analyze.EndpointSlices, analyze.ReplicaSets, analyze.Jobs, analyze.Fragments, analyze.ContainerLogs,
			analyze.Deployments, analyze.StatefulSets, analyze.DaemonSets},
	},
	Run: serviceTargetPortMismatch,
}

const serviceTargetPortMismatchDoc = `The Service selects ready pods, but one of its ports sends traffic to a targetPort the
pods do not serve. A numeric targetPort is used as it is: the EndpointSlice lists the
pods with that port, and connections are refused or time out because nothing listens
there. A named targetPort is looked up among the pods' container ports
(pkg/controller/endpointslice, FindPort); when no container declares that name, the
EndpointSlice lists the pods without that port and kube-proxy has nowhere to send it.
Either way the pods look healthy and the Service has endpoints, yet clients fail.

podflow compares a numeric targetPort with the containerPorts the pods declare, so it
reports only pods that declare ports; an application may listen on a port it does not
declare. When the evidence holds the Service but not its pods, podflow reads the other
side from a client: a connection to the Service's address and port refused (Go's
"connect: connection refused", curl, netcat, telnet) while the Service has endpoints
means kube-proxy forwarded it to a pod's targetPort and nothing listened there. (Without
endpoints kube-proxy rejects the connection itself, so a Service without endpoints is
never reported this way.) Without pods, a pasted workload's pod template stands in.

## Confirm on a live cluster

    kubectl get service -n NAMESPACE SERVICE -o jsonpath='{.spec.ports}'
    kubectl get endpointslices -n NAMESPACE -l kubernetes.io/service-name=SERVICE -o yaml
    kubectl get pods -n NAMESPACE -l SELECTOR -o jsonpath='{.items[*].spec.containers[*].ports}'

## Fix

Set the Service port's targetPort to the port the application listens on, preferably
by the container port's name so the two cannot drift apart, or declare and serve the
port the Service expects in the pod template.
`

// podPort is a port a container of a pod declares.
type podPort struct {
	name     string
	number   int32
	protocol corev1.Protocol
}

func (p podPort) String() string {
	s := strconv.Itoa(int(p.number))
	if p.name != "" {
		s = p.name + "=" + s
	}
	if p.protocol != corev1.ProtocolTCP {
		s += "/" + string(p.protocol)
	}
	return s
}

// declaredPorts lists the ports of a pod's containers and sidecars (init containers
// that keep running), which are those FindPort searches.
func declaredPorts(pod *corev1.Pod) []podPort {
	var out []podPort
	add := func(c corev1.Container) {
		for _, p := range c.Ports {
			proto := p.Protocol
			if proto == "" {
				proto = corev1.ProtocolTCP
			}
			out = append(out, podPort{p.Name, p.ContainerPort, proto})
		}
	}
	for _, c := range pod.Spec.Containers {
		add(c)
	}
	for _, c := range pod.Spec.InitContainers {
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			add(c)
		}
	}
	return out
}

// servesTarget reports whether a pod declares the service port's target, and whether
// the pod's declaration can tell (a pod that declares no port says nothing about a
// numeric target).
func servesTarget(pod *corev1.Pod, sp corev1.ServicePort) (serves, known bool) {
	ports := declaredPorts(pod)
	proto := sp.Protocol
	if proto == "" {
		proto = corev1.ProtocolTCP
	}
	target := sp.TargetPort
	if target.Type == intstr.Int && target.IntVal == 0 {
		target = intstr.FromInt32(sp.Port)
	}
	for _, p := range ports {
		if p.protocol != proto {
			continue
		}
		if (target.Type == intstr.String && p.name == target.StrVal) || (target.Type == intstr.Int && p.number == target.IntVal) {
			return true, true
		}
	}
	return false, target.Type == intstr.String || len(ports) > 0
}

func serviceTargetPortMismatch(v *analyze.View) []analyze.Finding {
	var out []analyze.Finding
	refused := v.RefusedConnections()
	for _, s := range append(v.SelectorServices(), v.CutServices()...) {
		svc := s.Obj
		if standIns := v.StandInTemplates(svc.Namespace); len(standIns) > 0 {
			out = append(out, templateTargetPortFindings(s, standIns)...)
			continue
		}
		if len(svc.Spec.Selector) == 0 {
			continue // a cut Service: its pods are known only through a stand-in
		}
		ready := v.ReadyPodsSelectedBy(svc)
		if len(ready) == 0 {
			if f, ok := refusedTargetPortFinding(v, s, refused); ok {
				out = append(out, f)
			}
			continue // no ready pod: service-no-ready-endpoints says why
		}
		for i, sp := range svc.Spec.Ports {
			if f, ok := targetPortFinding(v, s, i, sp, ready); ok {
				out = append(out, f)
			}
		}
	}
	return out
}

// refusedTargetPortFinding reads the pods' side of a Service from a client when the
// evidence holds none of the pods it selects: the Service's EndpointSlices list
// endpoints, so its selector matches pods, and a connection to the Service's address
// on one of its ports was refused, so kube-proxy forwarded it to a pod's targetPort and
// nothing listened there. A Service without endpoints is left alone: kube-proxy rejects
// connections to it itself.
func refusedTargetPortFinding(v *analyze.View, s *analyze.Service, refused []analyze.RefusedConnection) (analyze.Finding, bool) {
	svc := s.Obj
	if len(refused) == 0 || len(v.PodsSelectedBy(svc.Namespace, svc.Spec.Selector)) > 0 {
		return analyze.Finding{}, false
	}
	endpoints, sliceEv := 0, []analyze.Evidence(nil)
	if v.Has(analyze.EndpointSlices) {
		for _, sl := range v.EndpointSlicesFor(svc.Namespace, svc.Name) {
			if r, _ := analyze.Readiness(sl); r > 0 {
				endpoints += r
				sliceEv = append(sliceEv, sl.Loc.At("endpoints").Evidence(fmt.Sprintf("service %s: %d ready endpoint(s)", svc.Name, r), sl.Obj.CreationTimestamp.Time))
			}
		}
	}
	if endpoints == 0 {
		return analyze.Finding{}, false
	}
	addrs := map[string]bool{}
	for _, a := range analyze.ServiceAddresses(svc) {
		addrs[a] = true
	}
	for _, rc := range refused {
		if !addrs[rc.Host] {
			continue
		}
		for i, sp := range svc.Spec.Ports {
			if (rc.Port != 0 && int(sp.Port) != rc.Port) || (rc.Port == 0 && len(svc.Spec.Ports) > 1) || (sp.Protocol != "" && sp.Protocol != corev1.ProtocolTCP) {
				continue
			}
			return refusedFinding(s, i, sp, rc, endpoints, sliceEv), true
		}
	}
	return analyze.Finding{}, false
}

func refusedFinding(s *analyze.Service, i int, sp corev1.ServicePort, rc analyze.RefusedConnection, endpoints int, sliceEv []analyze.Evidence) analyze.Finding {
	svc := s.Obj
	target, portName := servicePortWords(sp)
	addr := rc.Host
	if rc.Port != 0 {
		addr += ":" + strconv.Itoa(rc.Port)
	}
	evidence := []analyze.Evidence{s.Loc.At("spec", "ports", i).Evidence(
		fmt.Sprintf("service port %s -> targetPort %s", portName, target), svc.CreationTimestamp.Time)}
	evidence = append(evidence, sliceEv...)
	evidence = append(evidence, rc.Evidence)
	cause := fmt.Sprintf("service %s sends port %s to targetPort %s, and although it has %d ready endpoint(s), a connection to %s was refused: nothing on its pods listens on targetPort %s "+
		"(the Service and the refusal are in the evidence; its pods are not, so which port they do listen on is not known)",
		s.Ref().NamespacedName(), portName, target, endpoints, addr, target)
	sel := phrase.Selector(svc.Spec.Selector)
	return analyze.Finding{
		Subjects: []analyze.ObjectRef{s.Ref()},
		Cause:    cause,
		Evidence: evidence,
		Remediation: fmt.Sprintf("Set targetPort of port %s of service %s to the port the application in its pods listens on (by the container port's name is safest), or make the application serve port %s.",
			portName, svc.Name, target),
		Confirm: []string{
			analyze.Command("kubectl get service -n %s %s -o jsonpath='{.spec.ports}'", svc.Namespace, svc.Name),
			analyze.Command("kubectl get pods -n %s -l %s -o jsonpath='{.items[*].spec.containers[*].ports}'", svc.Namespace, analyze.Value(sel)),
			analyze.Command("kubectl exec -n %s POD -- netstat -tln", svc.Namespace),
		},
		GroupKey: s.Ref().String() + "\x00" + portName,
	}
}

func targetPortFinding(v *analyze.View, s *analyze.Service, i int, sp corev1.ServicePort, ready []*analyze.Pod) (analyze.Finding, bool) {
	svc := s.Obj
	for _, p := range ready {
		if serves, known := servesTarget(p.Obj, sp); serves || !known {
			return analyze.Finding{}, false
		}
	}
	target, portName := servicePortWords(sp)
	declared := map[string]bool{}
	for _, p := range ready {
		for _, dp := range declaredPorts(p.Obj) {
			declared[dp.String()] = true
		}
	}
	list := make([]string, 0, len(declared))
	for d := range declared {
		list = append(list, d)
	}
	sort.Strings(list)
	who, declare := "its ready pod "+ready[0].Obj.Name, "declares"
	if len(ready) > 1 {
		who, declare = fmt.Sprintf("its %d ready pods (%s, ...)", len(ready), ready[0].Obj.Name), "declare"
	}
	evidence := []analyze.Evidence{s.Loc.At("spec", "ports", i).Evidence(
		fmt.Sprintf("service port %s -> targetPort %s", portName, target), svc.CreationTimestamp.Time)}
	first := ready[0]
	if len(first.Obj.Spec.Containers) > 0 {
		evidence = append(evidence, portsEvidence(first))
	}
	var cause, fix string
	if sp.TargetPort.Type == intstr.String {
		cause = fmt.Sprintf("service %s sends port %s to the container port named %q, but %s %s no port of that name (only %s)",
			s.Ref().NamespacedName(), portName, target, who, declare, strings.Join(list, ", "))
		text, ev := portlessSlices(v, s, sp.Name)
		if text != "" {
			cause += "; " + text
		}
		evidence = append(evidence, ev...)
		fix = fmt.Sprintf("Set targetPort of port %s of service %s to a port name the pods declare (%s), or name the container port %q in the pod template.",
			portName, svc.Name, strings.Join(list, ", "), target)
	} else {
		cause = fmt.Sprintf("service %s sends port %s to targetPort %s, but %s %s only container port(s) %s, so connections reach nothing listening",
			s.Ref().NamespacedName(), portName, target, who, declare, strings.Join(list, ", "))
		evidence = append(evidence, slicesOnPort(v, s, sp.TargetPort.IntValue())...)
		fix = fmt.Sprintf("Set targetPort of port %s of service %s to the port the application listens on (%s; by name is safest), or make the application serve port %s and declare it.",
			portName, svc.Name, strings.Join(list, ", "), target)
	}
	var subjects []analyze.ObjectRef
	for _, p := range ready {
		subjects = append(subjects, p.Ref())
	}
	if w := v.Workload(first); w != nil {
		subjects = append(subjects, *w)
	}
	subjects = append(subjects, s.Ref())
	return analyze.Finding{
		Subjects:    subjects,
		Cause:       cause,
		Evidence:    evidence,
		Remediation: fix,
		Confirm: []string{
			analyze.Command("kubectl get service -n %s %s -o jsonpath='{.spec.ports}'", svc.Namespace, svc.Name),
			analyze.Command("kubectl get endpointslices -n %s -l kubernetes.io/service-name=%s -o yaml", svc.Namespace, svc.Name),
			analyze.Command("kubectl get pods -n %s -l %s -o jsonpath='{.items[*].spec.containers[*].ports}'", svc.Namespace, analyze.Value(phrase.Selector(svc.Spec.Selector))),
		},
		GroupKey: s.Ref().String() + "\x00" + portName,
	}, true
}

// portsEvidence cites the ports a pod's first container with ports declares.
func portsEvidence(p *analyze.Pod) analyze.Evidence {
	for _, c := range analyze.Containers(p) {
		if len(c.Spec.Ports) == 0 {
			continue
		}
		ports := make([]string, len(c.Spec.Ports))
		for i, cp := range c.Spec.Ports {
			proto := cp.Protocol
			if proto == "" {
				proto = corev1.ProtocolTCP
			}
			ports[i] = podPort{cp.Name, cp.ContainerPort, proto}.String()
		}
		return c.SpecLoc().At("ports").Evidence(fmt.Sprintf("pod %s container %s ports %s", p.Obj.Name, c.Name, strings.Join(ports, ", ")), p.Obj.CreationTimestamp.Time)
	}
	return p.Loc.At("spec").Evidence("pod "+p.Obj.Name+" declares no container port", p.Obj.CreationTimestamp.Time)
}

// portlessSlices cites the Service's EndpointSlices that list endpoints without the
// named service port: what the endpointslice controller writes when FindPort fails.
func portlessSlices(v *analyze.View, s *analyze.Service, portName string) (string, []analyze.Evidence) {
	if !v.Has(analyze.EndpointSlices) {
		return "", nil
	}
	var names []string
	var evidence []analyze.Evidence
	for _, sl := range v.EndpointSlicesFor(s.Obj.Namespace, s.Obj.Name) {
		if len(sl.Obj.Endpoints) == 0 {
			continue
		}
		has := false
		for _, p := range sl.Obj.Ports {
			if p.Name != nil && *p.Name == portName {
				has = true
			}
		}
		if has {
			continue
		}
		names = append(names, sl.Obj.Name)
		evidence = append(evidence, sl.Loc.Evidence(fmt.Sprintf("EndpointSlice %s: %d endpoint(s), no port %q", sl.Obj.Name, len(sl.Obj.Endpoints), portName), sl.Obj.CreationTimestamp.Time))
	}
	if len(names) == 0 {
		return "", nil
	}
	return fmt.Sprintf("its EndpointSlice %s lists the pods without that port, so the port is not served", strings.Join(names, ", ")), evidence
}

// slicesOnPort cites the Service's EndpointSlices that send endpoints traffic on port.
func slicesOnPort(v *analyze.View, s *analyze.Service, port int) []analyze.Evidence {
	if !v.Has(analyze.EndpointSlices) {
		return nil
	}
	var out []analyze.Evidence
	for _, sl := range v.EndpointSlicesFor(s.Obj.Namespace, s.Obj.Name) {
		for i, p := range sl.Obj.Ports {
			if p.Port != nil && int(*p.Port) == port && len(sl.Obj.Endpoints) > 0 {
				out = append(out, sl.Loc.At("ports", i).Evidence(
					fmt.Sprintf("EndpointSlice %s: %d endpoint(s) on port %d", sl.Obj.Name, len(sl.Obj.Endpoints), port), sl.Obj.CreationTimestamp.Time))
			}
		}
	}
	return out
}

// templateTargetPortFindings compares a Service's ports with the container ports of the
// pod templates that stand in for its pods. A Service whose selector the paste cut is
// compared only with the one workload pasted with it.
func templateTargetPortFindings(s *analyze.Service, standIns []analyze.StandIn) []analyze.Finding {
	svc := s.Obj
	selected := analyze.StandInsSelectedBy(standIns, svc.Spec.Selector)
	guessed := false
	if len(selected) == 0 && len(standIns) == 1 && (len(svc.Spec.Selector) == 0 || standIns[0].LabelsUnknown) {
		// The paste cut the selector or the template's labels: the one workload
		// pasted with the Service is taken as what it selects, and the cause says so.
		selected, guessed = standIns, true
	}
	var out []analyze.Finding
	for _, st := range selected {
		pod := &corev1.Pod{Spec: st.Template.Spec}
		var list []string
		for _, dp := range declaredPorts(pod) {
			list = append(list, dp.String())
		}
		for i, sp := range svc.Spec.Ports {
			if serves, known := servesTarget(pod, sp); serves || !known || len(list) == 0 {
				continue
			}
			target, portName := servicePortWords(sp)
			what := fmt.Sprintf("targetPort %s", target)
			if sp.TargetPort.Type == intstr.String {
				what = fmt.Sprintf("the container port named %q", target)
			}
			cause := fmt.Sprintf("service %s sends port %s to %s, but the pod template of %s (its pods are not in the evidence) declares only container port(s) %s",
				s.Ref().NamespacedName(), portName, what, st.Owner, strings.Join(list, ", "))
			if guessed {
				cause += fmt.Sprintf(" (which pods the Service selects is not in the evidence: %s is the one workload pasted with it)", st.Owner)
			}
			if sp.TargetPort.Type == intstr.String {
				cause += ": the endpoints get no port of that name, so the Service forwards to nothing"
			} else {
				cause += ", so connections reach nothing listening"
			}
			out = append(out, analyze.Finding{
				Subjects: []analyze.ObjectRef{st.Owner, s.Ref()},
				Cause:    cause,
				Evidence: []analyze.Evidence{
					s.Loc.At("spec", "ports", i).Evidence(fmt.Sprintf("service port %s -> targetPort %s", portName, target), svc.CreationTimestamp.Time),
					st.Loc.At("spec", "containers").Evidence(fmt.Sprintf("%s template ports %s", st.Owner, strings.Join(list, ", ")), time.Time{}),
				},
				Remediation: fmt.Sprintf("Set targetPort of port %s of service %s to a port the pod template of %s declares (%s), or declare and serve %s in that template.",
					portName, svc.Name, st.Owner, strings.Join(list, ", "), target),
				Confirm: []string{
					analyze.Command("kubectl get service -n %s %s -o jsonpath='{.spec.ports}'", svc.Namespace, svc.Name),
					analyze.Command("kubectl get %s -n %s %s -o jsonpath='{.spec.template.spec.containers[*].ports}'",
						strings.ToLower(st.Owner.Kind), st.Owner.Namespace, st.Owner.Name),
					analyze.Command("kubectl get endpointslices -n %s -l kubernetes.io/service-name=%s -o yaml", svc.Namespace, svc.Name),
				},
				GroupKey: s.Ref().String() + "\x00" + portName,
			})
		}
	}
	return out
}

// servicePortWords are how a cause names a Service port: its targetPort (the port itself
// when unset) and the port with its name ("80 (http)").
func servicePortWords(sp corev1.ServicePort) (target, port string) {
	target = sp.TargetPort.String()
	if sp.TargetPort.Type == intstr.Int && sp.TargetPort.IntVal == 0 {
		target = strconv.Itoa(int(sp.Port))
	}
	port = strconv.Itoa(int(sp.Port))
	if sp.Name != "" {
		port += " (" + sp.Name + ")"
	}
	return target, port
}
