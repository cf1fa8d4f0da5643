package redact

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// mask is what p writes for value under rule, for building expected outputs.
func mask(p *Policy, rule, value string) string { return string(p.mask(rule, []byte(value))) }

func redactJSON(t *testing.T, p *Policy, name, in string) string {
	t.Helper()
	out, err := p.Apply(name, []byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if !json.Valid(out) {
		t.Fatalf("output is not valid JSON:\n%s", out)
	}
	again, _ := p.Apply(name, out)
	if string(again) != string(out) {
		t.Fatalf("not idempotent:\nonce:  %s\ntwice: %s", out, again)
	}
	return string(out)
}

const podJSON = `{
  "apiVersion": "v1",
  "kind": "Pod",
  "metadata": {
    "name": "web-0",
    "namespace": "shop",
    "uid": "0f5e3d9a-1b2c-4d5e-8f90-a1b2c3d4e5f6",
    "resourceVersion": "918273",
    "annotations": {
      "kubectl.kubernetes.io/last-applied-configuration": "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"spec\":{\"containers\":[{\"env\":[{\"name\":\"DB_PASSWORD\",\"value\":\"hunter2\"}]}]}}\n"
    }
  },
  "spec": {
    "containers": [
      {
        "name": "app",
        "image": "registry.local/app@sha256:0123abcd",
        "args": ["--db-password=hunter2", "--log-level=debug"],
        "env": [
          {"name": "DB_PASSWORD", "value": "hunter2"},
          {"name": "dbPassword", "value": "hunter3"},
          {"name": "db-password", "value": "hunter4"},
          {"name": "PASSWORD_POLICY", "value": "strict"},
          {"name": "PWD", "value": "/srv"},
          {"name": "API_TOKEN", "valueFrom": {"secretKeyRef": {"name": "api", "key": "token"}}},
          {"name": "TOKEN_FILE", "value": "/var/run/secrets/tokens/api"}
        ],
        "volumeMounts": [{"name": "kube-api-access-x2x9z", "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"}]
      }
    ],
    "tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"}],
    "affinity": {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 1, "podAffinityTerm": {"topologyKey": "kubernetes.io/hostname"}}]}},
    "volumes": [{"name": "kube-api-access-x2x9z", "projected": {"sources": [{"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}}]}},
                {"name": "creds", "secret": {"secretName": "db-creds"}}]
  }
}`

func TestPodStructure(t *testing.T) {
	p := testPolicy(t)
	out := redactJSON(t, p, "cluster-resources/pods/shop.json", podJSON)
	want := podJSON
	for _, r := range []struct{ from, to string }{
		{`\"value\":\"hunter2\"`, `\"value\":\"` + mask(p, RuleCredentialEnv, "hunter2") + `\"`},
		{`"--db-password=hunter2"`, `"--db-password=` + mask(p, RuleCredentialAssign, "hunter2") + `"`},
		{`{"name": "DB_PASSWORD", "value": "hunter2"}`, `{"name": "DB_PASSWORD", "value": "` + mask(p, RuleCredentialEnv, "hunter2") + `"}`},
		{`"hunter3"`, `"` + mask(p, RuleCredentialEnv, "hunter3") + `"`},
		{`"hunter4"`, `"` + mask(p, RuleCredentialEnv, "hunter4") + `"`},
	} {
		if !strings.Contains(want, r.from) {
			t.Fatalf("fixture lacks %s", r.from)
		}
		want = strings.Replace(want, r.from, r.to, 1)
	}
	if out != want {
		t.Fatalf("pod redaction:\ngot:  %s\nwant: %s", out, want)
	}
	// One secret masks to the same digest in the env, the args and the annotation.
	if d := p.digest([]byte("hunter2")); strings.Count(out, ":"+d+">") != 3 {
		t.Fatalf("digest %s should appear 3 times:\n%s", d, out)
	}
}

func TestUntouchedJSONKeepsItsBytes(t *testing.T) {
	p := testPolicy(t)
	in := `{"kind":"ConfigMap",  "data": {"log-level":"debug","numbers":[1e3, -0.5, 12345678901234567890]},"metadata":{"uid":"0f5e3d9a-1b2c-4d5e-8f90-a1b2c3d4e5f6","resourceVersion":"42"}}`
	if out := redactJSON(t, p, "cluster-resources/configmaps/shop.json", in); out != in {
		t.Fatalf("untouched document changed:\n%s", out)
	}
}

func TestSecretsKeepKeysTypeAndSize(t *testing.T) {
	p := testPolicy(t)
	// A typed client-go list: neither the list nor its items carry a kind; the file's
	// place in the bundle says they are Secrets.
	in := `{"metadata":{"resourceVersion":"7"},"items":[{"metadata":{"name":"db","namespace":"shop"},"type":"Opaque",` +
		`"data":{"password":"aHVudGVyMg==","user":"Ym9i"},"stringData":{"url":"postgres://bob:hunter2@db/x"}}]}`
	out := redactJSON(t, p, "cluster-resources/secrets/shop.json", in)
	pw := base64.StdEncoding.EncodeToString([]byte(fmt.Sprintf("<redacted:secret-value:%s:size=7>", p.digest([]byte("hunter2")))))
	user := base64.StdEncoding.EncodeToString([]byte(fmt.Sprintf("<redacted:secret-value:%s:size=3>", p.digest([]byte("bob")))))
	url := fmt.Sprintf("<redacted:secret-value:%s:size=27>", p.digest([]byte("postgres://bob:hunter2@db/x")))
	want := `{"metadata":{"resourceVersion":"7"},"items":[{"metadata":{"name":"db","namespace":"shop"},"type":"Opaque",` +
		`"data":{"password":"` + pw + `","user":"` + user + `"},"stringData":{"url":"` + url + `"}}]}`
	if out != want {
		t.Fatalf("secret redaction:\ngot:  %s\nwant: %s", out, want)
	}
	// The redacted list still decodes as Kubernetes Secrets, and each value reads as its mask.
	var list corev1.SecretList
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("redacted secrets do not decode: %v", err)
	}
	if got := string(list.Items[0].Data["password"]); got != fmt.Sprintf("<redacted:secret-value:%s:size=7>", p.digest([]byte("hunter2"))) {
		t.Fatalf("decoded value = %q", got)
	}
	// A Secret anywhere (kubectl's List, with kinds) is treated the same way.
	out = redactJSON(t, p, "anything.json", `{"kind":"List","items":[{"kind":"Secret","data":{"k":"aHVudGVyMg=="}},{"kind":"ConfigMap","data":{"k":"aHVudGVyMg=="}}]}`)
	if want := `{"kind":"List","items":[{"kind":"Secret","data":{"k":"` + pw + `"}},{"kind":"ConfigMap","data":{"k":"aHVudGVyMg=="}}]}`; out != want {
		t.Fatalf("kubectl list:\ngot:  %s\nwant: %s", out, want)
	}
}

func TestCRIInspect(t *testing.T) {
	p := testPolicy(t)
	in := `{"status":{"id":"4f1a","state":"CONTAINER_RUNNING","mounts":[{"containerPath":"/var/run/secrets/kubernetes.io/serviceaccount","hostPath":"/var/lib/kubelet/pods/0f5e/volumes/kubernetes.io~projected/kube-api-access-x2x9z","readonly":true}]},` +
		`"info":{"config":{"envs":[{"key":"STRIPE_API_KEY","value":"sk_live_abc"},{"key":"UPSTREAM_REF","value":"from-a-secret"},{"key":"EMPTY","value":""}]},` +
		`"runtimeSpec":{"process":{"env":["PATH=/usr/bin","STRIPE_API_KEY=sk_live_abc","UPSTREAM_REF=from-a-secret"],"args":["/app","--token","plain"]}}}}`
	in = strings.Replace(in, `"env":["PATH=/usr/bin",`, `"env":["PATH=/usr/bin","HOSTNAME=web-0","KUBERNETES_SERVICE_HOST=10.96.0.1","DB_SERVICE_PORT_SQL=5432","DB_PORT_5432_TCP_ADDR=10.96.3.4","GH=ghp_`+"4Ug2kqb8fVsc5XjZrKm0TLaQpW3nYdE6HiRo"+`",`, 1)
	out, rules := applyOnce(t, p, "nodes/n1/crictl/inspect/4f1a.json", in)
	// The runtime's own variables, KUBERNETES_* and Service links are evidence; any
	// other value that is not plainly harmless is masked: the runtime's env holds the
	// values of Secret references resolved, under any name (UPSTREAM_REF here).
	want := in
	m := mask(p, RuleRuntimeEnv, "sk_live_abc")
	want = strings.Replace(want, `"value":"sk_live_abc"`, `"value":"`+m+`"`, 1)
	want = strings.Replace(want, `"STRIPE_API_KEY=sk_live_abc"`, `"STRIPE_API_KEY=`+m+`"`, 1)
	ref := mask(p, RuleRuntimeEnv, "from-a-secret")
	want = strings.Replace(want, `"value":"from-a-secret"`, `"value":"`+ref+`"`, 1)
	want = strings.Replace(want, `"UPSTREAM_REF=from-a-secret"`, `"UPSTREAM_REF=`+ref+`"`, 1)
	want = strings.Replace(want, "ghp_4Ug2kqb8fVsc5XjZrKm0TLaQpW3nYdE6HiRo", mask(p, RuleRuntimeEnv, "ghp_4Ug2kqb8fVsc5XjZrKm0TLaQpW3nYdE6HiRo"), 1)
	// A token passed as the argument after --token is a credential too.
	want = strings.Replace(want, `"--token","plain"`, `"--token","`+mask(p, RuleCredentialArgument, "plain")+`"`, 1)
	if out != want {
		t.Fatalf("crictl inspect:\ngot:  %s\nwant: %s", out, want)
	}
	if rules[RuleRuntimeEnv] != 5 {
		t.Fatalf("runtime-env fired %d times, want 5: %v", rules[RuleRuntimeEnv], rules)
	}
	if again, _ := applyOnce(t, p, "nodes/n1/crictl/inspect/4f1a.json", out); again != out {
		t.Fatalf("not idempotent:\n%s\n%s", out, again)
	}
	// Elsewhere (a pod list, a log), only credential-named variables are masked.
	other, _ := applyOnce(t, p, "nodes/n1/crictl/ps.json", in)
	if !strings.Contains(other, `"PATH=/usr/bin"`) || !strings.Contains(other, "from-a-secret") || strings.Contains(other, "sk_live_abc") {
		t.Fatalf("outside inspect output only credential names are masked:\n%s", other)
	}
}

func TestStructuralRules(t *testing.T) {
	p := testPolicy(t)
	cases := []struct {
		name, in string
		rule     string
		secret   string
	}{
		{"docker config", `{"auths":{"registry.local":{"username":"bob","auth":"Ym9iOmh1bnRlcjI="},"ghcr.io":{"identitytoken":"gho_abc123"}}}`, RuleDockerConfigAuth, "Ym9iOmh1bnRlcjI="},
		{"docker identity token", `{"auths":{"ghcr.io":{"identitytoken":"gho_abc123"}}}`, RuleDockerConfigAuth, "gho_abc123"},
		{"kubeconfig token", `{"kind":"Config","users":[{"name":"admin","user":{"token":"kubeconfig-token-1"}}]}`, RuleKubeconfig, "kubeconfig-token-1"},
		{"kubeconfig client key", `{"users":[{"name":"admin","user":{"client-certificate-data":"Y2VydA==","client-key-data":"a2V5LWJ5dGVz"}}]}`, RuleKubeconfig, "a2V5LWJ5dGVz"},
		{"kubeconfig auth provider", `{"users":[{"name":"oidc","user":{"auth-provider":{"name":"oidc","config":{"refresh-token":"r3fr3sh"}}}}]}`, RuleKubeconfig, "r3fr3sh"},
		{"gcp service account", `{"type":"service_account","project_id":"shop","private_key_id":"abc","private_key":"not-pem-but-secret","client_email":"x@shop.iam.gserviceaccount.com"}`, RuleGCPServiceAccount, "not-pem-but-secret"},
		{"credential field", `{"database":{"host":"db","dbPassword":"hunter2","password_policy":"strict"}}`, RuleCredentialField, "hunter2"},
		{"probe header", `{"httpGet":{"httpHeaders":[{"name":"Authorization","value":"Basic Ym9iOmh1bnRlcjI="}]}}`, RuleCredentialEnv, "Ym9iOmh1bnRlcjI="},
		{"configmap values scanned", `{"kind":"ConfigMap","data":{"app.properties":"db.url=jdbc:x\ndb.password=hunter2\n"}}`, RuleCredentialAssign, "hunter2"},
		{"event message scanned", `{"kind":"Event","reason":"Failed","message":"pull https://bob:hunter2@registry.local/app failed"}`, RuleURLPassword, "hunter2"},
		{"nested annotation manifests", `{"metadata":{"annotations":{"a":"{\"metadata\":{\"annotations\":{\"b\":\"{\\\"token\\\":\\\"t0k\\\"}\"}}}"}}}`, RuleCredentialField, "t0k"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, rules := applyOnce(t, p, "x.json", c.in)
			if !json.Valid([]byte(out)) {
				t.Fatalf("invalid JSON out: %s", out)
			}
			if rules[c.rule] == 0 || strings.Contains(out, c.secret) {
				t.Fatalf("rule %s (fired %v) should mask %q:\n%s", c.rule, rules, c.secret, out)
			}
		})
	}
}

func TestStructuralNearMisses(t *testing.T) {
	p := testPolicy(t)
	for _, in := range []string{
		`{"kind":"ServiceAccount","secrets":[{"name":"builder-token-x2x9z"}],"automountServiceAccountToken":true}`,
		`{"projected":{"sources":[{"serviceAccountToken":{"audience":"vault","expirationSeconds":3607,"path":"token"}}]}}`,
		`{"tolerations":[{"key":"dedicated","operator":"Equal","value":"gpu"}],"nodeSelector":{"kubernetes.io/os":"linux"}}`,
		`{"volumes":[{"secret":{"secretName":"db-creds","items":[{"key":"password","path":"db/password"}]}}]}`,
		`{"env":[{"name":"SECRET_NAME","value":"db-creds"},{"name":"KEY_ID","value":"k1"},{"name":"TOKEN_TTL","value":"3600"}]}`,
		`{"kubeletConfig":{"authentication":{"webhook":{"enabled":true}},"authorization":{"mode":"Webhook"},"tlsPrivateKeyFile":"/var/lib/kubelet/pki/kubelet.key"}}`,
		`{"users":[{"name":"admin","user":{"tokenFile":"/etc/kubernetes/token","client-certificate":"/etc/kubernetes/pki/admin.crt"}}]}`,
		`{"kind":"ValidatingWebhookConfiguration","webhooks":[{"clientConfig":{"caBundle":"` + b64Cert + `"}}]}`,
	} {
		if out := redactJSON(t, p, "x.json", in); out != in {
			t.Errorf("near miss redacted:\nin:  %s\nout: %s", in, out)
		}
	}
}

func TestStructuredLogLinesStayJSON(t *testing.T) {
	p := testPolicy(t)
	in := `{"level":"info","msg":"connect","dsn":"postgres://app:hunter2@db/x","config":{"apiKey":"k-123"}}` + "\n" +
		"plain line password=hunter2\n" +
		`{"level":"error","err":"token=abc123 rejected"}` + "\n"
	out, err := p.Apply("cluster-resources/pods/logs/shop/web/app.log", []byte(in))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("line count changed: %q", out)
	}
	for _, i := range []int{0, 2} {
		if !json.Valid([]byte(lines[i])) {
			t.Fatalf("line %d is no longer JSON: %s", i+1, lines[i])
		}
	}
	for _, s := range []string{"hunter2", "k-123", "abc123"} {
		if strings.Contains(string(out), s) {
			t.Fatalf("%s survived: %s", s, out)
		}
	}
}

func TestDigestsAndKeys(t *testing.T) {
	a1, _ := New(Options{Key: []byte("one")})
	a2, _ := New(Options{Key: []byte("one")})
	b, _ := New(Options{Key: []byte("two")})
	r1, _ := New(Options{})
	r2, _ := New(Options{})
	in := []byte("DB_PASSWORD=hunter2")
	o1, _ := a1.Apply("x.log", in)
	o2, _ := a2.Apply("x.log", in)
	ob, _ := b.Apply("x.log", in)
	or1, _ := r1.Apply("x.log", in)
	or2, _ := r2.Apply("x.log", in)
	if string(o1) != string(o2) {
		t.Fatalf("same key, different output: %s / %s", o1, o2)
	}
	if string(o1) == string(ob) {
		t.Fatalf("different keys, same digest: %s", o1)
	}
	if string(or1) == string(or2) {
		t.Fatalf("random keys gave the same digest: %s", or1)
	}
	if !maskPattern.Match(o1) || len(p6(o1)) != 6 {
		t.Fatalf("mask shape: %s", o1)
	}
}

// p6 returns the digest of the first mask in b.
func p6(b []byte) string {
	m := maskPattern.Find(b)
	parts := strings.Split(strings.Trim(string(m), "<>"), ":")
	return parts[2]
}

func TestReportHoldsNoValues(t *testing.T) {
	p := testPolicy(t)
	if _, err := p.Apply("cluster-resources/pods/shop.json", []byte(podJSON)); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Apply("nodes/n1/kubelet.log", []byte("password=hunter9 AKIAIOSFODNN7EXAMPLE\n")); err != nil {
		t.Fatal(err)
	}
	r := p.Redaction()
	want := map[string]map[string]int{
		"cluster-resources/pods/shop.json": {RuleCredentialEnv: 4, RuleCredentialAssign: 1},
		"nodes/n1/kubelet.log":             {RuleCredentialAssign: 1, RuleAWSAccessKeyID: 1},
	}
	if fmt.Sprint(r.ByFile) != fmt.Sprint(want) || r.Total != 7 || r.Policy != PolicyName || r.Version != PolicyVersion || !r.Enabled {
		t.Fatalf("report = %+v", r)
	}
	data, _ := json.Marshal(r)
	for _, s := range []string{"hunter", "AKIA"} {
		if strings.Contains(string(data), s) {
			t.Fatalf("report leaks %q: %s", s, data)
		}
	}
}

func TestDisabledPolicyPassesThrough(t *testing.T) {
	p, err := New(Options{Disabled: true})
	if err != nil {
		t.Fatal(err)
	}
	in := []byte("password=hunter2")
	out, _ := p.Apply("x.log", in)
	if string(out) != string(in) {
		t.Fatalf("disabled policy changed data: %s", out)
	}
	if r := p.Redaction(); r.Enabled || r.Policy != "none" || r.Total != 0 {
		t.Fatalf("disabled report = %+v", r)
	}
}

func TestSyntheticPodListRedacts(t *testing.T) {
	p := testPolicy(t)
	in := syntheticPodList(64 << 10)
	out := redactJSON(t, p, "cluster-resources/pods/shop.json", string(in))
	n := strings.Count(string(in), `"API_TOKEN"`)
	if n == 0 || strings.Count(out, `"value": "<redacted:credential-env:`) != n || strings.Contains(out, `"tok-`) {
		t.Fatalf("%d API_TOKEN values, masks: %d", n, strings.Count(out, "<redacted:credential-env:"))
	}
}
