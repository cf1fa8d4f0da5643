package redact

import (
	"strings"
	"testing"

	"podflow.dev/podflow/bundle"
)

// TestCredentialArguments: credentials passed as separate arguments, in a process
// list, a log, a shell's -c string, a container's args (one line or one element per
// line), and a JWT written with a JSON escape, are masked; flags that name where a
// credential is, and -p where it is a port, keep their value.
func TestCredentialArguments(t *testing.T) {
	runDetectorCases(t, "nodes/n1/kubelet.log", []detectorCase{
		{"ps --password", "root  1234  0.0 /usr/bin/app --user admin --password hunter2x --verbose", RuleCredentialArgument, []string{"hunter2x"}},
		{"redis requirepass", `redis-server --port 6379 --requirepass S3cretPass`, RuleCredentialArgument, []string{"S3cretPass"}},
		{"token", "exec app --token abcdef123456", RuleCredentialArgument, []string{"abcdef123456"}},
		{"sh -c", `sh -c "mysqladmin -u root -p Passw0rd ping"`, RuleCredentialArgument, []string{"Passw0rd"}},
		{"sshpass", "sshpass -p t0ps3cret ssh host", RuleCredentialArgument, []string{"t0ps3cret"}},
		{"redis-cli -a", "redis-cli -h cache -a R3disPass ping", RuleCredentialArgument, []string{"R3disPass"}},
		{"quoted value", `run --password 'qu0ted' now`, RuleCredentialArgument, []string{"qu0ted"}},
		{"one-line args", `args: ["--db-password", "xyzzy42"]`, RuleCredentialArgument, []string{"xyzzy42"}},
		{"token file is a path", "kubelet --token-file /var/run/token", "", nil},
		{"-p is a port", "docker run -p 8080:80 nginx", "", nil},
		{"flag after flag", "app --password --verbose", "", nil},
	})
}

func TestCredentialArgumentsInJSON(t *testing.T) {
	p := testPolicy(t)
	jwtLike := jwtTok
	escaped := `\u0065` + jwtLike[1:]
	in := `{"kind":"Pod","spec":{"containers":[{"name":"db","command":["redis-server"],"args":[` + "\n" +
		`"--requirepass",` + "\n" + `"S3cretPass",` + "\n" + `"--port",` + "\n" + `"6379"]},` +
		`{"name":"sh","command":["sh","-c","mysql -u root --password Passw0rd -e 'select 1'"]}]},` +
		`"metadata":{"annotations":{"note":"` + escaped + `"}}}`
	out, _ := applyOnce(t, p, "cluster-resources/pods/shop.json", in)
	for _, secret := range []string{"S3cretPass", "Passw0rd", jwtLike[20:]} {
		if strings.Contains(out, secret) {
			t.Errorf("%s survives: %s", secret, out)
		}
	}
	for _, kept := range []string{`"--requirepass"`, `"6379"`, `"--port"`} {
		if !strings.Contains(out, kept) {
			t.Errorf("%s masked: %s", kept, out)
		}
	}
}

func TestScanFindsCredentialArguments(t *testing.T) {
	b, err := bundle.New("mem", map[string][]byte{
		bundle.NodePath("n1", bundle.NodeKubeletLog): []byte("ok\nstarting redis-server --requirepass S3cretPass\n"),
	})
	if err != nil {
		t.Fatal(err)
	}
	hits := Scan(b)
	if len(hits) != 1 || hits[0].Rule != RuleCredentialArgument {
		t.Errorf("scan hits %+v, want one %s", hits, RuleCredentialArgument)
	}
}
