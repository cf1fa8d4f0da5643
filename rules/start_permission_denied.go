package rules

import (
	"fmt"
	"path"
	"regexp"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"podflow.dev/podflow/analyze"
)

// StartPermissionDenied finds containers whose command exists but cannot be executed.
var StartPermissionDenied = &analyze.Rule{
	ID:       "start-permission-denied",
	Stage:    analyze.StageStart,
	Title:    "container command is not executable",
	Doc:      startPermissionDeniedDoc,
	Severity: analyze.SeverityError,
	Needs: analyze.Needs{
		Required: []analyze.Kind{analyze.Pods},
		Optional: []analyze.Kind{analyze.Events, analyze.KubeletJournal, analyze.CRI, analyze.ContainerLogs,
			analyze.ReplicaSets, analyze.Jobs},
	},
	Run: startPermissionDenied,
}

const startPermissionDeniedDoc = `The runtime created the container but could not start its process, because the file
named by the container's command (or the image's entrypoint) exists and is not
executable: it lacks the execute bit, is a directory, or lives on a filesystem mounted
noexec. runc reports ` + "`" + `exec: "/scripts/entrypoint.sh": permission denied` + "`" + ` (or
` + "`" + `exec /scripts/entrypoint.sh: permission denied` + "`" + ` when execve itself refuses);
the container status says RunContainerError, the last termination StartError with exit
code 128, and the kubelet restarts it with back-off (CrashLoopBackOff). A shell that
runs such a file exits 126 instead ("sh: /scripts/entrypoint.sh: Permission denied").

The usual cause is a script delivered by a ConfigMap or Secret volume: their files get
mode 0644 unless the volume's defaultMode (or the item's mode) says otherwise. The other
is an image built from files that lost their execute bit.

## Confirm on a live cluster

    kubectl get pod -n NAMESPACE POD -o jsonpath='{.status.containerStatuses[*].lastState.terminated}'
    kubectl get pod -n NAMESPACE POD -o jsonpath='{.spec.volumes}'
    kubectl debug -n NAMESPACE POD -it --copy-to=POD-debug --container=CONTAINER -- ls -l PATH

## Fix

For a file from a ConfigMap or Secret volume, set defaultMode: 0755 on the volume (or
mode on the item). For a file in the image, mark it executable when building the image
(COPY --chmod=0755, or RUN chmod +x). Alternatively run it through its interpreter
(command: ["sh", "/scripts/entrypoint.sh"]), which needs only read permission.
`

var (
	// runc (libcontainer, standard_init_linux.go) checks the file with Go's
	// exec.LookPath, `exec: "/app/run.sh": permission denied`, and execve refusing reads
	// `exec /app/run.sh: permission denied`.
	reExecDenied = regexp.MustCompile(`exec:? "?([^":\s]+)"?: permission denied`)
	// A shell's "cannot execute", the reason for exit code 126: "sh: /app/run.sh:
	// Permission denied", "/bin/sh: 1: /app/run.sh: Permission denied".
	reShellDenied = regexp.MustCompile(`([^\s:]+): Permission denied\s*$`)
)

func matchExecDenied(msg string) (command, kind, said string, ok bool) {
	if m := reExecDenied.FindStringSubmatch(msg); m != nil {
		return m[1], "denied", m[0], true
	}
	return "", "", "", false
}

func startPermissionDenied(v *analyze.View) []analyze.Finding {
	journalSays := func(err string) bool { return strings.Contains(err, "permission denied") }
	var out []analyze.Finding
	for pc := range v.LiveContainers() {
		p, c := pc.Pod, pc.Container
		sf, ok := v.RuntimeStartFailure(p, c, matchExecDenied, journalSays)
		if !ok {
			sf, ok = shellDenied(v, p, c)
		}
		if ok {
			out = append(out, deniedFinding(v, p, c, sf))
		}
	}
	return out
}

// shellDenied recognizes a shell that could not execute the file it was told to run:
// the container ran and exited 126, and its log says "Permission denied".
func shellDenied(v *analyze.View, p *analyze.Pod, c analyze.ContainerInfo) (analyze.StartFailure, bool) {
	return v.ShellFailure(p, c, analyze.ExitCannotExecute, reShellDenied)
}

// mountedFile is the volume a path lives in, and the file mode the volume gives it.
type mountedFile struct {
	volume, source string
	// mode is the file's mode from the volume's defaultMode or the item's mode; zero when
	// the volume does not set file modes (emptyDir, a PVC).
	mode int32
	loc  analyze.Location
}

// fileVolume finds the volume mounted at or above file in container c.
func fileVolume(p *analyze.Pod, c analyze.ContainerInfo, file string) (mountedFile, bool) {
	if !path.IsAbs(file) {
		return mountedFile{}, false
	}
	best := -1
	for i, m := range c.Spec.VolumeMounts {
		dir := path.Clean(m.MountPath)
		if (file == dir || strings.HasPrefix(file, strings.TrimSuffix(dir, "/")+"/")) &&
			(best < 0 || len(dir) > len(path.Clean(c.Spec.VolumeMounts[best].MountPath))) {
			best = i
		}
	}
	if best < 0 {
		return mountedFile{}, false
	}
	m := c.Spec.VolumeMounts[best]
	rel := strings.TrimPrefix(strings.TrimPrefix(file, path.Clean(m.MountPath)), "/")
	if m.SubPath != "" {
		rel = path.Join(m.SubPath, rel)
	}
	for i, vol := range p.Obj.Spec.Volumes {
		if vol.Name != m.Name {
			continue
		}
		mf := mountedFile{volume: vol.Name, loc: p.Loc.At("spec", "volumes", i)}
		switch {
		case vol.ConfigMap != nil:
			mf.source = "ConfigMap " + vol.ConfigMap.Name
			mf.mode = itemMode(vol.ConfigMap.Items, vol.ConfigMap.DefaultMode, rel)
			mf.loc = mf.loc.At("configMap")
		case vol.Secret != nil:
			mf.source = "Secret " + vol.Secret.SecretName
			mf.mode = itemMode(vol.Secret.Items, vol.Secret.DefaultMode, rel)
			mf.loc = mf.loc.At("secret")
		case vol.Projected != nil:
			mf.source = "projected volume"
			mf.mode = itemMode(nil, vol.Projected.DefaultMode, rel)
			mf.loc = mf.loc.At("projected")
		case vol.EmptyDir != nil:
			mf.source = "emptyDir"
		case vol.PersistentVolumeClaim != nil:
			mf.source = "PersistentVolumeClaim " + vol.PersistentVolumeClaim.ClaimName
		case vol.HostPath != nil:
			mf.source = "hostPath " + vol.HostPath.Path
		}
		return mf, true
	}
	return mountedFile{}, false
}

// itemMode is the mode the kubelet gives a ConfigMap or Secret file: the item's mode,
// else the volume's defaultMode, else 0644 (k8s.io/api/core/v1, *VolumeSourceDefaultMode).
func itemMode(items []corev1.KeyToPath, defaultMode *int32, rel string) int32 {
	for _, it := range items {
		if path.Clean(it.Path) == rel && it.Mode != nil {
			return *it.Mode
		}
	}
	if defaultMode != nil {
		return *defaultMode
	}
	return corev1.ConfigMapVolumeSourceDefaultMode
}

func deniedFinding(v *analyze.View, p *analyze.Pod, c analyze.ContainerInfo, sf analyze.StartFailure) analyze.Finding {
	pod := p.Obj
	image := c.Spec.Image
	configured := analyze.CommandLine(c.Spec)
	if sf.Command == "" && len(c.Spec.Command) > 0 {
		sf.Command = c.Spec.Command[0]
	}
	where, origin := " in image "+image, ""
	fix := fmt.Sprintf("Make %s executable in image %s (COPY --chmod=0755 or RUN chmod +x when building it), or run it through its "+
		"interpreter (command: [\"sh\", %q]), which needs only read permission.", sf.Command, image, sf.Command)
	if mf, ok := fileVolume(p, c, sf.Command); ok {
		where, origin = "", "; it comes from volume "+mf.volume
		if mf.source != "" {
			origin += fmt.Sprintf(" (%s)", mf.source)
		}
		fix = fmt.Sprintf("Make %s executable in volume %s", sf.Command, mf.volume)
		if mf.mode != 0 {
			origin += fmt.Sprintf(", whose files get mode %04o", mf.mode)
			fix += " (set defaultMode: 0755 on the volume, or mode on its item)"
			sf.Evidence = append(sf.Evidence, mf.loc.Evidence(fmt.Sprintf("volume %s: %s, file mode %04o", mf.volume, mf.source, mf.mode),
				pod.CreationTimestamp.Time))
		}
		fix += fmt.Sprintf(", or run it through its interpreter (command: [\"sh\", %q]).", sf.Command)
	}
	what := fmt.Sprintf("its command %q%s is not executable", sf.Command, where)
	if sf.Kind == "shell" {
		what = fmt.Sprintf("its shell exits with code 126 (cannot execute): %q%s is not executable", sf.Command, where)
		if sf.Command == "" {
			what = fmt.Sprintf("its shell exits with code 126 (found but cannot execute its command) in image %s", image)
		}
	}
	cause := fmt.Sprintf("%s cannot start its process: %s (%s", c.Noun(), what, sf.Said)
	if sf.ExitCode != 0 && sf.Kind != "shell" {
		cause += fmt.Sprintf("; exit code %d", sf.ExitCode)
	}
	cause += fmt.Sprintf("; %d restart(s))%s", c.Status.RestartCount, origin)
	if configured != "" {
		sf.Evidence = append(sf.Evidence, c.SpecLoc().At(analyze.SpecCommandField(c.Spec)).Evidence("command: "+configured, pod.CreationTimestamp.Time))
	}
	subjects, group := v.PodAndWorkload(p)
	return analyze.Finding{
		Subjects:    subjects,
		Cause:       cause,
		Evidence:    sf.Evidence,
		Remediation: fix,
		Confirm: []string{
			analyze.Command("kubectl get pod -n %s %s -o jsonpath='{.status.%s[?(@.name==\"%s\")].lastState.terminated}'", pod.Namespace, pod.Name, analyze.Literal(c.StatusField()), c.Name),
			analyze.Command("kubectl debug -n %s %s -it --copy-to=%s-debug --container=%s -- ls -l %s", pod.Namespace, pod.Name, pod.Name, c.Name, analyze.Value(orDot(sf.Command))),
		},
		GroupKey: group + "\x00" + c.Name + "\x00" + sf.Command,
	}
}

func orDot(s string) string {
	if s == "" {
		return "."
	}
	return s
}
