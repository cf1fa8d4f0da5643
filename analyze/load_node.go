package analyze

import (
	"fmt"
	"strings"
	"unsafe"

	"sigs.k8s.io/yaml"

	"podflow.dev/podflow/bundle"
)

// KubeletConfig is a node's effective kubelet configuration, as collected.
type KubeletConfig struct {
	Node string
	Loc  Location
	// Config is the decoded document; kubelet /configz wraps it in "kubeletconfig".
	Config map[string]any
}

// ContainerLog is the log of one container instance, current or previous.
type ContainerLog struct {
	Namespace string
	Pod       string
	Container string
	Previous  bool
	Loc       Location
	text      string
}

// Text is the whole log.
func (c *ContainerLog) Text() string { return c.text }

// Tail returns the last n lines, with the location of that range.
func (c *ContainerLog) Tail(n int) ([]string, Location) {
	text := strings.TrimRight(c.text, "\n")
	if text == "" {
		return nil, c.Loc
	}
	lines := strings.Split(text, "\n")
	first := 0
	if len(lines) > n {
		first = len(lines) - n
	}
	return lines[first:], c.Loc.Lines(first+1, len(lines))
}

// Find returns the first line containing substr, with its location.
func (c *ContainerLog) Find(substr string) (string, Location, bool) {
	i := strings.Index(c.text, substr)
	if i < 0 {
		return "", Location{}, false
	}
	start := strings.LastIndexByte(c.text[:i], '\n') + 1
	end := strings.IndexByte(c.text[i:], '\n')
	if end < 0 {
		end = len(c.text)
	} else {
		end += i
	}
	return c.text[start:end], c.Loc.Lines(strings.Count(c.text[:start], "\n")+1, 0), true
}

// unparsedLine is a journal line no journal format reads (a calico agent's, one cut by
// a paste), kept for the facts layer.
type unparsedLine struct {
	node string
	loc  Location
	text string
}

// fragmentFile is one block of evidence an import could not attribute, line by line.
type fragmentFile struct {
	kind  TextKind
	loc   Location
	lines []string
}

func logKey(ns, pod, container string, previous bool) string {
	return fmt.Sprintf("%s/%s/%s/%t", ns, pod, container, previous)
}

// bytesString views immutable bundle bytes as a string without copying: journals run to
// hundreds of megabytes, and every entry's message and fields point into them. Bundle
// contents are never modified after loading.
func bytesString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// reserveJournal sizes the entry slice once from the line counts of every kubelet
// journal: growing it by appends would copy hundreds of megabytes over and over.
func (l *loader) reserveJournal() {
	lines := 0
	for _, lb := range l.bundles {
		for _, name := range lb.b.Names() {
			if info := bundle.ParsePath(name); info.Area == "node" && info.NodeFile == bundle.NodeKubeletLog {
				n, _ := lb.b.CountNewlines(name) // listed by Names, so present
				lines += n + 1
			}
		}
	}
	l.g.journal = make([]JournalEntry, 0, lines)
}

func (l *loader) loadNodeAndLogs(lb *loadedBundle) {
	for _, name := range lb.b.Names() {
		if l.ctx.Err() != nil {
			return
		}
		info := bundle.ParsePath(name)
		switch info.Area {
		case "log":
			data, _ := lb.b.Take(name) // listed by Names, so present; read once
			l.g.present[ContainerLogs] = true
			c := &ContainerLog{Namespace: info.Namespace, Pod: info.Pod, Container: info.Container,
				Previous: info.Previous, Loc: l.loc(lb, name), text: bytesString(data)}
			l.g.logs[logKey(c.Namespace, c.Pod, c.Container, c.Previous)] = c
			pk := c.Namespace + "/" + c.Pod
			l.g.logsByPod[pk] = append(l.g.logsByPod[pk], c)
		case "node":
			l.loadNodeFile(lb, name, info)
		case "fragment":
			data, _ := lb.b.Take(name) // listed by Names, so present; read once
			l.g.present[Fragments] = true
			kind := map[string]TextKind{bundle.FragmentLog: TextLog, bundle.FragmentJournal: TextJournal, bundle.FragmentText: TextText}[info.Fragment]
			text := strings.TrimRight(strings.ReplaceAll(bytesString(data), "\r\n", "\n"), "\n")
			l.g.fragments = append(l.g.fragments, &fragmentFile{kind: kind, loc: l.loc(lb, name),
				lines: strings.Split(text, "\n")})
		}
	}
}

func (l *loader) loadNodeFile(lb *loadedBundle, name string, info bundle.PathInfo) {
	data, _ := lb.b.Take(name) // listed by Names, so present; read once
	src := &sourceFile{at: l.loc(lb, name), path: name, node: info.Node}
	l.log.WithField("file", name).Trace("loading node evidence")
	switch {
	case info.NodeFile == bundle.NodeKubeletLog:
		l.g.present[KubeletJournal] = true
		l.loadJournal(lb, src, data, true)
	case info.NodeFile == bundle.NodeRuntimeLog:
		l.g.present[RuntimeJournal] = true
		l.loadJournal(lb, src, data, false)
	case info.NodeFile == bundle.NodeCRIPods:
		l.g.present[CRI] = true
		l.g.criNodes[info.Node] = true
		l.loadCRIPods(lb, src, data)
	case info.NodeFile == bundle.NodeCRIContainers:
		l.g.present[CRI] = true
		l.g.criNodes[info.Node] = true
		l.loadCRIContainers(lb, src, data)
	case name == bundle.NodeCRIInspectPath(info.Node, criIDFromPath(name)):
		l.loadCRIInspect(lb, src, data)
	case name == bundle.NodeCRIInspectPodPath(info.Node, criIDFromPath(name)):
		l.loadCRIInspectPod(lb, src, data)
	case info.NodeFile == bundle.NodeDmesg:
		l.g.present[Dmesg] = true
		l.g.dmesgNode[info.Node] = true
		l.loadDmesg(src, data)
	case info.NodeFile == bundle.NodeKubeletConfig:
		l.g.present[KubeletConfigs] = true
		var cfg map[string]any
		if err := yaml.Unmarshal(data, &cfg); err != nil {
			l.warn(lb, name, 0, "", "not a readable kubelet config: %v", err)
			return
		}
		if inner, ok := cfg["kubeletconfig"].(map[string]any); ok {
			cfg = inner
		}
		l.g.kubeletConfigs[info.Node] = &KubeletConfig{Node: info.Node, Loc: l.loc(lb, name), Config: cfg}
	}
}

func criIDFromPath(name string) string {
	base := name[strings.LastIndexByte(name, '/')+1:]
	return strings.TrimSuffix(base, ".json")
}

// loadJournal parses a journal line by line. Entries keep their text in the bundle's
// memory; unreadable lines are counted into one warning per file.
func (l *loader) loadJournal(lb *loadedBundle, src *sourceFile, data []byte, kubelet bool) {
	text := bytesString(data)
	// A bundle read once hands over its only copy of the journal: entries then keep
	// their text in l.text and the file's bytes go once parsed. Otherwise the bundle
	// keeps the bytes anyway and entries point into them.
	compact := lb.b.ReadsOnce()
	ref := l.g.collectedAt
	var entries []JournalEntry
	if kubelet {
		entries = l.g.journal
	} else {
		// Sized from the line count, like the kubelet journal: growing by appends would
		// copy a node's whole runtime journal over and over.
		entries = make([]JournalEntry, 0, strings.Count(text, "\n")+1)
	}
	bad, firstBad, firstProblem := 0, 0, ""
	lineNo := int32(0)
	for len(text) > 0 {
		nl := strings.IndexByte(text, '\n')
		var line string
		if nl < 0 {
			line, text = text, ""
		} else {
			line, text = text[:nl], text[nl+1:]
		}
		lineNo++
		e, kind, problem := ParseJournalLine(line, ref)
		switch kind {
		case LineContinuation:
			if n := len(entries); n > 0 && entries[n-1].file == src {
				entries[n-1].endLine = lineNo
			}
			continue
		case LineMarker:
			continue
		}
		if problem != nil {
			bad++
			if firstBad == 0 {
				firstBad, firstProblem = int(lineNo), problem.Error()
			}
		}
		if kind == LineGarbage {
			// The rules cannot read it, but it is still evidence of its node: the facts
			// layer keeps it as text.
			kept := line
			if compact {
				kept = l.text.copy(line)
			}
			l.g.unparsed = append(l.g.unparsed, unparsedLine{node: src.node, loc: src.at.Lines(int(lineNo), 0), text: kept})
			continue
		}
		if compact {
			l.text.keep(&e.Entry, line)
		}
		e.file, e.line = src, lineNo
		entries = append(entries, e)
	}
	if bad > 0 {
		msg := fmt.Sprintf("%d unreadable line(s), first at line %d: %s", bad, firstBad, firstProblem)
		l.warn(lb, src.path, firstBad, "", "%s", msg)
	}
	if kubelet {
		l.g.journal = entries
	} else {
		if prev := l.g.runtimeJournal[src.node]; len(prev) > 0 {
			entries = append(prev, entries...)
		}
		l.g.runtimeJournal[src.node] = entries
	}
}

// indexJournal links kubelet journal entries to pods by pod="ns/name", pods=[...] and
// podUID=, in one pass.
func (g *Graph) indexJournal() {
	for i := range g.journal {
		e := &g.journal[i]
		idx := int32(i)
		g.journalByNode[e.file.node] = append(g.journalByNode[e.file.node], idx)
		if e.FieldText == "" {
			continue
		}
		scanFields(e.FieldText, func(k, raw string) bool {
			switch k {
			case "pod":
				v := fieldValue(raw)
				g.journalByPod[v] = append(g.journalByPod[v], idx)
			case "pods":
				for _, v := range ListValue(raw) {
					g.journalByPod[v] = append(g.journalByPod[v], idx)
				}
			case "podUID":
				v := fieldValue(raw)
				g.journalByUID[v] = append(g.journalByUID[v], idx)
			}
			return true
		})
	}
}
