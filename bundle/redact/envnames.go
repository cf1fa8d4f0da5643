package redact

import (
	"bytes"
	"strconv"
	"strings"
)

// Environment variables name credentials more loosely than fields do: STRIPE_KEY,
// GITLAB_PAT, SMTP_PW, SENTRY_DSN, SLACK_WEBHOOK_URL, DB_CONN_STRING, JWT_SECRET_BASE or
// API_TOKEN_PROD hold one, while a JSON field named key (a toleration's, a
// secretKeyRef's) does not. Such a name counts when its value does not look plain: a
// boolean, a number, a path or a URL without credentials is kept.

// looseCredentialLast are last words that make an environment variable's name a
// credential's when a word qualifies them (a bare KEY is one already).
var looseCredentialLast = map[string]bool{
	"key": true, "pat": true, "pw": true, "pwd": true, "dsn": true, "webhook": true,
	"connstring": true, "connectionstring": true,
}

// plainTail are words after SECRET or TOKEN that make the variable describe the
// credential rather than hold it: TOKEN_FILE, SECRET_NAME, TOKEN_TTL.
var plainTail = map[string]bool{
	"name": true, "names": true, "file": true, "path": true, "dir": true, "url": true, "uri": true,
	"ref": true, "id": true, "type": true, "kind": true, "length": true, "len": true, "ttl": true,
	"expiry": true, "expiration": true, "expires": true, "seconds": true, "version": true,
	"header": true, "prefix": true, "mount": true, "namespace": true, "count": true, "size": true,
	"audience": true, "issuer": true, "endpoint": true, "location": true, "store": true,
	"provider": true, "source": true, "enabled": true, "mode": true, "format": true,
}

// looseEnvName reports environment variable names that hold a credential unless the
// value looks plain.
func looseEnvName(name string) bool {
	w := splitWords(name)
	if len(w) == 0 {
		return false
	}
	last := w[len(w)-1]
	if len(w) > 1 {
		switch {
		case looseCredentialLast[last], last == "url" && w[len(w)-2] == "webhook":
			return true
		case last == "string" && (w[len(w)-2] == "conn" || w[len(w)-2] == "connection"):
			return true
		}
	}
	for i, x := range w[:len(w)-1] {
		if x != "secret" && x != "token" {
			continue
		}
		plain := false
		for _, y := range w[i+1:] {
			if plainTail[y] {
				plain = true
			}
		}
		if !plain {
			return true
		}
	}
	return false
}

// envCredential reports whether an environment variable's value is to be masked.
func envCredential(name, v string) bool { return judgeName(name).envCredential(v) }

// envCredential is envCredential of a name judged j.
func (j nameJudgement) envCredential(v string) bool {
	if !j.plausibleSecret(v) {
		return false
	}
	if j.credentialEnv {
		return true
	}
	return j.looseEnv && !plainValue(v)
}

// plainValue reports values that cannot be a credential whatever the name: booleans,
// numbers, paths and URLs without credentials.
func plainValue(v string) bool {
	v = strings.TrimSpace(v)
	switch strings.ToLower(v) {
	case "yes", "no", "on", "off", "enabled", "disabled":
		return true
	}
	// Ports, counts, sizes and timeouts; a long number is an ID or a secret.
	if _, err := strconv.ParseFloat(v, 64); err == nil && len(v) <= 12 {
		return true
	}
	if isAbsPath(v) || strings.HasPrefix(v, "./") || strings.HasPrefix(v, "~/") {
		return true
	}
	if scheme, rest, ok := strings.Cut(v, "://"); ok && scheme != "" && isEnvIdent(scheme) {
		authority, _, _ := strings.Cut(rest, "/")
		return !strings.Contains(authority, "@") && !strings.ContainsAny(rest, "?#")
	}
	return false
}

// envNameKeywords are in every name looseEnvName accepts that holds none of
// assignKeywords.
var (
	envNameKeywords = keywords("pat", "pw", "dsn", "webhook", "conn")
	envNameSet      = newFoldSet(envNameKeywords)
)

// envKeywords are in every environment variable name envCredential accepts
// beyond those credential-assignment finds.
var envKeywords = keywords("_key", "_pat", "_pw", "_dsn", "webhook", "_conn", "_secret", "_token", "envvar{")

// scanEnvAssignments masks NAME=value in text where NAME is an environment variable
// of a credential (STRIPE_KEY=…, export GITLAB_PAT=…), and the values of the EnvVar
// structs the kubelet prints in its journal (EnvVar{Name:DB_PASSWORD,Value:…,…}).
func scanEnvAssignments(line []byte) [][2]int {
	out := scanEnvVarDumps(line)
	for i := 0; i < len(line); i++ {
		if line[i] != '=' {
			continue
		}
		j := i
		for j > 0 && (isWordByte(line[j-1])) {
			j--
		}
		name := line[j:i]
		if len(name) < 3 || !upperSnake(name) || (j > 0 && (line[j-1] == '$' || line[j-1] == '.')) {
			continue
		}
		s, e := assignedValue(line, i+1)
		if e <= s || !envCredential(string(name), string(line[s:e])) {
			continue
		}
		out = append(out, [2]int{s, e})
		i = e
	}
	return out
}

var envVarDump = []byte("EnvVar{Name:")

// scanEnvVarDumps reads EnvVar{Name:X,Value:Y,ValueFrom:…} as the kubelet's %+v
// of a container's env prints it. The value runs to ",ValueFrom:", since it may hold
// commas.
func scanEnvVarDumps(line []byte) [][2]int {
	var out [][2]int
	for i := 0; ; {
		k := bytes.Index(line[i:], envVarDump)
		if k < 0 {
			return out
		}
		ns := i + k + len(envVarDump)
		ne := bytes.IndexByte(line[ns:], ',')
		if ne < 0 {
			return out
		}
		ne += ns
		i = ne
		if !bytes.HasPrefix(line[ne:], []byte(",Value:")) {
			continue
		}
		vs := ne + len(",Value:")
		ve := bytes.Index(line[vs:], []byte(",ValueFrom:"))
		if ve < 0 {
			ve = bytes.IndexAny(line[vs:], ",}")
			if ve < 0 {
				continue
			}
		}
		ve += vs
		if ve > vs && envCredential(string(line[ns:ne]), string(line[vs:ve])) {
			out = append(out, [2]int{vs, ve})
		}
		i = ve
	}
}

func upperSnake(b []byte) bool {
	letter := false
	for _, c := range b {
		switch {
		case c >= 'A' && c <= 'Z':
			letter = true
		case c >= '0' && c <= '9', c == '_':
		default:
			return false
		}
	}
	return letter
}
