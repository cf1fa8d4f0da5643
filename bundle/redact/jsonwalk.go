package redact

import (
	"bytes"
	"encoding/base64"
	"sort"
	"strings"

	"podflow.dev/podflow/bundle"
)

// maxEmbedded bounds how deep JSON inside JSON strings (annotations holding manifests
// holding annotations...) is followed.
const maxEmbedded = 8

// role says what the enclosing structure makes of a value.
type role uint8

const (
	roleNone       role = iota
	roleAuths           // the auths object of a docker config
	roleAuthEntry       // one registry entry of auths
	roleUsers           // the users list of a kubeconfig
	roleUserItem        // one element of users
	roleUser            // the user object of a kubeconfig user, and everything inside
	roleRuntimeEnv      // an env list of a container as the runtime runs it
)

type jctx struct {
	// itemKind is the kind of objects that carry none: items of a typed List, or the
	// elements of a bundle's per-namespace list.
	itemKind string
	role     role
}

// walker redacts one JSON document, collecting edits against its bytes.
type walker struct {
	p    *Policy
	sink sink
	// base is the document's offset in its file; anchor, when >= 0, is the file offset
	// every hit is reported at (documents embedded in a JSON string).
	base, anchor int
	level        int
	edits        []edit
	user         map[*jnode]string
	// keywords are the offsets (in the file, like base) at which detector keywords
	// end; a string holding none needs no text detection.
	keywords []int
	// runtimeEnv is set for crictl inspect output, where every env value is masked.
	runtimeEnv bool
}

// hasKeyword reports whether a detector keyword ends inside n.
func (w *walker) hasKeyword(n *jnode) bool {
	if w.p.unkeyed {
		return true
	}
	start, end := w.base+n.start, w.base+n.end
	i := sort.SearchInts(w.keywords, start+1)
	return i < len(w.keywords) && w.keywords[i] < end
}

func (w *walker) at(n *jnode) int {
	if w.anchor >= 0 {
		return w.anchor
	}
	return w.base + n.start
}

func (w *walker) replace(n *jnode, repl []byte) {
	w.edits = append(w.edits, edit{n.start, n.end, repl})
}

func (w *walker) document(root *jnode, itemKind string) {
	w.value(root, jctx{itemKind: itemKind})
}

func (w *walker) value(n *jnode, c jctx) {
	switch n.kind {
	case jObject:
		w.object(n, c)
	case jArray:
		ec := jctx{itemKind: c.itemKind}
		switch c.role {
		case roleUsers:
			ec.role = roleUserItem
		case roleUser:
			ec.role = roleUser
		}
		if c.role == roleRuntimeEnv {
			for _, k := range n.kids {
				w.runtimeEnvValue(k)
			}
			return
		}
		for _, k := range n.kids {
			w.element(k, ec)
		}
	case jString:
		w.stringValue(n)
	}
}

// runtimeEnvValue redacts one environment entry of crictl inspect output, NAME=value
// (OCI runtime spec) or {key, value} (CRI config). The runtime's own variables (PATH,
// HOSTNAME, HOME, TERM) and the ones Kubernetes injects (KUBERNETES_*, Service links)
// are evidence and stay. The others keep their value only when it is plainly not a
// secret (a boolean, a short number, a path, a URL without credentials): unlike a Pod's
// env, the runtime's holds the values of Secret references resolved, under any name.
func (w *walker) runtimeEnvValue(n *jnode) {
	switch n.kind {
	case jString:
		name, v, ok := envAssignment(n.str)
		if !ok || v == "" || isMask(v) || runtimeEnvName(name) {
			return
		}
		if envCredential(name, v) || !plainValue(v) {
			w.sink.hit(RuleRuntimeEnv, w.at(n))
			w.replace(n, quoteJSON(name+"="+string(w.p.mask(RuleRuntimeEnv, []byte(v)))))
			return
		}
		w.stringValue(n)
	case jObject:
		v := n.member("value")
		if v == nil || v.kind != jString || v.str == "" || isMask(v.str) {
			return
		}
		name, _ := n.memberString("key")
		if runtimeEnvName(name) {
			return
		}
		if envCredential(name, v.str) || !plainValue(v.str) {
			w.maskString(v, RuleRuntimeEnv)
			return
		}
		w.stringValue(v)
	}
}

// runtimeEnvName reports the variables a container runtime and the kubelet set.
func runtimeEnvName(name string) bool {
	switch name {
	case "PATH", "HOSTNAME", "HOME", "TERM":
		return true
	}
	if strings.HasPrefix(name, "KUBERNETES_") {
		return true
	}
	// Service links: <SVC>_SERVICE_HOST, <SVC>_SERVICE_PORT[_<NAME>], <SVC>_PORT and
	// <SVC>_PORT_<port>_<PROTO>[_PROTO|_PORT|_ADDR].
	if i := strings.Index(name, "_SERVICE_"); i > 0 {
		rest := name[i+len("_SERVICE_"):]
		return rest == "HOST" || rest == "PORT" || strings.HasPrefix(rest, "PORT_")
	}
	return strings.HasSuffix(name, "_PORT") || strings.Contains(name, "_PORT_")
}

// element handles one array element; NAME=value strings are environment variables, as
// in an OCI runtime spec inside crictl inspect output.
func (w *walker) element(n *jnode, c jctx) {
	if rule, ok := w.user[n]; ok {
		w.maskAll(n, rule)
		return
	}
	if n.kind == jString {
		if name, v, ok := envAssignment(n.str); ok && envCredential(name, v) {
			w.sink.hit(RuleCredentialEnv, w.at(n))
			w.replace(n, quoteJSON(name+"="+string(w.p.mask(RuleCredentialEnv, []byte(v)))))
			return
		}
	}
	w.value(n, c)
}

func (w *walker) object(n *jnode, c jctx) {
	kind, _ := n.memberString("kind")
	self := kind
	if self == "" && n.member("items") == nil {
		self = c.itemKind
	}
	if self != "" {
		w.markUserPaths(n, self)
	}
	itemKind := c.itemKind
	if kind != "" {
		itemKind = strings.TrimSuffix(kind, "List")
	}
	secret := self == "Secret"
	gcpKey := false
	if t, _ := n.memberString("type"); t == "service_account" {
		gcpKey = true
	}
	envValue := w.credentialPairValue(n)
	for _, k := range n.kids {
		if rule, ok := w.user[k]; ok {
			w.maskAll(k, rule)
			continue
		}
		if secret && (k.key == "data" || k.key == "stringData") && k.kind == jObject {
			w.secretValues(k, k.key == "data")
			continue
		}
		if k == envValue {
			w.maskString(k, RuleCredentialEnv)
			continue
		}
		if k.kind == jString {
			w.member(k, c.role, gcpKey)
			continue
		}
		kc := jctx{}
		switch {
		case k.key == "items" && k.kind == jArray:
			kc.itemKind = itemKind
		case c.role == roleAuths:
			kc.role = roleAuthEntry
		case c.role == roleUserItem && k.key == "user", c.role == roleUser:
			kc.role = roleUser
		case k.key == "auths" && k.kind == jObject:
			kc.role = roleAuths
		case k.key == "users" && k.kind == jArray:
			kc.role = roleUsers
		case w.runtimeEnv && (k.key == "envs" || k.key == "env") && k.kind == jArray:
			kc.role = roleRuntimeEnv
		}
		w.value(k, kc)
	}
}

var dockerAuthKeys = map[string]bool{"auth": true, "password": true, "identitytoken": true, "registrytoken": true}

// member handles a string member of an object, where the member's name is the best
// evidence of what the value is.
func (w *walker) member(k *jnode, r role, gcpKey bool) {
	if rule := memberRule(k.key, r, gcpKey); rule != "" && plausibleSecret(k.key, k.str) {
		w.maskString(k, rule)
		return
	}
	w.stringValue(k)
}

// memberRule names the rule that masks a member's whole value, or "".
func memberRule(key string, r role, gcpKey bool) string {
	switch {
	case r == roleAuthEntry && dockerAuthKeys[strings.ToLower(key)]:
		return RuleDockerConfigAuth
	case gcpKey && key == "private_key":
		return RuleGCPServiceAccount
	case !containsFold([]byte(key), assignKeywords):
		// Every credential name holds one of the keywords; most names hold none.
		return ""
	case r == roleUser && credentialName(key):
		return RuleKubeconfig
	case credentialName(key) || headerName(key):
		return RuleCredentialField
	}
	return ""
}

// headerName matches HTTP headers that carry credentials whole.
func headerName(name string) bool {
	n := strings.ToLower(name)
	return n == "authorization" || n == "proxy-authorization"
}

// credentialPairValue finds the value of {name: DB_PASSWORD, value: ...} (Kubernetes
// EnvVar) or {key: ..., value: ...} (CRI KeyValue, crictl inspect's envs) when the name
// is a credential's.
func (w *walker) credentialPairValue(n *jnode) *jnode {
	v := n.member("value")
	if v == nil || v.kind != jString {
		return nil
	}
	name, ok := n.memberString("name")
	if !ok {
		if name, ok = n.memberString("key"); !ok {
			return nil
		}
	}
	if !containsFold([]byte(name), assignKeywords) && !containsFold([]byte(name), envNameKeywords) {
		return nil
	}
	if envCredential(name, v.str) || headerName(name) && plausibleSecret(name, v.str) {
		return v
	}
	return nil
}

// secretValues masks every value of a Secret's data (base64) or stringData, keeping
// keys and sizes. The digest is of the decoded value, so it matches the same secret in
// an env var or a log.
func (w *walker) secretValues(m *jnode, encoded bool) {
	for _, v := range m.kids {
		if v.kind != jString || v.str == "" || isMask(v.str) {
			continue
		}
		raw := []byte(v.str)
		if encoded {
			if d, err := base64.StdEncoding.DecodeString(v.str); err == nil {
				raw = d
			}
		}
		w.sink.hit(RuleSecretValue, w.at(v))
		w.replace(v, quoteJSON(string(w.p.secretMask(raw, encoded))))
	}
}

func (w *walker) maskString(n *jnode, rule string) {
	if isMask(n.str) {
		return
	}
	w.sink.hit(rule, w.at(n))
	w.replace(n, quoteJSON(string(w.p.mask(rule, []byte(n.str)))))
}

// maskAll masks every non-empty string at or under n.
func (w *walker) maskAll(n *jnode, rule string) {
	switch n.kind {
	case jString:
		if n.str != "" {
			w.maskString(n, rule)
		}
	case jObject, jArray:
		for _, k := range n.kids {
			w.maskAll(k, rule)
		}
	}
}

// stringValue redacts a string: as a JSON document when it holds one (an annotation
// such as last-applied-configuration), else as text. Like a file, a string that looked
// like JSON but did not parse is redacted again once masking made it parse.
func (w *walker) stringValue(n *jnode) {
	if !w.hasKeyword(n) {
		return
	}
	s := []byte(n.str)
	changed := false
	for round := 1; round <= maxRounds; round++ {
		next, retry := w.redactString(n, s)
		if next == nil {
			break
		}
		s, changed = next, true
		if !retry {
			break
		}
	}
	if changed {
		w.replace(n, quoteJSON(string(s)))
	}
}

// redactString returns s redacted, or nil when nothing in it was masked.
func (w *walker) redactString(n *jnode, s []byte) (out []byte, retry bool) {
	if t := bytes.TrimLeft(s, " \t\r\n"); w.level < maxEmbedded && len(t) > 0 && (t[0] == '{' || t[0] == '[') {
		root, err := parseJSON(s)
		if err == nil {
			sub := &walker{p: w.p, sink: w.sink, anchor: w.at(n), level: w.level + 1, keywords: w.p.matcher.scan(s, len(w.p.detectors)).any}
			sub.document(root, "")
			if len(sub.edits) == 0 {
				return nil, false
			}
			return splice(s, sub.edits), false
		}
		retry = true
	}
	edits := w.p.textEdits(s, w.at(n), w.sink)
	if len(edits) == 0 {
		return nil, false
	}
	return splice(s, edits), retry
}

// runtimeEnvFile reports whether a file is crictl inspect output of a container.
func runtimeEnvFile(name string) bool {
	info := bundle.ParsePath(name)
	return info.Area == "node" && strings.HasPrefix(info.NodeFile, "crictl/inspect/")
}

func fileItemKind(name string) string {
	info := bundle.ParsePath(name)
	if info.Area != "cluster" && info.Area != "namespaced" {
		return ""
	}
	l, _ := bundle.ListNamed(info.Kind)
	return l.Kind
}
