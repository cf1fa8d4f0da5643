package rules

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"podflow.dev/podflow/analyze"
)

// StartExecFormatError finds containers whose executable the node's kernel cannot run:
// a binary for another CPU architecture, or a script without a #! line.
var StartExecFormatError = &analyze.Rule{
	ID:       "start-exec-format-error",
	Stage:    analyze.StageStart,
	Title:    "container executable is for another architecture (exec format error)",
	Doc:      startExecFormatErrorDoc,
	Severity: analyze.SeverityError,
	Needs: analyze.Needs{
		Required: []analyze.Kind{analyze.Pods},
		Optional: []analyze.Kind{analyze.Events, analyze.KubeletJournal, analyze.CRI, analyze.ContainerLogs,
			analyze.Nodes, analyze.ReplicaSets, analyze.Jobs},
	},
	Run: startExecFormatError,
}

const startExecFormatErrorDoc = `The kernel refused to execute the container's process with ENOEXEC, "exec format
error": the file is not an executable this node can run. Almost always the image was
built for another CPU architecture (an arm64 image on an amd64 node, or the reverse),
typically a single-architecture image pushed under a tag the node pulls, or a multi-arch
manifest whose entry for this architecture holds the wrong binary. A script without a
#! line fails the same way. runc execs the process after the container has started, so
the error reaches the container's own output: its log says "exec /server: exec format
error" and the container exits with a non-zero code (1 with runc 1.1; older runc wrote
"standard_init_linux.go:228: exec user process caused: exec format error"); when the
runtime checks earlier, the
container status says StartError or RunContainerError with the same words. The kubelet
restarts it with back-off (CrashLoopBackOff).

## Confirm on a live cluster

    kubectl logs -n NAMESPACE POD -c CONTAINER --previous
    kubectl get node NODE -o jsonpath='{.status.nodeInfo.architecture}'
    crane config IMAGE | jq .architecture      # or: docker manifest inspect IMAGE

## Fix

Build and push the image for the nodes' architecture (docker buildx build --platform
linux/amd64,linux/arm64 ... for a multi-arch image; GOARCH, or the base image's
platform, for the binary inside), or schedule the workload only on nodes of the
image's architecture (nodeSelector kubernetes.io/arch). For a script, add a #! line
naming its interpreter.
`

// ENOEXEC as runc, Go's os/exec and the kernel's error string report it: "exec
// /server: exec format error", "exec user process caused: exec format error",
// `exec: "/server": exec format error`.
var reExecFormat = regexp.MustCompile(`(?:exec:? "?([^":\s]+)"?: |exec user process caused: )?exec format error`)

// formatFailure is where a bundle says a container's executable could not be run.
type formatFailure struct {
	executable string
	said       string
	exitCode   int32
	evidence   []analyze.Evidence
}

func startExecFormatError(v *analyze.View) []analyze.Finding {
	var out []analyze.Finding
	for pc := range v.LiveContainers() {
		p, c := pc.Pod, pc.Container
		if ff, ok := execFormatFailure(v, p, c); ok {
			out = append(out, execFormatFinding(v, p, c, ff))
		}
	}
	return out
}

// execFormatFailure looks for ENOEXEC in the container's start failure (status,
// events) and, since runc reports it from inside the started container, in the log
// of the instance that exited.
func execFormatFailure(v *analyze.View, p *analyze.Pod, c analyze.ContainerInfo) (formatFailure, bool) {
	var ff formatFailure
	note := func(msg string, ev analyze.Evidence, exit int32) {
		m := reExecFormat.FindStringSubmatch(msg)
		if m == nil {
			return
		}
		if ff.said == "" {
			ff.said, ff.executable = m[0], m[1]
		}
		if exit != 0 && ff.exitCode == 0 {
			ff.exitCode = exit
		}
		ff.evidence = append(ff.evidence, ev)
	}
	for _, s := range v.StartFailureSources(p, c, "exec format error") {
		note(s.Message, s.Evidence, s.Exit)
	}
	if t, loc, log := v.CrashTermination(p, c); t != nil && log != nil {
		if text, n, ok := analyze.LastLineMatching(log, reExecFormat); ok {
			note(analyze.StripLogTimestamp(text), analyze.LineEvidence(log, analyze.LogLine{Text: text, N: n}, "", t.FinishedAt.Time), 0)
			if ff.exitCode == 0 {
				ff.exitCode = t.ExitCode
			}
			ff.evidence = append(ff.evidence, analyze.ExitEvidence(t, loc))
		}
	}
	if ff.said == "" {
		return ff, false
	}
	if ff.executable == "" {
		ff.executable = configuredExecutable(c.Spec)
	}
	ff.evidence = append(ff.evidence, formatNodeEvidence(v, p, c)...)
	return ff, true
}

// configuredExecutable is the process the pod spec names, when it names one.
func configuredExecutable(c *corev1.Container) string {
	if len(c.Command) > 0 {
		return c.Command[0]
	}
	return ""
}

// formatNodeEvidence cites the kubelet's journal line and crictl's record of the
// failed container, when the bundle has them.
func formatNodeEvidence(v *analyze.View, p *analyze.Pod, c analyze.ContainerInfo) []analyze.Evidence {
	var out []analyze.Evidence
	if e := v.LatestJournalError(p, c, func(err string) bool { return strings.Contains(err, "exec format error") }); e != nil {
		out = append(out, e.EvidenceAround("exec format error"))
	}
	latest := v.LatestAttempt(p, c, func(cc *analyze.CRIContainer) bool { return cc.State == "CONTAINER_EXITED" })
	if latest != nil && latest.InspectLoc != nil {
		out = append(out, latest.InspectLoc.Evidence(fmt.Sprintf("crictl inspect %s: %s, exit code %d, attempt %d, image %s",
			analyze.ShortID(latest.ID), latest.Reason, latest.ExitCode, latest.Attempt, imageShown(latest.Image)), latest.FinishedAt))
	}
	return out
}

func execFormatFinding(v *analyze.View, p *analyze.Pod, c analyze.ContainerInfo, ff formatFailure) analyze.Finding {
	pod := p.Obj
	image := c.Spec.Image
	what := "its executable"
	if ff.executable != "" {
		what = "executable " + ff.executable
	}
	node := pod.Spec.NodeName
	arch := ""
	var nodeEvidence []analyze.Evidence
	if n := v.Node(node); n != nil && n.Obj.Status.NodeInfo.Architecture != "" {
		arch = n.Obj.Status.NodeInfo.Architecture
		nodeEvidence = append(nodeEvidence, n.Loc.At("status", "nodeInfo", "architecture").Evidence(
			fmt.Sprintf("node %s: architecture %s, os %s", node, arch, n.Obj.Status.NodeInfo.OperatingSystem), time.Time{}))
	}
	var where string
	switch {
	case node != "" && arch != "":
		where = fmt.Sprintf("node %s is %s, so %s of image %s is built for another architecture or is a script without a #! line", node, arch, what, image)
	case node != "":
		where = fmt.Sprintf("%s of image %s is not built for node %s's architecture or is a script without a #! line", what, image, node)
	default:
		where = fmt.Sprintf("%s of image %s is not built for the node's architecture or is a script without a #! line", what, image)
	}
	cause := fmt.Sprintf("container %s cannot execute its process: %s (%s", c.Name, where, ff.said)
	if ff.exitCode != 0 {
		cause += fmt.Sprintf("; exit code %d", ff.exitCode)
	}
	cause += fmt.Sprintf("; %d restart(s))", c.Status.RestartCount)
	subjects, group := v.PodWorkloadAndNode(p)
	platform := "the nodes' architecture"
	if arch != "" {
		platform = "linux/" + arch
	}
	fix := fmt.Sprintf("Rebuild image %s for %s (or as a multi-architecture image: docker buildx build --platform ...), "+
		"or keep container %s on nodes of the image's architecture with nodeSelector kubernetes.io/arch", image, platform, c.Name)
	confirm := []string{
		analyze.Command("kubectl logs -n %s %s -c %s --previous", pod.Namespace, pod.Name, c.Name),
	}
	if node != "" {
		confirm = append(confirm, analyze.Command("kubectl get node %s -o jsonpath='{.status.nodeInfo.architecture}'", node))
	}
	confirm = append(confirm, fmt.Sprintf("crane config %s | jq .architecture", image))
	return analyze.Finding{
		Subjects:    subjects,
		Cause:       cause,
		Evidence:    append(ff.evidence, nodeEvidence...),
		Remediation: fix + ".",
		Confirm:     confirm,
		GroupKey:    group + "\x00" + c.Name + "\x00" + image,
	}
}

// imageShown prints an image ID as crictl's tables do (13 characters, without the
// digest algorithm), so node evidence from a table and from JSON reads the same; an
// image reference stays whole.
func imageShown(image string) string {
	if id, ok := strings.CutPrefix(image, "sha256:"); ok {
		return analyze.ShortID(id)
	}
	return image
}
