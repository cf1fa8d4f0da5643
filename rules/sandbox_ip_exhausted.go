package rules

import (
	"fmt"
	"net/netip"
	"sort"
	"strings"

	"podflow.dev/podflow/analyze"
)

// SandboxIPExhausted finds pods whose sandbox fails because the node's pod address range
// has no address left.
var SandboxIPExhausted = &analyze.Rule{
	ID:       "sandbox-ip-exhausted",
	Stage:    analyze.StageSandbox,
	Title:    "node has no pod IP address left",
	Doc:      sandboxIPExhaustedDoc,
	Severity: analyze.SeverityError,
	Needs: analyze.Needs{
		Required: []analyze.Kind{analyze.Pods},
		Optional: []analyze.Kind{analyze.Events, analyze.KubeletJournal, analyze.RuntimeJournal, analyze.ReplicaSets, analyze.Jobs},
	},
	Run: sandboxIPExhausted,
}

const sandboxIPExhaustedDoc = `The CNI plugin could not give the pod's sandbox an address: its IP address
management (host-local, the usual IPAM of bridge-based networks and of many cloud CNIs
in their node-local mode) has handed out every address of the node's range. The
kubelet records FailedCreatePodSandBox: "failed to setup network for sandbox ...:
plugin type="bridge" name="NET" failed (add): failed to allocate for range 0: no IP
addresses available in range set: 10.244.1.1-10.244.1.254", and retries with back-off;
the pod stays Pending in ContainerCreating while pods already running keep their
addresses. The range is the node's pod CIDR (or the range the CNI configuration names);
it runs out when more pods run on the node than it has addresses (maxPods above the
range's size), or when addresses leak: sandboxes removed without a CNI DEL leave their
reservation behind in the IPAM's data directory (/var/lib/cni/networks/NET).

## Confirm on a live cluster

    kubectl get events -n NAMESPACE --field-selector involvedObject.name=POD,reason=FailedCreatePodSandBox
    kubectl get node NODE -o jsonpath='{.spec.podCIDR} {.status.allocatable.pods}'
    kubectl get pods -A --field-selector spec.nodeName=NODE -o wide | wc -l
    kubectl debug node/NODE -it --image=busybox -- ls /host/var/lib/cni/networks/NET

## Fix

Compare the range's size with the pods on the node. If fewer pods run than the range
holds, addresses leaked: remove the reservations of sandboxes that no longer exist
(files named by IP under /var/lib/cni/networks/NET whose container ID crictl pods does
not know) or restart the CNI plugin's agent, which often reconciles them. Otherwise give
nodes a larger pod CIDR (the controller-manager's --node-cidr-mask-size) or lower the
kubelet's maxPods to what the range holds.
`

func sandboxIPExhausted(v *analyze.View) []analyze.Finding {
	var out []analyze.Finding
	for _, s := range v.FailedSandboxes() {
		if s.Part.Kind != analyze.SandboxIPRangeUsedUp {
			continue
		}
		out = append(out, ipExhaustedFinding(v, s.Pod, s.Failure, s.Part.Detail))
	}
	return out
}

func ipExhaustedFinding(v *analyze.View, p *analyze.Pod, f analyze.SandboxAttempt, rangeSet string) analyze.Finding {
	node := p.Obj.Spec.NodeName
	network := "its CNI network"
	plugin := ""
	if m := analyze.SandboxCNIPluginPattern.FindStringSubmatch(f.Message); m != nil {
		plugin = m[1]
		if m[2] != "" {
			network = fmt.Sprintf("CNI network %q", m[2])
		}
	}
	if parseRangeSet(rangeSet) == nil {
		// Not host-local's range set: another IP address manager's words for the same
		// ("failed to assign an IP address to container", cilium's "range is full").
		return ipamExhaustedFinding(v, p, f, network, plugin, rangeSet)
	}
	size, sized := rangeSetSize(rangeSet)
	holders := podsInRange(v, node, rangeSet)
	var facts []string
	if sized {
		facts = append(facts, fmt.Sprintf("the range holds %d address(es)", size))
	}
	if v.Has(analyze.Pods) && len(holders) > 0 {
		shown := holders
		if len(shown) > 5 {
			shown = append(shown[:5:5], fmt.Sprintf("and %d more", len(holders)-5))
		}
		facts = append(facts, fmt.Sprintf("%d pod(s) in this bundle hold one: %s", len(holders), strings.Join(shown, ", ")))
	}
	via := ""
	if plugin != "" {
		via = fmt.Sprintf(" (plugin %q)", plugin)
	}
	where := "node " + node
	if node == "" {
		// A pasted event row without its node.
		where = "the pod's node"
	}
	cause := fmt.Sprintf("%s has no address left in %s%s (no IP addresses available in range set %s): the sandbox of pod %s cannot get one%s",
		where, network, via, rangeSet, p.Ref().NamespacedName(), f.Tries())
	if len(facts) > 0 {
		cause += "; " + strings.Join(facts, "; ")
	}
	return analyze.Finding{
		Subjects: v.SandboxSubjects(p),
		Cause:    cause,
		Evidence: analyze.SandboxEvidence(p, f),
		Remediation: fmt.Sprintf("Compare range %s with the pods on node %s: if fewer pods run than it holds, addresses leaked "+
			"(remove stale reservations under /var/lib/cni/networks on the node, or restart the CNI agent); otherwise give the node a "+
			"larger pod range or lower the kubelet's maxPods to what the range holds.", rangeSet, node),
		Confirm: []string{
			analyze.Command("kubectl get events -n %s --field-selector involvedObject.name=%s,reason=FailedCreatePodSandBox", p.Obj.Namespace, p.Obj.Name),
			analyze.Command("kubectl get node %s -o jsonpath='{.spec.podCIDR} {.status.allocatable.pods}'", node),
			analyze.Command("kubectl get pods -A -o wide --field-selector spec.nodeName=%s", node),
		},
		GroupKey: "ip-exhausted\x00" + node + "\x00" + network + "\x00" + rangeSet,
	}
}

// ipamExhaustedFinding is the finding of an IP address manager that says it has no
// address left without naming a range (AWS VPC CNI, cilium, Calico, Azure).
func ipamExhaustedFinding(v *analyze.View, p *analyze.Pod, f analyze.SandboxAttempt, network, plugin, words string) analyze.Finding {
	node := p.Obj.Spec.NodeName
	if node == "" && f.Event != nil {
		// An event row pasted without its pod still names the kubelet's node
		// ("kubelet, NODE" in the From column of older releases).
		node = f.Event.Host
	}
	if plugin == "" {
		if name, _, ok := strings.Cut(words, ": "); ok && !strings.Contains(name, " ") {
			plugin = name
		}
	}
	via := ""
	if plugin != "" {
		via = fmt.Sprintf(" (plugin %q)", plugin)
	}
	where := strings.Replace(network, "its ", "the pod's ", 1)
	if node != "" {
		where = "node " + node + " in " + network
	}
	cause := fmt.Sprintf("%s has no pod IP address left%s: the sandbox of pod %s cannot get one%s (%s)",
		where, via, p.Ref().NamespacedName(), f.Tries(), words)
	nodeArg := node
	if nodeArg == "" {
		nodeArg = "NODE"
	}
	return analyze.Finding{
		Subjects: v.SandboxSubjects(p),
		Cause:    cause,
		Evidence: analyze.SandboxEvidence(p, f),
		Remediation: "Give the node's IP address manager more addresses or run fewer pods on the node: on EKS a larger instance type, " +
			"prefix delegation or WARM_IP_TARGET, or a lower maxPods; with cilium or Calico a larger pod CIDR or IP pool; with Azure CNI a larger subnet " +
			"or fewer pods per node. Addresses that crashed pods leaked come back when the CNI agent reconciles (restart it).",
		Confirm: []string{
			analyze.Command("kubectl get events -n %s --field-selector involvedObject.name=%s,reason=FailedCreatePodSandBox", p.Obj.Namespace, p.Obj.Name),
			analyze.Command("kubectl describe node %s", nodeArg),
			analyze.Command("kubectl get pods -A -o wide --field-selector spec.nodeName=%s", nodeArg),
		},
		GroupKey: "ip-exhausted\x00" + node + "\x00" + network + "\x00" + words,
	}
}

// parseRangeSet reads host-local's range set ("10.0.0.2-10.0.0.254,10.1.0.2-10.1.0.9").
func parseRangeSet(set string) [][2]netip.Addr {
	var out [][2]netip.Addr
	for _, r := range strings.Split(set, ",") {
		a, b, ok := strings.Cut(strings.TrimSpace(r), "-")
		if !ok {
			return nil
		}
		start, err1 := netip.ParseAddr(a)
		end, err2 := netip.ParseAddr(b)
		if err1 != nil || err2 != nil || end.Less(start) {
			return nil
		}
		out = append(out, [2]netip.Addr{start, end})
	}
	return out
}

// rangeSetSize counts an IPv4 range set's addresses.
func rangeSetSize(set string) (int, bool) {
	ranges := parseRangeSet(set)
	if len(ranges) == 0 {
		return 0, false
	}
	n := 0
	for _, r := range ranges {
		if !r[0].Is4() || !r[1].Is4() {
			return 0, false
		}
		a, b := r[0].As4(), r[1].As4()
		lo := int(a[0])<<24 | int(a[1])<<16 | int(a[2])<<8 | int(a[3])
		hi := int(b[0])<<24 | int(b[1])<<16 | int(b[2])<<8 | int(b[3])
		n += hi - lo + 1
	}
	return n, true
}

// podsInRange lists the pods on node whose IP falls in the range set.
func podsInRange(v *analyze.View, node, set string) []string {
	ranges := parseRangeSet(set)
	var out []string
	for _, p := range v.PodsOnNode(node) {
		for _, ip := range p.Obj.Status.PodIPs {
			addr, err := netip.ParseAddr(ip.IP)
			if err != nil {
				continue
			}
			for _, r := range ranges {
				if !addr.Less(r[0]) && !r[1].Less(addr) {
					out = append(out, p.Ref().NamespacedName()+" ("+ip.IP+")")
				}
			}
		}
	}
	sort.Strings(out)
	return out
}
