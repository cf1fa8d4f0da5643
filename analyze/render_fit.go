package analyze

import (
	"fmt"
	"io"
	"strings"

	"github.com/mattn/go-runewidth"

	"podflow.dev/podflow/untrusted"
)

// Column widths of the fitted table; below minCauseWidth for the cause, findings are
// stacked (one block each) instead of laid out in columns.
const (
	columnGap       = 2
	minSubjectWidth = 12
	minCauseWidth   = 28
)

// renderFitted lays the table out for a terminal of opts.Width columns, the way kubectl
// prints: no borders, the cause wrapped in its column, the key evidence on a line of its
// own under the cause with long paths abbreviated, and a blank line between findings.
func renderFitted(w io.Writer, r *Report, opts RenderOptions) error {
	width := opts.Width
	p := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	for _, l := range wrap(headline(r), width) {
		p("%s\n", l)
	}
	rows := ordered(r)
	if len(rows) > 0 {
		p("\n")
		stageW, sevW, subjW := len("STAGE"), len("SEVERITY"), len("SUBJECTS")
		for _, row := range rows {
			stageW = max(stageW, runewidth.StringWidth(stageLabel(row, opts)))
			sevW = max(sevW, len(row.f.Severity))
			for _, s := range SubjectLines(row.f) {
				subjW = max(subjW, runewidth.StringWidth(untrusted.Text(s)))
			}
		}
		full := subjW
		subjW = min(subjW, max(minSubjectWidth, width*3/10))
		// A pod's full name on one line is worth a narrower cause, within reason.
		if width-stageW-sevW-full-3*columnGap >= 40 {
			subjW = full
		}
		// A name is never split: the column is as wide as its longest one.
		for _, row := range rows {
			for _, s := range SubjectLines(row.f) {
				for _, w := range strings.Fields(untrusted.Text(s)) {
					for _, piece := range namePieces(w) {
						subjW = max(subjW, runewidth.StringWidth(piece))
					}
				}
			}
		}
		causeW := width - stageW - sevW - subjW - 3*columnGap
		if causeW < minCauseWidth || widestPiece(rows) > causeW {
			// A cause holds a name wider than its column (a registry host and
			// repository): each finding gets the whole width rather than a
			// line that runs past the edge.
			renderStacked(w, rows, opts)
		} else {
			renderColumns(w, rows, opts, [4]int{stageW, sevW, subjW, causeW})
		}
	}
	if line := trailerSummary(r, "`-v` lists them"); line != "" && !opts.Quiet && !opts.Verbose {
		p("\n")
		for _, l := range wrap(line, width) {
			p("%s\n", l)
		}
	}
	for _, sec := range trailerSections(r) {
		if opts.Quiet || !opts.Verbose {
			break
		}
		p("\n%s:\n", sec.Heading)
		for _, item := range sec.Items {
			for i, l := range wrap(item, width-4) {
				if i == 0 {
					p("  %s\n", l)
				} else {
					p("    %s\n", l)
				}
			}
		}
	}
	if opts.Timelines {
		renderTimelines(w, r)
	}
	return nil
}

func stageLabel(row rowFinding, opts RenderOptions) string {
	if row.consequence {
		return consequenceArrow(opts.Unicode) + string(row.f.Stage)
	}
	return string(row.f.Stage)
}

func renderColumns(w io.Writer, rows []rowFinding, opts RenderOptions, widths [4]int) {
	gap := strings.Repeat(" ", columnGap)
	// sev, when set, is the severity the row's second cell shows, to colour it.
	var sev Severity
	line := func(cells ...string) {
		var b strings.Builder
		for i, c := range cells {
			if i == len(cells)-1 {
				b.WriteString(c)
				break
			}
			pad := strings.Repeat(" ", max(0, widths[i]-runewidth.StringWidth(c)))
			if i == 1 && sev != "" && c != "" && opts.Color {
				c = colorSeverity(sev, c)
			}
			b.WriteString(c)
			b.WriteString(pad)
			b.WriteString(gap)
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
	line("STAGE", "SEVERITY", "SUBJECTS", "ROOT CAUSE")
	for i, row := range rows {
		if i > 0 {
			fmt.Fprintln(w)
		}
		var subjects []string
		for _, s := range SubjectLines(row.f) {
			subjects = append(subjects, wrap(untrusted.Text(s), widths[2])...)
		}
		cause := wrap(causeText(row), widths[3])
		for j := 0; j < max(len(subjects), len(cause)); j++ {
			stage, sevText := "", ""
			if j == 0 {
				stage, sevText = stageLabel(row, opts), string(row.f.Severity)
			}
			sev = row.f.Severity
			line(stage, sevText, at(subjects, j), at(cause, j))
		}
		// The key evidence gets a line of its own, from the subjects column to the edge,
		// so a citation is cut as little as possible.
		indent := widths[0] + widths[1] + 2*columnGap
		if ev := evidenceLine(row.f, opts.Width-indent); ev != "" {
			fmt.Fprintf(w, "%s%s\n", strings.Repeat(" ", indent), ev)
		}
		for _, l := range wrap(untrusted.Text(PlanLine(row.f.Plan)), opts.Width-indent) {
			if l != "" {
				fmt.Fprintf(w, "%s%s\n", strings.Repeat(" ", indent), l)
			}
		}
	}
}

// renderStacked is the layout for a narrow terminal: each finding a block.
func renderStacked(w io.Writer, rows []rowFinding, opts RenderOptions) {
	width := opts.Width
	for i, row := range rows {
		if i > 0 {
			fmt.Fprintln(w)
		}
		sev := string(row.f.Severity)
		if opts.Color {
			sev = colorSeverity(row.f.Severity, sev)
		}
		fmt.Fprintf(w, "%s  %s\n", stageLabel(row, opts), sev)
		for _, s := range SubjectLines(row.f) {
			for _, l := range wrap(untrusted.Text(s), width-2) {
				fmt.Fprintf(w, "  %s\n", l)
			}
		}
		for _, l := range wrap(causeText(row), width-2) {
			fmt.Fprintf(w, "  %s\n", l)
		}
		if ev := evidenceLine(row.f, width-2); ev != "" {
			fmt.Fprintf(w, "  %s\n", ev)
		}
		for _, l := range wrap(untrusted.Text(PlanLine(row.f.Plan)), width-2) {
			if l != "" {
				fmt.Fprintf(w, "  %s\n", l)
			}
		}
	}
}

// widestPiece is the widest part of a cause that wrap cannot break: a word, or a piece
// of a long word between the separators it may break after.
func widestPiece(rows []rowFinding) int {
	n := 0
	for _, row := range rows {
		for _, word := range strings.Fields(causeText(row)) {
			for _, piece := range namePieces(word) {
				n = max(n, runewidth.StringWidth(piece))
			}
		}
	}
	return n
}

func at(list []string, i int) string {
	if i < len(list) {
		return list[i]
	}
	return ""
}

// evidenceLine is the key evidence on one line of at most width columns: the first
// citation, abbreviated, and how many more the finding has.
func evidenceLine(f *Finding, width int) string {
	if len(f.Evidence) == 0 {
		return ""
	}
	const prefix = "evidence: "
	more := ""
	if n := len(f.Evidence) + f.EvidenceOmitted - 1; n > 0 {
		more = fmt.Sprintf(" (+%d more)", n)
	}
	l := f.Evidence[0].Location
	l.Bundle = ""
	budget := max(width-len(prefix)-len(more), 16)
	return prefix + abbreviatePath(untrusted.Text(l.String()), budget) + more
}

// abbreviatePath shortens a citation (path:locator) to n columns in steps a reader can
// undo by eye: leading directories to their first letter, one at a time
// (cluster-resources/pods/x.json becomes c/pods/x.json, then c/p/x.json); then the
// middle of the JSON pointer, keeping which item and which field
// (/items/0/…/state/terminated); last, the start of the text.
func abbreviatePath(s string, n int) string {
	fits := func(s string) bool { return runewidth.StringWidth(s) <= n }
	if fits(s) {
		return s
	}
	path, loc, hasLoc := strings.Cut(s, ":")
	join := func(path, loc string) string {
		if hasLoc {
			return path + ":" + loc
		}
		return path
	}
	dirs := strings.Split(path, "/")
	for i := 0; i < len(dirs)-1 && !fits(join(path, loc)); i++ {
		if d := []rune(dirs[i]); len(d) > 1 {
			dirs[i] = string(d[0])
		}
		path = strings.Join(dirs, "/")
	}
	if fits(join(path, loc)) {
		return join(path, loc)
	}
	if segs := strings.Split(loc, "/"); hasLoc && len(segs) > 4 {
		head := strings.Join(segs[:3], "/") + "/…"
		tail := ""
		for i := len(segs) - 1; i >= 3; i-- {
			next := "/" + segs[i] + tail
			if !fits(path + ":" + head + next) {
				break
			}
			tail = next
		}
		if tail != "" {
			return path + ":" + head + tail
		}
	}
	// Still too wide: the file is what a reader opens, so it stays whole; the pointer
	// keeps its end, which names the field, as far as it fits, or goes.
	if hasLoc {
		segs := strings.Split(loc, "/")
		tail := ""
		for i := len(segs) - 1; i >= 1; i-- {
			next := "/" + segs[i] + tail
			if !fits(path + ":…" + next) {
				break
			}
			tail = next
		}
		if tail != "" {
			return path + ":…" + tail
		}
	}
	return path
}

// wrap breaks escaped text into lines of at most width columns at spaces. A word longer
// than a line (an image reference, a path) is broken only after a separator (/ : = ,),
// never inside a Kubernetes name; a name longer than the line is left whole, wider
// than the line, rather than printed as two names that do not exist.
func wrap(s string, width int) []string {
	width = max(width, 8)
	var lines []string
	var cur strings.Builder
	curW := 0
	flush := func() {
		lines = append(lines, cur.String())
		cur.Reset()
		curW = 0
	}
	for _, word := range strings.Fields(s) {
		ww := runewidth.StringWidth(word)
		if curW > 0 && curW+1+ww <= width {
			cur.WriteByte(' ')
			cur.WriteString(word)
			curW += 1 + ww
			continue
		}
		if curW > 0 {
			flush()
		}
		if ww <= width {
			cur.WriteString(word)
			curW = ww
			continue
		}
		for _, piece := range namePieces(word) {
			pw := runewidth.StringWidth(piece)
			if curW > 0 && curW+pw > width {
				flush()
			}
			cur.WriteString(piece)
			curW += pw
		}
	}
	if curW > 0 || len(lines) == 0 {
		flush()
	}
	return lines
}

// namePieces splits a long word after each separator that cannot be part of a
// Kubernetes name, so joining the pieces gives the word back.
func namePieces(word string) []string {
	var out []string
	start := 0
	for i := 0; i < len(word); i++ {
		switch word[i] {
		case '/', ':', '=', ',':
			out = append(out, word[start:i+1])
			start = i + 1
		}
	}
	if start < len(word) {
		out = append(out, word[start:])
	}
	return out
}
