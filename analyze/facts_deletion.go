package analyze

import (
	"path"
	"regexp"
	"strconv"
	"strings"
	"time"

	"sigs.k8s.io/yaml"
)

// What a pasted, timed deletion shows: `time kubectl delete pod NAME` prints kubectl's
// confirmation, then the shell's elapsed time. kubectl delete waits until the pod is
// gone, so the time covers the kubelet stopping its containers: a container that does
// not stop on SIGTERM holds the deletion for the whole grace period.

// TimedDeletion is a pod's deletion with the time it took.
type TimedDeletion struct {
	Pod string
	// Object is the deleted pod when the evidence holds a pod of that name.
	Object   *Pod
	Took     time.Duration
	Evidence []Evidence
}

// kubectl's confirmation (k8s.io/kubectl/pkg/cmd/delete, PrintObj with the operation
// "deleted": `pod "NAME" deleted`, since 1.32 `pod "NAME" deleted from NS namespace`),
// and the elapsed time bash's and zsh's time keyword print.
var (
	rePodDeleted = regexp.MustCompile(`^\s*pod\s+"([^"]+)"\s+deleted\b`)
	reBashReal   = regexp.MustCompile(`^\s*real\s+(?:(\d+)m)?(\d+(?:\.\d+)?)s\s*$`)
	reZshTotal   = regexp.MustCompile(`kubectl .*delete .*\s(\d+(?:\.\d+)?) total$`)
)

// timeLookahead is how many lines below kubectl's confirmation the elapsed time is
// looked for.
const timeLookahead = 4

// TimedDeletions lists the pasted pod deletions whose elapsed time the paste shows.
func (v *View) TimedDeletions() []TimedDeletion {
	if !v.Has(Fragments) {
		return nil
	}
	var out []TimedDeletion
	for _, f := range v.g.fragments {
		for i, s := range f.lines {
			m := rePodDeleted.FindStringSubmatch(s)
			if m == nil {
				continue
			}
			for j := i + 1; j < len(f.lines) && j <= i+timeLookahead; j++ {
				took, ok := elapsed(f.lines[j])
				if !ok {
					continue
				}
				var obj *Pod
				for _, p := range v.Pods() {
					if p.Obj.Name == m[1] {
						obj = p
					}
				}
				out = append(out, TimedDeletion{Pod: m[1], Object: obj, Took: took, Evidence: []Evidence{
					f.loc.Lines(i+1, 0).Evidence(s, time.Time{}), f.loc.Lines(j+1, 0).Evidence(f.lines[j], time.Time{})}})
				break
			}
		}
	}
	return out
}

// elapsed reads a shell's elapsed time: bash's "real 0m41.459s", zsh's "... 41.459 total".
func elapsed(s string) (time.Duration, bool) {
	if m := reBashReal.FindStringSubmatch(s); m != nil {
		min, _ := strconv.Atoi(m[1])
		sec, err := strconv.ParseFloat(m[2], 64)
		if err != nil {
			return 0, false
		}
		return time.Duration(min)*time.Minute + time.Duration(sec*float64(time.Second)), true
	}
	if m := reZshTotal.FindStringSubmatch(s); m != nil {
		sec, err := strconv.ParseFloat(m[1], 64)
		if err != nil {
			return 0, false
		}
		return time.Duration(sec * float64(time.Second)), true
	}
	return 0, false
}

// PastedCommand is a container command pasted alone, as a YAML line of a pod spec:
// `command: ["/bin/bash", "-c", "sleep 3600"]`.
type PastedCommand struct {
	Argv     []string
	Evidence Evidence
}

var rePastedCommand = regexp.MustCompile(`^\s*-?\s*command:\s*\[.*\]\s*$`)

// PastedCommands lists the container commands pasted as flow-style YAML lines.
func (v *View) PastedCommands() []PastedCommand {
	if !v.Has(Fragments) {
		return nil
	}
	var out []PastedCommand
	for _, f := range v.g.fragments {
		for i, s := range f.lines {
			if !rePastedCommand.MatchString(s) {
				continue
			}
			var doc struct {
				Command []string `json:"command"`
			}
			line := strings.TrimPrefix(strings.TrimSpace(s), "- ")
			if yaml.Unmarshal([]byte(line), &doc) != nil || len(doc.Command) == 0 {
				continue
			}
			out = append(out, PastedCommand{Argv: doc.Command, Evidence: f.loc.Lines(i+1, 0).Evidence(s, time.Time{})})
		}
	}
	return out
}

// PID1IgnoresSIGTERM reports whether a command leaves the container's PID 1 without a
// SIGTERM handler, and says which process that is: a shell run as `sh -c SCRIPT` (or
// bash, ash, dash, zsh) whose script does not trap TERM, or sleep, which a shell execs
// or which is the command itself. The kernel delivers to PID 1 no signal it has no
// handler for, and a shell waiting on a foreground child does not run a trap until the
// child exits, so such a container stops only at SIGKILL.
func PID1IgnoresSIGTERM(argv []string) (string, bool) {
	if len(argv) == 0 {
		return "", false
	}
	if path.Base(argv[0]) == "sleep" {
		return "sleep", true
	}
	if len(argv) < 3 || argv[1] != "-c" {
		return "", false
	}
	shell := path.Base(argv[0])
	switch shell {
	case "sh", "bash", "ash", "dash", "zsh":
	default:
		return "", false
	}
	script := strings.Join(argv[2:], " ")
	if strings.Contains(script, "trap ") {
		return "", false
	}
	last := script
	if i := strings.LastIndexAny(script, ";&|\n"); i >= 0 {
		last = script[i+1:]
	}
	if rest, ok := strings.CutPrefix(strings.TrimSpace(last), "exec "); ok {
		if f := strings.Fields(rest); len(f) > 0 && path.Base(f[0]) == "sleep" {
			return "sleep", true
		}
		return "", false
	}
	if f := strings.Fields(last); len(f) > 0 && f[0] == "sleep" {
		return shell + " (or the sleep it execs as its only command)", true
	}
	return shell, true
}
