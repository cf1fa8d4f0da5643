package redact

import (
	"bytes"
	"encoding/base64"
	"regexp"
)

// Rule IDs. They name what a mask replaced, appear in masks, in the manifest's counts and
// in scan hits, and are stable: tooling may match on them.
const (
	RuleSecretValue         = "secret-value"            // a value of a Secret's data or stringData
	RuleCredentialEnv       = "credential-env"          // env var named like a credential (DB_PASSWORD)
	RuleRuntimeEnv          = "runtime-env"             // env value in crictl inspect output named like a credential
	RuleCredentialField     = "credential-field"        // JSON member named like a credential (dbPassword)
	RuleDockerConfigAuth    = "docker-config-auth"      // auth, password or token of a docker config's auths
	RuleKubeconfig          = "kubeconfig-credential"   // token, password, client-key-data of a kubeconfig user
	RuleGCPServiceAccount   = "gcp-service-account-key" // private_key of a GCP service-account JSON key
	RulePrivateKey          = "private-key"             // PEM private key, plain or with \n escapes
	RulePrivateKeyBase64    = "private-key-base64"      // base64 of a PEM private key (LS0tLS1CRUdJTi...)
	RuleJWT                 = "jwt"                     // JSON Web Token
	RuleAWSAccessKeyID      = "aws-access-key-id"       // AKIA.../ASIA... access key ID
	RuleAWSSecretKey        = "aws-secret-access-key"   // 40-character secret key after aws_secret_access_key
	RuleAzureConnection     = "azure-connection-string" // AccountKey=, SharedAccessKey=, SharedAccessSignature=
	RuleURLPassword         = "url-password"            // user:password of scheme://user:password@host
	RuleDSNPassword         = "dsn-password"            // user:password@tcp(host) (Go MySQL DSN)
	RuleConnectionPassword  = "connection-string-password"
	RuleBearerToken         = "bearer-token"          // Bearer <token>
	RuleAuthorizationHeader = "authorization-header"  // Authorization: <credentials>
	RuleCredentialAssign    = "credential-assignment" // password=..., token: ... in free text
)

// structuralRules are the rules applied to JSON structure rather than text.
var structuralRules = []string{
	RuleSecretValue, RuleCredentialEnv, RuleCredentialField, RuleDockerConfigAuth, RuleKubeconfig,
	RuleGCPServiceAccount,
}

// detector finds secrets in text. Line detectors run their regexp only on lines that
// hold one of their keywords, which keeps redaction near memory speed on logs; find
// replaces the line search for detectors that span lines or have no keyword.
type detector struct {
	rule     string
	keywords [][]byte // lower-case
	re       *regexp.Regexp
	// pick returns the part of a match to mask, given the submatch indexes of re in line.
	pick func(line []byte, m []int) (start, end int, ok bool)
	// scan replaces re and pick: it returns the spans to mask in one line.
	scan func(line []byte) [][2]int
	// hits replaces scan for detectors that use where their keywords are: it gets a
	// line and the offsets in it at which keywords end.
	hits func(line []byte, ends []int) [][2]int
	// region replaces the line search for detectors whose pattern spans lines: it
	// returns the spans to mask in the text from a keyword's line on.
	region func(text []byte) [][2]int
	// find returns spans to mask in data.
	find func(data []byte) [][2]int
}

func keywords(ks ...string) [][]byte {
	out := make([][]byte, len(ks))
	for i, k := range ks {
		out[i] = []byte(k)
	}
	return out
}

// group picks capture group g.
func group(g int) func([]byte, []int) (int, int, bool) {
	return func(_ []byte, m []int) (int, int, bool) {
		return m[2*g], m[2*g+1], m[2*g] >= 0
	}
}

// builtinDetectors in priority order: when two detectors mask the same bytes, the
// first one names the mask.
var builtinDetectors = []detector{
	{rule: RulePrivateKey, keywords: keywords("-----begin "), find: findPEM},
	{rule: RulePrivateKeyBase64, keywords: keywords("ls0tls1crudjti"), find: findBase64PEM},
	{rule: RuleJWT, keywords: keywords("eyj"), re: jwtRE, pick: group(0)},
	{rule: RuleAWSAccessKeyID, keywords: keywords("akia", "asia", "abia", "acca"), re: awsKeyIDRE, pick: group(1)},
	{rule: RuleAWSSecretKey, keywords: keywords("secret_access_key", "secretaccesskey", "secret-access-key"), re: awsSecretRE, pick: group(1)},
	{rule: RuleAzureConnection, keywords: keywords("accountkey", "sharedaccesskey", "sharedaccesssignature"), re: azureRE, pick: group(1)},
	// ":\/\/" finds URLs in JSON whose writer escaped '/', so the JSON strings holding
	// them are searched (decoded, they hold "://").
	{rule: RuleURLPassword, keywords: keywords("://", `:\/\/`), scan: scanURLPasswords},
	{rule: RuleDSNPassword, keywords: keywords("@tcp(", "@tcp6(", "@udp(", "@unix("), re: dsnRE, pick: group(2)},
	{rule: RuleConnectionPassword, keywords: keywords("password", "pwd"), re: connPasswordRE, pick: pickConnPassword},
	{rule: RuleDockerConfigAuth, keywords: keywords(`"auth"`), re: dockerAuthRE, pick: group(1)},
	{rule: RuleBearerToken, keywords: keywords("bearer"), re: bearerRE, pick: pickBearer},
	{rule: RuleAuthorizationHeader, keywords: keywords("authorization"), re: authorizationRE, pick: pickAuthorization},
	{rule: RuleCredentialAssign, keywords: assignKeywords, scan: scanAssignments},
	{rule: RuleCredentialArgument, keywords: argKeywords, scan: scanCredentialArgs},
	{rule: RuleCredentialEnv, keywords: envKeywords, scan: scanEnvAssignments},
}

var (
	jwtRE       = regexp.MustCompile(`eyJ[A-Za-z0-9_-]{4,}\.eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*`)
	awsKeyIDRE  = regexp.MustCompile(`\b((?:AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16})\b`)
	awsSecretRE = regexp.MustCompile(`(?i)secret[_-]?access[_-]?key\\?["']?[ \t]*[:=][ \t]*\\?["']?([A-Za-z0-9/+=]{40})(?:[^A-Za-z0-9/+=]|$)`)
	azureRE     = regexp.MustCompile(`(?i)(?:AccountKey|SharedAccessKey|SharedAccessSignature)[ \t]*=[ \t]*([^;"'\s\\]+)`)
	dsnRE       = regexp.MustCompile(`([^\s:/@"'<>\\]+):([^\s@"'<>\\]+)@(?:tcp6?|udp|unix)\(`)
	// The connection-string password runs to the next ';' and may hold spaces.
	connPasswordRE  = regexp.MustCompile(`(?i)(?:password|pwd)[ \t]*=[ \t]*([^;"'\r\n\\]*)`)
	dockerAuthRE    = regexp.MustCompile(`"auth"[ \t]*:[ \t]*"([^"\\]+)"`)
	bearerRE        = regexp.MustCompile(`(?i)\bbearer[ \t]+([A-Za-z0-9._~+/=-]{8,})`)
	authorizationRE = regexp.MustCompile(`(?i)\bauthorization\\?["']?[ \t]*[:=][ \t]*\\?["']?((?:bearer|basic|token|digest|negotiate|ntlm)[ \t]+)?([^\s"'\\,;{\[<][^\s"'\\,;<]*)`)
)

// scanURLPasswords masks the user and password of scheme://user:password@host. It starts from
// each "://" rather than trying a pattern at every offset of a line full of URLs.
func scanURLPasswords(line []byte) [][2]int {
	var out [][2]int
	for i := 0; ; {
		j := bytes.Index(line[i:], []byte("://"))
		if j < 0 {
			return out
		}
		at := i + j
		i = at + 3
		if at == 0 || !isNameStart(line[at-1]) {
			continue // no scheme
		}
		k := i
		for k < len(line) && bytes.IndexByte([]byte(" \t\r\n/?#@\"'<>\\"), line[k]) < 0 {
			k++
		}
		if k >= len(line) || line[k] != '@' {
			continue
		}
		userinfo := line[i:k]
		c := bytes.IndexByte(userinfo, ':')
		if c < 0 || c == len(userinfo)-1 {
			continue
		}
		// The user goes with the password: together they are the credential, and a
		// user name alone helps to guess it.
		out = append(out, [2]int{i, k})
		i = k
	}
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}

func hasDigit(b []byte) bool {
	for _, c := range b {
		if c >= '0' && c <= '9' {
			return true
		}
	}
	return false
}

func pickBearer(line []byte, m []int) (int, int, bool) {
	tok := line[m[2]:m[3]]
	return m[2], m[3], hasDigit(tok)
}

func pickAuthorization(line []byte, m []int) (int, int, bool) {
	v := line[m[4]:m[5]]
	if m[2] < 0 {
		// Without a scheme only something that looks like a credential counts, so
		// "authorization: Webhook" in a kubelet config stays.
		if len(v) < 8 || !(hasDigit(v) || bytes.ContainsAny(v, "+/=._-")) {
			return 0, 0, false
		}
	}
	return m[4], m[5], plausibleSecret("authorization", string(v))
}

// pickConnPassword masks Password= and Pwd= only inside ';'-separated connection
// strings; PWD=/home/user in an environment dump is not a password.
func pickConnPassword(line []byte, m []int) (int, int, bool) {
	if m[0] > 0 && isWordByte(line[m[0]-1]) {
		return 0, 0, false
	}
	before := bytes.TrimRight(line[:m[0]], " \t")
	inConn := len(before) > 0 && before[len(before)-1] == ';'
	if m[3] < len(line) && line[m[3]] == ';' {
		inConn = true
	}
	if !inConn {
		return 0, 0, false
	}
	end := m[3]
	for end > m[2] && (line[end-1] == ' ' || line[end-1] == '\t') {
		end--
	}
	v := line[m[2]:end]
	return m[2], end, plausibleSecret("password", string(v))
}

// assignKeywords are in every name credentialName accepts.
var (
	assignKeywords = keywords("pass", "pwd", "secret", "token", "key", "cred", "auth", "private")
	assignSet      = newFoldSet(assignKeywords)
)

// scanAssignments masks the value of name=value, name: value, "name": "value" and
// name=\"value\" when the name is a credential's. It reads every separator of the line
// rather than matching a pattern, so assignments nested in a quoted value (klog's
// err="... password=x ...") are found too, at the cost of one pass over the line.
func scanAssignments(line []byte) [][2]int {
	var out [][2]int
	for i, c := range line {
		if c != '=' && c != ':' || (len(out) > 0 && i < out[len(out)-1][1]) {
			continue // a separator inside a masked value is masked with it
		}
		j := i
		for j > 0 && (line[j-1] == ' ' || line[j-1] == '\t') {
			j--
		}
		if j > 0 && (line[j-1] == '"' || line[j-1] == '\'') {
			j--
			if j > 0 && line[j-1] == '\\' {
				j--
			}
		}
		closing := byte(0)
		if j < i && (line[j] == '"' || line[j] == '\'' || line[j] == '\\') {
			closing = line[j]
		}
		nameEnd := j
		for j > 0 && isNameByte(line[j-1]) {
			j--
		}
		for j < nameEnd && !isNameStart(line[j]) {
			j++
		}
		if j == nameEnd || !assignSet.inBytes(line[j:nameEnd]) {
			continue
		}
		name := string(line[j:nameEnd])
		if !credentialName(name) {
			continue
		}
		// A quoted key is quoted on both sides; "https://host/token": closes a URL.
		quotedName := closing != 0 && j > 0 && (line[j-1] == closing || closing == '\\' && line[j-1] == '"')
		v := i + 1
		for v < len(line) && (line[v] == ' ' || line[v] == '\t') {
			v++
		}
		s, e := assignedValue(line, v)
		if e <= s || !plausibleSecret(name, string(line[s:e])) {
			continue
		}
		// "failed to fetch anonymous token: unexpected status" is prose, not a key and its
		// value: after "name: " in running text, only a value that looks generated counts.
		prose := c == ':' && v > i+1 && s == v && !quotedName && !keyPosition(line, j)
		if prose && !generated(line[s:e]) {
			continue
		}
		out = append(out, [2]int{s, e})
	}
	return out
}

// keyPosition reports whether a name starting at j begins its line, as a YAML key or
// a header does (optionally after indentation and a "- " list marker).
func keyPosition(line []byte, j int) bool {
	k := j
	for k > 0 && (line[k-1] == ' ' || line[k-1] == '\t') {
		k--
	}
	if k > 0 && line[k-1] == '-' {
		k--
		for k > 0 && (line[k-1] == ' ' || line[k-1] == '\t') {
			k--
		}
	}
	return k == 0
}

// generated reports values that look machine-made rather than like a word: long
// enough and mixing letters with digits or with base64 and token punctuation.
func generated(v []byte) bool {
	if len(v) < 8 {
		return false
	}
	var letter, digit, punct bool
	for _, c := range v {
		switch {
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			letter = true
		case c >= '0' && c <= '9':
			digit = true
		case c == '+' || c == '/' || c == '=' || c == '_' || c == '-' || c == '.' || c == '~':
			punct = true
		}
	}
	return letter && (digit || punct)
}

func isNameByte(c byte) bool { return isWordByte(c) || c == '.' || c == '-' }

func isNameStart(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' }

// foldSet finds lower-case keywords in names, ignoring case: a quick test before a
// name is split into words and classified.
type foldSet struct{ m *matcher }

func newFoldSet(ks [][]byte) foldSet { return foldSet{newMatcher([]detector{{keywords: ks}}, nil)} }

// maxFoldName is the longest name foldSet.in reads; a longer one is rare enough to be
// classified the slow way.
const maxFoldName = 64

// in reports whether name holds one of the keywords, or is longer than maxFoldName.
func (f foldSet) in(name string) bool { return foldIn(f.m, name) }

func foldIn[T string | []byte](m *matcher, name T) bool {
	if len(name) > maxFoldName {
		return true
	}
	s, first := uint32(0), m.firstOut
	for i := 0; i < len(name); i++ {
		s = m.table[s+uint32(m.class[name[i]])]
		if s >= first {
			return true
		}
	}
	return false
}

// inBytes is in for a name in a line.
func (f foldSet) inBytes(name []byte) bool { return foldIn(f.m, name) }

// assignedValue returns the span of the value that starts at i: the inside of a
// "quoted", \"escaped\" or 'single-quoted' string, or a bare word.
func assignedValue(line []byte, i int) (int, int) {
	if i >= len(line) {
		return i, i
	}
	switch {
	case line[i] == '"':
		for j := i + 1; j < len(line) && j-i < maxValue; j++ {
			switch line[j] {
			case '\\':
				j++
			case '"':
				return i + 1, j
			}
		}
		return i + 1, min(len(line), i+maxValue)
	case line[i] == '\'':
		if j := bytes.IndexByte(line[i+1:], '\''); j >= 0 {
			return i + 1, i + 1 + j
		}
		return i + 1, len(line)
	case line[i] == '\\' && i+1 < len(line) && line[i+1] == '"':
		if j := bytes.Index(line[i+2:], []byte(`\"`)); j >= 0 {
			return i + 2, i + 2 + j
		}
		return i + 2, len(line)
	}
	j := i
	for j < len(line) && j-i < maxValue && bytes.IndexByte([]byte(" \t\r\n\"',;&\\"), line[j]) < 0 {
		j++
	}
	return i, j
}

// maxValue bounds how far a value is read, so a line of separators costs linear time.
const maxValue = 64 << 10

// maxPEM bounds how far a PEM block is searched for its END line.
const maxPEM = 64 << 10

// findPEM masks whole PEM private-key blocks, BEGIN to END, whether the line breaks are
// real or written as \n inside a JSON string or a log line. A block cut short (a
// truncated log line) is masked as far as its body goes.
func findPEM(data []byte) [][2]int {
	var out [][2]int
	begin := []byte("-----BEGIN ")
	// nextEnd caches, per label, where the next END line is, so many BEGIN lines
	// without an END cost one search rather than one each.
	nextEnd := map[string]int{}
	for i := 0; i < len(data); {
		j := bytes.Index(data[i:], begin)
		if j < 0 {
			break
		}
		start := i + j
		labelStart := start + len(begin)
		i = labelStart
		lim := min(labelStart+64, len(data))
		k := bytes.Index(data[labelStart:lim], []byte("-----"))
		if k < 0 {
			continue
		}
		label := data[labelStart : labelStart+k]
		if !bytes.Contains(label, []byte("PRIVATE KEY")) || !upperLabel(label) {
			continue
		}
		body := labelStart + k + 5
		endMarker := append(append([]byte("-----END "), label...), "-----"...)
		e, seen := nextEnd[string(label)]
		if !seen || (e >= 0 && e < body) {
			e = bytes.Index(data[body:], endMarker)
			if e >= 0 {
				e += body
			}
			nextEnd[string(label)] = e
		}
		end := body
		if e >= 0 && e-body <= maxPEM {
			end = e + len(endMarker)
		} else {
			for end < len(data) && end-body < maxPEM && pemBodyByte(data[end]) && !bytes.HasPrefix(data[end:], []byte("-----")) {
				end++
			}
		}
		out = append(out, [2]int{start, end})
		i = end
	}
	return out
}

func upperLabel(b []byte) bool {
	for _, c := range b {
		if !(c >= 'A' && c <= 'Z' || c == ' ' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

func isBase64Byte(c byte) bool {
	return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/' || c == '='
}

func pemBodyByte(c byte) bool {
	return isBase64Byte(c) || bytes.IndexByte([]byte(" \t\r\n\\:,-"), c) >= 0
}

// findBase64PEM masks base64-encoded PEM private keys, including the 76-column line
// wrapping of base64(1). Encoded certificates start the same way and are kept.
func findBase64PEM(data []byte) [][2]int {
	var out [][2]int
	marker := []byte("LS0tLS1CRUdJTi")
	for i := 0; i < len(data); {
		j := bytes.Index(data[i:], marker)
		if j < 0 {
			break
		}
		start := i + j
		end := start
		for end < len(data) && isBase64Byte(data[end]) {
			end++
		}
		i = end
		if start > 0 && isBase64Byte(data[start-1]) && data[start-1] != '=' {
			continue // the marker is inside a longer base64 string, not at its start
		}
		for {
			next := end
			if next < len(data) && data[next] == '\r' {
				next++
			}
			if next >= len(data) || data[next] != '\n' {
				break
			}
			next++
			k := next
			for k < len(data) && isBase64Byte(data[k]) {
				k++
			}
			if k == next || (k < len(data) && data[k] != '\n' && data[k] != '\r') {
				break
			}
			end = k
		}
		i = end
		head := data[start:min(end, start+88)]
		head = bytes.Map(func(r rune) rune {
			if r == '\r' || r == '\n' {
				return -1
			}
			return r
		}, head)
		head = head[:len(head)/4*4]
		dec := make([]byte, base64.StdEncoding.DecodedLen(len(head)))
		n, err := base64.StdEncoding.Decode(dec, head)
		if err != nil && n == 0 {
			continue
		}
		if bytes.Contains(dec[:n], []byte("PRIVATE KEY")) {
			out = append(out, [2]int{start, end})
		}
	}
	return out
}
