package analyze

import (
	"regexp"
	"strings"

	"podflow.dev/podflow/internal/phrase"
)

// unnamedContainer is the name an import gives a container whose name a pasted excerpt
// does not show (a describe block cut below its container header).
const unnamedContainer = "unknown"

// showUnnamed keeps podflow's placeholders out of what a reader copies. A pod an import
// built from an excerpt that does not show its name carries a made-up name (and the
// namespace "default" when that is not shown either, and a container named "unknown"):
// the commands of its findings get POD, NAMESPACE and CONTAINER in their place, and the
// text says that the container's name is not in the evidence. Subjects already name the
// pod by its file (ObjectRef.UnnamedIn).
func showUnnamed(g *Graph, all []*Finding) {
	for _, f := range all {
		for _, r := range madeUp(g, f) {
			for i, c := range f.Confirm {
				f.Confirm[i] = r.command(c)
			}
			f.Cause, f.Remediation = r.prose(f.Cause), r.prose(f.Remediation)
		}
	}
}

// showUnnamedPlans does for the plans what showUnnamed does for the findings: the
// plans name the pod's placeholders themselves, but not the container's.
func showUnnamedPlans(g *Graph, all []*Finding) {
	for _, f := range all {
		if f.Plan == nil {
			continue
		}
		for _, r := range madeUp(g, f) {
			pl := f.Plan
			for i, fl := range pl.Change.Fields {
				pl.Change.Fields[i] = r.command(fl)
			}
			for i := range pl.KeepFirst {
				k := &pl.KeepFirst[i]
				k.What, k.Command = r.prose(k.What), r.command(k.Command)
				if r.container {
					k.Command = strings.ReplaceAll(k.Command, "-"+unnamedContainer+"-", "-CONTAINER-")
				}
			}
		}
	}
}

// madeUp is the placeholders of each pod of the finding whose name or namespace the
// evidence does not show.
func madeUp(g *Graph, f *Finding) []placeholders {
	var out []placeholders
	for _, s := range f.Subjects {
		if s.Kind != "Pod" || s.UnnamedIn == "" && !s.NamespaceUnknown {
			continue
		}
		if p := g.FindPod(s.Namespace, s.Name); p != nil {
			r := placeholderWords(p)
			if r.container {
				r.named = g.proseContainer()
			}
			out = append(out, r)
		}
	}
	return out
}

// placeholders rewrites one pod's made-up values.
type placeholders struct {
	name, namespace string // made-up name and namespace, "" when the evidence shows them
	container       bool   // the container's name is made up
	named           string // the one container the ticket's sentences name, when the container's name is made up
}

func placeholderWords(p *Pod) placeholders {
	var r placeholders
	if isPartial(p, "name") {
		r.name = p.meta.Name
	}
	if isPartial(p, "namespace") {
		r.namespace = p.meta.Namespace
	}
	if isPartial(p, "spec") {
		for _, c := range p.Obj.Spec.Containers {
			r.container = r.container || c.Name == unnamedContainer
		}
		for _, cs := range p.Obj.Status.ContainerStatuses {
			r.container = r.container || cs.Name == unnamedContainer
		}
	}
	return r
}

var (
	nsFlag        = regexp.MustCompile(`(-n|--namespace)([ =])(\S+)`)
	containerFlag = regexp.MustCompile(`(-c|--container)([ =])` + unnamedContainer + `\b`)
)

// command puts the placeholders in a command.
func (r placeholders) command(c string) string {
	if r.name != "" {
		c = phrase.ReplaceName(c, r.name, "POD")
	}
	if r.namespace != "" {
		c = nsFlag.ReplaceAllStringFunc(c, func(m string) string {
			sub := nsFlag.FindStringSubmatch(m)
			if sub[3] != r.namespace {
				return m
			}
			return sub[1] + sub[2] + "NAMESPACE"
		})
	}
	if r.container {
		c = containerFlag.ReplaceAllString(c, "${1}${2}CONTAINER")
		c = strings.ReplaceAll(c, `=="`+unnamedContainer+`"`, `=="CONTAINER"`)
		c = strings.ReplaceAll(c, `[`+unnamedContainer+`]`, `[CONTAINER]`)
	}
	return c
}

// prose says, in a sentence, that the container's name is not in the evidence.
func (r placeholders) prose(s string) string {
	if !r.container {
		return s
	}
	unnamed := "the container (its name is not in the evidence)"
	if r.named != "" {
		unnamed = "the container (its name is not in the pasted output; the ticket's text names " + r.named + ")"
	}
	s = phrase.ReplaceName(s, "container "+unnamedContainer, unnamed)
	return strings.ReplaceAll(s, "containers["+unnamedContainer+"]", "containers[CONTAINER]")
}

// reProseContainer is how a ticket's sentence names a container: in a code span ("the
// `wait-gcs-ready` init-container", "container `app`"), or a name with a hyphen (no
// plain word) after "for the", "of the" or "in the" ("the startup probe for the
// nextcloud-nginx container").
var reProseContainer = regexp.MustCompile("`([a-z0-9][a-z0-9.-]*[a-z0-9])`\\s+(?:init[- ]?)?container\\b|\\b(?:init[- ]?)?container\\s+`([a-z0-9][a-z0-9.-]*[a-z0-9])`|\\b(?:for|of|in) the ([a-z0-9]+(?:-[a-z0-9]+)+) (?:init[- ]?)?container\\b")

// proseContainer is the one container name the evidence's pasted sentences give in a
// code span, "" when they give none or several.
func (g *Graph) proseContainer() string {
	return g.loneOf(&g.proseContainerOnce, &g.proseContainerName, func(func(string)) {}, func(line string, add func(string)) {
		if !strings.Contains(line, "ontainer") {
			return
		}
		for _, m := range reProseContainer.FindAllStringSubmatch(line, -1) {
			add(m[1] + m[2] + m[3])
		}
	})
}
