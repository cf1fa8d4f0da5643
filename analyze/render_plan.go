package analyze

import (
	"fmt"
	"io"
	"strings"

	"podflow.dev/podflow/untrusted"
)

// The plan in each format: one short line under a table row's cause, a compact block in
// Markdown, HTML and explain. Every part of it may hold evidence-derived names, so each
// is escaped here, once, for the format.

// PlanLine is the plan in one short line: "change: Deployment shop/web
// .spec.template.spec.containers[app].resources.limits.memory · delete: recreated, same
// cause". Unescaped; callers escape it for their format.
func PlanLine(p *Plan) string {
	if p == nil {
		return ""
	}
	change := "change: " + targetLabel(p.Change.Target)
	if len(p.Change.Fields) > 0 {
		change += " " + p.Change.Fields[0]
		if n := len(p.Change.Fields) - 1; n > 0 {
			change += fmt.Sprintf(" (+%d)", n)
		}
	}
	return change + " · delete: " + deleteShort(p.DeleteRisk)
}

// targetLabel names a change target, saying when the evidence does not name it.
func targetLabel(t ObjectRef) string {
	if t.Name == "" {
		switch {
		case t.Kind == "Pod":
			return "the pod's owner, or the Pod (the evidence shows neither)"
		case t.Kind == "StorageClass":
			return "StorageClass (the cluster's default: none is marked)"
		case t.Namespace != "":
			return t.Kind + " in " + t.Namespace + " (name not in the evidence)"
		}
		return t.Kind + " (name not in the evidence)"
	}
	return t.String()
}

// deleteShort is the delete outcome in a few words.
func deleteShort(d DeleteRisk) string {
	same := map[SameCause]string{SameCauseYes: "same cause", SameCauseMaybe: "may meet the same cause", SameCauseNo: "may escape on another node"}[d.SameCause]
	switch d.Outcome {
	case DeleteRecreated:
		return "recreated, " + same
	case DeleteReattached:
		return "recreated with the same claim, " + same
	case DeleteBackoff:
		return "counts against the Job's backoffLimit, " + same
	case DeleteGone:
		if strings.HasPrefix(d.Summary, "not replaced") {
			return "not replaced (Job finished), logs lost"
		}
		return "gone for good (nothing owns it)"
	case DeleteNoPod:
		return "no pod to delete"
	case DeleteDrain:
		return "drain: " + strings.TrimPrefix(d.Summary, "kubectl ")
	case DeleteUnknown:
		return "owner not in the evidence, check ownerReferences first"
	}
	return string(d.Outcome)
}

// planText writes the plan as lines of plain text through para (which wraps text after
// its lead to the terminal's width): explain's block. Each text is escaped here.
func planText(p *Plan, para func(lead, text string)) {
	if p == nil {
		return
	}
	t := untrusted.Text
	para("Change: ", t(targetLabel(p.Change.Target))+" "+t(strings.Join(p.Change.Fields, ", ")))
	for _, a := range p.Change.Also {
		para("  or: ", t(targetLabel(a.Target))+" "+t(strings.Join(a.Fields, ", ")))
	}
	if p.Change.Suggest != "" {
		para("  review, then run: ", t(p.Change.Suggest))
	}
	if p.Change.Note != "" {
		para("  note: ", t(p.Change.Note))
	}
	para("If you delete the pod: ", t(p.DeleteRisk.Summary))
	for _, d := range p.DeleteRisk.Details {
		para("  ", t(d))
	}
	if len(p.KeepFirst) > 0 {
		para("", "Save first, in this order:")
		for i, k := range p.KeepFirst {
			para(fmt.Sprintf("  %d. ", i+1), t(k.What)+": "+t(k.Command))
		}
	}
	if len(p.Needs) > 0 {
		para("Needs: ", t(needsText(p.Needs)))
	}
}

// needsText lists the permissions, the node-level ones last.
func needsText(ps []Permission) string {
	var api, node []string
	for _, p := range ps {
		if p.NodeLevel {
			node = append(node, p.String())
		} else {
			api = append(api, p.String())
		}
	}
	return strings.Join(append(api, node...), "; ")
}

// planMarkdown writes the plan as a compact Markdown block; md escapes bundle text.
func planMarkdown(w io.Writer, p *Plan, md func(string) string) {
	if p == nil {
		return
	}
	pr := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	pr("\nPlan (podflow changes nothing: review each command before running it):\n\n")
	var fields []string
	for _, f := range p.Change.Fields {
		fields = append(fields, mdCode(f))
	}
	pr("- **Change** %s: %s\n", md(targetLabel(p.Change.Target)), strings.Join(fields, ", "))
	for _, a := range p.Change.Also {
		var af []string
		for _, f := range a.Fields {
			af = append(af, mdCode(f))
		}
		pr("  - or %s: %s\n", md(targetLabel(a.Target)), strings.Join(af, ", "))
	}
	if p.Change.Note != "" {
		pr("  - note: %s\n", md(p.Change.Note))
	}
	if p.Change.Suggest != "" {
		pr("  - review, then run: %s\n", mdCode(p.Change.Suggest))
	}
	pr("- **If you delete the pod**: %s\n", md(p.DeleteRisk.Summary))
	for _, d := range p.DeleteRisk.Details {
		pr("  - %s\n", md(d))
	}
	if len(p.KeepFirst) > 0 {
		pr("- **Save first**, in this order:\n")
		for i, k := range p.KeepFirst {
			pr("  %d. %s: %s\n", i+1, md(k.What), mdCode(k.Command))
		}
	}
	if len(p.Needs) > 0 {
		pr("- **Needs**: %s\n", md(needsText(p.Needs)))
	}
}
