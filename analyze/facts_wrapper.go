package analyze

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Wrapper values: what the layers around a message print about whose chain broke.
//
// A component that wraps an error in its own words often names the object the error is
// about: the StatefulSet controller the pod it could not create, the kubelet's volume
// operations the volume, libcni the CNI plugin. A rule that reads only the innermost
// message loses them, and a root cause without them leaves the reader to find whose
// chain broke. WrapperValues reads them from the wrappers' formats, so that every
// signature's cause may name them ({pod}, {workload}, {volume}, {plugin} inside
// [[ ]]) and the catalog's reading of a line says them.

// The names WrapperValues gives its values; a signature template may use them inside
// an optional part ([[ ]]) without a pattern capturing them.
const (
	WrapperPod      = "pod"      // the pod a controller failed to create, update or delete
	WrapperWorkload = "workload" // "StatefulSet NAME": the controller's object
	WrapperVolume   = "volume"   // the volume of a kubelet volume operation
	WrapperPlugin   = "plugin"   // the CNI plugin type libcni ran
	// WrapperPodPrefix is the generateName a controller's refused pod had, all its name
	// then ("web-5d8f9c7b6-"): which workload's pods are refused.
	WrapperPodPrefix = "podPrefix"
)

var (
	// k8s.io/kubernetes pkg/controller/statefulset/stateful_pod_control.go
	// recordPodEvent: "%s Pod %s in StatefulSet %s failed error: %s" (the verb in lower
	// case), and recordClaimEvent: "%s Claim %s for Pod %s in StatefulSet %s failed
	// error: %s".
	reWrapStatefulSetPod = regexp.MustCompile(`\b(?:create|update|delete|get) (?:Claim \S+ for )?Pod (\S+) in StatefulSet (\S+) failed error: `)
	// k8s.io/kubernetes pkg/volume/util/operationexecutor/operation_executor.go
	// generateVolumeMsg: "%v for volume %q %v" with an operation prefix such as
	// "MountVolume.SetUp failed", "MapVolume.SetUpDevice failed", "MountVolume.NewMounter
	// initialization failed", "AttachVolume.Attach failed".
	// Before 1.10 it printed "%v for volume %q (spec.Name: %q) pod %q (UID: %q) with: %v":
	// the volume's unique name ("kubernetes.io/configmap/UID-config"), then the pod's
	// name for it, which is the volume's name.
	reWrapVolume = regexp.MustCompile(`\b[A-Z][A-Za-z]*\.[A-Za-z]+(?: initialization)? failed for volume "([^"]+)"(?: \(spec\.Name: "([^"]+)"\))?`)
	// k8s.io/apimachinery pkg/api/errors NewForbidden: "%s %q is forbidden: %v" for the
	// pod an admission plugin refused by name; a controller's pod has only its
	// generateName prefix ("web-5d8f9c7b6-"), which names no pod.
	reWrapForbiddenPod = regexp.MustCompile(`\bpods "([a-z0-9](?:[-a-z0-9.]*[a-z0-9])?)" is forbidden: `)
	// The same refusal of a controller's pod, named by its generateName prefix (as
	// printed, or with the "..." a ticket puts after it).
	reWrapForbiddenPrefix = regexp.MustCompile(`\bpods \\?"([a-z0-9][-a-z0-9.]*-)(?:\.\.\.|…)?\\?" is forbidden: `)
	// k8s.io/kubectl pkg/drain/drain.go evictPods: "error when evicting pods/%q -n %q
	// (will retry after %v): %v", and "…: global timeout reached: %v" when it gives up.
	reWrapEvictingPod = regexp.MustCompile(`\berror when evicting pods/\\?"([a-z0-9](?:[-a-z0-9.]*[a-z0-9.])?)\\?" -n \\?"([a-z0-9][-a-z0-9]*)\\?"`)
	// k8s.io/kubernetes pkg/kubelet/util/format Pod: "NAME_NAMESPACE(UID)", as the
	// kubelet's errors quote the pod they are about (kuberuntime's verifyRunAsNonRoot:
	// "container has runAsNonRoot and image will run as root (pod: %q, container: %s)").
	// The scheduler before 1.10 (plugin/pkg/scheduler/factory/factory.go, pkg/scheduler
	// factory.go MakeDefaultErrorFunc): "Error scheduling %v %v: %v", the pod's
	// namespace and name, with its FitError "pod (%v) failed to fit in any node".
	reWrapSchedulingPod = regexp.MustCompile(`\bError scheduling ([a-z0-9][-a-z0-9]*) ([a-z0-9](?:[-a-z0-9.]*[a-z0-9])?): `)
	reWrapKubeletPod    = regexp.MustCompile(`\bpod:? \\?"([a-z0-9](?:[-a-z0-9.]*[a-z0-9])?)_[a-z0-9](?:[-a-z0-9]*[a-z0-9])?\([0-9a-f-]{36}\)\\?"`)
)

// WrapperValues reads, from one message, the values its wrappers print about whose
// chain broke (WrapperPod, WrapperWorkload, WrapperVolume, WrapperPlugin); a value the
// message does not hold is absent. The pod is the StatefulSet controller's, the one
// an admission refusal names, or the one a kubelet error quotes as NAME_NAMESPACE(UID).
func WrapperValues(text string) map[string]string {
	out := map[string]string{}
	if strings.Contains(text, " in StatefulSet ") {
		if m := reWrapStatefulSetPod.FindStringSubmatch(text); m != nil {
			out[WrapperPod], out[WrapperWorkload] = m[1], "StatefulSet "+m[2]
		}
	}
	if strings.Contains(text, " is forbidden: ") && out[WrapperPod] == "" {
		if m := reWrapForbiddenPod.FindStringSubmatch(text); m != nil {
			out[WrapperPod] = m[1]
		} else if m := reWrapForbiddenPrefix.FindStringSubmatch(text); m != nil {
			out[WrapperPodPrefix] = m[1]
		}
	}
	if out[WrapperPod] == "" && strings.Contains(text, "error when evicting pods/") {
		if m := reWrapEvictingPod.FindStringSubmatch(text); m != nil {
			out[WrapperPod] = m[2] + "/" + m[1]
		}
	}
	if out[WrapperPod] == "" && strings.Contains(text, "Error scheduling ") {
		if m := reWrapSchedulingPod.FindStringSubmatch(text); m != nil {
			out[WrapperPod] = m[1] + "/" + m[2]
		}
	}
	if out[WrapperPod] == "" && strings.Contains(text, "pod") && strings.Contains(text, ")") {
		if m := reWrapKubeletPod.FindStringSubmatch(text); m != nil {
			out[WrapperPod] = m[1]
		}
	}
	if strings.Contains(text, " for volume ") {
		if m := reWrapVolume.FindStringSubmatch(text); m != nil {
			out[WrapperVolume] = m[1]
			if m[2] != "" {
				out[WrapperVolume] = m[2]
			}
		}
	}
	if strings.Contains(text, "plugin type=") {
		if m := SandboxCNIPluginPattern.FindStringSubmatch(text); m != nil && m[1] != "" {
			out[WrapperPlugin] = m[1]
		}
	}
	return out
}

// wrapperPlaceholders are the names of WrapperValues and of evidenceValues:
// placeholders a template may use inside [[ ]] whatever its patterns capture.
var wrapperPlaceholders = func() map[string]bool {
	m := map[string]bool{WrapperPod: true, WrapperPodPrefix: true, WrapperWorkload: true, WrapperVolume: true, WrapperPlugin: true, WrapperFrame: true, WrapperLoggedBefore: true}
	for _, e := range evidenceValues {
		m[e.name] = true
	}
	return m
}()

// EvidenceArch names, in a template's optional part, the CPU architecture of the line's
// node, else the one architecture the evidence names: runc's "exec format error" says
// the binary is for another platform, not which platform the node is.
const EvidenceArch = "evidenceArch"

// reArchWord is a CPU architecture as GOARCH, uname -m or a ticket names it.
var reArchWord = regexp.MustCompile(`(?i)\b(arm64|aarch64|amd64|x86_64|x86-64|armv[5-8]l?|armhf|arm|ppc64le|s390x|riscv64)\b`)

// lineArch is the architecture a line's finding may name: its node's, else the one the
// evidence names.
func lineArch(g *Graph, l *Line) string {
	if n := g.lineNode(l); n != nil {
		if a := n.Obj.Status.NodeInfo.Architecture; a != "" {
			return a
		}
		if a := n.Obj.Labels[corev1.LabelArchStable]; a != "" {
			return a
		}
	}
	return g.loneArch()
}

// lineNode is the Node object of the node a line is about, nil when the line names no
// node or the evidence holds no object of that name.
func (g *Graph) lineNode(l *Line) *Node {
	name := l.Node()
	if name == "" {
		return nil
	}
	for _, n := range g.nodes {
		if n.Obj.Name == name {
			return n
		}
	}
	return nil
}

// loneArch is the one CPU architecture the evidence names, computed once: the nodes'
// when they report one, else the words of pasted text (in lower case); "" when there are
// none or several.
func (g *Graph) loneArch() string {
	return g.loneOf(&g.loneArchOnce, &g.loneArchName, func(add func(string)) {
		for _, n := range g.nodes {
			add(n.Obj.Status.NodeInfo.Architecture)
		}
	}, func(line string, add func(string)) {
		for _, m := range reArchWord.FindAllStringSubmatchIndex(line, -1) {
			if m[2] > 0 && strings.ContainsRune("-_.", rune(line[m[2]-1])) || inName(line, m[3]) {
				// Part of a name ("kuard-amd64:blue", "node-arm64-1"): an image or a host
				// named for an architecture says nothing of the node's.
				continue
			}
			add(strings.ToLower(line[m[2]:m[3]]))
		}
	})
}

// inName reports whether a word that ends at i goes on as part of a longer name: a dash
// or underscore, or a colon that opens a tag ("amd64:blue"), not one that ends a clause.
func inName(line string, i int) bool {
	if i >= len(line) {
		return false
	}
	switch line[i] {
	case '-', '_':
		return true
	case ':':
		return i+1 < len(line) && line[i+1] != ' ' && line[i+1] != '\t'
	}
	return false
}

// evidenceValue is a value a cause may name that its message does not print: the
// line's pod's or node's, else the one the evidence shows.
type evidenceValue struct {
	name string
	of   func(*Graph, *Line) string
}

// evidenceValues are the placeholders of the values a cause may take from the evidence.
var evidenceValues = []evidenceValue{
	{EvidenceImage, lineImage}, {EvidenceKernel, lineKernel}, {EvidenceMemoryLimit, lineMemoryLimit}, {EvidenceArch, lineArch},
	{EvidenceClientVersion, func(g *Graph, _ *Line) string { return g.loneClientVersion() }},
	{EvidenceService, func(g *Graph, _ *Line) string { return g.loneServiceName() }},
	{EvidenceClusterCIDR, func(g *Graph, _ *Line) string { return g.loneClusterCIDRText() }},
	{EvidenceLoopbackNameserver, func(g *Graph, _ *Line) string { return g.loneLoopbackNameserver() }},
	{EvidencePressure, func(g *Graph, _ *Line) string { return g.lonePressureText() }},
	{EvidenceProvisioner, func(g *Graph, _ *Line) string { return g.loneProvisioner() }},
	{EvidenceHostPort, func(g *Graph, _ *Line) string { return g.hostPortsText() }},
	{EvidenceMaxSurge, func(g *Graph, _ *Line) string { return g.loneMaxSurge() }},
	{EvidenceTaints, func(g *Graph, _ *Line) string { return g.nodeTaintsText() }},
	{EvidenceEtcdQuota, func(g *Graph, _ *Line) string { return g.loneEtcdQuota() }},
	{EvidenceKubeletDirSetting, func(g *Graph, _ *Line) string { return g.loneKubeletDirSetting() }},
	{EvidenceNodePluginShort, lineNodePluginShort},
	{EvidenceHealthCheckError, lineHealthCheckError},
	{EvidenceCSISecret, lineCSISecret},
	{EvidenceNodeSelector, lineNodeSelector},
	{EvidenceDisabledValue, lineDisabledValue},
	{EvidenceClusterHealth, func(g *Graph, _ *Line) string { return g.lastClusterHealth() }},
	{EvidenceSecretEnv, func(g *Graph, _ *Line) string { return g.loneSecretEnv() }},
	{EvidenceFullFilesystem, func(g *Graph, _ *Line) string { return g.loneFullFilesystem() }},
	{EvidenceHugePages, func(g *Graph, _ *Line) string { return g.loneHugePages() }},
	{EvidenceSameNodeReplica, func(g *Graph, _ *Line) string { return g.loneSameNodeReplica() }},
	{EvidenceLimitRange, func(g *Graph, _ *Line) string { return g.loneLimitRange() }},
	{EvidenceMissingNamespace, func(g *Graph, _ *Line) string { return g.loneMissingNamespace() }},
	{EvidencePV, func(g *Graph, _ *Line) string { return g.lonePVName() }},
	{EvidencePVC, func(g *Graph, _ *Line) string { return g.loneUnboundClaim() }},
	{EvidenceUser, func(g *Graph, _ *Line) string { return g.loneDockerfileUser() }},
	{EvidenceFullFS, func(g *Graph, _ *Line) string { return g.fullestFilesystem() }},
	{EvidenceCNILoadError, func(g *Graph, _ *Line) string { return g.cniLoadError() }},
	{EvidenceCNIConfigs, func(g *Graph, _ *Line) string { return g.cniConfigs() }},
	{EvidenceSysctlDenied, func(g *Graph, _ *Line) string { return g.sysctlDenied() }},
	{EvidenceBindCapability, func(g *Graph, _ *Line) string { return g.bindCapability() }},
	{EvidenceAttachFailure, func(g *Graph, _ *Line) string { return g.loneAttachFailure() }},
}

// EvidenceAttachFailure names, in a template's optional part, the one volume attach
// failure the evidence's events give (FailedAttachVolume: "AttachVolume.Attach failed
// for volume "pvc-…" : attachment timeout for volume vol-…"): the kubelet's time-out
// waiting for the pod's volumes follows from it.
const EvidenceAttachFailure = "evidenceAttachFailure"

// reAttachFailed is the attach/detach controller's FailedAttachVolume message
// (pkg/volume/util/operationexecutor: "AttachVolume.Attach failed for volume %q : %v").
var reAttachFailed = regexp.MustCompile(`AttachVolume\.Attach failed for volume "([^"]+)" : (.+)$`)

// loneAttachFailure is EvidenceAttachFailure: "volume NAME: WHY" for the one attach
// failure the evidence holds, "" when none or several differ.
func (g *Graph) loneAttachFailure() string {
	return g.loneOf(&g.attachFailureOnce, &g.attachFailure, func(add func(string)) {
		for _, e := range g.events {
			if e.Reason != "FailedAttachVolume" {
				continue
			}
			if m := reAttachFailed.FindStringSubmatch(strings.TrimSpace(e.Message)); m != nil {
				add("volume " + m[1] + ": " + strings.TrimSpace(m[2]))
			}
		}
	}, func(line string, add func(string)) {
		if !strings.Contains(line, "AttachVolume.Attach failed") {
			return
		}
		if m := reAttachFailed.FindStringSubmatch(strings.TrimSpace(line)); m != nil {
			add("volume " + m[1] + ": " + strings.TrimSpace(m[2]))
		}
	})
}

// EvidenceBindCapability names, in a template's optional part, the NET_BIND_SERVICE
// capability as the evidence's manifest adds it ("- net_bind_service" under
// capabilities.add, a pod's securityContext): a program refused a port below 1024 runs
// with it added, which lets a non-root process bind only through its file's capability.
const EvidenceBindCapability = "evidenceBindCapability"

// reBindCapItem is NET_BIND_SERVICE as an item of a capabilities list, as written.
var reBindCapItem = regexp.MustCompile(`(?i)^\s*-\s*["']?((?:CAP_)?NET_BIND_SERVICE)["']?\s*$|(?i)\badd:\s*\[[^\]]*?["']?((?:CAP_)?NET_BIND_SERVICE)\b`)

// bindCapability is EvidenceBindCapability: the spelling the evidence adds
// NET_BIND_SERVICE with, "" when it adds it nowhere or in several spellings.
func (g *Graph) bindCapability() string {
	return g.loneOf(&g.bindCapOnce, &g.bindCap, func(add func(string)) {
		for _, p := range g.pods {
			for _, c := range p.Obj.Spec.Containers {
				if sc := c.SecurityContext; sc != nil && sc.Capabilities != nil {
					for _, cp := range sc.Capabilities.Add {
						if strings.TrimPrefix(strings.ToUpper(string(cp)), "CAP_") == "NET_BIND_SERVICE" {
							add(string(cp))
						}
					}
				}
			}
		}
	}, func(line string, add func(string)) {
		if !strings.Contains(strings.ToUpper(line), "NET_BIND_SERVICE") {
			return
		}
		if m := reBindCapItem.FindStringSubmatch(line); m != nil {
			add(m[1] + m[2])
		}
	})
}

// EvidenceSysctlDenied names, in a template's optional part, the kernel setting a
// sysctl command in the evidence was refused ("sysctl: permission denied on key
// \"vm.max_map_count\"", procps's message when it is not root): the init container
// meant to raise the node's limit ran without the privilege to.
const EvidenceSysctlDenied = "evidenceSysctlDenied"

// reSysctlDenied is procps sysctl's refusal to write a key.
var reSysctlDenied = regexp.MustCompile(`sysctl: (?:permission denied on key "?([\w.]+)"?|setting key "([\w.]+)": (?:Read-only file system|Operation not permitted|Permission denied))`)

// sysctlDenied is EvidenceSysctlDenied: the one key the evidence's lines show sysctl
// refused to set.
func (g *Graph) sysctlDenied() string {
	return g.loneOf(&g.sysctlDeniedOnce, &g.sysctlDeniedKey, func(add func(string)) {
		// Every line, a container's collected log as much as a paste.
		for i := range g.lines {
			if t := g.lines[i].Text; strings.Contains(t, "sysctl: ") {
				if m := reSysctlDenied.FindStringSubmatch(t); m != nil {
					add(m[1] + m[2])
				}
			}
		}
	}, func(string, func(string)) {})
}

// EvidenceCNIConfigs names, in a template's optional part, the CNI configuration files a
// listing of /etc/cni/net.d in the evidence shows when there are two or more: the runtime
// loads the first in name order (libcni ConfFiles, sorted), so a file another network
// add-on left behind (00-multus.conf before 05-cilium.conflist) decides every pod's
// network.
const EvidenceCNIConfigs = "evidenceCNIConfigs"

// reCNIConfigFile is a CNI configuration file's name as a listing or a path shows it.
var reCNIConfigFile = regexp.MustCompile(`(?:^|[\s/])(\d{2}-[\w.-]+\.(?:conflist|conf|json))\b`)

// cniConfigs is "FIRST (the first of A, B, … in name order)" for the CNI configuration
// files the evidence's text names when there are two or more, else "".
func (g *Graph) cniConfigs() string {
	g.cniConfigsOnce.Do(func() {
		seen := map[string]bool{}
		var names []string
		for _, f := range g.fragments {
			for _, l := range f.lines {
				if !strings.Contains(l, ".conf") && !strings.Contains(l, ".json") {
					continue
				}
				for _, m := range reCNIConfigFile.FindAllStringSubmatch(l, -1) {
					if !seen[m[1]] {
						seen[m[1]] = true
						names = append(names, m[1])
					}
				}
			}
		}
		if len(names) < 2 || len(names) > 8 {
			return
		}
		slices.Sort(names)
		g.cniConfigsText = names[0] + " (the first of " + strings.Join(names, ", ") + " in name order, the one the runtime loads)"
	})
	return g.cniConfigsText
}

// EvidenceCNILoadError names, in a template's optional part, the CNI configuration file
// the runtime could not load and why, from the first such line of the evidence: "cni
// config uninitialized" says no network is loaded, the load error says which file is
// wrong (a .conf that should be a .conflist, a plugin type left out).
const EvidenceCNILoadError = "evidenceCNILoadError"

// reCNILoadError is the kubelet's (dockershim's cni.go) and libcni's load error of a
// configuration file, with the file and the reason.
var reCNILoadError = regexp.MustCompile(`(?i)error loading CNI config (?:list )?file (/[^\s:"\\]+): ([^"\\\n]*[^"\\\s.])`)

// cniLoadError is "FILE: REASON" of the first CNI configuration load error the evidence
// shows, "" when none does.
func (g *Graph) cniLoadError() string {
	g.cniLoadErrOnce.Do(func() {
		for _, l := range g.Lines() {
			if !strings.Contains(l.Text, "CNI config") && !strings.Contains(l.Text, "cni config") {
				continue
			}
			if m := reCNILoadError.FindStringSubmatch(l.Text); m != nil {
				g.cniLoadErr = m[1] + ": " + m[2]
				return
			}
		}
	})
	return g.cniLoadErr
}

// EvidenceFullFS names, in a template's optional part, the fullest filesystem a `df`
// pasted in the evidence shows, when it is at least minFullPercent full: the kubelet's
// DiskPressure names no filesystem, and the one near its threshold may not be the root
// (the container runtime's state on a small tmpfs, an image filesystem of its own).
const EvidenceFullFS = "evidenceFullFS"

// minFullPercent is the use, in percent, from which a filesystem counts as full.
const minFullPercent = 80

// reDfRow is a row of df -h (or df): filesystem, size, used, available, use%, mount.
var reDfRow = regexp.MustCompile(`^\s*(\S+)\s+[\d.]+[KMGTP]?i?\s+[\d.]+[KMGTP]?i?\s+[\d.]+[KMGTP]?i?\s+(\d{1,3})%\s+(/\S*)\s*$`)

// fullestFilesystem is "FILESYSTEM on MOUNT at N% use" for the fullest df row of the
// evidence's text at or above minFullPercent, "" when none is.
func (g *Graph) fullestFilesystem() string {
	g.fullestFSOnce.Do(func() {
		best := -1
		for _, f := range g.fragments {
			for _, l := range f.lines {
				if !strings.Contains(l, "%") {
					continue
				}
				m := reDfRow.FindStringSubmatch(l)
				if m == nil {
					continue
				}
				n, err := strconv.Atoi(m[2])
				if err != nil || n < minFullPercent || n <= best {
					continue
				}
				best = n
				g.fullestFS = m[1] + " on " + m[3] + " at " + m[2] + "% use"
			}
		}
	})
	return g.fullestFS
}

// EvidenceUser names, in a template's optional part, the one USER instruction a
// Dockerfile pasted in the evidence sets ("USER app"): the kubelet's refusal of a
// non-numeric user names the user, not where the image set it.
const EvidenceUser = "evidenceUser"

// reDockerfileUser is a Dockerfile's USER instruction, at the start of a line or set off
// in backticks in a sentence.
var reDockerfileUser = regexp.MustCompile("(?:^\\s*|`)USER\\s+([A-Za-z0-9_][\\w.:-]*)")

// loneDockerfileUser is "USER NAME" for the one USER the evidence's text sets, "" when it
// sets none or several.
func (g *Graph) loneDockerfileUser() string {
	return g.loneOf(&g.loneUserOnce, &g.loneUser, func(func(string)) {}, func(line string, add func(string)) {
		if !strings.Contains(line, "USER") {
			return
		}
		for _, m := range reDockerfileUser.FindAllStringSubmatch(line, -1) {
			add("USER " + m[1])
		}
	})
}

// EvidencePVC names, in a template's optional part, the one PersistentVolumeClaim the
// evidence holds that is not Bound (a Pending row, a manifest without status): the
// scheduler's "pod has unbound immediate PersistentVolumeClaims" does not say which.
const EvidencePVC = "evidencePVC"

// loneUnboundClaim is the one claim the evidence holds that is not Bound, as
// namespace/name, "" when none or several.
func (g *Graph) loneUnboundClaim() string {
	return g.loneOf(&g.lonePVCOnce, &g.lonePVC, func(add func(string)) {
		for _, c := range g.pvcs {
			if c.Obj.Status.Phase != corev1.ClaimBound {
				add(c.Obj.Namespace + "/" + c.Obj.Name)
			}
		}
	}, func(string, func(string)) {})
}

// EvidencePV names, in a template's optional part, the one PersistentVolume the
// evidence holds (a `kubectl get pv` row, a claim's VOLUME column): the scheduler's
// "volume node affinity conflict" does not say which volume.
const EvidencePV = "evidencePV"

// lonePVName is the one PersistentVolume the evidence holds or a claim is bound to, ""
// when none or several.
func (g *Graph) lonePVName() string {
	return g.loneOf(&g.lonePVOnce, &g.lonePV, func(add func(string)) {
		for _, pv := range g.pvs {
			add(pv.Obj.Name)
		}
		for _, c := range g.pvcs {
			add(c.Obj.Spec.VolumeName)
		}
	}, func(string, func(string)) {})
}

// reEventContainer is the container a kubelet's event about it names (pkg/kubelet/events
// and kuberuntime: "Created container %s", "Started container %s", "Pulling image" has
// none).
var reEventContainer = regexp.MustCompile(`^(?:Created|Started) container ([a-z0-9](?:[-a-z0-9]*[a-z0-9])?)$`)

// loneEventContainer is the one container the kubelet's Created and Started events name
// in evidence of one pod at most (a paste), "" when they name none or several.
func (g *Graph) loneEventContainer() string {
	return g.loneOf(&g.loneEventContainerOnce, &g.loneEventContainerName, func(add func(string)) {
		if len(g.pods) > 1 {
			return
		}
		for _, e := range g.events {
			if m := reEventContainer.FindStringSubmatch(strings.TrimSpace(e.Message)); m != nil {
				add(m[1])
			}
		}
	}, func(string, func(string)) {})
}

// EvidenceLoopbackNameserver names, in a template's optional part, the one loopback
// address a resolv.conf in the evidence gives as its nameserver ("nameserver
// 127.0.0.53", systemd-resolved's stub; 127.0.0.1, a local dnsmasq): a pod that inherits
// it from the node's kubelet sends its queries to itself.
const EvidenceLoopbackNameserver = "evidenceLoopbackNameserver"

// reLoopbackNameserver is a resolv.conf line that names a loopback nameserver.
var reLoopbackNameserver = regexp.MustCompile(`^\s*nameserver\s+(127\.\d{1,3}\.\d{1,3}\.\d{1,3}|::1)\s*$`)

// loneLoopbackNameserver is "nameserver ADDRESS" for the one loopback nameserver the
// evidence's text gives, "" when it gives none or several.
func (g *Graph) loneLoopbackNameserver() string {
	return g.loneOf(&g.loneNameserverOnce, &g.loneNameserver, func(func(string)) {}, func(line string, add func(string)) {
		if !strings.Contains(line, "nameserver") {
			return
		}
		if m := reLoopbackNameserver.FindStringSubmatch(line); m != nil {
			add("nameserver " + m[1])
		}
	})
}

// EvidenceProvisioner names, in a template's optional part, the one provisioner of
// the StorageClasses the evidence holds: a claim that stays unbound waits for it, and
// a provisioner renamed by an upgrade (an in-tree name replaced by a CSI driver's)
// serves it no more.
const EvidenceProvisioner = "evidenceProvisioner"

// loneProvisioner is the one provisioner of the evidence's StorageClasses, "" when it
// holds none or several.
func (g *Graph) loneProvisioner() string {
	return g.loneOf(&g.loneProvisionerOnce, &g.loneProvisionerName, func(add func(string)) {
		for _, sc := range g.storageClasses {
			add(sc.Obj.Provisioner)
		}
	}, func(string, func(string)) {})
}

// EvidenceHostPort names, in a template's optional part, the host ports the evidence's
// manifests ask for, as they write them ("hostPort: 5432"): the scheduler's refusal
// names no port.
const EvidenceHostPort = "evidenceHostPort"

// reHostPortLine is a manifest line that sets a host port.
var reHostPortLine = regexp.MustCompile(`^[\s>-]*"?hostPort"?\s*:\s*"?(\d{1,5})"?,?\s*$`)

// hostPortsText is "hostPort: N" for each host port (up to four) the unscheduled pods
// or the workloads of the evidence ask for, "" when they ask for none or more.
func (g *Graph) hostPortsText() string {
	return g.loneOf(&g.hostPortsOnce, &g.hostPorts, func(add func(string)) {
		addPorts := func(cs []corev1.Container) {
			for _, c := range cs {
				for _, port := range c.Ports {
					if port.HostPort > 0 {
						add(fmt.Sprintf("hostPort: %d", port.HostPort))
					}
				}
			}
		}
		for _, p := range g.pods {
			if p.Obj.Spec.NodeName == "" {
				addPorts(p.Obj.Spec.InitContainers)
				addPorts(p.Obj.Spec.Containers)
			}
		}
		for _, d := range g.deployments {
			addPorts(d.Obj.Spec.Template.Spec.Containers)
		}
		for _, d := range g.daemonSets {
			addPorts(d.Obj.Spec.Template.Spec.Containers)
		}
		for _, s := range g.statefulSets {
			addPorts(s.Obj.Spec.Template.Spec.Containers)
		}
	}, func(line string, add func(string)) {
		if !strings.Contains(line, "hostPort") {
			return
		}
		if m := reHostPortLine.FindStringSubmatch(line); m != nil && m[1] != "0" {
			add("hostPort: " + m[1])
		}
	}, joinedUpTo(4))
}

// joinedUpTo is a loneOf's reading of several values: all of them in order, joined,
// when there are at most n; "" when there are more.
func joinedUpTo(n int) func(map[string]bool) string {
	return func(seen map[string]bool) string {
		if len(seen) > n {
			return ""
		}
		vs := slices.Collect(maps.Keys(seen))
		slices.Sort(vs)
		return strings.Join(vs, ", ")
	}
}

// EvidenceTaints names, in a template's optional part, the taints the evidence's nodes
// carry as a node's describe writes them ("node_purpose=infrastructure:NoSchedule"):
// the scheduler's refusal names no taint before 1.18.
const EvidenceTaints = "evidenceTaints"

// nodeTaintsText is the taints (up to three) the evidence's nodes carry, "" when they
// carry none or more.
func (g *Graph) nodeTaintsText() string {
	return g.loneOf(&g.nodeTaintsOnce, &g.nodeTaints, func(add func(string)) {
		for _, n := range g.nodes {
			for _, t := range n.Obj.Spec.Taints {
				s := t.Key
				if t.Value != "" {
					s += "=" + t.Value
				}
				add(s + ":" + string(t.Effect))
			}
		}
	}, func(string, func(string)) {}, joinedUpTo(3))
}

// EvidenceEtcdQuota names, in a template's optional part, etcd's space quota as the
// evidence's text sets it ("--quota-backend-bytes=402653184"), or the flag alone when
// the text names it without a value: etcd's NOSPACE alarm names no size.
const EvidenceEtcdQuota = "evidenceEtcdQuota"

// reEtcdQuota is etcd's quota flag or configuration key, with its value when written.
var reEtcdQuota = regexp.MustCompile(`(--quota-backend-bytes|quota-backend-bytes:)(?:[= ]\s*["']?(\d+(?:\.\d+)?\s?(?:[KMGT]i?B?)?)\b)?`)

// loneEtcdQuota is "--quota-backend-bytes=N" for the one quota the evidence sets,
// "--quota-backend-bytes" when it names the flag without one, "" when it names neither
// or several.
func (g *Graph) loneEtcdQuota() string {
	return g.loneOf(&g.etcdQuotaOnce, &g.etcdQuota, func(func(string)) {}, func(line string, add func(string)) {
		if !strings.Contains(line, "quota-backend-bytes") {
			return
		}
		for _, m := range reEtcdQuota.FindAllStringSubmatch(line, -1) {
			flag := strings.TrimSuffix(m[1], ":")
			if !strings.HasPrefix(flag, "--") {
				flag = "--" + flag
			}
			if m[2] != "" {
				flag += "=" + m[2]
			}
			add(flag)
		}
	}, func(seen map[string]bool) string {
		// The flag named alone beside the flag with its value is the same setting.
		valued := ""
		for v := range seen {
			if strings.Contains(v, "=") {
				if valued != "" {
					return ""
				}
				valued = v
			}
		}
		return valued
	})
}

// EvidenceKubeletDirSetting names, in a template's optional part, the kubelet directory
// an install in the evidence set for a node plugin ("linux.kubelet=/var/snap/microk8s/
// common/var/lib/kubelet", from `helm install … --set linux.kubelet=…` or a values
// file's `kubeletDir: …`): a CSI node plugin must mount the directory the node's
// kubelet really uses, which distributions move.
const EvidenceKubeletDirSetting = "evidenceKubeletDirSetting"

// reKubeletDirSetting is a chart value or flag naming a kubelet directory and its value:
// `--set linux.kubelet=/var/snap/…`, `kubeletDir: /var/lib/k0s/kubelet`,
// `--kubelet-dir=/var/lib/kubelet`.
var reKubeletDirSetting = regexp.MustCompile(`(?:--set(?:-string)?[= ]\s*["']?|^\s*|--)([\w.-]*[kK]ubelet[\w.-]*)["']?\s*(?:=|:\s)\s*["']?(/[^\s"',]*)`)

// loneKubeletDirSetting is "NAME=PATH" for the one kubelet directory the evidence's text
// sets, "" when it sets none or several.
func (g *Graph) loneKubeletDirSetting() string {
	return g.loneOf(&g.kubeletDirOnce, &g.kubeletDir, func(func(string)) {}, func(line string, add func(string)) {
		if !strings.Contains(strings.ToLower(line), "kubelet") {
			return
		}
		for _, m := range reKubeletDirSetting.FindAllStringSubmatch(line, -1) {
			if strings.Contains(m[2], "kubelet") {
				add(m[1] + "=" + m[2])
			}
		}
	})
}

// EvidenceNodePluginShort names, in a template's optional part, the node plugin
// DaemonSet of the line's CSI driver when it is scheduled on fewer nodes than another
// DaemonSet of the evidence ("DaemonSet efs-csi-node is on 5 nodes, aws-node on 7"):
// the nodes it leaves out are where the driver is not registered, most often for
// taints its pods do not tolerate or a node selector.
const EvidenceNodePluginShort = "evidenceNodePluginShort"

// reCSIDriverName is the driver a kubelet's registration error names.
var reCSIDriverName = regexp.MustCompile(`driver name ([\w-]+(?:\.[\w-]+)+) not found`)

// lineNodePluginShort is EvidenceNodePluginShort for the driver the line names: its node
// plugin is the one DaemonSet whose name holds the driver name's first label ("efs" of
// efs.csi.aws.com), or else the one whose name says csi.
func lineNodePluginShort(g *Graph, l *Line) string {
	if l == nil || len(g.daemonSets) < 2 {
		return ""
	}
	m := reCSIDriverName.FindStringSubmatch(l.Text)
	if m == nil {
		return ""
	}
	label := strings.ToLower(strings.SplitN(m[1], ".", 2)[0])
	pick := func(ok func(name string) bool) *DaemonSet {
		var one *DaemonSet
		for _, d := range g.daemonSets {
			if ok(strings.ToLower(d.Obj.Name)) {
				if one != nil {
					return nil
				}
				one = d
			}
		}
		return one
	}
	plugin := pick(func(n string) bool { return len(label) >= 3 && strings.Contains(n, label) })
	if plugin == nil {
		plugin = pick(func(n string) bool { return strings.Contains(n, "csi") })
	}
	if plugin == nil {
		return ""
	}
	var most *DaemonSet
	for _, d := range g.daemonSets {
		if d != plugin && (most == nil || d.Obj.Status.DesiredNumberScheduled > most.Obj.Status.DesiredNumberScheduled) {
			most = d
		}
	}
	have, want := plugin.Obj.Status.DesiredNumberScheduled, most.Obj.Status.DesiredNumberScheduled
	if have >= want {
		return ""
	}
	return fmt.Sprintf("DaemonSet %s is on %d nodes, %s on %d", plugin.Obj.Name, have, most.Obj.Name, want)
}

// fragmentLinesWith calls fn with every line of the evidence's pasted text that holds
// sub: the text an evidence value reads, looked at only where its key word is.
func (g *Graph) fragmentLinesWith(sub string, fn func(line string)) {
	for _, f := range g.fragments {
		for _, l := range f.lines {
			if strings.Contains(l, sub) {
				fn(l)
			}
		}
	}
}

// EvidenceHealthCheckError names, in a template's optional part, the error a program
// logged for the health check a line reports failing ("[-]crd-inject failed: reason
// withheld" hides it; controller-runtime logs it: "healthz check failed",
// "checker":"crd-inject","error":"resource not ready: …").
const EvidenceHealthCheckError = "evidenceHealthCheckError"

var (
	reHealthCheckFailed = regexp.MustCompile(`\[-\]([\w.-]+) failed: reason withheld`)
	reHealthCheckLogged = regexp.MustCompile(`"checker":\s*"([^"]+)"[^\n]*?"error":\s*"([^"\n]+)"`)
)

// lineHealthCheckError is EvidenceHealthCheckError for the check the line names.
func lineHealthCheckError(g *Graph, l *Line) string {
	if l == nil {
		return ""
	}
	m := reHealthCheckFailed.FindStringSubmatch(l.Text)
	if m == nil {
		return ""
	}
	found := ""
	g.fragmentLinesWith(`"checker"`, func(t string) {
		for _, c := range reHealthCheckLogged.FindAllStringSubmatch(t, -1) {
			if c[1] == m[1] {
				found = c[2]
			}
		}
	})
	return found
}

// EvidenceDisabledValue names, in a template's optional part, the setting of the
// evidence's values that turns off the resource the line names ("createClusterSecretStore:
// false" beside "resource not ready: clustersecretstores.external-secrets.io"): what
// a check or a controller waits for was never made.
const EvidenceDisabledValue = "evidenceDisabledValue"

var (
	reResourceOfGroup = regexp.MustCompile(`\b([a-z][a-z0-9]{3,})s\.([a-z0-9-]+(?:\.[a-z0-9-]+)+)\b`)
	reFalseSetting    = regexp.MustCompile(`^\s*(?:- )?([A-Za-z][\w.-]*)\s*:\s*false\s*(?:#.*)?$`)
)

// lineDisabledValue is EvidenceDisabledValue for the resources the line (or the error
// its health check logged) names: the one setting "KEY: false" whose key holds a
// resource's singular name, case ignored.
func lineDisabledValue(g *Graph, l *Line) string {
	if l == nil {
		return ""
	}
	text := l.Text + " " + lineHealthCheckError(g, l)
	var kinds []string
	for _, m := range reResourceOfGroup.FindAllStringSubmatch(text, 4) {
		kinds = append(kinds, m[1])
	}
	if len(kinds) == 0 {
		return ""
	}
	seen := map[string]bool{}
	g.fragmentLinesWith("false", func(t string) {
		m := reFalseSetting.FindStringSubmatch(t)
		if m == nil {
			return
		}
		key := strings.ToLower(m[1])
		for _, k := range kinds {
			if strings.Contains(key, k) {
				seen[m[1]+": false"] = true
			}
		}
	})
	return loneValue(seen)
}

// EvidenceClusterHealth names, in a template's optional part, the health an
// Elasticsearch or OpenSearch cluster last reported in the evidence's logs ("Cluster
// health status changed from [RED] to [YELLOW]"): a readiness check that waits for
// green never passes on a cluster that stays yellow.
const EvidenceClusterHealth = "evidenceClusterHealth"

var reClusterHealth = regexp.MustCompile(`[Cc]luster health status changed from \[(\w+)\] to \[(\w+)\]`)

// lastClusterHealth is "[YELLOW]" for the last health change the evidence's text
// logs, "" when it logs none.
func (g *Graph) lastClusterHealth() string {
	last := ""
	g.fragmentLinesWith("health status changed", func(t string) {
		if m := reClusterHealth.FindStringSubmatch(t); m != nil {
			last = "[" + m[2] + "]"
		}
	})
	return last
}

// EvidenceSecretEnv names, in a template's optional part, the one environment variable
// the evidence sets from a Secret (a container's env with secretKeyRef), else the one a
// ticket's command line sets ("HYDRA_RANDOM_SEED=\"…\" ./server"): the value the runtime
// could not set is most often a Secret's, decoded from data that was never base64.
const EvidenceSecretEnv = "evidenceSecretEnv"

// reShellAssignment is an environment variable a command line sets before its program.
var reShellAssignment = regexp.MustCompile(`(?:^|[\s;])([A-Z][A-Z0-9_]{2,})=(?:"[^"\n]*"|'[^'\n]*'|[^\s"']+)\s+\S`)

// loneSecretEnv is EvidenceSecretEnv.
func (g *Graph) loneSecretEnv() string {
	return g.loneOf(&g.secretEnvOnce, &g.secretEnv, func(add func(string)) {
		for _, p := range g.pods {
			for _, c := range append(slices.Clone(p.Obj.Spec.InitContainers), p.Obj.Spec.Containers...) {
				for _, e := range c.Env {
					if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
						add(e.Name)
					}
				}
			}
		}
	}, func(line string, add func(string)) {
		if !strings.Contains(line, "=") {
			return
		}
		for _, m := range reShellAssignment.FindAllStringSubmatch(line, -1) {
			add(m[1])
		}
	})
}

// EvidenceFullFilesystem names, in a template's optional part, the one filesystem a
// pasted `df` shows full (Use% 98 % or more): where it is mounted, its device and size
// ("/pgdata (/dev/rbd3, 9.8G, 100% used)"), the volume a program that cannot write
// ("No space left on device") writes to.
const EvidenceFullFilesystem = "evidenceFullFilesystem"

// reDfFull is a row of df's output (-h or not) whose Use% is 98 % or more.
var reDfFull = regexp.MustCompile(`^\s*(\S+)\s+(\S+)\s+\S+\s+\S+\s+(9[89]|100)%\s+(/\S*)\s*$`)

// loneFullFilesystem is EvidenceFullFilesystem.
func (g *Graph) loneFullFilesystem() string {
	return g.loneOf(&g.fullFSOnce, &g.fullFS, func(func(string)) {}, func(line string, add func(string)) {
		if !strings.Contains(line, "%") {
			return
		}
		if m := reDfFull.FindStringSubmatch(line); m != nil && m[4] != "/" {
			add(m[4] + " (" + m[1] + ", " + m[2] + ", " + m[3] + "% used)")
		}
	})
}

// EvidenceHugePages names, in a template's optional part, the huge pages a node of the
// evidence offers ("hugepages-1Gi: 1Gi" in its capacity, or HugePages_Total above 0 in a
// pasted /proc/meminfo): a program that maps huge pages the pod was given none of is
// killed by SIGBUS when it touches them.
const EvidenceHugePages = "evidenceHugePages"

// reHugePagesLine is a node's huge page capacity as describe prints it, or the kernel's
// count of huge pages in /proc/meminfo.
var reHugePagesLine = regexp.MustCompile(`^\s*(hugepages-\w+):\s+([1-9]\w*)\s*$|^\s*(HugePages_Total):\s+([1-9]\d*)\s*$`)

// loneHugePages is EvidenceHugePages.
func (g *Graph) loneHugePages() string {
	return g.loneOf(&g.hugePagesOnce, &g.hugePages, func(add func(string)) {
		for _, n := range g.nodes {
			for name, q := range n.Obj.Status.Capacity {
				if strings.HasPrefix(string(name), "hugepages-") && !q.IsZero() {
					add(string(name) + ": " + q.String())
				}
			}
		}
	}, func(line string, add func(string)) {
		if !strings.Contains(line, "uge") {
			return
		}
		if m := reHugePagesLine.FindStringSubmatch(line); m != nil {
			if m[1] != "" {
				add(m[1] + ": " + m[2])
			} else {
				add(m[3] + ": " + m[4])
			}
		}
	}, func(seen map[string]bool) string {
		// A describe's hugepages line and the kernel's count say the same huge pages.
		return strings.Join(slices.Sorted(maps.Keys(seen)), ", ")
	})
}

// EvidenceMissingNamespace names, in a template's optional part, the one namespace the
// evidence shows a request refused for because it did not exist (`Error from server
// (NotFound): namespaces "istio-system" not found`): an install step that ran before
// its namespace existed created nothing there, and a pod later misses what it was to
// create.
const EvidenceMissingNamespace = "evidenceMissingNamespace"

// reMissingNamespace is the API server's NotFound for a namespace.
var reMissingNamespace = regexp.MustCompile(`\bnamespaces \\*"([a-z0-9][-a-z0-9]*)\\*" not found`)

// loneMissingNamespace is the one namespace the evidence's text shows not found, ""
// when it shows none or several.
func (g *Graph) loneMissingNamespace() string {
	return g.loneOf(&g.missingNSOnce, &g.missingNS, func(func(string)) {}, func(line string, add func(string)) {
		if !strings.Contains(line, "not found") {
			return
		}
		for _, m := range reMissingNamespace.FindAllStringSubmatch(line, -1) {
			add(m[1])
		}
	})
}

// EvidenceMaxSurge names, in a template's optional part, the one rolling update
// maxSurge the evidence's manifests set when it lets a new pod start beside the old
// ("maxSurge: 1"): a surge pod that needs what its predecessor holds (a host port, a
// volume attached to one node) waits for it.
const EvidenceMaxSurge = "evidenceMaxSurge"

// reMaxSurgeLine is a manifest line that sets a rolling update's maxSurge.
var reMaxSurgeLine = regexp.MustCompile(`^[\s>-]*"?maxSurge"?\s*:\s*"?(\d{1,4}%?)"?,?\s*$`)

// loneMaxSurge is "maxSurge: N" for the one non-zero maxSurge the evidence sets, ""
// when it sets none, zero or several.
func (g *Graph) loneMaxSurge() string {
	surge := func(v *intstr.IntOrString) string {
		if v == nil || v.String() == "0" || v.String() == "0%" {
			return ""
		}
		return "maxSurge: " + v.String()
	}
	return g.loneOf(&g.maxSurgeOnce, &g.maxSurge, func(add func(string)) {
		for _, d := range g.deployments {
			if u := d.Obj.Spec.Strategy.RollingUpdate; u != nil {
				add(surge(u.MaxSurge))
			}
		}
		for _, d := range g.daemonSets {
			if u := d.Obj.Spec.UpdateStrategy.RollingUpdate; u != nil {
				add(surge(u.MaxSurge))
			}
		}
	}, func(line string, add func(string)) {
		if !strings.Contains(line, "maxSurge") {
			return
		}
		if m := reMaxSurgeLine.FindStringSubmatch(line); m != nil && strings.Trim(m[1], "0%") != "" {
			add("maxSurge: " + m[1])
		}
	})
}

// EvidencePressure names, in a template's optional part, the one pressure condition the
// evidence shows a node in, as it shows it: a node's condition (DiskPressure=True), its
// event (NodeHasDiskPressure) or the kubelet's refusal of a pod ("The node had
// condition: [DiskPressure]"). An eviction message names the resource; this names the
// condition that taints the node and refuses new pods.
const EvidencePressure = "evidencePressure"

// rePressure is a node pressure condition as an event, a refusal or a condition row
// writes it.
var rePressure = regexp.MustCompile(`\b(NodeHas(?:Disk|Memory|PID)Pressure)\b|condition: \[((?:Disk|Memory|PID)Pressure)\]|\b((?:Disk|Memory|PID)Pressure)\s+True\b`)

// rePressureTaint is the taint the node lifecycle controller puts on a node under a
// pressure condition, as a describe's Taints line shows it.
var rePressureTaint = regexp.MustCompile(`\bnode\.kubernetes\.io/(disk|memory|pid)-pressure\b`)

// pressureOfTaint names the condition a pressure taint stands for.
var pressureOfTaint = map[string]string{"disk": "DiskPressure", "memory": "MemoryPressure", "pid": "PIDPressure"}

// lonePressureText is the one pressure condition the evidence shows, "" when it shows
// none or several.
func (g *Graph) lonePressureText() string {
	return g.loneOf(&g.lonePressureOnce, &g.lonePressure, func(add func(string)) {
		for _, n := range g.nodes {
			pressed := false
			for _, c := range n.Obj.Status.Conditions {
				if c.Status == corev1.ConditionTrue && strings.HasSuffix(string(c.Type), "Pressure") {
					add(string(c.Type) + "=True")
					pressed = true
				}
			}
			for _, t := range n.Obj.Spec.Taints {
				if m := rePressureTaint.FindStringSubmatch(t.Key); m != nil && !pressed {
					add(pressureOfTaint[m[1]] + " (taint " + m[0] + ")")
				}
			}
		}
		for _, e := range g.events {
			if m := rePressure.FindStringSubmatch(e.Reason); m != nil && m[1] == e.Reason {
				add(e.Reason)
			}
		}
	}, func(line string, add func(string)) {
		if strings.Contains(line, "Pressure") {
			for _, m := range rePressure.FindAllStringSubmatch(line, -1) {
				add(m[1] + m[2] + m[3])
			}
		}
		if strings.Contains(line, "-pressure") {
			for _, m := range rePressureTaint.FindAllStringSubmatch(line, -1) {
				add(pressureOfTaint[m[1]] + " (taint " + m[0] + ")")
			}
		}
	})
}

// NodePressure is the one node pressure condition the evidence shows (a node's
// condition, its event, or the taint it brings in a pasted describe), "" when it shows
// none or several.
func (v *View) NodePressure() string { return v.g.lonePressureText() }

// EvidenceClusterCIDR names, in a template's optional part, the one pod network range
// the evidence's text sets (kubeadm init --pod-network-cidr, the controller manager's
// --cluster-cidr, a kubeadm configuration's podSubnet): the range node CIDRs are cut
// from, which a node without one was not given.
const EvidenceClusterCIDR = "evidenceClusterCIDR"

// reClusterCIDR is a pod network range as a command line or kubeadm's configuration
// sets it.
var reClusterCIDR = regexp.MustCompile(`(--pod-network-cidr|--cluster-cidr|podSubnet:)[= ]\s*["']?(\d{1,3}(?:\.\d{1,3}){3}/\d{1,2})`)

// loneClusterCIDRText is the one pod network range the evidence's text sets, with the
// setting that sets it ("--cluster-cidr=10.10.0.0/24", "podSubnet: 10.244.0.0/16"): what
// the user changes. "" when the text sets none or several.
func (g *Graph) loneClusterCIDRText() string {
	return g.loneOf(&g.loneClusterCIDROnce, &g.loneClusterCIDR, func(func(string)) {}, func(line string, add func(string)) {
		if !strings.Contains(line, "cidr") && !strings.Contains(line, "podSubnet") {
			return
		}
		for _, m := range reClusterCIDR.FindAllStringSubmatch(line, -1) {
			if strings.HasPrefix(m[1], "--") {
				add(m[1] + "=" + m[2])
			} else {
				add(m[1] + " " + m[2])
			}
		}
	})
}

// EvidenceService names, in a template's optional part, the one Service the evidence
// names: its Services, else a pasted command's svc/NAME (`kubectl port-forward
// svc/api 8443`): kubectl's refusal names the pod it resolved, not the Service.
const EvidenceService = "evidenceService"

// reServiceArg is a Service named as kubectl takes it: svc/NAME, service/NAME,
// services/NAME.
var reServiceArg = regexp.MustCompile(`(?:^|[\s"'\x60])(?:svc|services?)/([a-z0-9]([-a-z0-9.]*[a-z0-9])?)\b`)

// loneServiceName is the one Service the evidence names, "" when it names none or several.
func (g *Graph) loneServiceName() string {
	return g.loneOf(&g.loneServiceOnce, &g.loneService, func(add func(string)) {
		for _, s := range g.services {
			add(s.Obj.Name)
		}
		for _, f := range g.fragments {
			if f.about == nil {
				continue
			}
			if a := f.aboutRef(); a.Kind == "Service" && a.Name != UnknownSubject {
				add(a.Name)
			}
			// The command the prompt showed before the output (kubectl port-forward
			// svc/NAME).
			for _, m := range reServiceArg.FindAllStringSubmatch(" "+f.about.Command, -1) {
				add(m[1])
			}
		}
	}, func(line string, add func(string)) {
		if !strings.Contains(line, "/") {
			return
		}
		for _, m := range reServiceArg.FindAllStringSubmatch(line, -1) {
			add(m[1])
		}
	})
}

// EvidenceClientVersion names, in a template's optional part, the version of the
// kubectl that printed a client's failure, as `kubectl version` shows it in the same
// evidence: a client too old or too new for what a kubeconfig or a server asks explains
// the failure, and the failure does not print its own version.
const EvidenceClientVersion = "evidenceClientVersion"

// reClientVersion is the client's line of `kubectl version`: "Client Version: v1.28.2"
// (1.28 and later, and --short before), or the Go value older releases print,
// "Client Version: version.Info{Major:"1", Minor:"10", GitVersion:"v1.10.11", ...}".
var reClientVersion = regexp.MustCompile(`Client Version: (?:version\.Info\{[^}]*?GitVersion:"(v\d+\.\d+\.\d+[^"]*)"|(v\d+\.\d+\.\d+[\w.+-]*))`)

// loneClientVersion is the one kubectl client version the evidence's text shows, "" when
// it shows none or several.
func (g *Graph) loneClientVersion() string {
	return g.loneOf(&g.loneClientOnce, &g.loneClient, func(func(string)) {}, func(line string, add func(string)) {
		if !strings.Contains(line, "Client Version: ") {
			return
		}
		if m := reClientVersion.FindStringSubmatch(line); m != nil {
			add(m[1] + m[2])
		}
	})
}

// EvidenceMemoryLimit names, in a template's optional part, the memory limit of the
// line's pod's container, else the one memory limit the evidence shows (a pod's, or a
// pasted manifest's "limits:" block): the kernel's OOM kill does not print the limit the
// container was held to.
const EvidenceMemoryLimit = "evidenceMemoryLimit"

// reLimitsKey opens a resources' limits block in a pasted manifest; reMemoryValue is its
// memory entry.
var (
	reLimitsKey   = regexp.MustCompile(`^\s*limits:\s*$`)
	reMemoryValue = regexp.MustCompile(`^\s*memory:\s*["']?([0-9]+(?:\.[0-9]+)?(?:[KMGTPE]i?|[kmgtpe])?)["']?\s*$`)
)

// lineMemoryLimit is the memory limit a line's finding may name: its pod's container's,
// else the one the evidence shows.
func lineMemoryLimit(g *Graph, l *Line) string {
	return l.podValueOr(func(c *corev1.Container) string {
		if q, ok := c.Resources.Limits[corev1.ResourceMemory]; ok {
			return q.String()
		}
		return ""
	}, g.loneMemoryLimit)
}

// loneMemoryLimit is the one memory limit the evidence shows, computed once: the pods'
// containers' when there are pods, else the memory entries of pasted limits blocks; ""
// when there are none or several.
func (g *Graph) loneMemoryLimit() string {
	return g.loneOf(&g.loneMemoryOnce, &g.loneMemory, func(add func(string)) {
		for _, p := range g.pods {
			for _, c := range p.Obj.Spec.Containers {
				if q, ok := c.Resources.Limits[corev1.ResourceMemory]; ok {
					add(q.String())
				}
			}
		}
	}, g.limitsBlockMemory())
}

// limitsBlockMemory reads the memory entry of a pasted manifest's limits block: the
// entries follow the key, indented below it, within a few lines. It keeps, across the
// lines of the text it is given in order, whether a limits key was just seen.
func (g *Graph) limitsBlockMemory() func(line string, add func(string)) {
	since := -1
	return func(line string, add func(string)) {
		switch {
		case reLimitsKey.MatchString(line):
			since = 0
		case since >= 0 && since < 3:
			since++
			if m := reMemoryValue.FindStringSubmatch(line); m != nil {
				add(m[1])
				since = -1
			}
		default:
			since = -1
		}
	}
}

// EvidenceKernel names, in a template's optional part, the kernel release of the line's
// node, else the one kernel release the evidence names (loneKernel): a kernel that
// lacks a feature or module explains a netfilter or BPF failure, and the failing
// component's message does not print it.
const EvidenceKernel = "evidenceKernel"

// reKernelRelease is a Linux kernel release as uname -r prints it and tickets quote it:
// version, then the distribution's build ("6.8.0-57-generic", "5.15.0-127-generic",
// "5.10.184-175.731.amzn2.x86_64", "4.18.0-305.el8.x86_64"), or without a build when
// the word kernel says so ("linux kernel 5.15.168"), or a board's build that starts
// with a letter ("5.15.32-v7l+", "4.4.126-rockchip-ayufan-239"), or the release a
// module path names ("/lib/modules/6.1.0-rpi7-rpi-v8"); a bare "5.15" is no release.
var reKernelRelease = regexp.MustCompile(`(?:^|[\s"'\x60(=])([2-7]\.\d{1,2}\.\d{1,3}-[0-9A-Za-z][0-9A-Za-z._+-]*[0-9A-Za-z+])|(?i:\bkernel(?: version| release)?:?\s+)([2-7]\.\d{1,2}\.\d{1,3})(?:$|[^\w.-])|/lib/modules/([2-7]\.\d{1,2}\.\d{1,3}[^\s/"'\x60]*)`)

// reNotKernelBuild is a build that makes a dotted version an image's or a package's,
// not a kernel's ("3.4.5-alpine", "2.4.1-debian-10-r3", "3.0.0-rc1").
var reNotKernelBuild = regexp.MustCompile(`^[2-7]\.\d+\.\d+-(?:alpine|debian|ubuntu|bullseye|bookworm|buster|slim|jammy|focal|jre|jdk|r\d|rc|beta|alpha|dev|snapshot|SNAPSHOT|ce|ee|build|amd64|arm64)`)

// lineKernel is the kernel release a line's finding may name: its node's, else the one
// the evidence names.
func lineKernel(g *Graph, l *Line) string {
	if n := g.lineNode(l); n != nil && n.Obj.Status.NodeInfo.KernelVersion != "" {
		return n.Obj.Status.NodeInfo.KernelVersion
	}
	return g.loneKernel()
}

// loneKernel is the one kernel release the evidence names, computed once: the nodes'
// when they report one, else the releases in pasted text; "" when there are none or
// several.
func (g *Graph) loneKernel() string {
	return g.loneOf(&g.loneKernelOnce, &g.loneKernelRel, func(add func(string)) {
		for _, n := range g.nodes {
			add(n.Obj.Status.NodeInfo.KernelVersion)
		}
	}, func(line string, add func(string)) {
		for _, m := range reKernelRelease.FindAllStringSubmatch(line, -1) {
			if r := m[1] + m[2] + m[3]; !reNotKernelBuild.MatchString(r) {
				add(r)
			}
		}
	})
}

// EvidenceImage names, in a template's optional part, the image of the line's pod's
// container, else the one image reference the evidence names (loneImage): a runtime's
// start error does not say which image it ran, a ticket does.
const EvidenceImage = "evidenceImage"

// reImageRef is an image reference as a ticket writes it: a repository path with at
// least one slash and a tag or digest ("ghcr.io/org/app:1.2", "org/app@sha256:…").
var reImageRef = regexp.MustCompile(`(?:^|[\s"'\x60(=])((?:[a-z0-9][a-z0-9.-]*(?::\d+)?/)+[a-z0-9][a-z0-9._-]*(?::[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}|@sha256:[0-9a-f]{64}))`)

// lineImage is the image a line's finding may name: its pod's container's, else the
// one image the evidence names.
func lineImage(g *Graph, l *Line) string {
	return l.podValueOr(func(c *corev1.Container) string { return c.Image }, g.loneImage)
}

// podValueOr is the one value of the line's pod's containers (containerValue), else,
// when the line has no pod or the evidence never showed its spec (a pod known only from
// rows or events), the one value the evidence shows (lone): a `kubectl run --image`
// line, a pasted manifest's limits.
func (l *Line) podValueOr(of func(*corev1.Container) string, lone func() string) string {
	if l.Pod != nil {
		if v := l.containerValue(of); v != "" || SpecKnown(l.Pod) {
			return v
		}
	}
	return lone()
}

// containerValue is the one value of the line's pod's containers (its own container's,
// when the line names it), "" when they have none or several.
func (l *Line) containerValue(of func(*corev1.Container) string) string {
	seen := ""
	for i := range l.Pod.Obj.Spec.Containers {
		c := &l.Pod.Obj.Spec.Containers[i]
		if l.Container() != "" && c.Name != l.Container() {
			continue
		}
		switch v := of(c); {
		case v == "" || v == seen:
		case seen != "":
			return ""
		default:
			seen = v
		}
	}
	return seen
}

// loneImage is the one image reference the evidence names, computed once: every pod's
// containers' images when there are pods, else the references in pasted text; the
// repository when they are one repository's tags; "" when there are none or several.
func (g *Graph) loneImage() string {
	return g.loneOf(&g.loneImageOnce, &g.loneImageRef, func(add func(string)) {
		for _, p := range g.pods {
			for _, c := range append(slices.Clone(p.Obj.Spec.InitContainers), p.Obj.Spec.Containers...) {
				add(c.Image)
			}
			if len(p.Obj.Spec.Containers) == 0 {
				// A pasted status without its spec (containerStatuses alone) says
				// the image its containers ran.
				for _, cs := range append(slices.Clone(p.Obj.Status.InitContainerStatuses), p.Obj.Status.ContainerStatuses...) {
					add(cs.Image)
				}
			}
		}
	}, func(line string, add func(string)) {
		for _, m := range reImageRef.FindAllStringSubmatch(line, -1) {
			add(strings.TrimRight(m[1], ".,;:"))
		}
	}, oneRepository)
}

// loneOf is the one value the evidence shows, computed once into out: the values the
// objects give (objects calls add for each) when they give any, else those read from
// the pasted text's lines; "" when there are none or several.
// several, when given, names what several values share (one repository at two tags).
func (g *Graph) loneOf(once *sync.Once, out *string, objects func(add func(string)), text func(line string, add func(string)), several ...func(map[string]bool) string) string {
	once.Do(func() {
		seen := map[string]bool{}
		add := func(v string) {
			if v != "" {
				seen[v] = true
			}
		}
		objects(add)
		if len(seen) == 0 {
			for _, f := range g.fragments {
				for _, l := range f.lines {
					text(l, add)
				}
			}
		}
		if len(seen) == 1 {
			for v := range seen {
				*out = v
			}
		}
		if len(seen) > 1 && len(several) > 0 {
			*out = several[0](seen)
		}
	})
	return *out
}

// oneRepository is the repository of image references that differ only in their tag
// or digest (a ticket that tried "org/app:main" and "org/app:v1.0.5"), else "".
func oneRepository(refs map[string]bool) string {
	repo := ""
	for r := range refs {
		name := r
		if i := strings.Index(name, "@"); i >= 0 {
			name = name[:i]
		}
		if i := strings.LastIndex(name, ":"); i > strings.LastIndex(name, "/") {
			name = name[:i]
		}
		if repo != "" && name != repo {
			return ""
		}
		repo = name
	}
	return repo
}

// PrintedImage is the image a message names, as it names it most fully: a reference
// without a registry host ("rancher/mirrored-pause:3.6", as a configuration wrote it)
// gives way to the same reference with its host where the message prints that too
// (containerd's "failed to pull and unpack image "docker.io/rancher/mirrored-pause:3.6"",
// the normalized name it resolved), so the reader sees which registry was asked.
func PrintedImage(image, text string) string {
	if image == "" || imageHasHost(image) {
		return image
	}
	needles := []string{"/" + image}
	if !strings.Contains(image, "/") {
		// A name of Docker Hub's official library, which a runtime resolves to
		// docker.io/library/NAME.
		needles = append(needles, "/library/"+image)
	}
	tagged := strings.ContainsAny(image, ":@")
	for _, needle := range needles {
		for i := 0; ; {
			j := strings.Index(text[i:], needle)
			if j < 0 {
				break
			}
			end := i + j + len(needle)
			start := i + j
			for start > 0 && isRefChar(text[start-1]) {
				start--
			}
			host := text[start : i+j]
			if !tagged && end < len(text) && (text[end] == ':' || text[end] == '@') {
				// The runtime's reference names the tag the pod's left implicit.
				tag := end + 1
				for tag < len(text) && isRefChar(text[tag]) && text[tag] != ':' {
					tag++
				}
				if tag > end+1 {
					end = tag
				}
			}
			if (end == len(text) || !isRefChar(text[end])) && host != "" && !strings.Contains(host, "/") && imageHasHost(host+"/x") {
				return text[start:end]
			}
			i = i + j + len(needle)
		}
	}
	return image
}

// imageHasHost reports whether an image reference starts with a registry host: a first
// path component with a dot or a port, or localhost (the rule of
// github.com/distribution/reference's splitDockerDomain).
func imageHasHost(ref string) bool {
	first, _, ok := strings.Cut(ref, "/")
	return ok && (strings.ContainsAny(first, ".:") || first == "localhost")
}

// isRefChar reports whether c may be part of an image reference.
func isRefChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("._-:@/", c) >= 0
}

// WrapperFrame names the function a Go panic happened in: the first frame of the
// panicking goroutine's stack, which the runtime prints below "panic: ..." (runtime
// panic.go printpanics, then traceback.go's "goroutine N [STATE]:" and one line per
// frame, the function with its arguments and, indented or not, its file:line).
const WrapperFrame = "frame"

// WrapperLoggedBefore names the message the program logged right before a Go panic, in
// the same log: what it was doing when it panicked.
const WrapperLoggedBefore = "loggedBefore"

// reGoroutineHeader is the traceback's header of a goroutine.
var reGoroutineHeader = regexp.MustCompile(`^goroutine \d+ \[[^\]]+\]:$`)

// reModuleVersion is the module and version of a frame's file in the module cache
// ("/go/pkg/mod/k8s.io/client-go@v0.26.1/discovery/…").
var reModuleVersion = regexp.MustCompile(`/pkg/mod/((?:[^/\s@]+/)*[^/\s@]+@v[^/\s]+)/`)

// firstFrame is the index of the first traceback frame among the few lines that follow
// a panic without its goroutine's header (blank lines, a code fence, the signal line
// between): a function with its arguments, then its file line; -1 when there is none.
func firstFrame(next []string) int {
	for i, s := range next {
		if i > 8 {
			break
		}
		t := strings.TrimSpace(s)
		if t == "" || strings.HasPrefix(t, "```") || strings.Contains(t, "[signal ") {
			continue
		}
		if i+1 < len(next) && strings.HasSuffix(t, ")") && strings.LastIndexByte(t, '(') > 0 && reFrameFile.MatchString(next[i+1]) {
			return i
		}
	}
	return -1
}

// reFrameFile is a traceback frame's file line: the file's base name and line.
var reFrameFile = regexp.MustCompile(`^\s*\S*?([^/\s]+\.go:\d+)(?:\s|$)`)

// panicFrame is the function of the first frame below a "panic: " line among the lines
// that follow it in the same text (next), or "": the function as the traceback prints
// it without its arguments and its import path's directories, with the file and line
// its next line gives ("container.(*criEngine).ctrToInfo (container.go:180)"). Frames of the runtime's own panic machinery
// ("panic(...)", "runtime.gopanic") are passed over, and so are the deferred handlers
// above them: a stack printed by a recovering handler (apimachinery's HandleCrash,
// whose "Observed a panic" carries the stack) shows the handler's own frames first,
// then "panic(...)", then the function that panicked.
func panicFrame(next []string) string {
	// The frame's own line names its source file and line below it:
	// "\t/src/pkg/gateway/configmap.go:49 +0x18d".
	start := -1
	for i, s := range next {
		if i > 3 {
			break
		}
		if reGoroutineHeader.MatchString(strings.TrimSpace(s)) {
			start = i + 1
			break
		}
	}
	if start < 0 {
		// A reporter's paste may keep only the frame that matters, below the panic's
		// lines and apart from them ("k8s.io/client-go/discovery.convertAPIResource(...)"
		// and its file line, in a code block of its own).
		start = firstFrame(next)
	}
	if start >= 0 {
		frames := next[start:]
		first := ""
		for j, f := range frames {
			f = strings.TrimSpace(f)
			if strings.HasPrefix(f, "/") || strings.Contains(f, ".go:") {
				continue // the frame's file:line
			}
			open := strings.LastIndexByte(f, '(')
			if open <= 0 || !strings.HasSuffix(f, ")") {
				break
			}
			fn := f[:open]
			if fn == "panic" || fn == "runtime.gopanic" {
				first = "" // what ran above it handled the panic
				continue
			}
			if strings.HasPrefix(fn, "runtime.") || first != "" {
				continue
			}
			fn = fn[strings.LastIndexByte(fn, '/')+1:]
			if j+1 < len(frames) {
				if m := reFrameFile.FindStringSubmatch(frames[j+1]); m != nil {
					if mod := reModuleVersion.FindStringSubmatch(frames[j+1]); mod != nil {
						// A dependency's frame: its module and version say which
						// release of it has the bug.
						fn += " (" + mod[1] + ", " + m[1] + ")"
					} else {
						fn += " (" + m[1] + ")"
					}
				}
			}
			first = fn
			if !slices.ContainsFunc(frames[j+1:], func(f string) bool { return strings.HasPrefix(strings.TrimSpace(f), "panic(") }) {
				return first
			}
		}
		return first
	}
	return ""
}

// EvidenceSameNodeReplica names, in a template's optional part, the pod of the same
// Deployment (by name, another ReplicaSet's) that runs on the node where a replica
// crash-loops: during a rolling update the new replica lands beside the old one, and a
// host port or host network address the old one holds is taken ("dns-controller-68f76b5848-kdfhm
// on ip-10-0-1-5").
const EvidenceSameNodeReplica = "evidenceSameNodeReplica"

// reReplicaSetPod splits a ReplicaSet's pod name into its Deployment's name and its
// pod-template hash.
var reReplicaSetPod = regexp.MustCompile(`^([a-z0-9][-a-z0-9]*?)-([a-z0-9]{8,10})-[a-z0-9]{5}$`)

// loneSameNodeReplica is EvidenceSameNodeReplica: the one running, ready pod whose
// Deployment name and node are those of a pod that is not ready, from another
// ReplicaSet.
func (g *Graph) loneSameNodeReplica() string {
	return g.loneOf(&g.sameNodeReplicaOnce, &g.sameNodeReplica, func(add func(string)) {
		type key struct{ ns, deploy, node string }
		running := map[key][]*Pod{}
		var broken []*Pod
		for _, p := range g.pods {
			node := p.Obj.Spec.NodeName
			m := reReplicaSetPod.FindStringSubmatch(p.meta.Name)
			if node == "" || m == nil {
				continue
			}
			if p.Obj.Status.Phase == corev1.PodRunning && IsReady(p) {
				k := key{p.meta.Namespace, m[1], node}
				running[k] = append(running[k], p)
			} else if !IsReady(p) {
				broken = append(broken, p)
			}
		}
		for _, b := range broken {
			m := reReplicaSetPod.FindStringSubmatch(b.meta.Name)
			for _, r := range running[key{b.meta.Namespace, m[1], b.Obj.Spec.NodeName}] {
				if rm := reReplicaSetPod.FindStringSubmatch(r.meta.Name); rm[2] != m[2] {
					add(r.meta.Name + " on " + r.Obj.Spec.NodeName)
				}
			}
		}
	}, func(string, func(string)) {})
}

// EvidenceLimitRange names, in a template's optional part, the one LimitRange the
// evidence holds: the LimitRanger's refusal says which limit ("minimum memory usage per
// Container is 6Mi") but not whose.
const EvidenceLimitRange = "evidenceLimitRange"

// loneLimitRange is EvidenceLimitRange, as namespace/name.
func (g *Graph) loneLimitRange() string {
	return g.loneOf(&g.limitRangeOnce, &g.limitRange, func(add func(string)) {
		for _, lr := range g.limitRanges {
			r := lr.Ref()
			if r.Namespace != "" && !r.NamespaceUnknown {
				add(r.Namespace + "/" + r.Name)
			} else {
				add(r.Name)
			}
		}
	}, func(string, func(string)) {})
}

// EvidenceCSISecret names, in a template's optional part, the Secret a CSI driver read
// its credentials from for the line's operation, as the evidence's StorageClass or
// PersistentVolume names it: the node-stage secret for a mount
// (csi.storage.k8s.io/node-stage-secret-name, a PV's nodeStageSecretRef), the
// provisioner's for a provisioning. The driver's error names only the missing field.
const EvidenceCSISecret = "evidenceCSISecret"

var (
	reNodeStageSecretParam   = regexp.MustCompile(`csi\.storage\.k8s\.io/node-stage-secret-name"?\s*:\s*"?([\w.-]+)`)
	reProvisionerSecretParam = regexp.MustCompile(`csi\.storage\.k8s\.io/provisioner-secret-name"?\s*:\s*"?([\w.-]+)`)
	reNodeStageSecretRef     = regexp.MustCompile(`^\s*"?nodeStageSecretRef"?\s*:\s*\{?\s*$`)
	reRefName                = regexp.MustCompile(`^\s*"?name"?\s*:\s*"?([\w.-]+)"?,?\s*$`)
)

// lineCSISecret is the one secret of the line's operation the evidence's text names.
func lineCSISecret(g *Graph, l *Line) string {
	provisioning := strings.Contains(l.Text, "provision")
	seen := map[string]bool{}
	param := "csi.storage.k8s.io/node-stage-secret-name"
	if provisioning {
		param = "csi.storage.k8s.io/provisioner-secret-name"
	}
	for _, sc := range g.storageClasses {
		if v := sc.Obj.Parameters[param]; v != "" {
			seen[v] = true
		}
	}
	for _, pv := range g.pvs {
		if c := pv.Obj.Spec.CSI; c != nil && c.NodeStageSecretRef != nil && !provisioning {
			seen[c.NodeStageSecretRef.Name] = true
		}
	}
	for _, f := range g.fragments {
		for i, t := range f.lines {
			if provisioning {
				if m := reProvisionerSecretParam.FindStringSubmatch(t); m != nil {
					seen[m[1]] = true
				}
				continue
			}
			if m := reNodeStageSecretParam.FindStringSubmatch(t); m != nil {
				seen[m[1]] = true
			}
			if reNodeStageSecretRef.MatchString(t) {
				for _, n := range f.lines[i+1 : min(i+4, len(f.lines))] {
					if m := reRefName.FindStringSubmatch(n); m != nil {
						seen[m[1]] = true
						break
					}
				}
			}
		}
	}
	return loneValue(seen)
}

// EvidenceNodeSelector names, in a template's optional part, the nodeSelector of the
// line's pod, else the one nodeSelector the evidence's pods or a pasted describe's
// Node-Selectors line show: the scheduler's refusal names no label.
const EvidenceNodeSelector = "evidenceNodeSelector"

// reNodeSelectorsLine is describe's Node-Selectors line with a selector.
var reNodeSelectorsLine = regexp.MustCompile(`^\s*Node-Selectors:\s+([\w./-]+=[\w./-]*(?:,\s*[\w./-]+=[\w./-]*)*)\s*$`)

// lineNodeSelector is EvidenceNodeSelector for the line.
func lineNodeSelector(g *Graph, l *Line) string {
	selector := func(p *Pod) string {
		sel := p.Obj.Spec.NodeSelector
		keys := slices.Sorted(maps.Keys(sel))
		parts := make([]string, 0, len(keys))
		for _, k := range keys {
			parts = append(parts, k+"="+sel[k])
		}
		return strings.Join(parts, ",")
	}
	if l != nil && l.Pod != nil {
		if v := selector(l.Pod); v != "" {
			return v
		}
	}
	seen := map[string]bool{}
	for _, p := range g.pods {
		if v := selector(p); v != "" {
			seen[v] = true
		}
	}
	if len(seen) == 0 {
		for _, f := range g.fragments {
			for _, t := range f.lines {
				if m := reNodeSelectorsLine.FindStringSubmatch(t); m != nil {
					seen[m[1]] = true
				}
			}
		}
	}
	return loneValue(seen)
}

// loneValue is the one value of seen, "" when it holds none or several.
func loneValue(seen map[string]bool) string {
	if len(seen) != 1 {
		return ""
	}
	for v := range seen {
		return v
	}
	return ""
}
