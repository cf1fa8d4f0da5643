package analyze

import (
	"regexp"
	"strconv"
	"strings"
	"time"
)

// OOMKill is one kernel OOM kill from a node's dmesg: which process, in which cgroup
// (and so which pod and container), and the kernel's own words.
type OOMKill struct {
	Node string
	Loc  Location
	// Time is set when dmesg printed wall-clock times; Uptime (seconds since boot) otherwise.
	Time    time.Time
	Uptime  float64
	PID     int
	Process string
	// Memcg is the cgroup whose limit was hit; empty for a node-wide OOM.
	Memcg       string
	PodUID      string
	ContainerID string
	// Text is the "Killed process …" line, or the oom-kill line when that is all there
	// is, or the "… invoked oom-killer" line when the paste holds no kill line (Process
	// is then unknown: the invoking task is not the one killed).
	Text string
}

// Evidence cites the kernel's line.
func (o *OOMKill) Evidence() Evidence { return o.Loc.Evidence(o.Text, o.Time) }

var (
	// The kernel's lines (mm/oom_kill.c): "oom-kill:constraint=…,oom_memcg=…,task_memcg=…,
	// task=NAME,pid=PID,uid=UID" and "Memory cgroup out of memory: Killed process PID (NAME) …"
	// or, node-wide, "Out of memory: Killed process PID (NAME) …".
	reKilled     = regexp.MustCompile(`Killed process (\d+) \(([^)]*)\)`)
	rePodUID     = regexp.MustCompile(`pod([0-9a-f]{8}[-_][0-9a-f]{4}[-_][0-9a-f]{4}[-_][0-9a-f]{4}[-_][0-9a-f]{12})`)
	reContID     = regexp.MustCompile(`([0-9a-f]{64})`)
	dmesgLayouts = []string{"2006-01-02T15:04:05Z07:00", "2006-01-02T15:04:05Z0700"}
)

func (l *loader) loadDmesg(src *sourceFile, data []byte) {
	text := bytesString(data)
	byPID := map[int]*OOMKill{}
	var invoked *OOMKill
	lineNo := 0
	for len(text) > 0 {
		nl := strings.IndexByte(text, '\n')
		var line string
		if nl < 0 {
			line, text = text, ""
		} else {
			line, text = text[:nl], text[nl+1:]
		}
		lineNo++
		if strings.Contains(line, " invoked oom-killer:") {
			// The first line of every OOM kill; the kill itself follows unless the paste
			// cut it (or an old kernel printed it in a form read below).
			if invoked != nil {
				l.g.ooms = append(l.g.ooms, invoked)
			}
			t, uptime, msg := dmesgPrefix(line)
			invoked = &OOMKill{Node: src.node, Loc: Location{Bundle: src.bundle, Path: src.path, Line: lineNo}, Time: t, Uptime: uptime,
				Text: strings.TrimSpace(msg)}
			continue
		}
		if !strings.Contains(line, "oom-kill:") && !strings.Contains(line, "Killed process") {
			continue
		}
		invoked = nil
		t, uptime, msg := dmesgPrefix(line)
		loc := Location{Bundle: src.bundle, Path: src.path, Line: lineNo}
		if i := strings.Index(msg, "oom-kill:"); i >= 0 {
			o := &OOMKill{Node: src.node, Loc: loc, Time: t, Uptime: uptime, Text: msg[i:]}
			for _, kv := range strings.Split(msg[i+len("oom-kill:"):], ",") {
				k, v, _ := strings.Cut(kv, "=")
				switch k {
				case "task":
					o.Process = v
				case "pid":
					o.PID, _ = strconv.Atoi(v)
				case "task_memcg":
					o.Memcg = v
				case "oom_memcg":
					if o.Memcg == "" {
						o.Memcg = v
					}
				}
			}
			linkMemcg(o)
			byPID[o.PID] = o
			l.g.ooms = append(l.g.ooms, o)
			continue
		}
		m := reKilled.FindStringSubmatch(msg)
		if m == nil {
			continue
		}
		pid, _ := strconv.Atoi(m[1])
		if o, ok := byPID[pid]; ok && pid != 0 {
			o.Text = strings.TrimSpace(msg)
			o.Loc.EndLine = lineNo
			delete(byPID, pid)
			continue
		}
		l.g.ooms = append(l.g.ooms, &OOMKill{Node: src.node, Loc: loc, Time: t, Uptime: uptime,
			PID: pid, Process: m[2], Text: strings.TrimSpace(msg)})
	}
	if invoked != nil {
		l.g.ooms = append(l.g.ooms, invoked)
	}
}

func linkMemcg(o *OOMKill) {
	if m := rePodUID.FindStringSubmatch(o.Memcg); m != nil {
		o.PodUID = strings.ReplaceAll(m[1], "_", "-")
	}
	if m := reContID.FindAllString(o.Memcg, -1); len(m) > 0 {
		o.ContainerID = m[len(m)-1]
	}
}

// dmesgPrefix strips the time prefix of dmesg ("[ 123.456]", "[Sun Nov 29 19:00:01 2026]",
// ISO with --time-format iso) or of journalctl -k ("2026-…+0000 host kernel: ").
func dmesgPrefix(line string) (time.Time, float64, string) {
	if strings.HasPrefix(line, "[") {
		end := strings.IndexByte(line, ']')
		if end < 0 {
			return time.Time{}, 0, line
		}
		inner, rest := strings.TrimSpace(line[1:end]), strings.TrimSpace(line[end+1:])
		if f, err := strconv.ParseFloat(inner, 64); err == nil {
			return time.Time{}, f, rest
		}
		if t, err := time.Parse("Mon Jan _2 15:04:05 2006", inner); err == nil {
			return t, 0, rest
		}
		return time.Time{}, 0, rest
	}
	if len(line) > 0 && isDigit(line[0]) {
		sp := strings.IndexByte(line, ' ')
		if sp > 0 {
			ts := strings.Replace(line[:sp], ",", ".", 1)
			for _, layout := range dmesgLayouts {
				if t, err := time.Parse(layout, ts); err == nil {
					rest := line[sp+1:]
					if i := strings.Index(rest, "kernel: "); i >= 0 {
						rest = rest[i+len("kernel: "):]
					}
					return t, 0, rest
				}
			}
		}
	}
	return time.Time{}, 0, line
}
