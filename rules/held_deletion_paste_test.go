package rules

import (
	"testing"

	"podflow.dev/podflow/analyze"
)

// A deleted pod whose finalizer cannot be taken off because the API server refuses
// every update of it (an admission plugin changes its spec on UPDATE): the held
// deletion is the root, with the refusal, the finalizer and the injector that
// likely changes the spec; the refusal is not a request-stage root of its own. The
// same refusal of an edit of a running pod stays the client's refused request.
func TestARefusedUpdateHoldsADeletion(t *testing.T) {
	const pods = "$ kubectl -n batch get pod\nNAME                         READY   STATUS        RESTARTS   AGE\nreport-28306992-x7k2p        0/1     Terminating   0          3d\n\n" +
		"$ kubectl -n batch patch pod report-28306992-x7k2p -p '{\"metadata\":{\"finalizers\":null}}'\n" +
		"The Pod \"report-28306992-x7k2p\" is invalid: spec.initContainers: Forbidden: pod updates may not add or remove containers\n"
	const pod = `apiVersion: v1
kind: Pod
metadata:
  annotations:
    sidecar.example.com/inject: "true"
    ....
  finalizers:
  - batch.kubernetes.io/job-tracking
  name: report-28306992-x7k2p
  namespace: batch
spec:
  containers:
  ....
`
	rs := catalogRoots(t, map[string]string{"kubectl.txt": pods, "pod.yaml": pod})
	wantOneRoot(t, rs, "termination-finalizers-stuck", "batch.kubernetes.io/job-tracking", "pod updates may not add or remove containers", "sidecar.example.com/inject")
	if rs[0].Stage != analyze.StageTermination {
		t.Errorf("stage %s", rs[0].Stage)
	}

	const edit = "$ kubectl -n web get pod\nNAME    READY   STATUS    RESTARTS   AGE\napi-0   1/1     Running   0          3d\n\n" +
		"$ kubectl -n web apply -f api.yaml\n" +
		"The Pod \"api-0\" is invalid: spec: Forbidden: pod updates may not change fields other than `spec.containers[*].image`, `spec.initContainers[*].image`, `spec.activeDeadlineSeconds` or `spec.tolerations` (only additions to existing tolerations)\n"
	for _, f := range catalogRoots(t, map[string]string{"kubectl.txt": edit}) {
		if f.Stage != analyze.StageRequest {
			t.Errorf("an edit of a running pod refused, read as %s %s: %s", f.Stage, f.Rule, f.Cause)
		}
	}
}
