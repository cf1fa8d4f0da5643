package redact

import (
	"strings"
	"testing"
)

func testPolicy(t testing.TB) *Policy {
	t.Helper()
	p, err := New(Options{Key: []byte("test-key")})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// applyOnce redacts in as a log file and returns the output and the rules that fired.
func applyOnce(t *testing.T, p *Policy, name, in string) (string, map[string]int) {
	t.Helper()
	before := p.Redaction().ByFile[name]
	out, err := p.Apply(name, []byte(in))
	if err != nil {
		t.Fatalf("Apply: %v", err)
	}
	got := map[string]int{}
	for rule, n := range p.Redaction().ByFile[name] {
		if d := n - before[rule]; d > 0 {
			got[rule] = d
		}
	}
	return string(out), got
}

type detectorCase struct {
	name string
	in   string
	// rule is the rule that must fire; empty for a near miss that must stay untouched.
	rule string
	// secrets must all be gone from the output.
	secrets []string
}

func runDetectorCases(t *testing.T, file string, cases []detectorCase) {
	p := testPolicy(t)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, rules := applyOnce(t, p, file, c.in)
			if c.rule == "" {
				if out != c.in || len(rules) != 0 {
					t.Fatalf("near miss was redacted (%v):\nin:  %s\nout: %s", rules, c.in, out)
				}
				return
			}
			if rules[c.rule] == 0 {
				t.Fatalf("rule %s did not fire (fired: %v):\nin:  %s\nout: %s", c.rule, rules, c.in, out)
			}
			if !strings.Contains(out, "<redacted:"+c.rule+":") {
				t.Fatalf("no %s mask in output: %s", c.rule, out)
			}
			for _, s := range c.secrets {
				if strings.Contains(out, s) {
					t.Fatalf("secret %q survived:\nout: %s", s, out)
				}
			}
			again, _ := p.Apply(file, []byte(out))
			if string(again) != out {
				t.Fatalf("second redaction changed the output:\nonce:  %s\ntwice: %s", out, again)
			}
		})
	}
}

const (
	pemKey  = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo\n4lgOEePzNm0tRgeLezV6ffAt0gunVTLw7onL\n-----END RSA PRIVATE KEY-----"
	pemCert = "-----BEGIN CERTIFICATE-----\nMIIDdzCCAl+gAwIBAgIEAgAAuTANBgkqhkiG9w0B\n-----END CERTIFICATE-----"
	// base64 of "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo\n"
	b64Key  = "LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQpNSUlFb3dJQkFBS0NBUUVBdTFTVTFMZlZMUEhDb3pNeEgyTW8K"
	b64Cert = "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSURkekNDQWwrZ0F3SUJBZ0lFQWdBQXVUQU5CZ2txaGtpRzl3MEIK"
	jwtTok  = "eyJhbGciOiJSUzI1NiIsImtpZCI6IjEyMyJ9.eyJpc3MiOiJrdWJlcm5ldGVzL3NlcnZpY2VhY2NvdW50In0.c2lnbmF0dXJlLWJ5dGVz"
)

func TestDetectors(t *testing.T) {
	runDetectorCases(t, "nodes/n1/kubelet.log", []detectorCase{
		// private-key
		{"pem multi-line", "key:\n" + pemKey + "\nafter", RulePrivateKey, []string{"MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo", "4lgOEePzNm0tRgeLezV6ffAt0gunVTLw7onL"}},
		{"pem escaped in log", `msg="loaded key ` + strings.ReplaceAll(pemKey, "\n", `\n`) + `" done`, RulePrivateKey, []string{"MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo"}},
		{"pem truncated", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ", RulePrivateKey, []string{"b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ"}},
		{"pem certificate is not a key", "ca:\n" + pemCert + "\n", "", nil},
		// private-key-base64
		{"base64 pem key", "client-key-data: " + b64Key, RulePrivateKeyBase64, []string{b64Key[20:]}},
		{"base64 pem wrapped", "k=" + b64Key[:76] + "\n" + b64Key[76:] + "\n", RulePrivateKeyBase64, []string{b64Key[20:60], b64Key[76:]}},
		{"base64 certificate is not a key", "certificate-authority-data: " + b64Cert, "", nil},
		// jwt
		{"jwt", "using token " + jwtTok + " for call", RuleJWT, []string{jwtTok[40:]}},
		{"base64 json is not a jwt", "annotation eyJhcGlWZXJzaW9uIjoidjEiLCJraW5kIjoiUG9kIn0= stays", "", nil},
		// aws
		{"aws access key id", "creds AKIAIOSFODNN7EXAMPLE loaded", RuleAWSAccessKeyID, []string{"AKIAIOSFODNN7EXAMPLE"}},
		{"aws session key id", "ASIAY34FZKBOKMUTVV7A", RuleAWSAccessKeyID, []string{"ASIAY34FZKBOKMUTVV7A"}},
		{"aws key id inside a word", "XAKIAIOSFODNN7EXAMPLEX", "", nil},
		{"aws secret key", "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", RuleAWSSecretKey, []string{"wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"}},
		{"aws secret key env", `AWS_SECRET_ACCESS_KEY="wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"`, RuleAWSSecretKey, []string{"wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"}},
		{"git sha is not an aws secret", "checked out commit 3f9a1c2be07d4b1a9c5e3f9a1c2be07d4b1a9c5e (HEAD)", "", nil},
		{"40 chars out of aws context", "digest=wJalrXUtnFEMIK7MDENGbPxRfiCYEXAMPLEKEY", "", nil},
		// azure
		{"azure storage", "DefaultEndpointsProtocol=https;AccountName=shop;AccountKey=Zm9vYmFyYmF6cXV4+/==;EndpointSuffix=core.windows.net", RuleAzureConnection, []string{"Zm9vYmFyYmF6cXV4+/=="}},
		{"azure service bus", "Endpoint=sb://x.servicebus.windows.net/;SharedAccessKeyName=root;SharedAccessKey=c2VjcmV0a2V5dmFsdWU=", RuleAzureConnection, []string{"c2VjcmV0a2V5dmFsdWU="}},
		{"azure account name only", "AccountName=shop;EndpointSuffix=core.windows.net", "", nil},
		// url-password
		{"url password", "dial postgres://app:s3cr3t@db.shop.svc:5432/orders", RuleURLPassword, []string{"s3cr3t"}},
		{"url password redis", `"redis://:hunter22@cache:6379/0"`, RuleURLPassword, []string{"hunter22"}},
		{"url user without password", "git clone https://git@github.com/x/y", "", nil},
		{"image digest is not a password", "pulling registry.local:5000/app@sha256:0123456789abcdef and docker://registry:5000/app@sha256:aa", "", nil},
		{"url without credentials", `Get "http://10.244.1.5:8080/healthz": dial tcp 10.244.1.5:8080: connect: connection refused`, "", nil},
		// dsn-password
		{"mysql dsn", "dsn=root:p4ss:word@tcp(mysql:3306)/shop?parseTime=true", RuleDSNPassword, []string{"p4ss:word"}},
		{"dsn without password", "connecting @tcp(mysql:3306) failed", "", nil},
		// connection-string-password
		{"sql server", "Server=db;Database=shop;User Id=sa;Password=Pa ss w0rd;", RuleConnectionPassword, []string{"Pa ss w0rd"}},
		{"odbc pwd", "Driver={x};Uid=app;Pwd=s3cr3t;", RuleConnectionPassword, []string{"s3cr3t"}},
		{"PWD is the working directory", "HOME=/root PWD=/home/user SHLVL=1", "", nil},
		// docker-config-auth
		{"docker auth in text", `config: {"auths":{"registry.local":{"auth":"dXNlcjpwYXNzd29yZA=="}}} extra`, RuleDockerConfigAuth, []string{"dXNlcjpwYXNzd29yZA=="}},
		// bearer-token
		{"bearer", "curl -H 'Authorization: Bearer 9f8e7d6c5b4a3f2e1d0c'", RuleBearerToken, []string{"9f8e7d6c5b4a3f2e1d0c"}},
		{"bearer prose", `"Unable to authenticate the request" err="[invalid bearer token, service account token has expired]"`, "", nil},
		{"bearer authentication prose", "Bearer authentication is enabled", "", nil},
		// authorization-header
		{"basic auth header", "Authorization: Basic dXNlcjpwYXNz", RuleAuthorizationHeader, []string{"dXNlcjpwYXNz"}},
		{"raw token header", `"authorization": "t0k3n-abcdef"`, RuleAuthorizationHeader, []string{"t0k3n-abcdef"}},
		{"kubelet authorization mode", "authorization:\n  mode: Webhook\nauthorization: AlwaysAllow", "", nil},
		{"apiserver flag", "--authorization-mode=Node,RBAC", "", nil},
		// credential-assignment
		{"env snake", "DB_PASSWORD=hunter2 started", RuleCredentialAssign, []string{"hunter2"}},
		{"yaml camel", "  dbPassword: hunter2", RuleCredentialAssign, []string{"hunter2"}},
		{"flag kebab", "args: --db-password=hunter2 --verbose", RuleCredentialAssign, []string{"hunter2"}},
		{"json in text", `payload {"user":"bob","password":"hunter2"} sent`, RuleCredentialAssign, []string{"hunter2"}},
		{"escaped json in klog", `err="bad body {\"api_key\":\"k-123456\"}"`, RuleCredentialAssign, []string{"k-123456"}},
		{"nested in klog err", `E1129 10:15:00.1 1 a.go:1] "login failed" err="auth: password=hunter2 rejected" pod="shop/web"`, RuleCredentialAssign, []string{"hunter2"}},
		{"api key header", "X-Api-Key: 0a1b2c3d", RuleCredentialAssign, []string{"0a1b2c3d"}},
		{"query token", "GET /cb?access_token=abc.def.ghi&state=1", RuleCredentialAssign, []string{"abc.def.ghi"}},
		{"client secret quoted", `client_secret='s3cr3t value'`, RuleCredentialAssign, []string{"s3cr3t value"}},
		{"yaml list item", "users:\n  - password: hunter2\n", RuleCredentialAssign, []string{"hunter2"}},
		{"go map print", "config map[password:hunter2 user:bob]", RuleCredentialAssign, []string{"hunter2"}},
		{"generated value in prose", "refresh failed for token: gho_16C7e42F292c6912E7710c838347Ae178B4a", RuleCredentialAssign, []string{"gho_16C7e42F292c6912E7710c838347Ae178B4a"}},
		{"containerd anonymous token", `failed to authorize: failed to fetch anonymous token: unexpected status from GET request to https://registry.shop.example/token?scope=repository%3Ashop%2Fapi%3Apull&service=registry.shop.example: 401 Unauthorized`, "", nil},
		{"oauth token error", "failed to fetch oauth token: Post \"https://auth.docker.io/token\": dial tcp: lookup auth.docker.io: no such host", "", nil},
		{"password policy", "password_policy: strict", "", nil},
		{"tokenizer", "tokenizer=bert-base tokenizer: wordpiece", "", nil},
		{"secret reference", `"Unable to retrieve pull secret" pod="shop/web" secret="shop/regcred"`, "", nil},
		{"projected token path", "token: /var/run/secrets/kubernetes.io/serviceaccount/token", "", nil},
		{"token file setting", "tokenFile=/var/run/secrets/tokens/vault-token", "", nil},
		{"resource version and uid", `resourceVersion="918273" uid="0f5e3d9a-1b2c-4d5e-8f90-a1b2c3d4e5f6" podUID="0f5e3d9a-1b2c-4d5e-8f90-a1b2c3d4e5f6"`, "", nil},
		{"secret key ref", "secretKeyRef: {name: db, key: password}", "", nil},
		{"topology key", "topologyKey: kubernetes.io/hostname", "", nil},
		{"empty and placeholders", `password="" token=null api_key=${API_KEY} secret=true`, "", nil},
	})
}
