package importer

import (
	"path"
	"strings"

	"podflow.dev/podflow/bundle"
	"podflow.dev/podflow/internal/cmdline"
)

// fragmentAbout tells what the lines of a block no reader took are about, from the
// block's own lines and the command that printed them: a client's own output (kubectl's
// "error: …"), an object's describe (its Kind, Name and Namespace lines), or the object
// the command asked for ("kubectl describe apiservice v1beta1.metrics.k8s.io",
// "kubectl get hpa -n shop"). nil when neither says: the analysis then guesses from the
// shape of the file.
func fragmentAbout(file, cmd string, lines []textLine) *bundle.FragmentAbout {
	a := aboutOf(file, cmd, lines)
	if a != nil && cmd != "" {
		// The command line itself is not among the block's lines; what it names (a
		// host and port for telnet) is evidence too.
		a.Command = cmd
		if len(a.Command) > maxAboutCommand {
			a.Command = a.Command[:maxAboutCommand]
		}
	}
	return a
}

// containerRunners are the container CLIs whose run command prints the container's own
// output, not the CLI's.
var containerRunners = map[string]bool{"docker": true, "podman": true, "nerdctl": true}

// runsContainer reports whether a command runs a container in the foreground ("docker run
// --rm --user 1000 IMAGE …"): what it prints is the program's log, as `kubectl logs` would
// show it.
func runsContainer(cmd string) bool {
	f := strings.Fields(cmd)
	if len(f) > 0 && f[0] == "sudo" {
		f = f[1:]
	}
	return len(f) > 1 && containerRunners[path.Base(f[0])] && (f[1] == "run" || len(f) > 2 && f[1] == "container" && f[2] == "run")
}

// maxAboutCommand bounds the command kept with a fragment.
const maxAboutCommand = 512

func aboutOf(file, cmd string, lines []textLine) *bundle.FragmentAbout {
	if c := clientOutput(cmd, lines); c != "" {
		return &bundle.FragmentAbout{Client: c}
	}
	if a := describedObject(lines); a != nil {
		if ns := commandNamespace(cmd); a.Namespace == "" && ns != "" && a.Kind != "Namespace" {
			a.Namespace = ns
		}
		return a
	}
	if a := commandObject(cmd); a != nil {
		return a
	}
	if p := commandProgram(cmd); cmdline.IsClient(p) {
		return &bundle.FragmentAbout{Client: p}
	}
	if cmd == "" {
		return fileObject(file)
	}
	return nil
}

// clientErrorPrefixes are how a client prints its own failure on its first line, and
// which client that is:
//   - kubectl's CheckErr prints an error it does not recognise as "error: …", an API
//     status as "Error from server (Reason): …" and a transport error as "Unable to
//     connect to the server: …" (k8s.io/kubectl pkg/cmd/util/helpers.go checkErr and
//     StandardErrorMessage, v0.37.2);
//   - the Docker client wraps the daemon's answer as "Error response from daemon: …"
//     (github.com/docker/docker client/request.go checkResponseErr, v27.5.1).
var clientErrorPrefixes = []struct{ prefix, client string }{
	{"error: ", "kubectl"},
	{"Error from server (", "kubectl"},
	{"Error from server: ", "kubectl"},
	{"Unable to connect to the server: ", "kubectl"},
	{"Error response from daemon: ", "docker"},
}

// clientOutput is the client whose own output the block is: its first line is how that
// client prints a failure. The command before the block names the client when it is
// another than the prefix's usual one (oc prints kubectl's words).
func clientOutput(cmd string, lines []textLine) string {
	first := ""
	for _, l := range lines {
		if s := strings.TrimSpace(l.s); s != "" {
			first = s
			break
		}
	}
	prog := commandProgram(cmd)
	for _, p := range clientErrorPrefixes {
		if !strings.HasPrefix(first, p.prefix) {
			continue
		}
		if p.prefix == "error: " && prog != "kubectl" && prog != "oc" {
			// Programs of every kind start a line so; it is kubectl's only after a
			// kubectl command.
			return ""
		}
		if cmdline.IsClient(prog) {
			return prog
		}
		return p.client
	}
	return ""
}

// commandProgram is the program a command line runs (cmdline.Program).
func commandProgram(cmd string) string { return cmdline.Program(cmd) }

// valuedFlags are the kubectl flags, global or a subcommand's, that take their value as
// the next argument: a command line's reader passes over the value with the flag.
var valuedFlags = map[string]bool{"-n": true, "--namespace": true, "-o": true, "--output": true, "-l": true, "--selector": true,
	"--context": true, "--kubeconfig": true, "-f": true, "--filename": true, "--field-selector": true, "-c": true, "--container": true,
	"--cluster": true, "--user": true, "-s": true, "--server": true, "--as": true, "--token": true}

// commandObject is the object a "kubectl get" or "kubectl describe" command asks for,
// when it is one of a kind other than Pod and Event (whose output the importer reads).
func commandObject(cmd string) *bundle.FragmentAbout {
	cmd, _, _ = strings.Cut(cmd, "|")
	if p := commandProgram(cmd); p != "kubectl" && p != "oc" {
		return nil
	}
	f := strings.Fields(cmd)
	if len(f) > 0 && f[0] == "sudo" {
		f = f[1:]
	}
	var args []string
	for i := 1; i < len(f); i++ {
		a := f[i]
		switch {
		case valuedFlags[a]:
			i++ // the flag's value
		case strings.HasPrefix(a, "-"):
		default:
			args = append(args, a)
		}
	}
	if len(args) < 2 || args[0] != "get" && args[0] != "describe" {
		return nil
	}
	res, name, _ := strings.Cut(args[1], "/")
	if name == "" && len(args) > 2 {
		name = args[2]
	}
	res, _, _ = strings.Cut(strings.ToLower(res), ".") // "hpa.autoscaling", "apiservices.apiregistration.k8s.io"
	kind, ok := resourceKinds[res]
	if !ok {
		return nil
	}
	a := &bundle.FragmentAbout{Kind: kind, Name: name}
	if kind != "Namespace" && !clusterScoped[kind] {
		a.Namespace = commandNamespace(cmd)
	}
	return a
}

// resourceKinds maps the resource names and short names kubectl accepts (the API
// server's discovery: each registry's ShortNames, k8s.io/kubernetes pkg/registry) to
// the kind they name, for the kinds whose describe or table the importer keeps as text.
var resourceKinds = map[string]string{
	"apiservice": "APIService", "apiservices": "APIService",
	"ns": "Namespace", "namespace": "Namespace", "namespaces": "Namespace",
	"hpa": "HorizontalPodAutoscaler", "horizontalpodautoscaler": "HorizontalPodAutoscaler", "horizontalpodautoscalers": "HorizontalPodAutoscaler",
	"svc": "Service", "service": "Service", "services": "Service",
	"ep": "Endpoints", "endpoints": "Endpoints",
	"endpointslice": "EndpointSlice", "endpointslices": "EndpointSlice",
	"no": "Node", "node": "Node", "nodes": "Node",
	"deploy": "Deployment", "deployment": "Deployment", "deployments": "Deployment",
	"dc": "DeploymentConfig", "deploymentconfig": "DeploymentConfig", "deploymentconfigs": "DeploymentConfig",
	"sts": "StatefulSet", "statefulset": "StatefulSet", "statefulsets": "StatefulSet",
	"ds": "DaemonSet", "daemonset": "DaemonSet", "daemonsets": "DaemonSet",
	"rs": "ReplicaSet", "replicaset": "ReplicaSet", "replicasets": "ReplicaSet",
	"job": "Job", "jobs": "Job",
	"cj": "CronJob", "cronjob": "CronJob", "cronjobs": "CronJob",
	"pvc": "PersistentVolumeClaim", "persistentvolumeclaim": "PersistentVolumeClaim", "persistentvolumeclaims": "PersistentVolumeClaim",
	"pv": "PersistentVolume", "persistentvolume": "PersistentVolume", "persistentvolumes": "PersistentVolume",
	"sc": "StorageClass", "storageclass": "StorageClass", "storageclasses": "StorageClass",
	"ing": "Ingress", "ingress": "Ingress", "ingresses": "Ingress",
	"quota": "ResourceQuota", "resourcequota": "ResourceQuota", "resourcequotas": "ResourceQuota",
	"limits": "LimitRange", "limitrange": "LimitRange", "limitranges": "LimitRange",
	"pdb": "PodDisruptionBudget", "poddisruptionbudget": "PodDisruptionBudget", "poddisruptionbudgets": "PodDisruptionBudget",
	"crd": "CustomResourceDefinition", "crds": "CustomResourceDefinition", "customresourcedefinition": "CustomResourceDefinition", "customresourcedefinitions": "CustomResourceDefinition",
	"mutatingwebhookconfiguration": "MutatingWebhookConfiguration", "mutatingwebhookconfigurations": "MutatingWebhookConfiguration",
	"validatingwebhookconfiguration": "ValidatingWebhookConfiguration", "validatingwebhookconfigurations": "ValidatingWebhookConfiguration",
}

// clusterScoped are the kinds of resourceKinds that live in no namespace.
var clusterScoped = map[string]bool{
	"APIService": true, "Node": true, "PersistentVolume": true, "StorageClass": true, "CustomResourceDefinition": true,
	"MutatingWebhookConfiguration": true, "ValidatingWebhookConfiguration": true,
}

// describeKeyKinds are the kinds of workloadDescribeKeys that name one kind.
var describeKeyKinds = map[string]string{
	"hpa": "HorizontalPodAutoscaler", "deployment": "Deployment", "daemonset": "DaemonSet", "job": "Job", "cronjob": "CronJob",
}

// fileObject is the kind a file's name says it holds the describe or the table of:
// "describe-apiservice.txt", "kubectl-get-hpa.txt"; nil for any other name.
func fileObject(file string) *bundle.FragmentAbout {
	base := strings.ToLower(path.Base(file))
	base = strings.TrimSuffix(base, path.Ext(base))
	f := strings.FieldsFunc(base, func(r rune) bool { return r == '-' || r == '_' || r == '.' || r == ' ' })
	for i := 0; i+1 < len(f); i++ {
		if f[i] != "describe" && f[i] != "get" {
			continue
		}
		if kind, ok := resourceKinds[f[i+1]]; ok {
			return &bundle.FragmentAbout{Kind: kind}
		}
	}
	return nil
}

// describedObject reads the object a describe block of a kind other than Pod shows from
// its margin lines: "Kind:" (the generic describer of an APIService or a custom
// resource), else the keys only an autoscaler's describe prints, else a namespace's
// Status line or its deletion conditions; with its "Name:" and "Namespace:" lines.
func describedObject(lines []textLine) *bundle.FragmentAbout {
	var kind, name, ns, status string
	nsConditions := false
	for _, l := range lines {
		if t := strings.TrimSpace(l.s); strings.HasPrefix(t, "NamespaceDeletion") || strings.HasPrefix(t, "NamespaceContent") || strings.HasPrefix(t, "NamespaceFinalizers") {
			nsConditions = true
		}
		if strings.HasPrefix(l.s, " ") || strings.HasPrefix(l.s, "\t") {
			continue
		}
		m := reKey.FindStringSubmatch(strings.TrimRight(l.s, " \r"))
		if m == nil {
			continue
		}
		v := strings.TrimSpace(m[2])
		switch m[1] {
		case "Kind":
			if kind == "" {
				kind = v
			}
		case "Name":
			if name == "" {
				name = v
			}
		case "Namespace":
			if ns == "" {
				ns = v
			}
		case "Status":
			status = v
		default:
			if k := describeKeyKinds[workloadDescribeKeys[m[1]]]; k != "" && kind == "" {
				kind = k
			}
		}
	}
	switch {
	case kind == "Pod" || strings.ContainsAny(kind, " /"):
		return nil
	case kind == "" && (nsConditions || ns == "" && (status == "Active" || status == "Terminating")):
		kind = "Namespace"
	case kind == "":
		return nil
	}
	if kind == "Namespace" || clusterScoped[kind] {
		ns = ""
	}
	return &bundle.FragmentAbout{Kind: kind, Namespace: ns, Name: name}
}
