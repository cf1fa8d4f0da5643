package redact

import (
	"strings"
)

// Names decide most redactions in structured data: an env var DB_PASSWORD, a JSON field
// dbPassword or a YAML key db-password all hold a credential, while password_policy,
// tokenizer, secretName or topologyKey do not. A name is split into lower-case words
// (camelCase, snake_case, kebab-case, dots) and judged by its last meaningful word,
// because qualifiers come first and the thing named comes last.

// splitWords splits an identifier into lower-case words without trailing digits.
func splitWords(name string) []string {
	var words []string
	cur := make([]byte, 0, len(name))
	flush := func() {
		w := strings.TrimRight(string(cur), "0123456789")
		if w != "" {
			words = append(words, w)
		}
		cur = cur[:0]
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'A' && c <= 'Z':
			if i > 0 {
				prev := name[i-1]
				prevLower := prev >= 'a' && prev <= 'z' || prev >= '0' && prev <= '9'
				// "APIKey": the K starts a word because a lower-case letter follows it.
				nextLower := i+1 < len(name) && name[i+1] >= 'a' && name[i+1] <= 'z'
				prevUpper := prev >= 'A' && prev <= 'Z'
				if prevLower || (prevUpper && nextLower) {
					flush()
				}
			}
			cur = append(cur, c+'a'-'A')
		case c >= 'a' && c <= 'z' || c >= '0' && c <= '9':
			cur = append(cur, c)
		default:
			flush()
		}
	}
	flush()
	return words
}

// modifierWords describe an encoding or a form of a value and say nothing about what it
// is: client-key-data is a client key, password_hash is a password.
var modifierWords = map[string]bool{
	"data": true, "value": true, "b64": true, "base64": true, "encoded": true, "encrypted": true,
	"enc": true, "raw": true, "plain": true, "plaintext": true, "str": true, "string": true,
	"hash": true, "json": true, "text": true,
}

// credentialWords name a credential on their own.
var credentialWords = map[string]bool{
	"password": true, "passwd": true, "passphrase": true, "secret": true, "token": true,
	"credential": true, "credentials": true, "creds": true,
	"apikey": true, "accesskey": true, "secretkey": true, "privatekey": true,
	"accountkey": true, "sharedaccesskey": true, "sastoken": true,
}

// credentialSuffixes catch compound words written without separators (DBPASSWORD,
// authtoken, clientsecret); "tokenizer" does not end with one of them.
var credentialSuffixes = []string{"password", "passwd", "passphrase", "secret", "token", "apikey", "accesskey", "secretkey", "privatekey"}

// keyQualifiers turn the ambiguous word "key" into a credential: api_key and
// private-key are secrets, topologyKey and a toleration's key are not.
var keyQualifiers = map[string]bool{
	"api": true, "access": true, "secret": true, "private": true, "account": true, "shared": true,
	"master": true, "encryption": true, "signing": true, "client": true, "auth": true,
	"storage": true, "subscription": true, "primary": true, "secondary": true, "hmac": true,
	"session": true, "license": true, "app": true, "ssh": true, "gpg": true, "pgp": true,
	"aes": true, "jwt": true, "consumer": true, "deploy": true, "webhook": true, "cookie": true,
}

// authQualifiers turn "auth" into a credential: basic_auth holds user:password.
var authQualifiers = map[string]bool{
	"basic": true, "proxy": true, "http": true, "api": true, "registry": true, "docker": true,
	"bearer": true, "smtp": true, "db": true,
}

// meaningfulWords drops trailing modifier words, keeping at least one word.
func meaningfulWords(name string) []string {
	w := splitWords(name)
	for len(w) > 1 && modifierWords[w[len(w)-1]] {
		w = w[:len(w)-1]
	}
	return w
}

// credentialName reports whether a field or key name names a credential.
func credentialName(name string) bool {
	return classifyName(meaningfulWords(name), false)
}

// credentialEnvName is credentialName for environment variables, where a bare KEY, AUTH
// or PASS is a credential too; PWD is the working directory, never a password.
func credentialEnvName(name string) bool {
	return classifyName(meaningfulWords(name), true)
}

func classifyName(w []string, env bool) bool {
	if len(w) == 0 {
		return false
	}
	last := w[len(w)-1]
	if credentialWords[last] {
		return true
	}
	qualified := len(w) > 1
	switch last {
	case "key":
		return (qualified && keyQualifiers[w[len(w)-2]]) || (env && !qualified)
	case "auth":
		return (qualified && authQualifiers[w[len(w)-2]]) || (env && !qualified)
	case "pwd":
		return qualified
	case "pass":
		return qualified || env
	case "private":
		return env
	}
	for _, s := range credentialSuffixes {
		if len(last) > len(s) && strings.HasSuffix(last, s) {
			return true
		}
	}
	return false
}

// referenceName reports names whose values are often object references, like the
// kubelet's secret="default/registry-creds".
func referenceName(name string) bool {
	w := meaningfulWords(name)
	if len(w) == 0 {
		return false
	}
	last := w[len(w)-1]
	return last == "secret" || last == "token"
}

// plausibleSecret rules out values that cannot be the credential a name suggests:
// empty, already masked, booleans and nulls, absolute file paths (tokenFile-like
// settings and projected token paths), and references to environment variables.
func plausibleSecret(name, v string) bool {
	return plausibleValue(v) && !(referenceName(name) && isObjectRef(strings.TrimSpace(v)))
}

// plausibleValue is plausibleSecret without what the name says.
func plausibleValue(v string) bool {
	v = strings.TrimSpace(v)
	if v == "" || isMask(v) {
		return false
	}
	switch strings.ToLower(v) {
	case "null", "nil", "<nil>", "none", "true", "false", "undefined", "[]", "{}", `""`, "''":
		return false
	}
	return !isAbsPath(v) && !isEnvReference(v) && strings.Trim(v, "*xX") != ""
}

// nameJudgement is what a variable's or a member's name says of its value, judged
// once for a name that recurs (the env var names of every Pod in a list).
type nameJudgement struct{ reference, credentialEnv, looseEnv bool }

func judgeName(name string) nameJudgement {
	return nameJudgement{referenceName(name), credentialEnvName(name), looseEnvName(name)}
}

// plausibleSecret is plausibleSecret of a name judged j.
func (j nameJudgement) plausibleSecret(v string) bool {
	return plausibleValue(v) && !(j.reference && isObjectRef(strings.TrimSpace(v)))
}

// nameJudgements remembers the judgements of one file's names.
type nameJudgements map[string]nameJudgement

func (m nameJudgements) judge(name string) nameJudgement {
	j, ok := m[name]
	if !ok {
		j = judgeName(name)
		if len(m) < maxMemoEntries {
			m[name] = j
		}
	}
	return j
}

func isAbsPath(v string) bool {
	if len(v) < 2 || v[0] != '/' {
		return false
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("/._-~", c) >= 0) {
			return false
		}
	}
	return true
}

func isEnvReference(v string) bool {
	return (strings.HasPrefix(v, "$(") && strings.HasSuffix(v, ")")) ||
		(strings.HasPrefix(v, "${") && strings.HasSuffix(v, "}")) ||
		(len(v) > 1 && v[0] == '$' && isEnvIdent(v[1:]))
}

func isEnvIdent(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// isObjectRef matches namespace/name as klog.KRef prints it.
func isObjectRef(v string) bool {
	ns, name, ok := strings.Cut(v, "/")
	return ok && isDNSName(ns) && isDNSName(name)
}

func isDNSName(s string) bool {
	if s == "" || len(s) > 253 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

// envAssignment splits NAME=value as the OCI spec and CRI inspect print environment
// variables; ok is false for anything else.
func envAssignment(s string) (name, value string, ok bool) {
	name, value, ok = strings.Cut(s, "=")
	if !ok || !isEnvName(name) {
		return "", "", false
	}
	return name, value, true
}

func isEnvName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || i > 0 && (c >= '0' && c <= '9' || c == '.' || c == '-')) {
			return false
		}
	}
	return true
}
