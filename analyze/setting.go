package analyze

import (
	"regexp"
	"slices"
	"strings"
)

// A ticket's text often says where the trouble runs before any output shows it: the
// distribution or installer ("Install tools: Kubespray", "on RKE2"), the release the
// reporter moved to ("after upgrading the chart from 1.4.2 to 1.4.5", "Helm chart
// version: 0.14.1"), the node's kernel and swap, the machine an image was built on, and
// the ports it sets for the pod or its Service, the workload it is about and the amount a
// change set a resource to. An expert's diagnosis names that setting when
// the cause depends on it (RKE2 names its DNS Service differently; the flag the binary
// lacks came with the release), and the reader needs it to check the fix against their
// own clusters. ticketSetting reads it from the pasted prose and the settings lines of an
// issue template, never from a component's output, and the root causes of a pasted
// ticket name it when they do not already.

// rePlatform names the distributions, installers, managed services and hosts a ticket
// runs on, and the machine an image was built on, which says its architecture (an M1
// Mac builds arm64 images). Names that are also English words are matched only as
// written by their projects (EKS, KinD, OKE); "kind" counts only before "cluster" or a
// version.
var rePlatform = regexp.MustCompile(`\b(?:(?i:rke2|rke|k3s|k3d|k0s|microk8s|minikube|minishift|kubespray|kubeadm|kops|kubekey|talos|openshift|okd|rancher(?: desktop)?|docker desktop|colima|orbstack|tanzu|charmed kubernetes|bottlerocket|flatcar|raspbian|raspberry pi|wsl2|digitalocean|doks|fargate|gke autopilot|kind(?: cluster|\s+v?\d+\.\d+))|EKS|AKS|GKE|IKS|OKE|TKG|KinD|Apple Silicon|M[1-4](?: Pro| Max| Ultra)? Mac(?:Book(?: Pro| Air)?)?)\b`)

// reSettingChange is a sentence that names the release a ticket moved to or began with.
var reSettingChange = regexp.MustCompile(`(?i)\b(?:upgrad\w*|updat\w*|bump\w*|migrat\w*|moved?|switch\w*|since|after|starting with)\b`)

// reSettingCommandNamespace is the namespace a kubectl, helm or oc command line names.
var reSettingCommandNamespace = regexp.MustCompile(`^\s*(?:\$\s*)?(?:sudo\s+)?(?:kubectl|helm|oc|k)\s.*?(?:--namespace[= ]|\s-n\s+)([a-z0-9][-a-z0-9]{0,62})\b`)

// reSettingWorkaround is a sentence that says a change made the trouble go away.
var reSettingWorkaround = regexp.MustCompile(`(?i)\b(?:solves|solved|fixes|fixed|resolves|resolved|works|worked|workaround|helps|helped)\b`)

// reSettingVersion is the word that announces a release ("version 0.14.1", "Helm chart
// version: 0.14.1", "RKE2 version v1.21.7+rke2r2").
var reSettingVersion = regexp.MustCompile(`(?i)\b(?:versions?|release|chart|tag)\b`)

// reSettingKernel is a node's kernel release stated with its name, as uname -a prints
// it ("Linux node-1 5.15.0-127-generic #137-Ubuntu SMP …"), or in a distribution's
// own form of release, which says kernel by itself (SUSE's "7.2.0-1-default", Ubuntu's
// "-generic" and "-aws", Debian's "-amd64", Amazon Linux's ".amzn2.x86_64", RHEL's
// ".el8.x86_64").
var reSettingKernel = regexp.MustCompile(`(?i)\bkernel\b[^\n]{0,30}?\b(\d+\.\d+\.\d+[\w.+-]*)|^\s*Linux [\w.-]+ (\d+\.\d+\.\d+[\w.+-]*)|\b(\d+\.\d+\.\d+-\d+(?:\.\d+)*(?:-(?:default|generic|aws|azure|gcp|gke|oracle|lowlatency|cloud-amd64|amd64|arm64)|\.amzn2(?:023)?\.(?:x86_64|aarch64)|\.el\d+(?:_\d+)?\.(?:x86_64|aarch64)))\b`)

// reSettingSwap is a swap entry of the node's /etc/fstab ("/swap.img none swap sw 0 0"):
// what turns swap on again at every boot.
var reSettingSwap = regexp.MustCompile(`^\s*(/\S+|UUID=\S+)\s+(?:none|swap)\s+swap\s`)

// reComponentRelease is a line of a ticket's environment list that gives a component's
// release after its name ("- Crossplane: v2.0.2 deployed via Helm", "Calico: 3.27.2").
var reComponentRelease = regexp.MustCompile(`^\s*(?:[-*]\s+)?(?:\*\*)?([A-Z][\w .-]{1,30}?)(?:\*\*)?:\s+((?:v\d+\.\d+(?:\.\d+)?|\d+\.\d+\.\d+)(?:[-+][\w.+-]*)?)(?:[\s,;)]|$)`)

// reSettingPort is a port the ticket's text sets for the pod or its Service
// ("spec.containerPort: 9000", "targetPort: 8081", a Service's targetPort by the
// container port's name, "targetPort: ui"): what a probe or a Service is compared
// against.
var reSettingPort = regexp.MustCompile(`\b(containerPort|targetPort)\b["'\x60]?\s*[:=]\s*["']?(\d{2,5}\b|[a-z][-a-z0-9]{0,14}(?:["'\x60]|\s*$))`)

// reVersionToken is a word that holds a dotted release: 1.4.5, v0.17.0, k8s-1.19,
// v1.21.7+rke2r2, nginx:1.25.3.
var reVersionToken = regexp.MustCompile(`[\w.+:@-]*\d+\.\d+[\w.+:@-]*`)

// reReleaseShape is a release as a word holds it: dotted numbers, after an optional name
// and separator (k8s-1.19, nginx:1.25.3) or a "v", before an optional suffix
// (+rke2r2, -127-generic, -rc.1). A quantity (0.5s, 1.5Gi) has no separator before its
// unit and is not one.
var reReleaseShape = regexp.MustCompile(`^(?:[A-Za-z][\w.]*?([-:@]))?([vV])?(\d+(?:\.\d+)+)(?:[-+][\w.+-]*)?$`)

// reIPv4 is an address, whose dotted numbers are not a release.
var reIPv4 = regexp.MustCompile(`^\d+\.\d+\.\d+\.\d+$`)

// settingRelease is a word's release, or "" when it is not one: three dotted numbers,
// or two after a "v" or a name (v1.28, k8s-1.19), or two announced by the word before
// (to 1.28, version 1.28).
func settingRelease(tok string, announced bool) string {
	tok = strings.Trim(tok, ".,;:+-@")
	m := reReleaseShape.FindStringSubmatch(tok)
	if m == nil || len(tok) > 60 || reIPv4.MatchString(m[3]) {
		return ""
	}
	if strings.Count(m[3], ".") == 1 && !announced && m[1] == "" && m[2] == "" {
		return ""
	}
	return tok
}

// ticketSetting is what a pasted ticket's text says of where its trouble runs.
type ticketSetting struct {
	// platforms are the distributions and installers named, as written, at most two.
	platforms []string
	// releases are the releases the text moved to or states, at most two.
	releases []string
	kernel   string
	// swap is the swap device or file the node's fstab turns on, named in node causes.
	swap string
	// ports are the container and target ports the text sets ("containerPort 9000"),
	// named in probe and Service causes, at most two.
	ports []string
	// subjects are the workloads the text names by their kind ("my `spire-server` pods",
	// "the `node-exporter` DaemonSet"), named when the cause does not name it.
	subjects []string
	// quantities are the resource amounts a change sentence moved to ("memory bump to
	// 3840Mi") or the text says the pod requests ("requesting `435m` of CPU"), named in
	// scheduling and runtime causes, at most two.
	quantities []string
	// selectors are the node labels the text says a pod's nodeSelector asks for
	// ("nodeSelector is beta.kubernetes.io/os"), named in scheduling causes, at most two.
	selectors []string
	// hostNetwork is the setting that puts the pod on its node's network as the text
	// writes it ("hostNetwork: true", a chart's or operator's "network.provider:
	// host"), named in a scheduling cause: its container ports are the node's ports.
	hostNetwork string
	// taints are the taint keys a pasted node manifest shows ("- effect: NoSchedule",
	// "key: node.kubernetes.io/network-unavailable"), or the taints a node's describe
	// or a kubectl taint command writes whole ("Taints: dedicated=infra:NoSchedule"),
	// named in a scheduling cause about taints that does not name them (the scheduler
	// names no key before 1.18), at most two.
	taints []string
	// policies are the admission policies the ticket pastes as objects: a Gatekeeper
	// constraint ("constraint K8sRequiredLabels pod-must-have-gk") or a Kyverno policy,
	// named in an admission cause about a webhook's denial that does not name it (a
	// Gatekeeper before 3.4 printed no constraint's name), at most two.
	policies []string
	// unmatched are the labels of a selector the ticket's text lists ("the service awx
	// has selector includes:" and its "key: value" lines) that no pod in the evidence
	// carries, when the evidence shows pods with their labels: named in a Service cause.
	unmatched []string
	// namespace is the namespace the ticket's own kubectl or helm command installs into
	// or reads from ("helm template … --namespace istio-system"), when it names one:
	// named in a cause about an object not found, which must exist in the pod's.
	namespace string
	// suspicions are the reporter's sentences that say what they think the cause is
	// ("This may be to do with the network policy we have in monitoring namespace."),
	// named when the root's remedy speaks of the same things.
	suspicions []string
}

// reSettingSubject is a name the reporter sets off in backticks or quotes beside the kind
// of object it names, before or after it; reSettingQuotedSubject the name and its kind
// inside the same quotes ("`web pod`").
var reSettingSubject = regexp.MustCompile("(?i)[`\"]([a-z0-9][a-z0-9.-]{1,62})[`\"]\\s+(pods?|daemon ?sets?|deployments?|statefulsets?|jobs?|cronjobs?|containers?|services?|namespaces?)\\b|\\b(pod|daemon ?set|deployment|statefulset|job|cronjob|container|service|namespace)\\s+[`\"]([a-z0-9][a-z0-9.-]{1,62})[`\"]")

var reSettingQuotedSubject = regexp.MustCompile("(?i)[`\"]([a-z0-9][a-z0-9.-]{1,62})\\s+(pods?|daemon ?sets?|deployments?|statefulsets?|jobs?|cronjobs?|containers?|services?|namespaces?)[`\"]")

// reSettingBareSubject is a hyphenated name written beside the kind of workload it names
// without quotes ("the pega-db-install JOB", "deployment web-api"): a name with a hyphen
// is no word of the sentence, except the compound adjectives reBareSubjectWord leaves
// out. A pod so named is the importer's to read (it may be the evidence's own pod).
var reSettingBareSubject = regexp.MustCompile(`(?i)\b([a-z0-9]+(?:-[a-z0-9]+)+)\s+(daemon ?sets?|deployments?|statefulsets?|jobs?|cronjobs?|namespaces?)\b|\b(daemon ?set|deployment|statefulset|job|cronjob|namespace)\s+([a-z0-9]+(?:-[a-z0-9]+)+)\b`)

// reSettingLeadPod is a hyphenated name a sentence starts with as the pod it is about
// ("argocd-server pod is crashing and restarting"), what a reporter calls a workload's
// pods by.
var reSettingLeadPod = regexp.MustCompile(`^\s*(?:(?:the|my|our)\s+)?[\x60"']?([a-z0-9]+(?:-[a-z0-9]+)+)[\x60"']?\s+pods?\s+(?:is|are|keeps?|was|were|has|have|fails?|failed|crash\w*|restarts?|gets?|goes|stays?|can(?:not|'t)?)\b`)

// reSettingCountedPods is a workload's pods a sentence counts ("I have 3
// workflow-controller pods in the replicaset", "two of the api-gateway pods"): the
// name the reporter calls them by.
var reSettingCountedPods = regexp.MustCompile(`\b(?:have|has|had|with|of|all)\s+(?:\d+|two|three|four|five|several|both|all)\s+(?:of\s+(?:the|my|our)\s+)?[\x60"']?([a-z0-9]+(?:-[a-z0-9]+)+)[\x60"']?\s+pods\b`)

// reBareSubjectWord is a compound word a sentence puts before a kind ("multi-container
// pod", "non-root containers", "cluster-wide deployment"), not a name.
var reBareSubjectWord = regexp.MustCompile(`(?i)^(?:multi|non|single|sub|self|pre|post|co|re|un|well|long|short|high|low|cross|built|third|out|auto|semi|anti|new|old|k8s|kube|in|on|off|up|down|one|two|three|per|all|any|same|last|first|end|run)-|-(?:based|level|like|ready|only|wide|time|side|scoped|managed|enabled|created|style|ish|related|owned|controlled)$`)

// reSettingQuantity is a resource amount as Kubernetes writes it, with the resource
// the sentence names before it.
var reSettingQuantity = regexp.MustCompile(`(?i)\b(memory|cpu|ephemeral-storage|storage)\b[^.\n]{0,60}?\bto\s+["'\x60]?(\d+(?:\.\d+)?(?:Ki|Mi|Gi|Ti|m|k|M|G))\b`)

// reSettingRequest is a resource amount the text says a pod requests or is limited to,
// with the resource after it ("requesting `435m` of CPU", "limited to 512Mi memory").
var reSettingRequest = regexp.MustCompile(`(?i)\b(?:request\w*|limit\w*|asks? for|needs?)\b[^.\n]{0,30}?["'\x60]?\b(\d+(?:\.\d+)?(?:Ki|Mi|Gi|Ti|m|k|M|G))\b["'\x60]?\s+(?:of\s+)?(memory|cpu|ephemeral-storage|storage)\b`)

// reSettingSelector is a node label the text gives a nodeSelector or node affinity:
// a label key with a prefix, or key=value ("nodeSelector is beta.kubernetes.io/os",
// "nodeSelector: disktype=ssd").
var reSettingSelector = regexp.MustCompile(`(?i)\bnode ?(?:selector|affinity)\b[^.\n]{0,20}?(?:\bis\b|:|=|\bof\b)\s*["'\x60]?([a-z0-9.-]+\.[a-z]{2,}/[A-Za-z0-9_.-]+(?:[=:]\s?[A-Za-z0-9_.-]+)?|[A-Za-z0-9_.-]+=[A-Za-z0-9_.-]+)`)

// reSettingHostNetwork is a setting that runs a pod on its node's network, as a
// manifest, a chart's values or an operator's resource write it.
var reSettingHostNetwork = regexp.MustCompile(`\b((?:[\w-]+\.)*(?:hostNetwork:\s*true|hostNetwork=true|network\.provider:\s*["']?host\b))`)

// reSettingTaintKey is a taint's key as a node's manifest writes it, and
// reSettingTaintEffect the effect written beside it.
var (
	reSettingTaintKey    = regexp.MustCompile(`^\s*(?:-\s+)?key:\s*["']?([a-z0-9][-a-z0-9.]*(?:/[A-Za-z0-9][-A-Za-z0-9_.]*)?)["']?\s*$`)
	reSettingTaintEffect = regexp.MustCompile(`^\s*(?:-\s+)?effect:\s*["']?(?:NoSchedule|NoExecute|PreferNoSchedule)["']?\s*$`)
	// reSettingTaintSpec is a taint written whole, KEY[=VALUE]:EFFECT, as a node's
	// describe shows it ("Taints: dedicated=infra:NoSchedule") or kubectl taint sets it.
	reSettingTaintSpec = regexp.MustCompile(`(?:^\s*Taints:\s*|\bkubectl\s+taint\s+(?:nodes?|no)\s+(?:--all\s+|\S+\s+)?)([a-z0-9][-a-z0-9._]*(?:/[A-Za-z0-9][-A-Za-z0-9_.]*)?(?:=[-A-Za-z0-9_.]*)?:(?:NoSchedule|NoExecute|PreferNoSchedule))(?:[\s\x60"',.]|$)`)
)

// reSelectorIntro is a sentence that introduces a selector's labels on the lines
// after it, and reSelectorLabel one of those labels as YAML or a flag writes it.
var (
	reSelectorIntro = regexp.MustCompile(`(?i)\bselector\b[^:]*:\s*$`)
	reSelectorLabel = regexp.MustCompile(`^\s*([A-Za-z0-9][-A-Za-z0-9_./]*)\s*[:=]\s*["']?([-A-Za-z0-9_.]+)["']?\s*$`)
)

// selectorAt is the labels of the selector line i introduces: the "key: value" lines
// right after it.
func selectorAt(lines []Line, i int) [][2]string {
	if !reSelectorIntro.MatchString(lines[i].Text) {
		return nil
	}
	var out [][2]string
	for j := i + 1; j < len(lines) && j <= i+20; j++ {
		if strings.TrimSpace(lines[j].Text) == "" && len(out) == 0 {
			continue
		}
		m := reSelectorLabel.FindStringSubmatch(lines[j].Text)
		if m == nil {
			break
		}
		out = append(out, [2]string{m[1], m[2]})
	}
	return out
}

// unmatchedLabels are the labels of sel that no pod of g carries, when g shows pods
// with labels; nil when it shows none, or every label is carried.
func unmatchedLabels(g *Graph, sel [][2]string) []string {
	labelled := false
	var out []string
	for _, kv := range sel {
		carried := false
		for _, p := range g.pods {
			if len(p.Obj.Labels) == 0 {
				continue
			}
			labelled = true
			if p.Obj.Labels[kv[0]] == kv[1] {
				carried = true
				break
			}
		}
		if !carried {
			out = append(out, kv[0]+": "+kv[1]+", which no pod in the evidence carries"+nearMisses(g, sel, kv[0]))
		}
	}
	if !labelled {
		return nil
	}
	return out
}

// nearMisses names the pods (at most two) that carry every label of sel but key: the
// pods the Service was meant to select.
func nearMisses(g *Graph, sel [][2]string, key string) string {
	var names []string
	for _, p := range g.pods {
		if len(names) == 2 {
			break
		}
		if _, has := p.Obj.Labels[key]; has || len(p.Obj.Labels) == 0 {
			continue
		}
		all := true
		for _, kv := range sel {
			if kv[0] != key && p.Obj.Labels[kv[0]] != kv[1] {
				all = false
				break
			}
		}
		if all {
			names = append(names, p.Obj.Name)
		}
	}
	if len(names) == 0 {
		return ""
	}
	return " (pod " + strings.Join(names, ", pod ") + " has its other labels)"
}

// reManifestNodeSelector opens a manifest's nodeSelector block, and reManifestLabel is a
// label it sets on the next line ("  node.kubernetes.io/instance-type: controlpanel").
var (
	reManifestNodeSelector = regexp.MustCompile(`^\s*nodeSelector:\s*$`)
	reManifestLabel        = regexp.MustCompile(`^\s*["']?([A-Za-z0-9][A-Za-z0-9_./-]*)["']?:\s*["']?([A-Za-z0-9_.-]+)["']?\s*$`)
)

// nodeSelectorAt is the first label ("key: value") of the nodeSelector block a pasted
// manifest opens at line i, "" when line i opens none.
func nodeSelectorAt(lines []Line, i int) string {
	if !reManifestNodeSelector.MatchString(lines[i].Text) || i+1 >= len(lines) {
		return ""
	}
	m := reManifestLabel.FindStringSubmatch(lines[i+1].Text)
	if m == nil {
		return ""
	}
	return m[1] + ": " + m[2]
}

// taintKeyAt is the taint key line i of lines shows: a "key:" line with a taint's
// effect within two lines of it.
func taintKeyAt(lines []Line, i int) string {
	if m := reSettingTaintSpec.FindStringSubmatch(lines[i].Text); m != nil {
		return m[1]
	}
	m := reSettingTaintKey.FindStringSubmatch(lines[i].Text)
	if m == nil {
		return ""
	}
	for j := max(0, i-2); j <= min(len(lines)-1, i+2); j++ {
		if j != i && reSettingTaintEffect.MatchString(lines[j].Text) {
			return m[1]
		}
	}
	return ""
}

// rePolicyAPI is the apiVersion line of a Gatekeeper constraint or a Kyverno policy,
// and rePolicyKind and rePolicyName the kind and name lines of its object.
var (
	rePolicyAPI  = regexp.MustCompile(`^\s*apiVersion:\s*["']?(constraints\.gatekeeper\.sh|kyverno\.io)/`)
	rePolicyKind = regexp.MustCompile(`^\s*kind:\s*["']?([A-Z][A-Za-z0-9]+)["']?\s*$`)
	rePolicyName = regexp.MustCompile(`^\s*name:\s*["']?([a-z0-9][-a-z0-9.]*)["']?\s*$`)
)

// policyAt is "constraint KIND NAME" (Gatekeeper) or "policy KIND NAME" (Kyverno) for
// the object whose apiVersion line is line i, "" when it is none or shows no name.
func policyAt(lines []Line, i int) string {
	m := rePolicyAPI.FindStringSubmatch(lines[i].Text)
	if m == nil {
		return ""
	}
	kind, name := "", ""
	for j := i + 1; j < len(lines) && j <= i+8 && (kind == "" || name == ""); j++ {
		if k := rePolicyKind.FindStringSubmatch(lines[j].Text); k != nil && kind == "" {
			kind = k[1]
		} else if n := rePolicyName.FindStringSubmatch(lines[j].Text); n != nil && name == "" {
			name = n[1]
		}
	}
	if kind == "" || name == "" {
		return ""
	}
	if m[1] == "kyverno.io" {
		return "policy " + kind + " " + name
	}
	return "constraint " + kind + " " + name
}

// reSuspicion is how a reporter says what they think the cause is.
var reSuspicion = regexp.MustCompile(`(?i)\b(?:may|might|could) (?:be|have)\b|\bi (?:suspect|think|believe|guess)\b|\b(?:probably|perhaps|maybe)\b|\bseems? to be\b|\bto do with\b|\b(?:due|related) to\b|\bcaused by\b`)

// subjectKinds spells the kinds a ticket names as the API does.
var subjectKinds = map[string]string{"pod": "pod", "daemonset": "DaemonSet", "deployment": "Deployment",
	"statefulset": "StatefulSet", "job": "Job", "cronjob": "CronJob", "container": "container", "service": "Service",
	"namespace": "namespace"}

// settingSubject is "DaemonSet node-exporter" from a match of reSettingSubject.
func settingSubject(m []string) string {
	name, kind := m[1], m[2]
	if name == "" {
		name, kind = m[4], m[3]
	}
	kind = strings.TrimSuffix(strings.ReplaceAll(strings.ToLower(kind), " ", ""), "s")
	return subjectKinds[kind] + " " + name
}

// reOutputLine is a line a program printed: it starts with a time, a klog header, a
// JSON object or a bracketed level, or holds logfmt's level or msg.
var reOutputLine = regexp.MustCompile(`^\s*(?:\d|[{\[]|[IWEF]\d{4} )|\b(?:level|msg|ts|time)=`)

// reTemplateExample is an issue template's setting whose label gives examples, and the
// reporter's answer after it.
var reTemplateExample = regexp.MustCompile(`(?i)^[^:]*\((?:e\.g\.?|eg\.?|for example|such as)[^)]*\)[^:]*:\s*(.*)$`)

// reNotThePlatform is how a sentence sets a platform it names apart from its own,
// right before the name.
var reNotThePlatform = regexp.MustCompile(`(?i)\b(?:unlike|not on|not in|instead of|rather than|other than|except|without|no|not)\s+(?:an?\s+|the\s+)?$`)

// rePlatformModel is a release or model number written right after a platform's name.
var rePlatformModel = regexp.MustCompile(`^ (v?\d+(?:\.\d+)*(?:[-+][\w.]+)?)\b`)

// releaseComponents are the components whose name before a release says whose release
// it is ("containerd 1.4.4"): the ticket's setting names it so.
var releaseComponents = map[string]bool{"containerd": true, "docker": true, "runc": true, "crun": true, "cri-o": true, "crio": true,
	"calico": true, "cilium": true, "flannel": true, "weave": true, "antrea": true, "multus": true, "helm": true, "kubelet": true,
	"kubeadm": true, "kubectl": true, "istio": true, "linkerd": true, "coredns": true, "etcd": true, "longhorn": true, "rook": true,
	"ceph": true, "kube-proxy": true, "ingress-nginx": true, "cert-manager": true, "argocd": true, "karpenter": true, "metallb": true}

// reNamedRelease is a component's name right before its release ("containerd 1.4.4",
// "calico v3.26.1"); releaseComponents says which names are components.
var reNamedRelease = regexp.MustCompile(`\b([A-Za-z][\w-]*) (v?\d+\.\d+\.\d+(?:[-+][\w.]+)?)\b`)

// reListItem is a numbered step of a ticket ("1. Create a resource with …").
var reListItem = regexp.MustCompile(`^\s*\d{1,2}[.)]\s+[A-Za-z]`)

// isSettingLine reports whether a pasted line is the reporter's own: a sentence, or a
// setting of an issue template ("- Install tools: Kubespray", "Kubernetes version: 1.28").
func isSettingLine(text string) bool {
	if reOutputLine.MatchString(text) && !reListItem.MatchString(text) {
		return false
	}
	if isProse(text) || reComponentRelease.MatchString(text) || reSettingKernel.MatchString(text) || reSettingSwap.MatchString(text) {
		return true
	}
	t := strings.TrimLeft(text, " \t-*>#")
	i := strings.Index(t, ":")
	if i <= 0 || i > 70 {
		return false
	}
	label := strings.ToLower(t[:i])
	return strings.Contains(label, "version") || strings.Contains(label, "install") || strings.Contains(label, "engine") ||
		strings.Contains(label, "distribution") || strings.Contains(label, "platform") || strings.Contains(label, "provider") ||
		strings.Contains(label, "environment") || strings.Contains(label, "kernel") || strings.Contains(label, "os") && len(label) <= 20
}

// readTicketSetting reads the setting of the prose pasted with the evidence: the lines
// an import could not attribute, that are not a named object's output and read as the
// reporter's own.
func readTicketSetting(g *Graph) ticketSetting {
	var s ticketSetting
	if !g.present[Fragments] {
		// A collected bundle holds no pasted prose: its lines are not walked.
		return s
	}
	// Keys: a line's text; a platform's, a release's or a port's lower-case name.
	lineSeen, named := map[string]bool{}, map[string]bool{}
	addRelease := func(v string) {
		if k := strings.ToLower(v); v != "" && len(s.releases) < 2 && !named[k] {
			named[k] = true
			s.releases = append(s.releases, v)
		}
	}
	var changed, stated []string
	commandNS := map[string]bool{}
	lines := g.Lines()
	for i := range lines {
		l := &lines[i]
		if l.Fragment && len(s.unmatched) == 0 {
			if sel := selectorAt(lines, i); len(sel) > 0 {
				s.unmatched = unmatchedLabels(g, sel)
			}
		}
		if !l.Fragment || l.Kind() != TextText && l.Kind() != TextLog || lineSeen[l.Text] {
			// A journal entry, an event or a status is a component's, whatever it says;
			// pasted prose is imported as text, or as a log beside log lines.
			continue
		}
		lineSeen[l.Text] = true
		if o := l.Object(); o.Kind != "" && o.Kind != ClientKind && o.Name != UnknownSubject {
			continue
		}
		if m := reSettingCommandNamespace.FindStringSubmatch(l.Text); m != nil {
			commandNS[m[1]] = true
		}
		if c := policyAt(lines, i); c != "" {
			if len(s.policies) < 2 && !named[c] {
				named[c] = true
				s.policies = append(s.policies, c)
			}
			continue
		}
		if sel := nodeSelectorAt(lines, i); sel != "" {
			if v := "nodeSelector " + sel; len(s.selectors) < 2 && !named[strings.ToLower(v)] {
				named[strings.ToLower(v)] = true
				s.selectors = append(s.selectors, v)
			}
			continue
		}
		if k := taintKeyAt(lines, i); k != "" {
			if len(s.taints) < 2 && !named["taint "+k] {
				named["taint "+k] = true
				s.taints = append(s.taints, k)
			}
			continue
		}
		if reGoStructDump.MatchString(l.Text) || !isSettingLine(l.Text) {
			continue
		}
		text := l.Text
		if m := reTemplateExample.FindStringSubmatch(text); m != nil {
			// An issue template's setting with its examples in the label ("Cloud
			// provider (e.g. AKS, GKE, EKS): EKS"): the reporter's answer is after it.
			text = m[1]
		}
		for _, loc := range rePlatform.FindAllStringIndex(text, -1) {
			p := text[loc[0]:loc[1]]
			if reNotThePlatform.MatchString(text[:loc[0]]) {
				// "Unlike Fargate, …", "not on EKS", "instead of minikube": a platform
				// the ticket sets its own against.
				continue
			}
			if m := rePlatformModel.FindStringSubmatch(text[loc[1]:]); m != nil {
				// The platform's release or model, as written after it ("Flatcar
				// 3227.2.0", "Raspberry Pi 4"): the release is then not named twice.
				p += " " + m[1]
				named[strings.ToLower(m[1])] = true
			}
			if k := strings.ToLower(p); !named[k] && len(s.platforms) < 2 {
				named[k] = true
				s.platforms = append(s.platforms, p)
			}
		}
		for _, m := range reSettingPort.FindAllStringSubmatch(text, 2) {
			if p := m[1] + ": " + strings.TrimRight(m[2], "\"'` \t"); len(s.ports) < 2 && !named[p] {
				named[p] = true
				s.ports = append(s.ports, p)
			}
		}
		for _, m := range append(reSettingSubject.FindAllStringSubmatch(text, 2), reSettingQuotedSubject.FindAllStringSubmatch(text, 2)...) {
			if v := settingSubject(m); len(s.subjects) < 2 && !named[strings.ToLower(v)] {
				named[strings.ToLower(v)] = true
				s.subjects = append(s.subjects, v)
			}
		}
		bare := reSettingBareSubject.FindAllStringSubmatch(text, 2)
		if m := reSettingLeadPod.FindStringSubmatch(text); m != nil && g.PodCount() == 0 {
			// "argocd-server pod is crashing": no pod in the evidence is named, so the
			// one the reporter's sentence starts with is the one they mean.
			bare = append(bare, []string{m[0], m[1], "pod", "", ""})
		} else if m := reSettingCountedPods.FindStringSubmatch(text); m != nil && g.PodCount() == 0 && !reBareSubjectWord.MatchString(m[1]) {
			// "I have 3 workflow-controller pods": the pods the reporter counts.
			bare = append(bare, []string{m[0], m[1], "pod", "", ""})
		}
		for _, m := range bare {
			if name := m[1] + m[4]; reBareSubjectWord.MatchString(name) || named[strings.ToLower(name)] {
				continue
			}
			if v := settingSubject(m); len(s.subjects) < 2 && !named[strings.ToLower(v)] {
				named[strings.ToLower(v)] = true
				s.subjects = append(s.subjects, v)
			}
		}
		for _, m := range reSettingRequest.FindAllStringSubmatch(text, 2) {
			if q := strings.ToLower(m[2]) + " " + m[1]; len(s.quantities) < 2 && !named[q] {
				named[q] = true
				s.quantities = append(s.quantities, q)
			}
		}
		for _, m := range reSettingSelector.FindAllStringSubmatch(text, 2) {
			if v := "nodeSelector " + m[1]; len(s.selectors) < 2 && !named[strings.ToLower(v)] {
				named[strings.ToLower(v)] = true
				s.selectors = append(s.selectors, v)
			}
		}
		if m := reSettingHostNetwork.FindStringSubmatch(text); m != nil && s.hostNetwork == "" {
			s.hostNetwork = strings.ReplaceAll(m[1], `"`, "")
		}
		if reSuspicion.MatchString(text) && isProse(text) && len(s.suspicions) < 3 {
			s.suspicions = append(s.suspicions, text)
		}
		if reSettingChange.MatchString(text) {
			for _, m := range reSettingQuantity.FindAllStringSubmatch(text, 2) {
				if q := strings.ToLower(m[1]) + " " + m[2]; len(s.quantities) < 2 && !named[q] {
					named[q] = true
					s.quantities = append(s.quantities, q)
				}
			}
		}
		if m := reSettingKernel.FindStringSubmatch(text); m != nil && s.kernel == "" {
			s.kernel = strings.TrimRight(m[1]+m[2]+m[3], ".,;:")
		}
		if m := reSettingSwap.FindStringSubmatch(text); m != nil && s.swap == "" {
			s.swap = m[1]
		}
		if loc := reSettingChange.FindStringIndex(text); loc != nil {
			if v := releaseAfter(text[loc[1]:], true); v != "" {
				if reSettingWorkaround.MatchString(text[loc[1]:]) {
					// "Switching to the mysql:5.6 image solves the issue": the
					// release the trouble does not show, no setting of it.
					continue
				}
				// A line that says the release moved names the one it moved to; the
				// one it left is history.
				changed = append(changed, v)
				continue
			}
		}
		for _, m := range reNamedRelease.FindAllStringSubmatch(text, 2) {
			if releaseComponents[strings.ToLower(m[1])] {
				stated = append(stated, m[1]+" "+m[2])
			}
		}
		if m := reComponentRelease.FindStringSubmatch(text); m != nil {
			// The component's name with its release, as the list gives them.
			stated = append(stated, strings.TrimSpace(m[1])+": "+m[2])
			continue
		}
		for _, loc := range reSettingVersion.FindAllStringIndex(text, -1) {
			if v := releaseAfter(text[loc[1]:], false); v != "" {
				stated = append(stated, v)
				break
			}
		}
	}
	for _, v := range changed {
		addRelease(v)
	}
	for _, v := range stated {
		addRelease(v)
	}
	if named[strings.ToLower(s.kernel)] {
		s.kernel = ""
	}
	// One command namespace, and no pod whose own namespace the evidence shows: with
	// several, none is the pod's for sure; beside a pod's own, it is no news or another's.
	if len(commandNS) == 1 && !slices.ContainsFunc(g.pods, func(p *Pod) bool { return !p.Ref().NamespaceUnknown }) {
		for ns := range commandNS {
			s.namespace = ns
		}
	}
	return s
}

// releaseAfter is the release a phrase names just after its announcing word: within its
// sentence and eighty characters; of a change "from A to B", B.
func releaseAfter(rest string, change bool) string {
	if i := strings.Index(rest, ". "); i >= 0 {
		rest = rest[:i]
	}
	if len(rest) > 80 {
		rest = rest[:80]
	}
	var last string
	prev := 0
	for _, loc := range reVersionToken.FindAllStringIndex(rest, -1) {
		before := strings.Fields(rest[prev:loc[0]])
		prevWord := ""
		if len(before) > 0 {
			prevWord = strings.ToLower(strings.Trim(before[len(before)-1], "`'\"(*"))
		}
		prev = loc[1]
		if loc[0] > 0 && rest[loc[0]-1] == '/' {
			// A path or an address's part, not a release.
			continue
		}
		announced := prevWord == "to" || prevWord == "version" || prevWord == "release" || prevWord == "chart" ||
			prevWord == "from" || prevWord == "kubernetes" || prevWord == "k8s" || prevWord == "tag" || prevWord == "" && !change
		v := settingRelease(rest[loc[0]:loc[1]], announced)
		if v == "" {
			continue
		}
		if releaseComponents[prevWord] {
			v = strings.Trim(before[len(before)-1], "`'\"(*") + " " + v
		}
		if !change {
			return v
		}
		last = v
		if prevWord == "to" {
			return v
		}
	}
	return last
}

// clause is what a root cause adds to name the setting: the values it does not already
// name, or "". A probe's or a Service's cause also names the ports the text sets.
func (s ticketSetting) clause(cause string, stage Stage) string {
	low := strings.ToLower(cause)
	var parts []string
	for _, v := range s.subjects {
		if _, name, _ := strings.Cut(v, " "); name != "" && !strings.Contains(low, strings.ToLower(name)) {
			parts = append(parts, v)
		}
	}
	if stage == StageScheduling || stage == StageRuntime {
		for _, q := range s.quantities {
			if _, n, _ := strings.Cut(q, " "); !strings.Contains(low, strings.ToLower(n)) {
				parts = append(parts, q)
			}
		}
	}
	if stage == StageScheduling {
		for _, v := range s.selectors {
			if _, n, _ := strings.Cut(v, " "); !strings.Contains(low, strings.ToLower(n)) {
				parts = append(parts, v)
			}
		}
		if s.hostNetwork != "" && strings.Contains(low, "host port") && !strings.Contains(low, strings.ToLower(s.hostNetwork)) {
			parts = append(parts, s.hostNetwork)
		}
		if strings.Contains(low, "taint") {
			for _, k := range s.taints {
				if key, _, _ := strings.Cut(strings.SplitN(k, ":", 2)[0], "="); !strings.Contains(low, strings.ToLower(key)) {
					parts = append(parts, "taint "+k)
				}
			}
		}
	}
	if stage == StageAdmission && strings.Contains(low, "webhook") && strings.Contains(low, "den") {
		for _, c := range s.policies {
			if n := c[strings.LastIndexByte(c, ' ')+1:]; !strings.Contains(low, strings.ToLower(n)) {
				parts = append(parts, c)
			}
		}
	}
	if stage == StageService && strings.Contains(low, "selector") {
		for _, l := range s.unmatched {
			if !strings.Contains(low, strings.ToLower(l)) {
				parts = append(parts, "its selector's "+l)
			}
		}
	}
	if (stage == StageConfig || stage == StageVolume) && s.namespace != "" &&
		strings.Contains(low, "not found") && !strings.Contains(low, strings.ToLower(s.namespace)) {
		parts = append(parts, "namespace "+s.namespace+" (the ticket's command), where what is not found must exist")
	}
	if stage == StageProbe || stage == StageService {
		for _, p := range s.ports {
			if _, n, _ := strings.Cut(p, " "); !strings.Contains(low, n) {
				parts = append(parts, p)
			}
		}
	}
	for _, p := range s.platforms {
		if !strings.Contains(low, strings.ToLower(p)) {
			parts = append(parts, p)
		}
	}
	for _, v := range s.releases {
		switch {
		case strings.Contains(low, strings.ToLower(v)):
		case strings.Contains(v, ": "), strings.Contains(v, " "):
			// A component's release as the ticket's list or sentence gives it.
			parts = append(parts, v)
		default:
			parts = append(parts, "release "+v)
		}
	}
	if s.kernel != "" && !strings.Contains(low, strings.ToLower(s.kernel)) {
		parts = append(parts, "kernel "+s.kernel)
	}
	if s.swap != "" && stage == StageNode && !strings.Contains(low, strings.ToLower(s.swap)) {
		parts = append(parts, "swap "+s.swap+" in /etc/fstab")
	}
	if len(parts) == 0 {
		return ""
	}
	return " (the ticket's setting: " + strings.Join(parts, ", ") + ")"
}

// nameSetting adds the pasted ticket's setting to its root causes.
func nameSetting(g *Graph, fs []*Finding) {
	var s ticketSetting
	read := false
	for _, f := range fs {
		if !f.Root {
			continue
		}
		if !read {
			s, read = readTicketSetting(g), true
			if len(s.platforms)+len(s.releases)+len(s.ports)+len(s.quantities)+len(s.suspicions)+len(s.selectors) == 0 && s.kernel == "" && s.swap == "" && s.hostNetwork == "" && len(s.subjects)+len(s.taints)+len(s.unmatched)+len(s.policies) == 0 && s.namespace == "" {
				return
			}
		}
		f.Cause += s.clause(f.Cause, f.Stage)
		f.Cause += s.suspected(f)
	}
}

// suspectedMinShared is how many content words a reporter's suspicion must share with
// a root's remedy to be named beside it: one shared word is chance ("pod", "chart").
const suspectedMinShared = 2

// suspected names the reporter's suspicion that the root's remedy agrees with: a
// sentence that says what they think is wrong and shares what the remedy speaks of
// ("the network policy we have in monitoring namespace" beside a webhook the API server
// cannot reach), "" when none does. A reader checks that first.
func (s ticketSetting) suspected(f *Finding) string {
	if len(s.suspicions) == 0 || f.Remediation == "" {
		return ""
	}
	remedy := map[string]bool{}
	for _, w := range proseTokens(f.Remediation + " " + f.Title) {
		remedy[w] = true
	}
	low := strings.ToLower(f.Cause)
	for _, text := range s.suspicions {
		if strings.Contains(low, strings.ToLower(text)) {
			continue
		}
		shared := map[string]bool{}
		for _, w := range proseTokens(text) {
			if remedy[w] && !suspicionCommon[w] {
				shared[w] = true
			}
		}
		if len(shared) >= suspectedMinShared {
			return " (the ticket suspects: “" + oneLine(text) + "”)"
		}
	}
	return ""
}

// suspicionCommon are words every remedy and every ticket use: sharing them says nothing.
var suspicionCommon = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range proseTokens("pod pods container containers kubernetes cluster error errors issue problem work working make makes set setting use using need needs run running check fix change") {
		m[w] = true
	}
	return m
}()
