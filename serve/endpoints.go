package serve

import (
	"encoding/json"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"podflow.dev/podflow/bundle"
)

// endpointsList is the v1 Endpoints resource: bundles hold EndpointSlices, from which
// the cluster's endpoints controller mirrors Endpoints; the server derives them the
// same way, so clients that still read Endpoints (kubectl get ep, describe svc) see
// what they would have seen.
var endpointsList = bundle.ResourceList{Name: "endpoints", Version: "v1", Resource: "endpoints", Kind: "Endpoints", Namespaced: true,
	Describe: "endpoints"}

// deriveEndpoints makes one Endpoints per Service: the addresses of its EndpointSlices,
// ready ones in addresses and the others in notReadyAddresses, one subset per set of
// ports. A Service with a selector and no slice gets an Endpoints without subsets, as
// the controller writes it; one without a selector, and no slice, gets none.
func deriveEndpoints(services, slices *resource) *resource {
	r := newResource(endpointsList)
	type key struct{ ns, name string }
	bySvc := map[key][]*discoveryv1.EndpointSlice{}
	var order []key
	if slices != nil {
		for _, o := range slices.objects {
			s := typed[discoveryv1.EndpointSlice](o)
			name := s.Labels[discoveryv1.LabelServiceName]
			if name == "" || s.AddressType == discoveryv1.AddressTypeFQDN {
				continue
			}
			k := key{o.namespace, name}
			if _, seen := bySvc[k]; !seen {
				order = append(order, k)
			}
			bySvc[k] = append(bySvc[k], s)
		}
	}
	svcs := map[key]*corev1.Service{}
	if services != nil {
		for _, o := range services.objects {
			s := typed[corev1.Service](o)
			k := key{o.namespace, o.name}
			svcs[k] = s
			if _, seen := bySvc[k]; !seen && len(s.Spec.Selector) > 0 && s.Spec.Type != corev1.ServiceTypeExternalName {
				bySvc[k] = nil
				order = append(order, k)
			}
		}
	}
	for _, k := range order {
		ep := endpointsOf(k.ns, k.name, svcs[k], bySvc[k])
		raw, err := json.Marshal(ep)
		if err != nil {
			continue
		}
		o := r.decode(raw, k.ns)
		if o == nil {
			continue
		}
		r.byKey[k.ns+"/"+k.name] = o
		r.objects = append(r.objects, o)
	}
	r.sort()
	return r
}

//nolint:staticcheck // v1 Endpoints are served for the clients that still read them
func endpointsOf(ns, name string, svc *corev1.Service, eps []*discoveryv1.EndpointSlice) *corev1.Endpoints {
	ep := &corev1.Endpoints{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Endpoints"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
	}
	if svc != nil {
		ep.CreationTimestamp = svc.CreationTimestamp
		if len(svc.Labels) > 0 {
			ep.Labels = map[string]string{}
			for k, v := range svc.Labels {
				ep.Labels[k] = v
			}
		}
		if svc.Spec.ClusterIP == corev1.ClusterIPNone {
			if ep.Labels == nil {
				ep.Labels = map[string]string{}
			}
			ep.Labels[corev1.IsHeadlessService] = ""
		}
	}
	for _, s := range eps {
		if ep.CreationTimestamp.IsZero() || (!s.CreationTimestamp.IsZero() && s.CreationTimestamp.Before(&ep.CreationTimestamp)) {
			ep.CreationTimestamp = s.CreationTimestamp
		}
		var ports []corev1.EndpointPort
		for _, p := range s.Ports {
			port := corev1.EndpointPort{AppProtocol: p.AppProtocol}
			if p.Name != nil {
				port.Name = *p.Name
			}
			if p.Port != nil {
				port.Port = *p.Port
			}
			if p.Protocol != nil {
				port.Protocol = *p.Protocol
			}
			ports = append(ports, port)
		}
		if svc != nil && len(ports) == 0 && (len(svc.Spec.Ports) > 0 || svc.Spec.ClusterIP != corev1.ClusterIPNone) {
			// The endpoints controller adds a pod's address only with a port of the
			// Service it finds on the pod (a named targetPort the pod does not declare
			// finds none), or with no port for a headless Service without ports: a slice
			// without ports holds pods it leaves out.
			continue
		}
		sub := subsetFor(ep, ports)
		for _, e := range s.Endpoints {
			for _, ip := range e.Addresses {
				a := corev1.EndpointAddress{IP: ip, NodeName: e.NodeName}
				if e.Hostname != nil {
					a.Hostname = *e.Hostname
				}
				if e.TargetRef != nil {
					ref := *e.TargetRef
					a.TargetRef = &ref
				}
				// The controller counts an endpoint without a readiness condition as ready.
				if e.Conditions.Ready == nil || *e.Conditions.Ready {
					sub.Addresses = append(sub.Addresses, a)
				} else {
					sub.NotReadyAddresses = append(sub.NotReadyAddresses, a)
				}
			}
		}
	}
	// A subset with no address is left out, as the controller leaves it out.
	ep.Subsets = slices.DeleteFunc(ep.Subsets, func(s corev1.EndpointSubset) bool {
		return len(s.Addresses) == 0 && len(s.NotReadyAddresses) == 0
	})
	for i := range ep.Subsets {
		byIP := func(a, b corev1.EndpointAddress) int { return strings.Compare(a.IP, b.IP) }
		slices.SortFunc(ep.Subsets[i].Addresses, byIP)
		slices.SortFunc(ep.Subsets[i].NotReadyAddresses, byIP)
	}
	return ep
}

// subsetFor returns the subset of ep with exactly these ports, adding it if needed.
//
//nolint:staticcheck // v1 Endpoints are served for the clients that still read them
func subsetFor(ep *corev1.Endpoints, ports []corev1.EndpointPort) *corev1.EndpointSubset {
	for i := range ep.Subsets {
		if slices.EqualFunc(ep.Subsets[i].Ports, ports, func(a, b corev1.EndpointPort) bool {
			return a.Name == b.Name && a.Port == b.Port && a.Protocol == b.Protocol
		}) {
			return &ep.Subsets[i]
		}
	}
	ep.Subsets = append(ep.Subsets, corev1.EndpointSubset{Ports: ports})
	return &ep.Subsets[len(ep.Subsets)-1]
}
