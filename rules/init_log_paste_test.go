package rules

import (
	"testing"

	"podflow.dev/podflow/analyze"
)

// A ticket shows the failing init container only through kubectl: the pod's row says
// Init:CrashLoopBackOff, and `kubectl logs POD -c NAME` printed that container's log.
// The init container is the one whose log is there (the app containers never ran), and
// its log's error line is why. With two such logs the evidence does not say which one
// fails, and no init container is named.
func TestInitContainerKnownFromTheTableAndItsLog(t *testing.T) {
	table := "$ kubectl get pods\nNAME                       READY   STATUS                  RESTARTS   AGE\n" +
		"shop-api-6c9959c65c-4n49k   0/1     Init:CrashLoopBackOff   4          3m\n\n"
	log := func(c string) string {
		return "$ kubectl logs shop-api-6c9959c65c-4n49k -c " + c + "\n" +
			"wait-for-it.sh: waiting 30 seconds for shop-db.shop.svc.cluster.local:5432\n" +
			"wait-for-it.sh: timeout occurred after waiting 30 seconds for shop-db.shop.svc.cluster.local:5432\n\n"
	}
	rs := catalogRoots(t, map[string]string{"message.txt": table + log("wait-for-db")})
	wantOneRoot(t, rs, "start-init-container-failed", "wait-for-db", "shop-db.shop.svc.cluster.local:5432")

	rs = catalogRoots(t, map[string]string{"message.txt": table + log("wait-for-db") + log("migrate")})
	for _, r := range rs {
		if r.Rule == "start-init-container-failed" {
			t.Errorf("with two logs an init container is named: %s", r.Cause)
		}
	}
}

// The ticket says in words that an init container fails and quotes what it printed: a
// signature's reading of that run failure (a chown the volume refuses) is the init
// container's, at the start stage, with the signature's meaning kept. A program that
// cannot start at all (a library its loader does not find) keeps its own rule.
func TestProseInitContainerTakesARunFailure(t *testing.T) {
	text := "After enabling persistence the pod stays in Init:CrashLoopBackOff; its fix-perms init container fails with:\n\n" +
		"> chown: /srv/data: Operation not permitted\n"
	rs := catalogRoots(t, map[string]string{"message.txt": text})
	wantRoot(t, rs, analyze.StageStart, "start-init-container-failed", "init container", "/srv/data", "Operation not permitted")
	lib := "The pod stays in Init:CrashLoopBackOff; the init container prints:\n\n" +
		"> /bin/sh: error while loading shared libraries: libdl.so.2: cannot open shared object file: No such file or directory\n"
	rs = catalogRoots(t, map[string]string{"message.txt": lib})
	r := wantRootAt(t, rs, analyze.StageRuntime, "libdl.so.2")
	if r.Rule == "start-init-container-failed" {
		t.Errorf("a library the loader does not find was made the init container's failure: %s", r.Cause)
	}
}
