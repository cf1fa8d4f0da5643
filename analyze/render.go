package analyze

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"sigs.k8s.io/yaml"

	"podflow.dev/podflow/untrusted"
)

// Output formats of a report.
const (
	FormatTable    = "table"
	FormatJSON     = "json"
	FormatYAML     = "yaml"
	FormatMarkdown = "markdown"
	FormatHTML     = "html"
)

// Formats lists the report formats, for flag help, validation and completion.
var Formats = []string{FormatTable, FormatJSON, FormatYAML, FormatMarkdown, FormatHTML}

// RenderOptions adjust the human formats.
type RenderOptions struct {
	// Unicode draws table borders with box characters (on a terminal); ASCII otherwise,
	// so piped output is stable and plain.
	Unicode bool
	// Timelines adds each reported pod's timeline.
	Timelines bool
	// Width is the terminal's width in columns: the table is laid out to fit it. Zero
	// (output piped or redirected) gives the classic table, whose layout does not depend
	// on any width, so scripts and golden files see the same bytes everywhere.
	Width int
	// Wide keeps the classic table on a terminal too (--wide).
	Wide bool
	// Verbose lists the closing sections (rules skipped, stages without full evidence,
	// load warnings) instead of the one line that counts them (-v).
	Verbose bool
	// Quiet leaves out even that line: the findings only (-q).
	Quiet bool
	// Color marks severities and stages with terminal colours (a terminal without
	// NO_COLOR).
	Color bool
}

// Render writes the report in one of the formats.
func Render(w io.Writer, r *Report, format string, opts RenderOptions) error {
	switch format {
	case FormatJSON:
		return writeJSON(w, r)
	case FormatYAML:
		return writeYAML(w, r)
	case FormatMarkdown:
		return renderMarkdown(w, r, opts)
	case FormatHTML:
		return renderHTML(w, r, opts)
	case FormatTable, "":
		if opts.Width > 0 && !opts.Wide {
			return renderFitted(w, r, opts)
		}
		return renderTable(w, r, opts)
	}
	return fmt.Errorf("unknown output format %q", format)
}

// displayText is evidence text as a reader should see it: the quotes a log format or a
// Go %q escaped (relation \"orders\") shown as quotes (relation "orders"). The
// structured formats keep the text as read; every human format escapes the result for
// its medium afterwards (untrusted.Text, HTML, Markdown), so this never makes text unsafe.
func displayText(s string) string {
	if !strings.Contains(s, `\"`) {
		return s
	}
	return strings.ReplaceAll(s, `\"`, `"`)
}

func writeJSON(w io.Writer, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode report: %w", err)
	}
	_, err = fmt.Fprintf(w, "%s\n", data)
	return err
}

func writeYAML(w io.Writer, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode report: %w", err)
	}
	if data, err = yaml.JSONToYAML(data); err != nil {
		return fmt.Errorf("encode report: %w", err)
	}
	_, err = w.Write(data)
	return err
}

// ordered lists root findings each followed by the consequences it explains, so a reader
// sees causes first; a consequence of several roots follows the first.
func ordered(r *Report) []rowFinding {
	placed := map[string]bool{}
	var out []rowFinding
	for _, f := range r.Findings {
		if !f.Root || placed[f.ID] {
			continue
		}
		placed[f.ID] = true
		out = append(out, rowFinding{f: f})
		for _, id := range f.Explains {
			if c := r.Finding(id); c != nil && !placed[id] && !c.Root {
				placed[id] = true
				out = append(out, rowFinding{f: c, consequence: true})
			}
		}
	}
	for _, f := range r.Findings {
		if !placed[f.ID] && !f.History {
			out = append(out, rowFinding{f: f, consequence: !f.Root})
		}
	}
	// The chain's past comes last: a failure the pods later got past.
	for _, f := range r.Findings {
		if !placed[f.ID] && f.History {
			out = append(out, rowFinding{f: f, consequence: true})
		}
	}
	return out
}

type rowFinding struct {
	f           *Finding
	consequence bool
}

// PodsLabel names a finding's pods compactly: one pod by name, replicas by their common
// prefix ("shop/web-7d9f-* (3 pods)"), otherwise the first with a count.
func PodsLabel(f *Finding) string {
	pods := f.Pods()
	switch len(pods) {
	case 0:
		var others []string
		for _, s := range f.Subjects {
			others = append(others, s.Kind+" "+s.NamespacedName())
		}
		if len(others) > 2 {
			others = append(others[:2], fmt.Sprintf("+%d more", len(others)-2))
		}
		return strings.Join(others, ", ")
	case 1:
		return pods[0].NamespacedName()
	}
	if slices.ContainsFunc(pods, func(p ObjectRef) bool { return p.UnnamedIn != "" }) {
		return fmt.Sprintf("%s and %d more pods", pods[0].NamespacedName(), len(pods)-1)
	}
	ns := pods[0].Namespace
	prefix := pods[0].Name
	for _, p := range pods[1:] {
		if p.Namespace != ns {
			ns = ""
		}
		for !strings.HasPrefix(p.Name, prefix) {
			prefix = prefix[:len(prefix)-1]
		}
	}
	if i := strings.LastIndexByte(prefix, '-'); i > 0 {
		prefix = prefix[:i+1]
	}
	if ns != "" && strings.HasSuffix(prefix, "-") {
		return fmt.Sprintf("%s/%s* (%d pods)", ns, prefix, len(pods))
	}
	return fmt.Sprintf("%s and %d more pods", pods[0].NamespacedName(), len(pods)-1)
}

func keyEvidence(f *Finding, n int) []string {
	var out []string
	for i, e := range f.Evidence {
		if i == n {
			break
		}
		l := e.Location
		// The table leaves out the bundle: paths rarely clash and the column stays narrow.
		l.Bundle = ""
		out = append(out, untrusted.Text(l.String()))
	}
	if extra := len(f.Evidence) + f.EvidenceOmitted - n; extra > 0 {
		out = append(out, fmt.Sprintf("(+%d more)", extra))
	}
	return out
}

func headline(r *Report) string {
	s := r.Summary
	when := ""
	if r.CollectedAt != nil {
		when = ", collected " + r.CollectedAt.UTC().Format(time.RFC3339)
		if !fromManifest(r) {
			when = ", latest evidence from " + r.CollectedAt.UTC().Format(time.RFC3339)
		}
	}
	switch {
	case s.Findings == 0 && s.Pods > 0 && s.healthy == s.Pods:
		return fmt.Sprintf("No problems found in %d pod(s)%s.", s.Pods, when)
	case s.Findings == 0 && s.Pods == 0:
		// Never "no problems" about evidence that shows nothing either way.
		return fmt.Sprintf("No finding, and no pod in the evidence%s: nothing here shows health or trouble (see the load warnings for what was read).", when)
	case s.Findings == 0:
		return fmt.Sprintf("No finding, but only %d of %d pod(s) positively show health (running and ready, or succeeded)%s; "+
			"the others' evidence says nothing either way.", s.healthy, s.Pods, when)
	}
	if s.PodsWithFindings > s.Pods {
		// Findings name pods the evidence holds no Pod object of (events, logs, a
		// paste): "3 of 0" would count them against a list they are not in.
		return fmt.Sprintf("%d root cause(s), %d finding(s) in all, affecting %d pod(s), %d of them known only from events, logs or text%s.",
			s.RootCauses, s.Findings, s.PodsWithFindings, s.PodsWithFindings-s.Pods, when)
	}
	return fmt.Sprintf("%d root cause(s), %d finding(s) in all, affecting %d of %d pod(s)%s.",
		s.RootCauses, s.Findings, s.PodsWithFindings, s.Pods, when)
}

// fromManifest reports whether the collection time came from a bundle manifest rather
// than from the evidence itself.
func fromManifest(r *Report) bool {
	for _, b := range r.Bundles {
		if b.CollectedAt != nil {
			return true
		}
	}
	return false
}

// clip shortens a one-line text for a terminal, keeping its end, where errors say why.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := len(s) - n
	for cut < len(s) && !utf8Start(s[cut]) {
		cut++
	}
	return "…" + s[cut:]
}

func stepName(s Step) string {
	if s.Container != "" {
		return s.Step + " " + s.Container
	}
	return s.Step
}

func stepTime(s Step) string {
	if s.Time == nil {
		return ""
	}
	return s.Time.UTC().Format("15:04:05")
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
