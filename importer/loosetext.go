package importer

import (
	"regexp"
	"strings"
	"unicode/utf8"

	"podflow.dev/podflow/internal/cmdline"
)

// textLine is one line of a pasted file after paste damage was undone, with the line it
// had in the original so evidence can cite it.
type textLine struct {
	s string
	n int
}

// chunk is a run of lines between prompts and markdown fences: usually one command's
// output. cmd is the command the prompt before it showed, if any.
type chunk struct {
	cmd   string
	lines []textLine
}

// rePrompt matches a shell prompt that introduces a command whose output follows:
// "$ kubectl ...", "user@host:~$ kubectl ...", "user@host dir (branch) $ kubectl ..."
// (shell themes that print the directory and git branch after a space), a theme's
// symbol first ("➜  repo git:(main) ✗ kubectl ...", "☹  kubectl ..."),
// "[root@host ~]# systemctl status kubelet",
// "# crictl ps -a", "$ k3s kubectl get pods" (a distribution's kubectl), "PS C:\> kubectl ...", "λ kubectl ..." (cmder), "❯ kubectl ...";
// a powerline theme's prompt, whose segments (path, git branch) end in a separator glyph
// of the fonts' private use area (U+E0B0–U+E0BF: "  ~/src  kubectl ..."), or, as a
// copy without those glyphs keeps it, the working directory alone ("~/src  kubectl
// ..."); and the clients whose output is read as theirs: "$ curl -v http://...".
var rePrompt = regexp.MustCompile(`^\s*(?:\[[^\]]*\][$#]|\S*[$#%>λ❯]|[\w.-]+@[\w.-]+[:\s][^$#%\n]{0,80}\s[$#%]|[\p{So}\p{Sm}][^\n]{0,60}?|PS [^>]*>|.*[\x{E0B0}-\x{E0BF}]|~\S*)\s+((?:sudo\s+)?(?:(?:k3s|k0s|microk8s|minikube)\s+kubectl|microk8s\.kubectl|kubectl|oc|k|crictl|journalctl|docker|systemctl|dmesg|tail|cat|grep|less|podman|nerdctl|ctr|curl|wget|telnet|nc|nslookup|dig|helm)\b.*)$`)

// rePromptAlone is a shell prompt with nothing typed after it ("[root@host dir]# ",
// "user@host:~$"): the output above it has ended.
var rePromptAlone = regexp.MustCompile(`^\s*(?:\[[^\]\s]+@[^\]]*\][$#]|[\w.-]+@[\w.-]+(?::\S*)?[$#%]|[\w.-]+@[\w.-]+[:\s][^$#%\n]{0,80}\s[$#%])\s*$`)

// reBareCommand is a command line pasted without its prompt: "kubectl get pods -n x",
// "kubectl apply -f pod.yaml" (a subcommand that changes or reaches into the cluster,
// then a flag, a TYPE/NAME, a resource type, or a name and a flag: "kubectl run web
// --image=nginx"), "docker pull registry.example/app:v2".
var reBareCommand = regexp.MustCompile(`^\s*((?:sudo\s+)?(?:(?:(?:k3s|k0s|microk8s|minikube)\s+kubectl|microk8s\.kubectl|kubectl|oc|crictl|journalctl|systemctl|dmesg)\s+(?:get|describe|logs|events|ps|pods|inspect|inspectp|images|status|-[-a-zA-Z])|(?:(?:k3s|k0s|microk8s|minikube)\s+kubectl|microk8s\.kubectl|kubectl|oc)\s+(?:apply|create|replace|patch|delete|edit|scale|rollout|run|expose|set|label|annotate|exec|port-forward|cp|auth|top|drain|cordon|uncordon|taint|wait|debug|attach|version|cluster-info|api-resources)(?:\s+(?:-\S|[\w.-]+/[\w.-]+|[a-z0-9][\w.-]*\s+-\S|(?:pods?|po|deployments?|deploy|services?|svc|namespaces?|ns|nodes?|no|configmaps?|cm|secrets?|jobs?|cronjobs?|statefulsets?|sts|daemonsets?|ds|replicasets?|rs|pvc|pv|ingress(?:es)?)\b)|\s*$)|(?:docker|podman|nerdctl)\s+(?:pull|run|push|login)\s+\S).*)$`)

// unbox removes the frame a terminal UI (k9s, tmux panes) draws around lines:
// "│ text │". A frame with a left edge only is a CLI's error box (Terraform's, the Helm
// provider's), whose long message the CLI wrapped over its lines: a line that continues
// the box's previous non-empty line (prev) is indented, so it reads as the rest of that
// message.
func unbox(s, prev string) string {
	t := strings.TrimLeft(s, " `")
	for _, bar := range []string{"│", "┃", "║"} {
		if rest, ok := strings.CutPrefix(t, bar); ok {
			rest = strings.TrimRight(rest, " ")
			twoSided := strings.HasSuffix(rest, bar)
			rest = strings.TrimSuffix(rest, bar)
			out := strings.TrimPrefix(strings.TrimRight(rest, " "), " ")
			if !twoSided && out != "" && !strings.HasPrefix(out, " ") && leftEdgeOnly(prev, bar) {
				out = "  " + out
			}
			if twoSided && out != "" && strings.HasSuffix(rest, " ") && utf8.RuneCountInString(rest) >= minTerminalWidth {
				// A long line the UI padded to its box: it wrapped there at a space,
				// which the rest on the next line must get back (wrap.go).
				out += " "
			}
			return out
		}
	}
	return s
}

// leftEdgeOnly reports whether a line is a non-empty line of a box drawn with bar as its
// left edge only.
func leftEdgeOnly(line, bar string) bool {
	rest, ok := strings.CutPrefix(strings.TrimLeft(line, " `"), bar)
	rest = strings.TrimSpace(rest)
	return ok && rest != "" && !strings.HasSuffix(rest, bar)
}

// splitChunks undoes the usual paste damage (CRLF, markdown fences, prompts, quote and
// bullet prefixes) and splits a file into the outputs it holds.
func splitChunks(data []byte) []chunk {
	text := strings.ReplaceAll(string(data), "\r\n", "\n")
	raw := strings.Split(text, "\n")
	var out []chunk
	cur := chunk{}
	// Every chunk's lines are a run of one array sized once, instead of a slice of
	// their own grown by doubling: on a large paste these were most of the import's
	// memory.
	all := make([]textLine, 0, len(raw))
	flush := func() {
		cur.lines = all[len(all)-len(cur.lines) : len(all) : len(all)]
		if len(cur.lines) > 0 || cur.cmd != "" {
			cur.lines = stripCommonPrefix(cur.lines)
			out = append(out, cur)
		}
		cur = chunk{}
	}
	for i, s := range raw {
		s = strings.TrimSuffix(s, "\r")
		trimmed := strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(s), ">"))
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			// A fence alone (or with a language) ends a chunk; text after it on the same
			// line, or before a closing fence, is output pasted inline.
			inner := strings.TrimSpace(strings.Trim(trimmed, "`~"))
			if inner == "" || !strings.ContainsAny(inner, " \t") {
				if cur.cmd != "" && len(cur.lines) == 0 {
					// A command typed above the fence whose output the fence opens:
					// "$ k logs POD" then ``` and the log.
					continue
				}
				flush()
				continue
			}
			flush()
			all = append(all, textLine{s: inner, n: i + 1})
			cur.lines = all[len(all)-1:]
			if closesFence(trimmed[3:]) {
				flush()
			}
			// Else the fence opened on the output's first line ("```panic: …"), and
			// the lines below it are the rest of that output.
			continue
		}
		if closesFence(trimmed) {
			// The output's last line with the closing fence after it ("… refused```").
			all = append(all, textLine{s: strings.TrimRight(strings.TrimSpace(s), "`~"), n: i + 1})
			cur.lines = all[len(all)-len(cur.lines)-1:]
			flush()
			continue
		}
		if m := rePrompt.FindStringSubmatch(strings.TrimLeft(s, "> ")); m != nil {
			flush()
			cur.cmd = cmdline.Normalize(promptCommand(m[1]))
			continue
		}
		if rePromptAlone.MatchString(strings.TrimLeft(s, "> ")) {
			flush()
			continue
		}
		if m := reBareCommand.FindStringSubmatch(strings.TrimLeft(s, "> ")); m != nil {
			flush()
			cmd, out := labelledCommand(strings.TrimSpace(m[1]))
			cur.cmd = cmdline.Normalize(cmd)
			if out != "" {
				all = append(all, textLine{s: out, n: i + 1})
				cur.lines = all[len(all)-1:]
			}
			continue
		}
		if c := proseCommand(s); c != "" && nextOpensFence(raw, i) {
			// "`kubectl -n NS describe sts/NAME` resulted in:" and the fence with its
			// output: the sentence stays text, and its command is the output's.
			all = append(all, textLine{s: s, n: i + 1})
			cur.lines = all[len(all)-len(cur.lines)-1:]
			flush()
			cur.cmd = cmdline.Normalize(c)
			continue
		}
		prev := ""
		if i > 0 {
			prev = raw[i-1]
		}
		if t := strings.TrimSpace(s); len(t) > 2 && t[0] == '`' && t[len(t)-1] == '`' && strings.Count(t, "`") == 2 {
			// A whole line set off as inline code: the output it quotes.
			s = t[1 : len(t)-1]
		} else if t != "" && strings.Count(t, "`") == 1 && (t[0] == '`' || t[len(t)-1] == '`') {
			// An inline code span a reporter opened on one line and closed on a later
			// one ("`F1216 … Failed to generate …" … "`"): its marks are no part of
			// the output it quotes.
			s = strings.Trim(t, "`")
		}
		all = append(all, textLine{s: unlink(unbox(s, prev)), n: i + 1})
		cur.lines = all[len(all)-len(cur.lines)-1:]
	}
	flush()
	return out
}

// reCommandLabel is a command a reporter names as the label of its output on the same
// line: "kubectl describe pod: `Warning  FailedMount  …`" (words, then a colon and a
// space; no quote or flag value that could hold a colon of its own).
var reCommandLabel = regexp.MustCompile(`^((?:[\w.-]+\s+){1,4}[\w.-]+):\s+(\S.*)$`)

// labelledCommand splits a command line into the command and the output a reporter put
// after it on the same line, taken out of the inline code it is set off as; a plain
// command gives no output.
func labelledCommand(line string) (cmd, out string) {
	m := reCommandLabel.FindStringSubmatch(line)
	if m == nil {
		return line, ""
	}
	out = strings.TrimSpace(m[2])
	if len(out) > 2 && out[0] == '`' && out[len(out)-1] == '`' && strings.Count(out, "`") == 2 {
		out = out[1 : len(out)-1]
	}
	return m[1], out
}

// unlink undoes the links an editor or chat client made of names in a message that
// look like addresses ("[quay.io/org/app:v1](http://quay.io/org/app:v1)", GitHub's
// and Slack's autolinks copied as markdown): the text is the message's, the link is not.
func unlink(s string) string {
	if !strings.Contains(s, "](http") {
		return s
	}
	var b strings.Builder
	for {
		i := strings.Index(s, "](http")
		if i < 0 {
			break
		}
		open := strings.LastIndexByte(s[:i], '[')
		end := strings.IndexByte(s[i:], ')')
		if open < 0 || end < 0 {
			break
		}
		text, target := s[open+1:i], s[i+2:i+end]
		addr := text
		if strings.HasSuffix(text, `\`) && strings.HasSuffix(target, "%5C") {
			// The editor took in the backslash of the quote that closed the address
			// in the paste (a quoted URL's \"): the link's text keeps it, its target
			// encodes it.
			addr, target = strings.TrimSuffix(text, `\`), strings.TrimSuffix(target, "%5C")
		}
		bare := strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(target, "https://"), "http://"), "/")
		if addr == "" || (bare != strings.TrimSuffix(addr, "/") && target != addr) {
			// A link the writer made, its text not its address: kept as written.
			b.WriteString(s[:i+end+1])
			s = s[i+end+1:]
			continue
		}
		b.WriteString(s[:open])
		b.WriteString(text)
		s = s[i+end+1:]
	}
	b.WriteString(s)
	return b.String()
}

// closesFence reports whether a line of text ends with a markdown fence.
func closesFence(s string) bool {
	s = strings.TrimSpace(s)
	return strings.HasSuffix(s, "```") || strings.HasSuffix(s, "~~~")
}

// promptCommand is the command of a prompt line without the right-hand prompt a
// theme prints on the same line (zsh's RPROMPT: an exit status, a time), which starts
// at a glyph of the fonts' private use area, or, where the copy lost the glyphs, after
// the run of spaces that aligns it to the terminal's right margin.
func promptCommand(s string) string {
	if i := strings.IndexFunc(s, func(r rune) bool { return r >= '\uE000' && r <= '\uF8FF' }); i >= 0 {
		s = s[:i]
	}
	if i := strings.Index(s, rightPromptGap); i >= 0 {
		s = s[:i]
	}
	return strings.TrimSpace(s)
}

// rightPromptGap is the padding before a right-hand prompt: no command a user types
// holds a run of spaces this long.
const rightPromptGap = "        "

// quotePrefixes are what mail quoting and markdown lists put before every pasted line.
var quotePrefixes = []string{"> ", ">", "- ", "* ", "• "}

// stripCommonPrefix removes a quote or bullet prefix that every non-blank line carries.
func stripCommonPrefix(lines []textLine) []textLine {
	for _, p := range quotePrefixes {
		all, any := true, false
		for _, l := range lines {
			if strings.TrimSpace(l.s) == "" {
				continue
			}
			any = true
			if !strings.HasPrefix(l.s, p) {
				all = false
				break
			}
		}
		if all && any {
			out := make([]textLine, len(lines))
			for i, l := range lines {
				out[i] = textLine{s: strings.TrimPrefix(l.s, p), n: l.n}
			}
			return out
		}
	}
	return lines
}

// commandNamespace returns the namespace a kubectl command line names, if any.
func commandNamespace(cmd string) string {
	// What a pipe feeds (grep -n, head -n 20) names no namespace.
	cmd, _, _ = strings.Cut(cmd, "|")
	f := strings.Fields(cmd)
	for i, a := range f {
		switch {
		case (a == "-n" || a == "--namespace") && i+1 < len(f):
			return f[i+1]
		case strings.HasPrefix(a, "--namespace="):
			return strings.TrimPrefix(a, "--namespace=")
		case strings.HasPrefix(a, "-n") && len(a) > 2 && !strings.HasPrefix(a, "--"):
			return strings.TrimPrefix(a[2:], "=")
		}
	}
	return ""
}

// detab turns tabs into column gaps: kubectl aligns with spaces, so a tab in a paste is
// an editor's replacement for a run of them.
func detab(s string) string {
	return strings.ReplaceAll(strings.TrimRight(s, " \t"), "\t", "   ")
}

// splitCells splits a table row into at most n cells (all of them when n < 0) at gaps of
// two or more white space characters: kubectl's tab writer pads columns with at least
// two spaces. The last cell keeps its inner gaps.
func splitCells(s string, n int) []string {
	s = strings.TrimSpace(detab(s))
	if n == 0 {
		return nil
	}
	var out []string
	start := 0
	for i := 0; i < len(s); {
		if !isGapSpace(s[i]) {
			i++
			continue
		}
		j := i + 1
		for j < len(s) && isGapSpace(s[j]) {
			j++
		}
		if j-i < 2 {
			i = j
			continue
		}
		if n > 0 && len(out) == n-1 {
			break
		}
		out = append(out, s[start:i])
		start = j
		i = j
	}
	return append(out, s[start:])
}

// isGapSpace is a byte of a column gap: white space as regexp's \s reads it.
func isGapSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'
}

// reAge matches kubectl's human durations: 5s, 2m30s, 3h5m, 2d3h, 2y100d, and the
// placeholders printed for missing times.
var reAge = regexp.MustCompile(`^(\d+[smhdy](\d+[smhd])?|<unknown>|<invalid>|unknown)$`)

// reInterval matches the Age cell of describe's event table: "3m (x5 over 10m)".
var reInterval = regexp.MustCompile(`^(\S+)(?: \(x(\d+) over (\S+)\))?$`)

// reProseCommand is a command a sentence quotes in inline code.
var reProseCommand = regexp.MustCompile("`\\s*((?:(?:k3s|k0s|microk8s|minikube)\\s+kubectl|microk8s\\.kubectl|kubectl|oc|helm|crictl|journalctl)\\s[^`]+?)\\s*`")

// proseCommand is the command a sentence quotes in inline code and introduces the
// output below with (it ends with a colon), "" for any other line or when it quotes
// several.
func proseCommand(s string) string {
	t := strings.TrimSpace(s)
	if !strings.HasSuffix(t, ":") || strings.Count(t, "`") != 2 {
		return ""
	}
	if m := reProseCommand.FindStringSubmatch(t); m != nil {
		return m[1]
	}
	return ""
}

// nextOpensFence reports whether the first non-blank line after line i opens a fence.
func nextOpensFence(raw []string, i int) bool {
	for _, l := range raw[i+1:] {
		t := strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(l), ">"))
		if t == "" {
			continue
		}
		return strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~")
	}
	return false
}
