package analyze

import (
	"maps"
	"strings"
	"testing"
)

// TestWrapperValues reads what the wrappers of a message print about whose chain broke,
// in the formats of the components that print them, and nothing from a message that has
// no such wrapper.
func TestWrapperValues(t *testing.T) {
	for _, c := range []struct {
		text string
		want map[string]string
	}{
		// stateful_pod_control.go recordPodEvent and recordClaimEvent.
		{`create Pod db-2 in StatefulSet db failed error: admission webhook "policy.example.com" denied the request: no`,
			map[string]string{WrapperPod: "db-2", WrapperWorkload: "StatefulSet db"}},
		{`create Claim data-db-0 for Pod db-0 in StatefulSet db failed error: persistentvolumeclaims "data-db-0" is forbidden: exceeded quota: storage`,
			map[string]string{WrapperPod: "db-0", WrapperWorkload: "StatefulSet db"}},
		{`create Pod db-0 in StatefulSet db successful`, map[string]string{}},
		// operation_executor.go generateVolumeMsg with the operation generator's prefixes.
		{`MountVolume.SetUp failed for volume "cache" : hostPath type check failed: /run/x.sock is not a socket file`,
			map[string]string{WrapperVolume: "cache"}},
		{`MountVolume.NewMounter initialization failed for volume "pvc-1" : path "/mnt/disks/a" does not exist`,
			map[string]string{WrapperVolume: "pvc-1"}},
		{`AttachVolume.Attach failed for volume "pvc-9" : rpc error: code = Internal desc = quota`,
			map[string]string{WrapperVolume: "pvc-9"}},
		// Before 1.10: the unique name, then the pod's volume name in spec.Name.
		{`MountVolume.SetUp failed for volume "kubernetes.io/configmap/39e8-config-volume" (spec.Name: "config-volume") pod "39e8" (UID: "39e8") with: configmaps "prometheus" not found`,
			map[string]string{WrapperVolume: "config-volume"}},
		// libcni's pluginDescription in "plugin %s failed (add): %w".
		{`failed to setup network for sandbox "0a1b": plugin type="weave-net" name="weave" failed (add): no addresses`,
			map[string]string{WrapperPlugin: "weave-net"}},
		{`Back-off restarting failed container app in pod web-1 for volume reasons`, map[string]string{}},
		// kubectl's drain, evicting a pod the API server refuses.
		{`error when evicting pods/"api-7c6f64969c-m4m59" -n "shop" (will retry after 5s): Cannot evict pod as it would violate the pod's disruption budget.`,
			map[string]string{WrapperPod: "shop/api-7c6f64969c-m4m59"}},
	} {
		if got := WrapperValues(c.text); !maps.Equal(got, c.want) {
			t.Errorf("WrapperValues(%q) = %v, want %v", c.text, got, c.want)
		}
	}
}

// TestPrintedImage: an image named without its registry host takes the host the same
// message prints it with, and only the same reference's.
func TestPrintedImage(t *testing.T) {
	for _, c := range []struct{ image, text, want string }{
		{"acme/pause:3.6", `failed to get sandbox image "acme/pause:3.6": failed to pull and unpack image "docker.io/acme/pause:3.6": failed to resolve reference "docker.io/acme/pause:3.6": connection refused`,
			"docker.io/acme/pause:3.6"},
		{"pause:3.9", `failed to pull image "pause:3.9": failed to resolve reference "registry.local:5000/pause:3.9": not found`, "registry.local:5000/pause:3.9"},
		// The reference in a URL path is not the image as printed: v2 is no host.
		{"acme/app:1", `Head "https://registry-1.docker.io/v2/acme/app:1": dial tcp: i/o timeout`, "acme/app:1"},
		// Another reference that only ends like this one is not it.
		{"app:1", `failed to pull "quay.io/acme/myapp:1"`, "app:1"},
		{"quay.io/acme/app:1", `pulling "quay.io/acme/app:1"`, "quay.io/acme/app:1"},
		{"acme/app:1", `failed to pull "docker.io/acme/app:10"`, "acme/app:1"},
		// An official-library name, as the runtime resolved it, with the tag it implied.
		{"busybox", `Failed to pull image "busybox": failed to pull and unpack image "docker.io/library/busybox:latest": failed to copy: httpReadSeeker: failed open: unexpected status code https://registry-1.docker.io/v2/library/busybox/manifests/sha256:50aa: 429 Too Many Requests`,
			"docker.io/library/busybox:latest"},
		{"nginx:1.25", `failed to resolve reference "docker.io/library/nginx:1.25": not found`, "docker.io/library/nginx:1.25"},
		{"busybox", `failed to pull "docker.io/library/busybox-extras:1"`, "busybox"},
		{"busybox", `GET https://registry-1.docker.io/v2/library/busybox/manifests/latest: 429`, "busybox"},
	} {
		if got := PrintedImage(c.image, c.text); got != c.want {
			t.Errorf("PrintedImage(%q, %q) = %q, want %q", c.image, c.text, got, c.want)
		}
	}
}

// TestCauseNamesWhatTheWrappersName: a signature's cause may name, inside [[ ]], the pod,
// workload, volume and CNI plugin the message's wrappers print, though no pattern
// captures them; outside [[ ]] it may not, since a wording without the wrapper holds none.
func TestCauseNamesWhatTheWrappersName(t *testing.T) {
	sig := strings.Replace(templateSig, "cause: 'the registry refuses {image|repo}", "cause: 'the registry refuses[[ pod {pod} of {workload}]] {image|repo}", 1)
	sigs, err := ParseSignatures("t.yaml", []byte(sig))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		text string
		pod  *Pod
		want string
	}{
		{`create Pod db-1 in StatefulSet db failed error: pull image "app:1": 429 Too Many Requests`, nil, "the registry refuses pod db-1 of StatefulSet db app:1"},
		{`Failed to pull image "app:1": 429 Too Many Requests`, nil, "the registry refuses app:1"},
	} {
		caps, ok := sigs[0].match(c.text)
		if !ok {
			t.Fatalf("no match: %q", c.text)
		}
		l := new(Line{kind: textKindOf(TextEvent), Text: c.text}.withMore(&lineMore{object: ObjectRef{Kind: "StatefulSet", Namespace: "default", Name: "db"}}))
		if f := sigs[0].finding(l, caps); !strings.HasPrefix(f.Cause, c.want) {
			t.Errorf("%q: cause %q, want it to begin %q", c.text, f.Cause, c.want)
		}
	}
	bad := strings.Replace(templateSig, "cause: 'the registry refuses {image|repo}", "cause: 'the registry refuses volume {volume} {image|repo}", 1)
	if _, err := ParseSignatures("bad.yaml", []byte(bad)); err == nil || !strings.Contains(err.Error(), "{volume}") {
		t.Errorf("{volume} outside an optional part: %v", err)
	}
}

// TestCatalogReadingNamesTheWrappedVolume: a line whose known reading starts below the
// kubelet's volume wrapper still says which volume.
func TestCatalogReadingNamesTheWrappedVolume(t *testing.T) {
	r := readChain(`MountVolume.SetUp failed for volume "docker-sock" : hostPath type check failed: /var/run/docker.sock is not a socket file`, "kubelet")
	if r.outer == nil {
		t.Fatal("no reading")
	}
	if c := r.cause(); !strings.Contains(c, "volume docker-sock") {
		t.Errorf("cause %q does not name volume docker-sock", c)
	}
}

// TestPanicFrame reads the function a Go panic happened in, with its file and line, from
// the traceback below it, past the runtime's own frames, and nothing from lines that are
// not a traceback.
func TestPanicFrame(t *testing.T) {
	for _, c := range []struct {
		next []string
		want string
	}{
		{[]string{"[signal SIGSEGV: segmentation violation code=0x1 addr=0x0 pc=0x4a1b2c]", "", "goroutine 9 [running, locked to thread]:",
			"example.com/acme/agent/pkg/store.(*cache).lookup(0xc000010000, {0x0, 0x0})", "\t/src/pkg/store/cache.go:88 +0x1d"}, "store.(*cache).lookup (cache.go:88)"},
		{[]string{"goroutine 1 [running]:", "panic({0x5d2e40, 0xc00001e0a0})", "\t/usr/local/go/src/runtime/panic.go:770 +0x132",
			"main.loadConfig(...)", "\t/app/main.go:31"}, "main.loadConfig (main.go:31)"},
		{[]string{"goroutine 1 [running]:", "runtime.gopanic({0x5d2e40, 0xc00001e0a0})", "main.run()"}, "main.run"},
		{[]string{"exiting", "goroutine 1 [running]:", "main.main()"}, "main.main"},
		{[]string{"restarting in 5s", "connection refused", "retrying", "still failing", "goroutine 1 [running]:", "main.main()"}, ""},
		{[]string{"goroutine 1 [running]:", "the worker stopped"}, ""},
		// A dependency's frame names its module and version; a reporter's paste may keep
		// only that frame, in a code block of its own below the panic.
		{[]string{"2023-01-02T10:00:00Z\t[signal SIGSEGV: segmentation violation code=0x1 addr=0x0 pc=0x1354f30]", "```", "", "```",
			"sigs.k8s.io/controller-runtime/pkg/cache.(*informerCache).Get(...)",
			"\t/go/pkg/mod/sigs.k8s.io/controller-runtime@v0.14.1/pkg/cache/informer_cache.go:63"},
			"cache.(*informerCache).Get (sigs.k8s.io/controller-runtime@v0.14.1, informer_cache.go:63)"},
		// A recovering handler's stack: its own frames, then panic(), then the function.
		{[]string{"goroutine 2003 [running]:", "k8s.io/apimachinery/pkg/util/runtime.logPanic({0x38433c0, 0x5545b00}, {0x2d99020, 0x5480790})",
			"\tk8s.io/apimachinery/pkg/util/runtime/runtime.go:107 +0xbc", "k8s.io/apimachinery/pkg/util/runtime.HandleCrash({0x0, 0x0, 0xc002621500?})",
			"\tk8s.io/apimachinery/pkg/util/runtime/runtime.go:59 +0x108", "panic({0x2d99020?, 0x5480790?})", "\truntime/panic.go:770 +0x132",
			"k8s.io/cloud-provider/controllers/service.(*Controller).needsUpdate(0xc000a32340, 0xc0053a9688, 0xc006030288)",
			"\tk8s.io/cloud-provider/controllers/service/controller.go:583 +0x5a"}, "service.(*Controller).needsUpdate (controller.go:583)"},
	} {
		if got := panicFrame(c.next); got != c.want {
			t.Errorf("panicFrame(%q) = %q, want %q", c.next, got, c.want)
		}
	}
}
