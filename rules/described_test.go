package rules

import (
	"strings"
	"testing"

	"podflow.dev/podflow/analyze"
	"podflow.dev/podflow/bundle"
)

// analyzePaste imports files as pasted text and runs every built-in Go rule
// with the floor (unexplained and catalog findings, and the prose's reading) on.
func analyzePaste(t *testing.T, files map[string]string) *analyze.Report {
	t.Helper()
	b := importPaste(t, files)
	return analyze.Run(analyze.Load([]*bundle.Bundle{b}, nil), All(), analyze.Options{Unexplained: true})
}

func roots(rep *analyze.Report) []*analyze.Finding {
	var out []*analyze.Finding
	for _, f := range rep.Findings {
		if f.Root {
			out = append(out, f)
		}
	}
	return out
}

// A ticket that holds only its reporter's words is read for the known failure it
// describes: the finding names it, says it rests on the text, quotes the sentences that
// carry the values, and cites their lines.
func TestProseIsReadForTheFailureItDescribes(t *testing.T) {
	cases := []struct {
		name, text string
		// rule is the rule the prose describes; "" where neighbours at its stage
		// share its words (a finalizer that holds a deletion, a deletion stalled for
		// another reason) and only the stage is certain.
		rule   string
		stage  analyze.Stage
		quoted string
	}{
		{"taint", "We added a GPU pool last week.\nSince then the `metrics-agent` pods stay Pending: they have no toleration for the taint `nvidia.com/gpu` that every node in the pool carries.\nRemoving the taint from one node let one pod schedule.\n",
			"scheduling-untolerated-taint", analyze.StageScheduling, "nvidia.com/gpu"},
		{"selector", "After the chart upgrade the frontend Service has no endpoints.\nThe pods carry the label `app.kubernetes.io/name: web` but the service selector still asks for `app: frontend`, so nothing matches and no traffic gets through.\n",
			"service-selector-matches-nothing", analyze.StageService, "app: frontend"},
		{"pvc-zone", "The database pod cannot start after we replaced the node group.\nIts EBS volume lives in us-west-2c and none of the new nodes are in that availability zone, so describe shows a volume node affinity conflict.\n",
			"volume-node-affinity-conflict", analyze.StageScheduling, "us-west-2c"},
		{"probe", "Since the 2.0 release the api container restarts every few minutes.\nIts liveness probe still calls `/healthz`, which the new version answers with 404, so the kubelet kills and restarts it again and again.\n",
			"", analyze.StageProbe, "/healthz"},
		{"oomkilled", "The database can't start on Autopilot since its init container is OOMkilled.\nThe admission set the memory limit of the `uuid` init container to its request.\n",
			"runtime-oom-killed", analyze.StageRuntime, "uuid"},
		{"finalizer", "We deleted the old worker pods but they hang in Terminating for hours.\nEach of them still carries the finalizer `example.com/drain` that our operator adds, and the operator was uninstalled first, so nothing ever removes it.\n",
			"", analyze.StageTermination, "example.com/drain"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rs := roots(analyzePaste(t, map[string]string{"ticket.txt": c.text}))
			if len(rs) != 1 {
				t.Fatalf("want one root, got %d: %v", len(rs), ruleIDs(rs))
			}
			f := rs[0]
			if c.rule != "" && f.Rule != c.rule || f.Stage != c.stage {
				t.Errorf("got %s at %s, want %s at %s: %s", f.Rule, f.Stage, c.rule, c.stage, f.Cause)
			}
			if !strings.Contains(f.Cause, analyze.DescribedNote) || !strings.Contains(f.Cause, c.quoted) {
				t.Errorf("the cause does not say it rests on the text, or does not quote %q: %s", c.quoted, f.Cause)
			}
			if len(f.Evidence) == 0 || f.Evidence[0].Path != "ticket.txt" || f.Evidence[0].Line == 0 {
				t.Errorf("evidence %+v does not cite the ticket's lines", f.Evidence)
			}
			if f.Remediation == "" {
				t.Error("no remediation")
			}
			if f.FleetKey != "described" {
				// Otherwise each ticket's own words would make its own cause in an index.
				t.Errorf("fleet key %q", f.FleetKey)
			}
		})
	}
}

// The prose is read for what its words mean, not for the words it shares with a rule's
// documentation: an exit code, a probe's field names, a volume's zone and a CPU
// architecture say which failure it is, and a signature specific to one program (the
// JVM) is not read from prose that never names that program.
func TestProseIsReadForWhatItStates(t *testing.T) {
	cases := []struct {
		name, text   string
		rule, quoted string
		stage        analyze.Stage
	}{
		{"exit code 137 with memory", "Bumped the memory limit of the `log-shipper` sidecar from 128Mi to 256Mi.\n" +
			"It kept dying with exit code 137 during the nightly compaction, i.e. it was stopped for running Out-Of-Memory.\n",
			"runtime-oom-killed", "log-shipper", analyze.StageRuntime},
		{"probe timeout in field names", "Set timeoutSeconds to 10 on the livenessProbes of the ledger deployment.\n" +
			"Its image runs \"/usr/local/bin/health.sh\", which sleeps 3 seconds before it answers, so with the default \"timeoutSeconds: 1\" these pods get terminated again and again.\n",
			"probe-liveness-restarts", "health.sh", analyze.StageProbe},
		{"a program the prose never names", "This change raises the memory of the `queue-worker` container.\n" +
			"The container was failing with exit code 137, which means it was terminated due to Out-Of-Memory; its memory requests and limits are doubled.\n",
			"runtime-oom-killed", "queue-worker", analyze.StageRuntime},
		{"volume in a zone no node is in", "Our cluster has two workers, in eu-west-1a and eu-west-1b.\n" +
			"The reports pod uses a claim whose EBS disk was created in eu-west-1c, and since no worker runs in eu-west-1c the pod cannot start.\n",
			"volume-node-affinity-conflict", "eu-west-1c", analyze.StageScheduling},
		{"probes failing with an HTTP status", "Since we turned on basic auth for the proxy, the readiness probes always fail with 401 and the deployment never becomes available.\n" +
			"The chart version is proxy-2.1.0 and nothing else changed in the cluster.\n",
			"probe-readiness-failing", "401", analyze.StageProbe},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rs := roots(analyzePaste(t, map[string]string{"ticket.txt": c.text}))
			if len(rs) != 1 {
				t.Fatalf("want one root, got %d: %v", len(rs), ruleIDs(rs))
			}
			f := rs[0]
			if f.Rule != c.rule || f.Stage != c.stage {
				t.Errorf("got %s at %s, want %s at %s: %s", f.Rule, f.Stage, c.rule, c.stage, f.Cause)
			}
			if !strings.Contains(f.Cause, analyze.DescribedNote) || !strings.Contains(f.Cause, c.quoted) {
				t.Errorf("the cause does not say it rests on the text, or does not quote %q: %s", c.quoted, f.Cause)
			}
		})
	}
}

// A component's line the catalog reads and a prose that names the failure at the same
// stage: the prose's reading names it, with the values only the prose holds.
func TestProseNamesWhatTheCatalogPlaces(t *testing.T) {
	text := "The `example/report-builder:3.2` image ships only an arm64 binary, so on our amd64 workers the job never runs.\n" +
		"The pod shows this:\n\n" +
		"```\n" +
		"Error: failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: error during container init: exec format error: unknown\n" +
		"```\n"
	var got *analyze.Finding
	for _, f := range roots(analyzePaste(t, map[string]string{"ticket.txt": text})) {
		if f.Rule != analyze.CatalogRule && f.Rule != analyze.UnexplainedRule {
			got = f
		}
	}
	if got == nil || got.Rule != "start-exec-format-error" || got.Stage != analyze.StageStart ||
		!strings.Contains(got.Cause, "example/report-builder:3.2") {
		t.Fatalf("want start-exec-format-error naming the image, got %+v", got)
	}
}

// The prose is the last resort: a component's own line wins, output without a sentence
// is not a description, and prose that does not point at one stage is not read.
func TestProseIsNotReadWhenEvidenceSpeaks(t *testing.T) {
	cases := []struct {
		name  string
		files map[string]string
		not   string // a rule the prose alone would have given
	}{
		{"a component line", map[string]string{"ticket.txt": "The pods stay Pending since we added the GPU pool and its taint.\n" +
			"  Warning  FailedScheduling  2m  default-scheduler  0/3 nodes are available: 3 Insufficient memory. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.\n"},
			""},
		{"no sentence", map[string]string{"app.log": "taint toleration pending scheduler node\nselector label service endpoints traffic\n"}, ""},
		{"no stage stands out", map[string]string{"ticket.txt": "Since the upgrade last night our app does not work any more.\n" +
			"We restarted the nodes and then the pods, and nothing changed; the pods and the service are still not working and the logs show nothing useful.\n"}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rep := analyzePaste(t, c.files)
			for _, f := range rep.Findings {
				if strings.Contains(f.Cause, analyze.DescribedNote) {
					t.Errorf("the prose was read: %s: %s", f.Rule, f.Cause)
				}
			}
		})
	}
}

// A probe said to get an HTTP error status, in whatever order and words the reporter
// writes it, is the application answering its health endpoint with that status (the
// kubelet counts any status of 400 or more as a failure): with the signatures loaded,
// that is the failure the prose names, and the line that says which release the
// trouble came with is quoted beside it.
func TestProseOfAProbeStatusIsTheEndpointsAnswer(t *testing.T) {
	cases := []struct{ name, text, quoted string }{
		{"status after the probes", "I changed the basicAuth username and password to something safer, but when the app was deployed, it failed the liveness and readiness probes with HTTP 401 errors.\n", "401"},
		{"status before the probes", "The service logs are showing 404 when k8s is trying to access readiness and liveness probes on the root path `/` of the api.\n\nThis started once we upgraded the chart from `v2.3.0` to `v2.4.0`.\n", "v2.4.0"},
		{"status in words, probe by what it decides", "After upgrading from 3.1.0 to 3.1.1 the gateway pod never becomes healthy because the /metrics endpoint is unauthorized.\n", "/metrics"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rs := catalogRoots(t, map[string]string{"ticket.txt": c.text})
			wantOneRoot(t, rs, "probe-endpoint-refused-by-application", analyze.DescribedNote, c.quoted)
		})
	}
	// A pull refused as unauthorized is not a probe's answer, whatever the pod's readiness.
	rs := catalogRoots(t, map[string]string{"ticket.txt": "Since the registry move the api pod never becomes ready: pulling its image from the new registry is unauthorized for the nodes.\n"})
	for _, f := range rs {
		if f.Stage == analyze.StageProbe {
			t.Errorf("a refused pull read as a probe: %s %s", f.Rule, f.Cause)
		}
	}
}

// A Corefile that forwards to the resolv.conf it inherits, beside a node resolv.conf
// whose nameserver is a loopback stub, is the forwarding loop, though no CoreDNS log
// says so; the two settings are quoted.
func TestProseOfACorefileForwardingToALoopbackStubIsTheLoop(t *testing.T) {
	const text = "Our DNS pods on the new Ubuntu 22.04 workers use all the CPU and the cluster cannot resolve anything.\n\n" +
		"Node /etc/resolv.conf:\n\n```\nnameserver 127.0.0.53\nsearch example.internal\n```\n\nCorefile:\n\n```\n.:53 {\n    errors\n    health\n    kubernetes cluster.local in-addr.arpa ip6.arpa\n    forward . /etc/resolv.conf\n    cache 30\n}\n```\n"
	rs := catalogRoots(t, map[string]string{"ticket.txt": text})
	wantOneRoot(t, rs, "service-coredns-loop-detected", analyze.DescribedNote, "nameserver 127.0.0.53", "forward . /etc/resolv.conf")
}

// A probe and its status a sentence apart ("fails its liveness probes. … /health
// returns 404") are still the probe's answer.
func TestProseOfAProbeStatusAcrossASentence(t *testing.T) {
	const text = "I tried updating to v2.3.0 but the pod never gets ready, because it fails its liveness probes. Queries to /metrics work as expected, but /health returns 404 errors.\n"
	rs := catalogRoots(t, map[string]string{"ticket.txt": text})
	if len(rs) != 1 || rs[0].Stage != analyze.StageProbe {
		for _, f := range rs {
			t.Logf("root %s %s: %s", f.Stage, f.Rule, f.Cause)
		}
		t.Fatalf("want one probe-stage root")
	}
}

// Prose about the pause image a kubelet keeps pulling is the sandbox's image, and the
// long sentence that names it is quoted around the name.
func TestProseOfThePauseImageIsTheSandbox(t *testing.T) {
	const text = "When initializing a control plane with kubeadm v1.33.4 only a mirror repository was set with --image-repository, and no other image version or static Pod configuration was given anywhere in the configuration; however the kubelet logs show that the core components keep trying to pull the `registry.k8s.io/pause:3.8` image when creating their Pod sandboxes.\n" +
		"This causes image pull timeouts, and the control plane never starts.\n"
	rs := catalogRoots(t, map[string]string{"ticket.txt": text})
	wantOneRoot(t, rs, "sandbox-image-pull-failed", analyze.DescribedNote, "registry.k8s.io/pause:3.8")
}

// Prose of a pull the registry answers with 401 is the refused credentials, not an
// image that does not exist.
func TestProseOfAPullAnswered401IsUnauthorized(t *testing.T) {
	const text = "I created the cluster and added the registry secret, but I cannot pull images from the registry: it is giving a 401 error.\n" +
		"The pods stay in ImagePullBackOff and ErrImagePull after every deploy of the api.\n"
	rs := catalogRoots(t, map[string]string{"ticket.txt": text})
	wantOneRoot(t, rs, "image-pull-unauthorized", analyze.DescribedNote, "401")
}

// A signature specific to one program competes for a ticket's words only when the
// ticket names that program: the "nodes" of a cluster do not name Node.js, so a JVM's
// pods killed for memory are the OOM kill, not V8's heap.
func TestProseNamesTheProgramNotTheNodes(t *testing.T) {
	text := "Search pods get OOMKilled whenever the Java options go above 6GB.\nThe kubernetes cluster has 5 nodes, each with 64GB of RAM.\nWe have 24 GB RAM allocated for the search pods.\n"
	wantOneRoot(t, catalogRoots(t, map[string]string{"ticket.txt": text}), "runtime-oom-killed", "OOMKilled")
	nodejs := "Our Node.js API pods get OOMKilled after a few hours.\nThe kubernetes cluster has 5 nodes and the heap grows until the allocation fails.\n"
	rs := catalogRoots(t, map[string]string{"ticket.txt": nodejs})
	if len(rs) != 1 || rs[0].Stage != analyze.StageRuntime {
		t.Fatalf("want one runtime root for the Node.js ticket, got %v", ruleIDs(rs))
	}
}
