package analyze

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"podflow.dev/podflow/untrusted"
)

// The closing sections of a report (rules skipped, stages without full evidence, load
// warnings) are what the evidence could not answer. On a small paste they outnumber the
// findings many times over, so by default a report closes with one line that counts
// them; -v (RenderOptions.Verbose) lists them, and -q leaves even the line out.

// trailerSection is one closing section, each item escaped for a terminal.
type trailerSection struct {
	Heading string
	Items   []string
}

// pasted reports whether the report's evidence was imported from pasted text: its
// reader holds a ticket, not a bundle, so missing evidence is said as what to paste.
func pasted(r *Report) bool {
	if len(r.Bundles) == 0 {
		return false
	}
	for _, b := range r.Bundles {
		if b.Imported != "loose" {
			return false
		}
	}
	return true
}

// trailerSections are the full closing sections (-v).
func trailerSections(r *Report) []trailerSection {
	var out []trailerSection
	paste := pasted(r)
	if len(r.Skipped) > 0 {
		sec := trailerSection{Heading: "Rules skipped"}
		for _, s := range r.Skipped {
			reason := s.Reason
			if paste && len(s.Missing) > 0 {
				reason = "no evidence to read; " + pasteHint(r, s.Missing)
			}
			sec.Items = append(sec.Items, untrusted.Text(s.Rule+": "+reason))
		}
		out = append(out, sec)
	}
	if len(r.Gaps) > 0 {
		sec := trailerSection{Heading: "Stages without full evidence"}
		for _, g := range r.Gaps {
			line := gapLine(g)
			if paste {
				line = strings.ReplaceAll(line, ": not in bundle", ": not in the paste")
			}
			sec.Items = append(sec.Items, untrusted.Text(line))
		}
		out = append(out, sec)
	}
	if len(r.Warnings) > 0 {
		sec := trailerSection{Heading: "Load warnings"}
		for _, warn := range r.Warnings {
			sec.Items = append(sec.Items, untrusted.Text(warn.String()))
		}
		out = append(out, sec)
	}
	return out
}

// trailerSummary is the one line that stands for the closing sections when they are
// not listed: what was not read, counted, and how to see it. Empty when there is
// nothing to say.
func trailerSummary(r *Report, how string) string {
	var parts []string
	if n := len(r.Skipped); n > 0 {
		parts = append(parts, count(n, "rule", "rules")+" had no evidence to read")
	}
	if n := len(r.Gaps); n > 0 {
		parts = append(parts, count(n, "stage", "stages")+" lacked evidence")
	}
	if n := len(r.Warnings); n > 0 {
		parts = append(parts, count(n, "load warning", "load warnings"))
	}
	if len(parts) == 0 {
		return ""
	}
	if pasted(r) && len(r.Skipped) > 0 && strings.HasPrefix(how, "`-v`") {
		how = "`-v` says what to paste"
	}
	return strings.Join(parts, ", ") + "; " + how + "."
}

func count(n int, one, many string) string {
	return fmt.Sprintf("%d %s", n, plural(n, one, many))
}

// gapLine says what a stage lacked and for which pods: "runtime: container logs: not in
// bundle (2 pods: shop/a, shop/b)".
func gapLine(g CoverageGap) string {
	var parts []string
	for _, m := range g.Missing {
		parts = append(parts, fmt.Sprintf("%s (%s)", m.Reason, podNamesText(m.Pods, m.PodNames)))
	}
	line := string(g.Stage) + ": "
	if g.PodsWithoutEvidence > 0 {
		line += fmt.Sprintf("no evidence at all for %s; ", podNamesText(g.PodsWithoutEvidence, g.PodsWithoutEvidenceNames))
	}
	return line + strings.Join(parts, "; ")
}

// renderTrailer writes the closing sections, or the one line that counts them; bullet
// is "" for plain text and "- " for Markdown.
func renderTrailer(w io.Writer, r *Report, bullet string, opts RenderOptions) {
	if opts.Quiet {
		return
	}
	if !opts.Verbose {
		if line := trailerSummary(r, "`-v` lists them"); line != "" {
			if bullet != "" {
				fmt.Fprintf(w, "\n%s\n", line)
			} else {
				fmt.Fprintf(w, "%s\n", line)
			}
		}
		return
	}
	for _, sec := range trailerSections(r) {
		if bullet != "" {
			fmt.Fprintf(w, "\n## %s\n\n", sec.Heading)
		} else {
			fmt.Fprintf(w, "%s:\n", sec.Heading)
		}
		for _, item := range sec.Items {
			if bullet != "" {
				fmt.Fprintf(w, "%s%s\n", bullet, mdEscape(item))
			} else {
				fmt.Fprintf(w, "  %s\n", item)
			}
		}
	}
}

// pasteSubject is the pod (namespace, name, node) a paste is about, to fill in the
// commands that would fetch what it lacks; placeholders where it does not say.
func pasteSubject(r *Report) (ns, pod, node string) {
	ns, pod, node = r.Scope.Namespace, "", ""
	if r.Scope.Pod != "" {
		if i := strings.IndexByte(r.Scope.Pod, '/'); i >= 0 {
			ns, pod = r.Scope.Pod[:i], r.Scope.Pod[i+1:]
		}
	}
	if len(r.Pods) > 0 {
		p := r.Pods[0]
		if ns == "" {
			ns = p.Namespace
		}
		if pod == "" {
			pod = p.Name
		}
		node = p.Node
	}
	arg := func(s, placeholder string) string {
		if s == "" || !untrusted.IsName(s) {
			return placeholder
		}
		return s
	}
	return arg(ns, "NAMESPACE"), arg(pod, "POD"), arg(node, "NODE")
}

// pasteHint says what to paste for the kinds a rule lacked: one kubectl get for the
// namespaced lists, one for the cluster's, and the node-side commands.
func pasteHint(r *Report, missing []Kind) string {
	ns, pod, node := pasteSubject(r)
	var namespaced, cluster, other []string
	for _, k := range missing {
		info, ok := kinds[k]
		switch {
		case !ok || k == Fragments:
		case k == Events:
			other = appendNew(other, "kubectl get events -n "+ns)
		case k == Secrets:
			// describe shows a secret's keys, never its values.
			other = appendNew(other, "kubectl describe secret -n "+ns)
		case k == Pods:
			other = appendNew(other, "kubectl get pod -n "+ns+" "+pod+" -o yaml")
		case k == Nodes:
			other = appendNew(other, "kubectl describe node "+node)
		case k == ContainerLogs:
			other = appendNew(other, "kubectl logs -n "+ns+" "+pod+" --all-containers --previous")
		case k == KubeletJournal:
			other = appendNew(other, "journalctl -u kubelet (on node "+node+")")
		case k == RuntimeJournal:
			other = appendNew(other, "journalctl -u containerd (on node "+node+")")
		case k == CRI:
			other = appendNew(other, "crictl pods; crictl ps -a (on node "+node+")")
		case k == Dmesg:
			other = appendNew(other, "dmesg -T (on node "+node+")")
		case k == KubeletConfigs:
			other = appendNew(other, "kubectl get --raw /api/v1/nodes/"+node+"/proxy/configz")
		case info.resource == "":
		case info.namespaced:
			namespaced = appendNew(namespaced, info.resource)
		default:
			cluster = appendNew(cluster, info.resource)
		}
	}
	var cmds []string
	if len(namespaced) > 0 {
		cmds = append(cmds, "kubectl get "+strings.Join(namespaced, ",")+" -n "+ns+" -o yaml")
	}
	if len(cluster) > 0 {
		cmds = append(cmds, "kubectl get "+strings.Join(cluster, ",")+" -o yaml")
	}
	cmds = append(cmds, other...)
	if len(cmds) == 0 {
		return "paste more of what the cluster says about the pod"
	}
	return "paste the output of `" + strings.Join(cmds, "` and `") + "`"
}

func appendNew(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}
