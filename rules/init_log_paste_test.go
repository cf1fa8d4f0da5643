package rules

import "testing"

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
