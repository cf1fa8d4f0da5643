package redact

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func FuzzRedact(f *testing.F) {
	for _, seed := range []string{
		`{"kind":"Secret","data":{"a":"aHVudGVyMg=="},"stringData":{"b":"x"}}`,
		`{"env":[{"name":"DB_PASSWORD","value":"hunter2"}],"args":["API_KEY=abc"]}`,
		`{"metadata":{"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{\"kind\":\"Secret\",\"stringData\":{\"p\":\"x\"}}"}}}`,
		`{"auths":{"r.io":{"auth":"dXNlcjpwYXNz"}},"users":[{"name":"a","user":{"token":"abc"}}]}`,
		`{"type":"service_account","private_key":"-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\n"}`,
		"E1129 10:15:00.1 1 a.go:1] \"x\" err=\"password=hunter2\" secret=\"ns/name\"\n",
		"Authorization: Bearer abcdef123456\nAuthorization: Basic dXNlcjpwYXNz\n",
		"-----BEGIN RSA PRIVATE KEY-----\\nMIIE\\n-----END RSA PRIVATE KEY-----",
		"LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQpNSUlF",
		"AKIAIOSFODNN7EXAMPLE aws_secret_access_key=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
		"postgres://u:p@h/db u:p@tcp(h)/db Server=a;Password=b c;AccountKey=k==;",
		"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig",
		"{\"password\":\"x\"}\nplain token=abc\n",
		`"just a string with password=x"`,
		`[1, 2.5e3, true, null, "token: abc"]`,
		// Inputs that once took quadratic time: separators whose values run to the end of
		// the line, and private-key headers without an END.
		strings.Repeat("token:", 5000),
		strings.Repeat("a", 5000) + "=" + strings.Repeat("password:", 5000),
		strings.Repeat("-----BEGIN PRIVATE KEY-----\nabc\n", 2000),
		// Vendor formats, names that hold credentials loosely, kubelet EnvVar dumps and
		// runtime env.
		"token ghp_4Ug2kqb8fVsc5XjZrKm0TLaQpW3nYdE6HiRo xoxb-1234567890-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx\n",
		`{"msg":"x","ref":"glpat-x2Rk9vLmQ7bN3cT5yW1z","u":"https://hooks.slack.com/services/T01ABCDEF23/B04GHIJKL56/a1B2c3D4e5F6g7H8i9J0k1L2"}`,
		"<stripeToken>\n    sk_live_4eC39HqLyjWDarjtT1zdp7dc\n</stripeToken>",
		`err="&Container{Env:[]EnvVar{EnvVar{Name:DB_PASSWORD,Value:a,b,ValueFrom:nil,},EnvVar{Name:X_KEY,Value:`,
		`{"info":{"runtimeSpec":{"process":{"env":["PATH=/bin","STRIPE_KEY=rk_x1","A_SERVICE_HOST=1.2.3.4","REF=AKIAZ3MHKQ7XW2PLNB4R"]}}}}`,
		"STRIPE_KEY=abc SENTRY_DSN=https://k@o1.ingest.sentry.io/1 curl -H \"Authorization: Bearer abcdefgh12\" x",
		strings.Repeat("ey", 3000) + strings.Repeat("s.", 3000) + strings.Repeat("api-", 2000),
		// Keywords in member names that make nothing of their values, next to names
		// that make a credential of theirs.
		`{"a":{"topologyKey":"zone","mountPath":"/p","secretKeyRef":{"name":"db","key":"x"}},"b":{"dbPassword":"x1","apiKey":"y2"},"c":{"auths":{"r":{"identitytoken":"t1"}}}}`,
	} {
		f.Add([]byte(seed))
	}
	p, err := New(Options{Key: []byte("fuzz")})
	if err != nil {
		f.Fatal(err)
	}
	slow := build(Options{}, []byte("fuzz"))
	slow.exhaustive = true
	names := []string{"cluster-resources/secrets/ns.json", "cluster-resources/pods/ns.json", "nodes/n1/kubelet.log", "nodes/n1/crictl/inspect/c1.json"}
	f.Fuzz(func(t *testing.T, in []byte) {
		for _, name := range names {
			once, err := p.Apply(name, in)
			if err != nil {
				t.Fatalf("Apply(%s): %v", name, err)
			}
			if want, _ := slow.Apply(name, in); !bytes.Equal(once, want) {
				t.Fatalf("the shortcuts changed the output for %s:\nin:   %q\nfast: %q\nslow: %q", name, in, once, want)
			}
			twice, err := p.Apply(name, once)
			if err != nil {
				t.Fatalf("Apply(%s) again: %v", name, err)
			}
			if !bytes.Equal(once, twice) {
				t.Fatalf("not idempotent for %s:\nin:    %q\nonce:  %q\ntwice: %q", name, in, once, twice)
			}
			if json.Valid(in) && !json.Valid(once) {
				t.Fatalf("JSON in, invalid JSON out for %s:\nin:  %q\nout: %q", name, in, once)
			}
		}
	})
}

func FuzzPseudonymize(f *testing.F) {
	f.Add([]byte(`{"items":[{"metadata":{"name":"web-0","namespace":"shop","uid":"0f5e3d9a-1b2c-4d5e-8f90-a1b2c3d4e5f6","labels":{"app":"web"}},"status":{"podIP":"10.244.1.5"}}]}`))
	f.Add([]byte("Nov 29 node-1 kubelet: pod=\"shop/web-0\" ip 10.244.1.5 \\n10.0.0.1"))
	f.Fuzz(func(t *testing.T, in []byte) {
		p := NewPseudonymizer(&Mapping{Version: MappingVersion, Names: map[string]string{}, IPs: map[string]string{}, UIDs: map[string]string{}})
		p.Learn(map[string][]byte{"cluster-resources/pods/shop.json": in}, nil)
		out, err := p.Apply("cluster-resources/pods/shop.json", in)
		if err != nil {
			t.Fatal(err)
		}
		if json.Valid(in) && !json.Valid(out) {
			t.Fatalf("JSON in, invalid JSON out:\nin:  %q\nout: %q", in, out)
		}
		for _, v := range p.Mapping().IPs {
			if !isIPv4([]byte(v)) {
				t.Fatalf("pseudonym %q is not an address", v)
			}
		}
	})
}
