package rules

import "testing"

// A message often implies a value it does not print: the APIService a failing group's
// discovery names (VERSION.GROUP), the mount helper a "bad option" refusal lacks (from
// the file system type the mount asked for), the label a StatefulSet's pod is refused
// for (its revision, the StatefulSet's name and a hash). The cause names it, as the fix
// needs it.
func TestCausesNameTheValueTheirMessageImplies(t *testing.T) {
	cases := []struct {
		name, rule, paste string
		want              []string
	}{
		{"apiservice", "termination-namespace-discovery-failed",
			"Discovery failed for some groups, 1 failing: unable to retrieve the complete list of server APIs: custom.metrics.k8s.io/v1beta1: the server is currently unable to handle the request\n",
			[]string{"the APIService v1beta1.custom.metrics.k8s.io"}},
		{"mount helper", "volume-nfs-mount-failed",
			"Output: mount: /var/lib/kubelet/pods/3f0c/volumes/kubernetes.io~nfs/shared: bad option; for several filesystems (e.g. nfs, cifs) you might need a /sbin/mount.<type> helper program.\n",
			[]string{"/sbin/mount.nfs helper"}},
		{"revision label", "request-invalid",
			"  Warning  FailedCreate  2m (x12 over 5m)  statefulset-controller  create Pod release-0123456789abcdef-database-cluster-member-0 in StatefulSet release-0123456789abcdef-database-cluster-member failed error: Pod \"release-0123456789abcdef-database-cluster-member-0\" is invalid: metadata.labels: Invalid value: \"release-0123456789abcdef-database-cluster-member-7b9c5d4f6d\": must be no more than 63 characters\n",
			[]string{"controller-revision-hash", "52 characters"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rs := catalogRoots(t, map[string]string{"message.txt": c.paste})
			wantOneRoot(t, rs, c.rule, c.want...)
		})
	}
}

// A message that quotes its value keeps it whole in the cause: the AppArmor profile the
// node has not loaded, every bound of a LimitRange refusal that lists several, and the
// field kubectl's own schema check finds missing.
func TestCausesKeepTheQuotedValuesOfTheirMessage(t *testing.T) {
	cases := []struct {
		name, stage, rule, paste string
		want                     []string
	}{
		{"apparmor profile", "start", "start-apparmor-not-enforceable",
			"Status:       Pending\nReason:       AppArmor\nMessage:      Cannot enforce AppArmor: profile \"deny-write\" is not loaded\n",
			[]string{`profile "deny-write" is not loaded`}},
		{"limitrange bounds", "admission", "admission-limitrange-violated",
			"Error from server (Forbidden): error when creating \"web.yaml\": pods \"web\" is forbidden: [minimum memory usage per Pod is 256Mi, but request is 134217728., minimum memory usage per Container is 256Mi, but request is 128Mi.]\n",
			[]string{"per Pod is 256Mi", "per Container is 256Mi"}},
		{"kubectl validation", "request", "request-invalid",
			"error: error validating \"web.yaml\": error validating data: ValidationError(Deployment.spec): missing required field \"selector\" in io.k8s.api.apps.v1.DeploymentSpec; if you choose to ignore these errors, turn validation off with --validate=false\n",
			[]string{"Deployment is refused", `missing required field "selector"`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rs := catalogRoots(t, map[string]string{"message.txt": c.paste})
			wantFirstRoot(t, rs, c.stage, c.rule, c.want...)
		})
	}
}

// kubectl's schema check reports a field indented one level too deep twice: unknown
// where it is, missing where it belongs. The misplaced field is the cause, and the
// manifest is named even when kubectl lists the errors in brackets.
func TestAMisplacedFieldIsUnknownNotMissing(t *testing.T) {
	rs := catalogRoots(t, map[string]string{"message.txt": `error: error validating "app.yaml": error validating data: [ValidationError(Deployment.spec.selector): unknown field "template" in io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector, ValidationError(Deployment.spec): missing required field "template" in io.k8s.api.apps.v1.DeploymentSpec]; if you choose to ignore these errors, turn validation off with --validate=false` + "\n"})
	wantOneRoot(t, rs, "request-unknown-field", "template", "app.yaml")
}
