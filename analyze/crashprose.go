package analyze

import (
	"regexp"
	"slices"
	"strings"
)

// A ticket that says its pod crash-loops and pastes the container's log, with no pod,
// describe or status to show it: the floor reads the log's error line as trouble at
// the runtime stage that no rule explains, and the prose alone reads like whatever
// failure shares its words ("invalid character" like an invalid object). An expert
// reads the two together: the container exits at that error, and the kubelet restarts
// it. That is runtime-crash-exit's finding, said from the log line it rests on.

// reProseCrash is how a reporter says a pod's container keeps crashing.
var reProseCrash = regexp.MustCompile(reProseLoops + `|` + reProseStartFails)

// reProseLoops is how a ticket says a pod crash-loops; reProseStartFails, that it dies
// as it starts ("fails to start", "won't start", "I get below error on kafka startup").
const (
	reProseLoops      = `(?i)\bcrash[- ]?loop|\bcrash(?:es|ed|ing)\b|\bkeeps? (?:on )?(?:crashing|restarting|dying|exiting)\b|\brestarts? (?:constantly|continuously|repeatedly|over and over|every)\b`
	reProseStartFails = `(?i)\b(?:fails?|failed|failing) to (?:start|come up|boot|stand up)\b|\b(?:won't|doesn't|does not|can't|cannot) (?:start|come up)\b|\b(?:error|errors|exception)\b[^.]{0,40}\b(?:on|at|during) (?:\w+ )?start(?:up|ing)?\b`
)

var reSaidLoops = regexp.MustCompile(reProseLoops)

// saidHow is what a ticket's sentence says of the crash: that it crash-loops, or that
// it fails as it starts.
func saidHow(s string) string {
	if reSaidLoops.MatchString(s) {
		return "crash-loops"
	}
	return "fails as it starts"
}

// reLevelFirst is a program's log line that starts with its level ("ERROR Unable to
// initialize config system: …", "[FATAL] …"): output, however much it reads like a
// sentence.
var reLevelFirst = regexp.MustCompile(logTime + `?\[?(?:ERROR|FATAL|PANIC|CRITICAL|SEVERE|Error|Fatal)\]?[:\s]|` + logTime + `\[(?:error|fatal|crit|emerg|alert)\][:\s]`)

// logTime is the time a program's log line starts with, before its level: ISO or
// slashed date and time, with a zone after a space (fluentd's " +0000"), in brackets or
// not, and the "- " Python's logging puts between fields; "[error]" after it is a level
// (nginx's "[emerg]", fluentd's "[error]:") where at a line's start it could be a tag.
const logTime = `^\s*(?:\[?\d{4}[-/]\d\d[-/]\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z| ?[+-]\d\d:?\d\d)?\]?\s+(?:-\s+)?)`

// crashLogFix is what to do about a container that exits at the error its log shows.
const crashLogFix = "Fix what the log reports before the container exits (a setting, a file or a volume's content the program cannot read, " +
	"a dependency it cannot reach); a program that depends on another service should retry rather than exit."

// crashRuleID is the rule whose finding a crash-looping container's log gives.
const crashRuleID = "runtime-crash-exit"

// crashedFromLog is runtime-crash-exit's finding about the one container log line the
// floor left unexplained at the runtime stage, when the ticket's own sentences say the
// pod crash-loops and nothing else in the evidence explains anything; with the index
// of the floor's finding it replaces in extra, or nil. The floor's findings about the
// reporter's sentences are the engine's to drop (restsOnly), as for the described
// reading.
func crashedFromLog(g *Graph, all, extra []*Finding, rules []*Rule) (*Finding, int) {
	for _, f := range all {
		if f.Rule != UnexplainedRule && f.Rule != CatalogRule {
			return nil, -1
		}
	}
	// One program line at fatal level is the exit the ticket shows, beside whatever else
	// its text reads as trouble; else the one floor finding at the runtime stage.
	at := fatalFloor(extra)
	if at < 0 {
		for i, f := range extra {
			if f.Rule != UnexplainedRule || len(f.Evidence) == 0 || namedNode(f) {
				continue
			}
			x := f.Evidence[0].Excerpt
			program := reLevelFirst.MatchString(x) || reErrorLevelLine.MatchString(x) || programLine(x) || errorChain(x) || quotedError(x) != "" ||
				containerLog(f) && lastWords(g, f.Evidence[0])
			if !program && (isProse(x) || reProseCrash.MatchString(x)) || reBulletItem.MatchString(x) {
				// The reporter's own sentence, read as a log beside the log's lines (a
				// line with its level's key is a program's, however it reads).
				continue
			}
			// A program's line at fatal level is its exit (logrus', klog's and zap's Fatal
			// end the process), whatever stage its words suggest ("iscsiadm" is a volume
			// word; the program that checked for it is what stops).
			// A pasted line's stage by a word it holds ("should be an emptyDir
			// mount") is a guess the ticket's crash sentence outweighs; a phrase that
			// says the step for sure, or the catalog's reading, is not.
			_, sure := phraseStage(x)
			guessed := f.Rule == UnexplainedRule && !sure && (f.Stage != StageNode || quotedError(x) != "")
			if f.Stage != StageRuntime && !guessed && !reFatalLevelLine.MatchString(strings.TrimSpace(x)) || at >= 0 {
				return nil, -1
			}
			at = i
		}
	}
	r := ruleByID(rules, crashRuleID)
	if r == nil {
		return nil, -1
	}
	if at < 0 {
		return crashedPodFromLog(g, extra, r)
	}
	var said *Line
	lines := g.Lines()
	for i := range lines {
		l := &lines[i]
		if l.Fragment && reProseCrash.MatchString(l.Text) && !reLevelFirst.MatchString(l.Text) && !programLine(l.Text) && !errorChain(l.Text) {
			said = l
			break
		}
	}
	floor := extra[at]
	logLine := strings.TrimSpace(floor.Evidence[0].Excerpt)
	if q := quotedError(logLine); q != "" {
		// The program's words the reporter's sentence quotes, not the sentence.
		logLine = q
	}
	if said == nil {
		exit := slices.IndexFunc(floor.Evidence, func(e Evidence) bool {
			return programExits(e.Excerpt) || reFatalLevelLine.MatchString(strings.TrimSpace(e.Excerpt))
		})
		if ev := floor.Evidence[0].Excerpt; exit < 0 && floor.Stage == StageRuntime && !reClientRefused.MatchString(ev) &&
			(programLevelLine(ev) || containerLog(floor)) && lastWords(g, floor.Evidence[0]) {
			// A program's log that ends at an error it wrote at its error level
			// (operator-sdk's "failed to create the operator handler: …" and nothing
			// after): those are its last words.
			exit = 0
		}
		if exit < 0 {
			return nil, -1
		}
		// No sentence says the pod crash-loops, and the program says it gave up
		// starting: its process ends there, and its container with it.
		logLine = strings.TrimSpace(floor.Evidence[exit].Excerpt)
		return &Finding{Rule: r.ID, Stage: StageRuntime, Severity: SeverityError, Title: r.Title,
			Subjects: floor.Subjects,
			Evidence: append([]Evidence{floor.Evidence[exit]}, slices.Delete(slices.Clone(floor.Evidence), exit, exit+1)...),
			Cause: "the container's program gives up as it starts, so the container exits (and the kubelet restarts it): " +
				"its error says why: " + quoteText(logLine),
			Remediation: crashLogFix,
			GroupKey:    crashRuleID + "\x00" + logLine,
		}, at
	}
	return &Finding{Rule: r.ID, Stage: StageRuntime, Severity: SeverityError, Title: r.Title,
		Subjects: floor.Subjects,
		Evidence: append(append([]Evidence{}, floor.Evidence...), said.Evidence()),
		Cause: "the container exits soon after it starts, and the kubelet restarts it (the ticket's text says it " + saidHow(said.Text) + "): " +
			"the error its log shows is why: " + quoteText(logLine),
		Remediation: crashLogFix,
		GroupKey:    crashRuleID + "\x00" + logLine,
	}, at
}

// logHead reports whether a line is written the way a program logs: under a time, or at
// a level of its own.
func logHead(s string) bool {
	s = strings.TrimSpace(s)
	return reDatedLine.MatchString(s) || reQuietLevel.MatchString(s) || programLine(s) || reKlogHead.MatchString(s) ||
		strings.HasPrefix(s, "[") && reDatedLine.MatchString(strings.TrimLeft(s, "[")) || reBracketTime.MatchString(s)
}

// reBracketTime is a time in brackets a shell script's log starts with ("[Wed Jan 27
// 13:04:45 UTC 2021]").
var reBracketTime = regexp.MustCompile(`^\[[^\]]*\d\d:\d\d:\d\d[^\]]*\]`)

// reClientRefused is a client's report of a request the API server refused (Helm's
// "Error: UPGRADE FAILED: …", kubectl's "Error from server …"): a log that ends with it
// is a deploy tool's, whose container did not stop for it.
var reClientRefused = regexp.MustCompile(`\bError: (?:UPGRADE|INSTALLATION|ROLLBACK) FAILED\b|\bError from server\b|\berror: unable to recognize\b|\berror validating\b`)

// containerLog reports whether a floor's finding is about a container's log (a file the
// import read as one): its lines are the program's, however they read.
func containerLog(f *Finding) bool {
	return len(f.Subjects) > 0 && f.Subjects[0].Kind == "Container"
}

// lastWords reports whether e cites the last line of a log or pasted text of three
// lines or more: what a program wrote before it stopped.
func lastWords(g *Graph, e Evidence) bool {
	lastEnd, n, logged := 0, 0, false
	lines := g.Lines()
	for i := range lines {
		l := &lines[i]
		if k := l.Kind(); k != TextLog && k != TextText || !l.Fragment {
			continue
		}
		if ev := l.Evidence(); ev.Path == e.Path && ev.Bundle == e.Bundle {
			lastEnd = max(lastEnd, ev.Line, ev.EndLine)
			n++
			logged = logged || logHead(l.Text)
		}
	}
	// A line alone is a quote, not a log that ran and stopped; sentences alone are a
	// reporter's, not a log.
	return n >= 3 && logged && e.Line > 0 && max(e.Line, e.EndLine) == lastEnd
}

// reStartGivenUp is the head of a program's error chain that says it gave up starting:
// "failed to start: daemon creation failed: …", "unable to start manager: …",
// "error starting server: …", an exception's report of it ("[v0.4.6] N.C.CorruptDatabaseException:
// Prowlarr failed to start: …").
var reStartGivenUp = regexp.MustCompile(`(?i)^(?:\[[^\]]*\]\s*)?(?:(?:[\w$]+\.)*[\w$]+(?:Exception|Error):\s)?(?:\w+(?:\s\w+)?:\s)?(?:\w+\s)?(?:failed to (?:start|run|initialize|init)|unable to (?:start|run|initialize)|error (?:starting|running|initializing)|could not (?:start|initialize)|cannot start)\b`)

// programExits reports whether a log line is a program's own account of why it gave up
// starting: an error chain of three links or more, or an exception's report, whose head
// says it failed to start.
func programExits(s string) bool {
	s = strings.Trim(strings.TrimSpace(s), "`")
	return (errorChain(s) || reExceptionHead.MatchString(s)) && reStartGivenUp.MatchString(s)
}

// fatalFloor is the index of the one floor finding of extra (unexplained, or read by
// the catalog alone) that rests on a program's line at fatal level, not a named node's
// journal: the program's exit, whatever else the ticket's text shows (a table of
// versions where one "fails"); -1 when none or several do.
func fatalFloor(extra []*Finding) int {
	at := -1
	for i, f := range extra {
		if f.Rule != UnexplainedRule && f.Rule != CatalogRule || len(f.Evidence) == 0 || !reFatalLevelLine.MatchString(strings.TrimSpace(f.Evidence[0].Excerpt)) {
			continue
		}
		if namedNode(f) {
			continue
		}
		if at >= 0 {
			return -1
		}
		at = i
	}
	return at
}

// namedNode reports whether a floor finding is about a node the evidence names: its
// lines are the node's journal, whose programs are node agents (the runtime, the
// kubelet), not a container's.
func namedNode(f *Finding) bool {
	return len(f.Subjects) > 0 && f.Subjects[0].Kind == "Node" && f.Subjects[0].Name != UnknownSubject
}

// ticketTextOnly reports whether a floor's finding rests only on pasted text no
// component is known to print and no program wrote at a level: about no pod, read by
// no catalog entry, no line with a level's key.
func ticketTextOnly(f *Finding) bool {
	if f.Rule != UnexplainedRule || len(f.Catalog) > 0 || len(f.Pods()) > 0 || len(f.Evidence) == 0 {
		return false
	}
	for _, e := range f.Evidence {
		if reErrorLevelLine.MatchString(strings.TrimSpace(e.Excerpt)) {
			return false
		}
	}
	return true
}

// reportersOnly reports whether a floor's finding rests only on the reporter's
// sentences: the one at said (that the pod crash-loops), lines that read as prose, or
// the items of a list they wrote.
func reportersOnly(f *Finding, said string) bool {
	if f.Rule != UnexplainedRule || len(f.Evidence) == 0 {
		return false
	}
	for _, e := range f.Evidence {
		if e.placeKey() != said && (!isProse(e.Excerpt) && !reBulletItem.MatchString(e.Excerpt) || reLevelFirst.MatchString(e.Excerpt)) {
			return false
		}
	}
	return true
}

// reErrorLevelLine is a program's log line at error severity or worse, by its own level:
// logfmt's, JSON's, klog's E and F, C++ glog's (its date with the year: "E20221021
// 06:17:08.173208 1 dfly_main.cc:127] …"), a leading ERROR or FATAL.
var reErrorLevelLine = regexp.MustCompile(`\blevel=(?:error|fatal|panic|critical|crit)\b|\blvl=(?:eror|crit)\b|"level":\s*"(?:error|fatal|panic|critical)"|^\s*[EF]\d{4} \d|^\s*[EF]\d{8} \d\d:\d\d:\d\d\.\d+\s+\d+ [\w.-]+:\d+\] |` + logTime + `?\[?(?:ERROR|FATAL|PANIC|CRITICAL)\b|` + logTime + `\[(?:error|fatal|crit|emerg|alert)\]|` + zerologTime + `(?:ERR|FTL|PNC)\s`)

// zerologTime is the time zerolog's console writer prints before its three-letter level
// ("2024-05-15T10:27:58.127Z ERR …"), after the container's name when kubectl logs
// --prefix or a collector put it there.
const zerologTime = `^\s*(?:[\w.-]+\s+)?\d{4}-\d\d-\d\dT[\d:.]+(?:Z|[+-]\d\d:?\d\d)?\s+`

// programLevelLine reports whether a line is a program's log line at error severity or
// worse by a level it writes itself, not by klog's header (the node agents' own).
func programLevelLine(s string) bool {
	s = strings.TrimSpace(s)
	return (reErrorLevelLine.MatchString(s) || reTimedLevel.MatchString(s)) && !reKlogHead.MatchString(s)
}

// quotedError is the program's error a reporter's sentence quotes in a code span ("the
// pods enter a crash loop due to `|ERRO|CTL|main.main: Failed to initialize -
// error=Unknown container runtime`"), the longest such span; "" when the line is no
// sentence or quotes none.
func quotedError(s string) string {
	if !isProse(s) || strings.Count(s, "`") < 2 {
		return ""
	}
	best := ""
	parts := strings.Split(s, "`")
	last := len(parts) - 1
	if len(parts)%2 == 0 && strings.HasSuffix(s, "…") {
		// An excerpt cut inside the span: the span runs to the cut.
		last = len(parts)
	}
	for i := 1; i < last; i += 2 {
		q := strings.TrimSpace(strings.TrimSuffix(parts[i], "…"))
		before := strings.ToLower(parts[i-1][max(0, len(parts[i-1])-30):])
		if len(q) >= 20 && len(q) > len(best) && (looksLikeError(q) || reNamesError.MatchString(before)) {
			best = q
		}
	}
	return best
}

// reNamesError is how a sentence names the output it quotes next: "because of this
// error", "fails with", "the log says".
var reNamesError = regexp.MustCompile(`\b(?:error|exception|message|fails? with|failed with|log says|logs say)\b[^a-z]*$`)

// programLine reports whether a line is a program's by its own form: at an error level
// it wrote (programLevelLine), the head of an exception's report, or Perl's die.
func programLine(s string) bool {
	return programLevelLine(s) || reExceptionHead.MatchString(strings.TrimSpace(s)) || rePerlDie.MatchString(s)
}

// rePerlDie is how Perl ends a die's or a warn's message that has no newline of its own
// (Perl_mess: " at FILE line N.", with the last filehandle read after it): the
// interpreter's words, however much the message before them reads like a sentence.
var rePerlDie = regexp.MustCompile(` at \S+ line \d+(?:, <[^>]*> (?:line|chunk) \d+)?\.\s*$`)

var reKlogHead = regexp.MustCompile(`^[IWEF]\d{4} \d`)

// reFatalLevelLine is such a line at fatal severity.
var reFatalLevelLine = regexp.MustCompile(`\blevel=(?:fatal|panic|crit)\b|\blvl=crit\b|"level":\s*"(?:fatal|panic)"|^\s*F\d{4} \d|^\s*F\d{8} \d\d:\d\d:\d\d\.\d+\s+\d+ [\w.-]+:\d+\] |` + logTime + `?\[?(?:FATAL|PANIC)\b|` + logTime + `\[(?:fatal|emerg|alert)\]|` + zerologTime + `(?:FTL|PNC)\s`)

// crashedPodFromLog is runtime-crash-exit's finding about the one pod the floor left
// unexplained in CrashLoopBackOff (a get row shows it, with no exit code or reason),
// from the error line a program's log in the evidence ends with: the last at fatal
// severity, else the last at error. With the index of the pod's floor finding, or nil.
func crashedPodFromLog(g *Graph, extra []*Finding, r *Rule) (*Finding, int) {
	at := -1
	for i, f := range extra {
		if f.Rule != UnexplainedRule || f.Stage != StageRuntime || !strings.Contains(f.Cause, "CrashLoopBackOff") || len(f.Pods()) != 1 {
			continue
		}
		if at >= 0 {
			return nil, -1
		}
		at = i
	}
	if at < 0 {
		return nil, -1
	}
	var last, fatal *Line
	lines := g.Lines()
	for i := range lines {
		l := &lines[i]
		if !l.Fragment || !reErrorLevelLine.MatchString(l.Text) {
			continue
		}
		last = l
		if reFatalLevelLine.MatchString(l.Text) {
			fatal = l
		}
	}
	if fatal != nil {
		last = fatal
	}
	if last == nil {
		return nil, -1
	}
	pod := extra[at]
	logLine := strings.TrimSpace(last.Text)
	return &Finding{Rule: r.ID, Stage: StageRuntime, Severity: SeverityError, Title: r.Title,
		Subjects: pod.Subjects,
		Evidence: append([]Evidence{last.Evidence()}, pod.Evidence...),
		Cause: "the container exits soon after it starts, and the kubelet restarts it (CrashLoopBackOff): " +
			"the error the program's log shows is why: " + quoteText(logLine),
		Remediation: crashLogFix,
		GroupKey:    crashRuleID + "\x00" + logLine,
	}, at
}

// reBulletItem is an item of a Markdown list a reporter wrote ("- image:v2.275.1 or latest
// (FAILS)"): their account of what they tried, not a program's line.
var reBulletItem = regexp.MustCompile(`^\s*[-*+] \S`)

// reProseInit is how a ticket says the failing container is an init container: "the
// init container", "initcontainer", "initContainers", "goes into init:CrashLoopBackOff".
var reProseInit = regexp.MustCompile(`(?i)\binit[- ]?containers?\b|\binit:(?:CrashLoopBackOff|Error)\b`)

// reInitKey is a manifest's initContainers key: the pod has init containers, which says
// nothing of which container fails.
var reInitKey = regexp.MustCompile(`^\s*-?\s*"?initContainers"?\s*:`)

// initRuleID is the rule whose finding an init container's failure is.
const initRuleID = "start-init-container-failed"

// initFromProse makes a crash read from the ticket's log lines or sentences (no pod of
// the evidence shows its containers' statuses) the init container's failure when the
// ticket's sentences say the failing container is an init container: the pod's app
// containers never start, which is the start stage's trouble, not the runtime's.
func initFromProse(g *Graph, all, extra []*Finding, rules []*Rule) {
	r := ruleByID(rules, initRuleID)
	if r == nil {
		return
	}
	// A floor's line is the init container's only when nothing a rule or a signature
	// knows is in the evidence.
	floorDone := slices.ContainsFunc(all, func(f *Finding) bool { return f.Rule != UnexplainedRule && f.Rule != CatalogRule })
	var said *Line
	lines := g.Lines()
	for i := range lines {
		if l := &lines[i]; l.Fragment && reProseInit.MatchString(l.Text) && !reLevelFirst.MatchString(l.Text) && !reErrorLevelLine.MatchString(l.Text) && !reInitKey.MatchString(l.Text) {
			said = l
			break
		}
	}
	if said == nil {
		return
	}
	// A signature's reading of a program's failure at run (a chown the volume refuses,
	// a file it may not write) is the init container's too: the same words, printed by
	// the container the ticket says is the init container. Only roots are taken, and
	// only what the ticket's lines show, not a pod's structured status.
	var runs []*Finding
	for _, f := range all {
		if f.Root && f.signature && f.Stage == StageRuntime && len(f.Evidence) > 0 && !restsOn(f, said) &&
			(f.sig == nil || !ownInitFailure[f.sig.ID]) {
			runs = append(runs, f)
		}
	}
	for _, f := range slices.Concat(extra, runs) {
		if slices.ContainsFunc(f.Pods(), func(ref ObjectRef) bool {
			p := g.FindPod(ref.Namespace, ref.Name)
			return p != nil && len(p.Obj.Status.InitContainerStatuses)+len(p.Obj.Status.ContainerStatuses) > 0
		}) {
			continue
		}
		switch {
		case f.Rule == crashRuleID, f.signature && f.Stage == StageRuntime:
		case (f.Rule == UnexplainedRule || f.Rule == CatalogRule) && !floorDone && len(f.Evidence) > 0 && f.Evidence[0].placeKey() != said.Evidence().placeKey() &&
			!isProse(f.Evidence[0].Excerpt) && looksLikeError(f.Evidence[0].Excerpt):
			// The ticket's first error line no component is known to print, or one
			// the catalog places elsewhere: what the init container printed ("The logs
			// for the init container show: Error: unknown command \"init\" for
			// \"argoexec\"").
			floorDone = true
		default:
			continue
		}
		f.Rule, f.Stage, f.Title = r.ID, StageStart, r.Title
		f.Cause = "an init container fails, so the pod's app containers never start (the ticket's text says the failing container is an init container): " + f.Cause
		f.Evidence = append(f.Evidence, said.Evidence())
		f.GroupKey = initRuleID + "\x00" + f.GroupKey
	}
}

// ownInitFailure are the run failures an init container reports under their own rule
// (start-init-container-failed's doc): a program that cannot start at all (a shared
// library the loader does not find, a script's CR line ending, a binary that refuses
// the command or flag it was given) and the memory kills.
var ownInitFailure = map[string]bool{
	"runtime-crash-exit-shared-library-missing": true, "runtime-crash-exit-crlf-script": true, "runtime-flag-not-defined": true,
	"runtime-oom-killed-message": true, "runtime-jvm-out-of-memory": true, "runtime-node-heap-oom": true,
	"runtime-sigkill-exit-137": true,
}

// restsOn reports whether a finding's first evidence is the line l.
func restsOn(f *Finding, l *Line) bool {
	return len(f.Evidence) > 0 && f.Evidence[0].placeKey() == l.Evidence().placeKey()
}
