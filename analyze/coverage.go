package analyze

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"podflow.dev/podflow/bundle"
)

// StageCoverage says whether the bundle had evidence for one stage of one pod.
type StageCoverage struct {
	Stage Stage `json:"stage"`
	// Status is evidence (every source present), partial, none, not-reached (an earlier
	// stage has not completed) or not-applicable (e.g. no Service selects the pod).
	Status  string   `json:"status"`
	Sources []string `json:"sources,omitempty"`
	Missing []string `json:"missing,omitempty"`
}

// Coverage statuses.
const (
	CoverageEvidence      = "evidence"
	CoveragePartial       = "partial"
	CoverageNone          = "none"
	CoverageNotReached    = "not-reached"
	CoverageNotApplicable = "not-applicable"
)

// eventsExpire is the reason given when a pod has no events although events were
// collected: the API server keeps them for about an hour by default (--event-ttl).
const eventsExpire = "events: none for this pod, they expire after about an hour"

type coverageBuilder struct {
	g   *Graph
	f   *podFacts
	out StageCoverage
}

func (c *coverageBuilder) source(present bool, name, missing string) {
	if present {
		c.out.Sources = append(c.out.Sources, name)
	} else if missing != "" {
		c.out.Missing = append(c.out.Missing, missing)
	}
}

func (c *coverageBuilder) events() {
	g, ns := c.g, c.f.p.meta.Namespace
	switch {
	case c.f.hasEvents():
		c.out.Sources = append(c.out.Sources, "events")
	case !g.eventNamespaces[ns] && g.notPermitted("list", "", "events", ns) != "":
		c.out.Missing = append(c.out.Missing, "events for namespace "+ns+": "+g.notPermitted("list", "", "events", ns))
	case len(g.failed[Events]) > 0:
		c.out.Missing = append(c.out.Missing, "events: collection failed (see "+strings.Join(g.failed[Events], ", ")+")")
	case !g.present[Events]:
		c.out.Missing = append(c.out.Missing, "events: not in bundle")
	case !g.eventNamespaces[ns] && containsStr(g.unreadable[Events], bundle.NamespacedResourcePath(bundle.KindEvents, ns)):
		c.out.Missing = append(c.out.Missing, "events for namespace "+ns+": unreadable (see the load warnings)")
	case !g.eventNamespaces[ns]:
		c.out.Missing = append(c.out.Missing, "events for namespace "+ns+": not in bundle")
	default:
		c.out.Missing = append(c.out.Missing, eventsExpire)
	}
}

func (c *coverageBuilder) journal(node string) {
	c.source(len(c.g.journalByNode[node]) > 0, "kubelet journal",
		"kubelet journal for "+NodeWords(node)+": not in bundle")
}

// NodeWords names a node in a sentence: "node n1", or what the evidence lacks.
func NodeWords(node string) string {
	if node == "" {
		return "the pod's node (the evidence does not name it)"
	}
	return "node " + node
}

// coverage says, stage by stage, which sources of evidence the bundle had for a pod.
func (g *Graph) coverage(f *podFacts) []StageCoverage {
	pod := f.p.Obj
	node := pod.Spec.NodeName
	// A pod whose containers ran or wait on a node was scheduled, even when the
	// evidence (a pasted excerpt) does not name the node.
	scheduled := node != "" || anyContainerStarted(pod) || pastSandbox(pod)
	out := make([]StageCoverage, 0, len(Stages))
	for _, st := range Stages {
		c := &coverageBuilder{g: g, f: f, out: StageCoverage{Stage: st}}
		applicable := true
		switch st {
		case StageRequest, StageAdmission:
			c.source(true, "pod object", "")
		case StageController:
			ref := controllerRef(f.p)
			if ref == nil {
				applicable = false
				break
			}
			_, ok := g.byKey[ref.key()]
			c.source(ok, strings.ToLower(ref.Kind)+" object", fmt.Sprintf("%s %s: not in bundle", ref.Kind, ref.NamespacedName()))
		case StageScheduling:
			c.source(true, "pod status", "")
			c.events()
		case StageNode:
			if node == "" {
				c.source(false, "", "node: the evidence does not name the pod's node")
				break
			}
			_, ok := g.byKey["Node//"+node]
			c.source(ok, "node object", fmt.Sprintf("node %s: not in bundle", node))
			c.journal(node)
		case StageSandbox:
			c.source(g.criNodes[node], "container runtime state", "container runtime state for "+NodeWords(node)+": not in bundle")
			c.journal(node)
			c.events()
		case StageImage, StageConfig, StageStart:
			c.source(len(pod.Status.ContainerStatuses)+len(pod.Status.InitContainerStatuses) > 0, "container statuses", "container statuses: none reported yet")
			c.events()
			if st != StageConfig {
				c.journal(node)
			}
		case StageVolume:
			if len(pod.Spec.Volumes) == 0 {
				applicable = false
				break
			}
			c.events()
			c.journal(node)
		case StageRuntime:
			c.source(true, "pod status", "")
			logsMissing := "container logs: not in bundle"
			if g.present[ContainerLogs] {
				logsMissing = "container logs: none for this pod"
			}
			if why := g.notPermitted("get", "", "pods/log", pod.Namespace); why != "" {
				logsMissing = "container logs: " + why
			}
			c.source(g.podsWithLogs[f.p], "container logs", logsMissing)
			if anyTerminated(pod) {
				c.source(g.dmesgNode[node], "kernel log", "kernel log for "+NodeWords(node)+": not in bundle")
			}
		case StageProbe:
			if !hasProbes(pod) {
				applicable = false
				break
			}
			c.source(true, "pod status", "")
			c.events()
		case StageService:
			if len(f.services) == 0 {
				applicable = false
				break
			}
			c.source(g.present[EndpointSlices], "endpointslices", "endpointslices: not in bundle")
		case StageTermination:
			if f.p.meta.DeletionTimestamp == nil {
				applicable = false
				break
			}
			c.source(true, "pod object", "")
		}
		switch {
		case !applicable:
			c.out.Status = CoverageNotApplicable
		case !scheduled && st.Order() > StageScheduling.Order():
			c.out = StageCoverage{Stage: st, Status: CoverageNotReached}
		case len(c.out.Sources) == 0:
			c.out.Status = CoverageNone
		case len(c.out.Missing) > 0:
			c.out.Status = CoveragePartial
		default:
			c.out.Status = CoverageEvidence
		}
		out = append(out, c.out)
	}
	return out
}

func anyTerminated(pod *corev1.Pod) bool {
	for _, cs := range pod.Status.ContainerStatuses {
		if cs.LastTerminationState.Terminated != nil || cs.State.Terminated != nil {
			return true
		}
	}
	return false
}

func hasProbes(pod *corev1.Pod) bool {
	for _, c := range pod.Spec.Containers {
		if c.ReadinessProbe != nil || c.LivenessProbe != nil || c.StartupProbe != nil {
			return true
		}
	}
	return false
}

// notPermitted says why a bundle lacks evidence the collector was not allowed to read:
// "no evidence: not permitted to list events in shop (as jane)", from the permissions
// the collector recorded in its manifest; "" when they do not show a refusal.
func (g *Graph) notPermitted(verb, group, resource, ns string) string {
	if !g.identity.PermissionsIn(ns).Denies(verb, group, resource) {
		return ""
	}
	what := resource
	if resource == "pods/log" {
		what = "pods/log (container logs)"
	}
	s := "no evidence: not permitted to " + verb + " " + what + " in " + ns
	if g.identity.Username != "" {
		s += " (as " + g.identity.Username + ")"
	}
	return s
}
