package importer

import (
	"encoding/json"
	"fmt"
	"net"
	"regexp"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// segDescribeService is `kubectl describe service` output (k8s.io/kubectl pkg/describe
// describeService): the Service's selector and ports, and per port the ready endpoints
// kubectl found for it.
const segDescribeService = "kubectl describe service"

// isDescribeServiceStart tells whether lines[i] starts a `kubectl describe service`
// block: "Name:", "Namespace:", and within the next lines "Selector:" at the margin
// followed by "Type:" before any key another kind prints ("Replicas:" of a Deployment
// or ReplicaSet, "Containers:" or "Status:" of a pod). kubectl has printed these keys
// in this order since 1.2.
func isDescribeServiceStart(lines []textLine, i int) bool {
	if !isDescribeBlockStart(lines, i, "Namespace:") {
		return false
	}
	selector := false
	for j := i + 2; j < len(lines) && j <= i+30; j++ {
		s := lines[j].s
		if strings.HasPrefix(s, " ") || strings.HasPrefix(s, "\t") {
			continue
		}
		key, _, ok := strings.Cut(s, ":")
		if !ok {
			continue
		}
		switch key {
		case "Selector":
			selector = true
		case "Type":
			return selector
		case "Name", "Replicas", "Containers", "Status", "Subsets", "StrategyType", "Pod Template":
			return false
		}
	}
	return false
}

// describedService is one Service read back from describe, with the EndpointSlices its
// Endpoints lines show and its events.
type describedService struct {
	svc      corev1.Service
	line     int
	slices   []rawObject
	events   []parsedEvent
	problems []string
	// ports holds, per service port in order, the Endpoints cell kubectl printed for it.
	endpoints []string
	hasEP     []bool
}

// reServicePort is describe's "Port:" value, "NAME  80/TCP" ("<unset>" for no name).
var reServicePort = regexp.MustCompile(`^(\S+)\s+(\d+)/([A-Z]+)$`)

// parseDescribeService reads one Service's describe block.
func parseDescribeService(lines []textLine) *describedService {
	d := &describedService{line: lines[0].n}
	d.svc.APIVersion, d.svc.Kind = "v1", "Service"
	var labels map[string]string
	var events describeEventTable
	inEvents := false
	for _, l := range lines {
		s := detab(l.s)
		body := strings.TrimSpace(s)
		if body == "" {
			continue
		}
		if !strings.HasPrefix(s, " ") {
			if m := reKey.FindStringSubmatch(body); m != nil {
				labels, inEvents = nil, false
				d.top(m[1], strings.TrimSpace(m[2]), l, &labels, &inEvents)
				continue
			}
		}
		switch {
		case labels != nil:
			if k, v, ok := strings.Cut(body, "="); ok {
				labels[k] = v
			}
		case inEvents:
			events.addRow(s, l, corev1.ObjectReference{Kind: "Service", APIVersion: "v1", Namespace: d.svc.Namespace, Name: d.svc.Name},
				d.svc.Namespace, &d.events, &d.problems)
		}
	}
	return d
}

// top reads a key at the margin; Labels and Annotations continue on indented lines.
func (d *describedService) top(key, val string, l textLine, labels *map[string]string, inEvents *bool) {
	svc := &d.svc
	switch key {
	case "Name":
		svc.Name = val
	case "Namespace":
		svc.Namespace = val
	case "Labels":
		svc.Labels = map[string]string{}
		*labels = svc.Labels
		if k, v, ok := strings.Cut(val, "="); ok {
			svc.Labels[k] = v
		}
	case "Selector":
		if val == "" || val == "<none>" {
			return
		}
		svc.Spec.Selector = map[string]string{}
		for _, kv := range strings.Split(val, ",") {
			if k, v, ok := strings.Cut(strings.TrimSpace(kv), "="); ok {
				svc.Spec.Selector[k] = v
			}
		}
	case "Type":
		svc.Spec.Type = corev1.ServiceType(val)
	case "IP":
		svc.Spec.ClusterIP = val
	case "Port":
		m := reServicePort.FindStringSubmatch(val)
		if m == nil {
			d.problems = append(d.problems, fmt.Sprintf("line %d: not a service port: %q", l.n, val))
			return
		}
		n, _ := strconv.ParseInt(m[2], 10, 32)
		sp := corev1.ServicePort{Port: int32(n), Protocol: corev1.Protocol(m[3])}
		if m[1] != "<unset>" {
			sp.Name = m[1]
		}
		svc.Spec.Ports = append(svc.Spec.Ports, sp)
		d.endpoints, d.hasEP = append(d.endpoints, ""), append(d.hasEP, false)
	case "TargetPort":
		if len(svc.Spec.Ports) == 0 {
			return
		}
		target, _, _ := strings.Cut(val, "/")
		sp := &svc.Spec.Ports[len(svc.Spec.Ports)-1]
		if n, err := strconv.ParseInt(target, 10, 32); err == nil {
			sp.TargetPort = intstr.FromInt32(int32(n))
		} else if target != "" {
			sp.TargetPort = intstr.FromString(target)
		}
	case "NodePort":
		if len(svc.Spec.Ports) == 0 {
			return
		}
		if m := reServicePort.FindStringSubmatch(val); m != nil {
			n, _ := strconv.ParseInt(m[2], 10, 32)
			svc.Spec.Ports[len(svc.Spec.Ports)-1].NodePort = int32(n)
		}
	case "Endpoints":
		if i := len(d.endpoints) - 1; i >= 0 {
			d.endpoints[i], d.hasEP[i] = val, true
		}
	case "Events":
		*inEvents = true
	}
}

// endpointSlices turns the Endpoints line of each port into an EndpointSlice of that
// port, marked partial: kubectl lists ready endpoints only and at most three ("+ 2
// more..."). An address without a port is an endpoint the controller could not give
// the port (a named targetPort no container declares). "<none>" (no EndpointSlice, or
// before 1.19 an Endpoints without addresses) and an empty cell (slices with no ready
// endpoint) both read as no ready endpoint.
func (d *describedService) endpointSlices() {
	svc := &d.svc
	for i, sp := range svc.Spec.Ports {
		if !d.hasEP[i] {
			continue
		}
		var addrs []endpointAddr
		for _, a := range strings.Split(d.endpoints[i], ",") {
			a = strings.TrimSpace(a)
			if j := strings.Index(a, " + "); j >= 0 {
				a = strings.TrimSpace(a[:j])
			}
			if a == "" || a == "<none>" {
				continue
			}
			ea := endpointAddr{ip: a, portName: sp.Name, protocol: string(sp.Protocol), ready: true}
			if host, port, err := net.SplitHostPort(a); err == nil {
				ea.ip, ea.port = host, port
			}
			addrs = append(addrs, ea)
		}
		name := svc.Name
		if i > 0 {
			name = fmt.Sprintf("%s-port-%d", svc.Name, i)
		}
		o, err := endpointSliceNamed(svc.Namespace, svc.Name, name, "kubectl describe service "+svc.Name, addrs, true)
		if err != nil {
			continue
		}
		o.line = d.line
		d.slices = append(d.slices, o)
	}
}

// addService adds a described Service, the EndpointSlices of its ports and its events.
func (li *looseImport) addService(path string, d *describedService) {
	data, err := json.Marshal(d.svc)
	if err != nil {
		return
	}
	li.addObject(path, rawObject{kind: "Service", namespace: d.svc.Namespace, name: d.svc.Name, data: data, line: d.line})
	d.endpointSlices()
	for _, o := range d.slices {
		li.addObject(path, o)
	}
	for _, e := range d.events {
		li.addEvent(path, e)
	}
}
