package rules

import (
	"fmt"
	"regexp"
	"strings"

	"podflow.dev/podflow/analyze"
)

// StartCommandNotFound finds containers whose command does not exist in the image.
var StartCommandNotFound = &analyze.Rule{
	ID:       "start-command-not-found",
	Stage:    analyze.StageStart,
	Title:    "container command not found in the image",
	Doc:      startCommandNotFoundDoc,
	Severity: analyze.SeverityError,
	Needs: analyze.Needs{
		Required: []analyze.Kind{analyze.Pods},
		Optional: []analyze.Kind{analyze.Events, analyze.KubeletJournal, analyze.CRI, analyze.ContainerLogs,
			analyze.ReplicaSets, analyze.Jobs},
	},
	Run: startCommandNotFound,
}

const startCommandNotFoundDoc = `The runtime created the container but could not start its process, because the
executable named by the container's command (or the image's entrypoint) does not exist:
runc reports "exec: "/app/server": stat /app/server: no such file or directory" or
"exec: "server": executable file not found in $PATH". The container status says
RunContainerError, the last termination StartError with exit code 128, and the kubelet
restarts it with back-off (CrashLoopBackOff). A shell started as the command exits 127
instead when the command it runs is missing ("sh: server: not found").

## Confirm on a live cluster

    kubectl get pod -n NAMESPACE POD -o jsonpath='{.status.containerStatuses[*].lastState.terminated}'
    kubectl get pod -n NAMESPACE POD -o jsonpath='{.spec.containers[*].command}'
    kubectl debug -n NAMESPACE POD -it --copy-to=POD-debug --container=CONTAINER -- sh

## Fix

Correct the command (or args) to a path that exists in the image, or build the image so
it contains the executable. A bare name is looked up in the image's PATH; a script
also needs the interpreter its #! line names, and a dynamically linked binary its
loader (a binary built against glibc does not run on an Alpine image).
`

var (
	// runc (libcontainer, standard_init_linux.go) and Go's exec.LookPath:
	// `exec: "/app/server": stat /app/server: no such file or directory`,
	// `exec: "server": executable file not found in $PATH`.
	reExecMissing = regexp.MustCompile(`exec: \\?"([^"\\]+)\\?": (stat [^:]+: no such file or directory|executable file not found in \$PATH)`)
	// execve itself failing with ENOENT when the file exists but its #! interpreter or
	// dynamic loader does not: `exec /app/run.sh: no such file or directory`.
	reExecENOENT = regexp.MustCompile(`exec:? "?([^":\s]+)"?: no such file or directory`)
	// crun: "executable file `server` not found in $PATH".
	reCrunMissing = regexp.MustCompile("executable file `([^`]+)` not found in \\$PATH")
	// A shell's "command not found", the reason for exit code 127: "sh: server: not found",
	// "/bin/sh: 1: server: not found", "bash: server: command not found".
	reShellNotFound = regexp.MustCompile(`([^\s:]+): (?:command )?not found\s*$`)
)

func startCommandNotFound(v *analyze.View) []analyze.Finding {
	var out []analyze.Finding
	for pc := range v.LiveContainers() {
		p, c := pc.Pod, pc.Container
		sf, ok := commandFailure(v, p, c)
		if ok {
			out = append(out, commandFinding(v, p, c, sf))
		}
	}
	return out
}

// matchExecMissing finds the executable the runtime could not find in a message.
func matchExecMissing(msg string) (command, kind, said string, ok bool) {
	if m := reExecMissing.FindStringSubmatch(msg); m != nil {
		kind = "missing"
		if strings.HasPrefix(m[2], "executable file not found") {
			kind = "path"
		}
		return m[1], kind, m[0], true
	}
	if m := reCrunMissing.FindStringSubmatch(msg); m != nil {
		return m[1], "path", m[0], true
	}
	if m := reExecENOENT.FindStringSubmatch(msg); m != nil {
		return m[1], "enoent", m[0], true
	}
	return "", "", "", false
}

// commandFailure looks for the runtime's "not found" in the container's status, its
// events, the kubelet journal and crictl inspect, and for a shell's exit code 127.
func commandFailure(v *analyze.View, p *analyze.Pod, c analyze.ContainerInfo) (analyze.StartFailure, bool) {
	journalSays := func(err string) bool {
		return strings.Contains(err, "no such file or directory") || strings.Contains(err, "not found in $PATH")
	}
	if sf, ok := v.RuntimeStartFailure(p, c, matchExecMissing, journalSays); ok {
		return sf, true
	}
	return shellNotFound(v, p, c)
}

// shellNotFound recognizes a shell that could not find the command it was told to run:
// the container ran and exited 127, and its log says "not found".
func shellNotFound(v *analyze.View, p *analyze.Pod, c analyze.ContainerInfo) (analyze.StartFailure, bool) {
	return v.ShellFailure(p, c, analyze.ExitCommandNotFound, reShellNotFound)
}

func commandFinding(v *analyze.View, p *analyze.Pod, c analyze.ContainerInfo, sf analyze.StartFailure) analyze.Finding {
	pod := p.Obj
	image := "image " + c.Spec.Image
	if c.Spec.Image == "" {
		image = "its image" // a pasted status that does not show the spec
	}
	configured := analyze.CommandLine(c.Spec)
	if sf.Command == "" && len(c.Spec.Command) > 0 {
		sf.Command = c.Spec.Command[0]
	}
	var what string
	switch sf.Kind {
	case "path":
		what = fmt.Sprintf("executable %q is not in the $PATH of %s", sf.Command, image)
	case "enoent":
		what = fmt.Sprintf("%q or the interpreter or loader it needs does not exist in %s", sf.Command, image)
	case "shell":
		what = fmt.Sprintf("its shell exits with code 127 (command not found): %q is not found in %s", sf.Command, image)
		if sf.Command == "" {
			what = fmt.Sprintf("its shell exits with code 127 (command not found) in %s", image)
		}
	default:
		what = fmt.Sprintf("its command %q does not exist in %s", sf.Command, image)
	}
	cause := fmt.Sprintf("%s cannot start its process: %s (%s", c.Noun(), what, sf.Said)
	if sf.ExitCode != 0 && sf.Kind != "shell" {
		cause += fmt.Sprintf("; exit code %d", sf.ExitCode)
	}
	cause += fmt.Sprintf("; %d restart(s))", c.Status.RestartCount)
	if configured != "" {
		sf.Evidence = append(sf.Evidence, c.SpecLoc().At(analyze.SpecCommandField(c.Spec)).Evidence("command: "+configured, pod.CreationTimestamp.Time))
	}
	subjects, group := v.PodAndWorkload(p)
	fix := fmt.Sprintf("Point the command of container %s at an executable that exists in %s, or add %q to the image", c.Name, image, sf.Command)
	if sf.Kind == "enoent" {
		fix += " (a script also needs the interpreter on its #! line, a dynamic binary its loader)"
	}
	return analyze.Finding{
		Subjects:    subjects,
		Cause:       cause,
		Evidence:    sf.Evidence,
		Remediation: fix + ".",
		Confirm: []string{
			analyze.Command("kubectl get pod -n %s %s -o jsonpath='{.status.%s[?(@.name==\"%s\")].lastState.terminated}'", pod.Namespace, pod.Name, analyze.Literal(c.StatusField()), c.Name),
			analyze.Command("kubectl debug -n %s %s -it --copy-to=%s-debug --container=%s -- sh", pod.Namespace, pod.Name, pod.Name, c.Name),
		},
		GroupKey: group + "\x00" + c.Name + "\x00" + sf.Command,
	}
}
