// Package redact removes secrets from bundle files before they are written, scans
// bundles for secrets that got through, and optionally pseudonymizes identities.
//
// # Policy
//
// A Policy is a bundle.Filter made of named rules; bundle.Writer runs it on every file
// before its bytes reach the archive, and it counts what it masked per rule and per
// file for the manifest (Policy.Redaction), never keeping a value. JSON documents are
// read structurally:
//
//   - secret-value: every value of a Secret's data and stringData. Keys, type and size
//     stay; a data value becomes the base64 of its mask, so the Secret still decodes as
//     a Kubernetes Secret.
//   - credential-env: env vars named like credentials (DB_PASSWORD, dbPassword,
//     db-password, API_KEY...) as {name, value}, CRI {key, value} and NAME=value strings,
//     in text too, and the kubelet's EnvVar{Name:X,Value:Y,...} dumps. Names such as
//     STRIPE_KEY, GITLAB_PAT, SMTP_PW, SENTRY_DSN, SLACK_WEBHOOK_URL, DB_CONN_STRING,
//     JWT_SECRET_BASE or API_TOKEN_PROD count unless the value is plain: a boolean, a
//     short number, a path or a URL without credentials.
//   - runtime-env: env values in crictl inspect output. PATH, HOSTNAME, HOME, TERM,
//     KUBERNETES_* and Service links stay, and so does a plainly harmless value (a
//     boolean, a short number, a path, a URL without credentials); the rest is masked,
//     since the runtime holds the resolved values of Secret references under any name.
//   - credential-field: any JSON member so named whose value is a string.
//   - docker-config-auth, kubeconfig-credential, gcp-service-account-key: the secret
//     fields of docker config auths, kubeconfig users and GCP service-account keys.
//   - JSON inside strings (last-applied-configuration and other annotations) is
//     redacted as a document of its own.
//
// Every other string, and every line of text (logs, journals, dmesg, YAML), goes through
// the text detectors: private-key (PEM, also with \n escapes), private-key-base64,
// jwt, aws-access-key-id, aws-secret-access-key, azure-connection-string, url-password
// (user and password), dsn-password, connection-string-password, docker-config-auth,
// bearer-token, authorization-header, credential-assignment (password=..., token:
// ...) and credential-argument (--password X, --requirepass X, --token X, sshpass
// -p X, redis-cli -a X; in a JSON argument list, the element after such a flag),
// then the vendor detectors. A JSON string written with escapes (\u0065yJ) is
// searched decoded. Lines of text that are JSON objects (structured
// logs) are redacted structurally and stay JSON.
//
// # Vendor detectors
//
// The vendor detectors are the rules of gitleaks' default configuration (GitHub,
// GitLab, Slack, Stripe, OpenAI, Anthropic, GCP, npm, PyPI, Vault, Twilio...), each
// masking under its gitleaks rule ID (<redacted:github-pat:3f9a1c>). gengitleaks
// converts them into gitleaks_rules.go and records their own true and false positives
// in gitleaks_samples_test.go (go generate; GitleaksVersion names the release), so
// podflow does not link gitleaks. They keep gitleaks' semantics (keyword prefilter,
// secret group, entropy floor, allowlists); a pattern that starts with its keyword runs
// only where the keyword starts, a value may stand on the line after its name, and a
// secret whose capture is part of a token is masked as the whole token. Left out:
// generic-api-key (the credential-name detectors cover its useful part), rules bound
// to file names, and private-key (podflow's own detector).
//
// A name counts as a credential's by its last meaningful word: DB_PASSWORD and
// client-key-data do, password_policy, tokenizer, secretName and topologyKey do not.
// Values that cannot be the credential (empty, booleans, absolute paths such as a
// projected token's path, $(VAR) references, namespace/name references) are kept.
//
// # Masks and their key
//
// A mask keeps the surrounding structure and says what it replaced:
//
//	<redacted:credential-env:3f9a1c>
//
// The six hex digits are a keyed hash (HMAC-SHA256) of the value, so one secret seen in
// a Pod's env, a Secret and a log masks to the same digest in every file. The key is
// random for each Policy by default: digests cannot be compared across bundles, and
// nobody without the key can test guesses against them, which matters because short
// passwords are easy to guess. A fixed key (Options.Key, --redact-key) makes output
// reproducible and digests comparable across bundles of the same cluster, at the price
// that anyone holding the key can test guesses; treat such a key as a secret.
//
// Redaction is idempotent: a mask is never masked again, so redacting a redacted bundle
// changes nothing. JSON stays valid JSON, and files with nothing to mask keep their
// exact bytes.
//
// # User rules
//
// Config adds rules from YAML: literal values, regexes whose first group is masked, and
// fields of a kind selected by path. See Config for the format.
//
// # Scan
//
// Scan runs the same detectors over a bundle and reports file, line and rule of each
// hit. A bundle redacted by a Policy scans clean.
//
// # Pseudonymization
//
// A Pseudonymizer replaces namespace, pod, node and workload names, label values, UIDs,
// IPv4 addresses and hostnames with stable stand-ins, in contents and paths alike, so
// references between files still resolve. Its Mapping is kept outside the bundle and
// reused for the next one.
package redact
