package redact

import (
	"encoding/base64"
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
	// hits are the keywords of the text the document is in, at offsets in that
	// text like base; a string holding none needs no text detection.
	hits *keywordHits
	// doc is the parser of the document, which expands the containers it pruned.
	doc *jparser
	// memo, when set, remembers how strings were redacted; see stringValue.
	memo stringMemo
	// runtimeEnv is set for crictl inspect output, where every env value is masked.
	runtimeEnv bool
	// names, when set, remembers the judgements of names; see nameJudgements.
	names nameJudgements
}

// judge judges a name, once per file when the walker remembers.
func (w *walker) judge(name string) nameJudgement {
	if w.names == nil || w.p.exhaustive {
		return judgeName(name)
	}
	return w.names.judge(name)
}

// hasKeyword reports whether a detector keyword ends inside n.
func (w *walker) hasKeyword(n *jnode) bool {
	// A string written with escapes (\u0065yJ for eyJ) may hide a keyword its bytes
	// do not show: it is searched decoded.
	return w.p.unkeyed || n.kw || n.esc
}

// mayMask reports whether anything inside the object or array n can be masked, so
// that one holding nothing to mask is not walked. Text detection masks only strings
// that hold a detector keyword, and every name that makes a member, an env var or a
// NAME=value a credential's holds a detector keyword or a name keyword (see
// assignKeywords and envNameKeywords). So a container written without escapes whose
// bytes hold neither keeps everything, unless what encloses it decides: items of a
// Secret list, the user's paths, a runtime's env.
func (w *walker) mayMask(n *jnode, c jctx) bool {
	return w.p.unkeyed || w.p.exhaustive || len(w.p.paths) > 0 || w.runtimeEnv || n.esc || c.itemKind == "Secret" ||
		n.kw || n.nameKw
}

// expand gives a container the members a pruning parse left out.
func (w *walker) expand(n *jnode) {
	if n.pruned {
		w.doc.expand(n)
	}
}

// prunes reports whether documents are parsed pruned: not when text without keywords
// is searched, the user's paths select values or a runtime's env is read, where what
// the keywords miss matters.
func (w *walker) prunes() bool {
	return !w.p.unkeyed && len(w.p.paths) == 0 && !w.runtimeEnv && !w.p.exhaustive
}

// stringHits returns the keyword hits of n's decoded string, taken from the text's
// hits when the string is written as it decodes, else found again.
func (w *walker) stringHits(n *jnode, s []byte) keywordHits {
	if !n.esc && w.p.matcher.quoteSafe && !w.p.exhaustive {
		return w.hits.sub(w.base+n.start+1, w.base+n.end-1)
	}
	return w.p.matcher.scan(s)
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
	if n.kind == jObject || n.kind == jArray {
		if !w.mayMask(n, c) {
			return
		}
		w.expand(n)
	}
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
		kids := w.doc.kids(n)
		if c.role == roleRuntimeEnv {
			for i := range kids {
				w.runtimeEnvValue(&kids[i])
			}
			return
		}
		// A credential flag and its value as two elements of an argument list.
		var args []string
		for i := range kids {
			s, ok := w.str(&kids[i])
			if !ok {
				args = nil
				break
			}
			args = append(args, s)
		}
		masked := map[int]bool{}
		for _, i := range credentialArgPairs(args) {
			masked[i] = true
		}
		for i := range kids {
			if masked[i] {
				w.maskString(&kids[i], RuleCredentialArgument)
				continue
			}
			w.element(&kids[i], ec)
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
		name, v, ok := envAssignment(w.doc.str(n))
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
		w.expand(n)
		v := w.doc.member(n, "value")
		if v == nil || v.kind != jString || w.doc.str(v) == "" || isMask(w.doc.str(v)) {
			return
		}
		name := w.doc.memberString(n, "key")
		if runtimeEnvName(name) {
			return
		}
		if vs := w.doc.str(v); envCredential(name, vs) || !plainValue(vs) {
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
		if name, v, ok := envAssignment(w.doc.str(n)); ok && w.judge(name).envCredential(v) {
			w.sink.hit(RuleCredentialEnv, w.at(n))
			w.replace(n, quoteJSON(name+"="+string(w.p.mask(RuleCredentialEnv, []byte(v)))))
			return
		}
	}
	w.value(n, c)
}

// lookedUp are the members of an object that the walker looks up: the first member
// of each name, whatever its kind, as jnode.member finds it.
type lookedUp struct {
	kind, items, typ, value, name, key *jnode
}

func findLookedUp(d *jparser, kids []jnode) lookedUp {
	var m lookedUp
	first := func(slot **jnode, k *jnode) {
		if *slot == nil {
			*slot = k
		}
	}
	for i := range kids {
		k := &kids[i]
		// By length first: most names are none of these, and that is quick to tell.
		// A name's text is that long unless written with escapes.
		if k.keyDec == 0 && (k.keyLen < 3 || k.keyLen > 5) {
			continue
		}
		switch key := d.key(k); len(key) {
		case 3:
			if key == "key" {
				first(&m.key, k)
			}
		case 4:
			switch key {
			case "kind":
				first(&m.kind, k)
			case "type":
				first(&m.typ, k)
			case "name":
				first(&m.name, k)
			}
		case 5:
			switch key {
			case "items":
				first(&m.items, k)
			case "value":
				first(&m.value, k)
			}
		}
	}
	return m
}

// str is the value of member n when it is a string.
func (w *walker) str(n *jnode) (string, bool) {
	if n == nil || n.kind != jString {
		return "", false
	}
	return w.doc.str(n), true
}

func (w *walker) object(n *jnode, c jctx) {
	kids := w.doc.kids(n)
	known := findLookedUp(w.doc, kids)
	kind, _ := w.str(known.kind)
	self := kind
	if self == "" && known.items == nil {
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
	if t, _ := w.str(known.typ); t == "service_account" {
		gcpKey = true
	}
	envValue := w.credentialPairValue(known)
	for i := range kids {
		k := &kids[i]
		if rule, ok := w.user[k]; ok {
			w.maskAll(k, rule)
			continue
		}
		key := w.doc.key(k)
		if secret && (key == "data" || key == "stringData") && k.kind == jObject {
			w.secretValues(k, key == "data")
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
		case key == "items" && k.kind == jArray:
			kc.itemKind = itemKind
		case c.role == roleAuths:
			kc.role = roleAuthEntry
		case c.role == roleUserItem && key == "user", c.role == roleUser:
			kc.role = roleUser
		case key == "auths" && k.kind == jObject:
			kc.role = roleAuths
		case key == "users" && k.kind == jArray:
			kc.role = roleUsers
		case w.runtimeEnv && (key == "envs" || key == "env") && k.kind == jArray:
			kc.role = roleRuntimeEnv
		}
		w.value(k, kc)
	}
}

var dockerAuthKeys = map[string]bool{"auth": true, "password": true, "identitytoken": true, "registrytoken": true}

// member handles a string member of an object, where the member's name is the best
// evidence of what the value is.
func (w *walker) member(k *jnode, r role, gcpKey bool) {
	// A name without a keyword that matters makes nothing of its value.
	if !k.keyInert || w.p.exhaustive {
		key := w.doc.key(k)
		if rule := memberRule(key, r, gcpKey); rule != "" && w.judge(key).plausibleSecret(w.doc.str(k)) {
			w.maskString(k, rule)
			return
		}
	}
	w.stringValue(k)
}

// nameMatters reports whether a member name can make its value masked, inside some
// structure: memberRule returns a rule for it in the auths of a docker config, beside a
// service account key's type, and wherever a credential's name does.
func nameMatters(key string) bool {
	return memberRule(key, roleAuthEntry, true) != ""
}

// memberRule names the rule that masks a member's whole value, or "".
func memberRule(key string, r role, gcpKey bool) string {
	switch {
	case r == roleAuthEntry && dockerAuthKeys[strings.ToLower(key)]:
		return RuleDockerConfigAuth
	case gcpKey && key == "private_key":
		return RuleGCPServiceAccount
	case !assignSet.in(key):
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
func (w *walker) credentialPairValue(m lookedUp) *jnode {
	v := m.value
	if v == nil || v.kind != jString {
		return nil
	}
	name, ok := w.str(m.name)
	if !ok {
		if name, ok = w.str(m.key); !ok {
			return nil
		}
	}
	if !assignSet.in(name) && !envNameSet.in(name) {
		return nil
	}
	if vs, j := w.doc.str(v), w.judge(name); j.envCredential(vs) || headerName(name) && j.plausibleSecret(vs) {
		return v
	}
	return nil
}

// secretValues masks every value of a Secret's data (base64) or stringData, keeping
// keys and sizes. The digest is of the decoded value, so it matches the same secret in
// an env var or a log.
func (w *walker) secretValues(m *jnode, encoded bool) {
	w.expand(m)
	kids := w.doc.kids(m)
	for i := range kids {
		v := &kids[i]
		s := w.doc.str(v)
		if v.kind != jString || s == "" || isMask(s) {
			continue
		}
		raw := []byte(s)
		if encoded {
			if d, err := base64.StdEncoding.DecodeString(s); err == nil {
				raw = d
			}
		}
		w.sink.hit(RuleSecretValue, w.at(v))
		w.replace(v, quoteJSON(string(w.p.secretMask(raw, encoded))))
	}
}

func (w *walker) maskString(n *jnode, rule string) {
	s := w.doc.str(n)
	if isMask(s) {
		return
	}
	w.sink.hit(rule, w.at(n))
	w.replace(n, quoteJSON(string(w.p.mask(rule, []byte(s)))))
}

// maskAll masks every non-empty string at or under n.
func (w *walker) maskAll(n *jnode, rule string) {
	switch n.kind {
	case jString:
		if w.doc.str(n) != "" {
			w.maskString(n, rule)
		}
	case jObject, jArray:
		w.expand(n)
		kids := w.doc.kids(n)
		for i := range kids {
			w.maskAll(&kids[i], rule)
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
	s := w.doc.str(n)
	if w.memo == nil || n.esc || len(s) > maxMemoString || w.p.exhaustive {
		w.redactStringValue(n)
		return
	}
	e, ok := w.memo[s]
	if !ok {
		rec := &ruleRecorder{}
		sink, edits := w.sink, len(w.edits)
		w.sink = rec
		w.redactStringValue(n)
		w.sink = sink
		e = memoEntry{rules: rec.rules}
		if len(w.edits) > edits {
			e.repl = w.edits[len(w.edits)-1].repl
			w.edits = w.edits[:edits]
		}
		if len(w.memo) < maxMemoEntries {
			w.memo[s] = e
		}
	}
	for _, r := range e.rules {
		w.sink.hit(r, w.at(n))
	}
	if e.repl != nil {
		w.replace(n, e.repl)
	}
}

// A list repeats the same strings in every item (mount paths, env var names, probe
// commands), so the strings of a file that need text detection are redacted once each
// and remembered, up to these bounds.
const (
	maxMemoString  = 1 << 10
	maxMemoEntries = 1 << 10
)

// stringMemo maps a string to how it was redacted. Only strings written without
// escapes are remembered: their keyword hits, hence their redaction, depend on their
// text alone.
type stringMemo map[string]memoEntry

type memoEntry struct {
	repl  []byte   // the string's replacement, nil when it was kept
	rules []string // the rules that masked something in it, one per mask
}

// ruleRecorder is the sink that records the hits of one string for its memo entry;
// every hit in a string is reported at the string's offset.
type ruleRecorder struct{ rules []string }

func (r *ruleRecorder) hit(rule string, _ int) { r.rules = append(r.rules, rule) }

// redactStringValue is stringValue without the memo.
func (w *walker) redactStringValue(n *jnode) {
	var s []byte
	if n.esc {
		s = []byte(w.doc.str(n))
	} else {
		s = w.doc.data[n.start+1 : n.end-1] // read only: splice copies
	}
	h := w.stringHits(n, s)
	changed := false
	for round := 1; round <= maxRounds; round++ {
		if round > 1 {
			h = w.p.matcher.scan(s)
		}
		next, retry := w.redactString(n, s, &h)
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

// redactString returns s, with keyword hits h, redacted, or nil when nothing in it was
// masked.
func (w *walker) redactString(n *jnode, s []byte, h *keywordHits) (out []byte, retry bool) {
	if c := firstNonSpace(s); w.level < maxEmbedded && (c == '{' || c == '[') {
		root, doc, err := w.parse(s, h, 0)
		if err == nil {
			sub := &walker{p: w.p, sink: w.sink, anchor: w.at(n), level: w.level + 1, hits: h, doc: doc, names: w.names}
			sub.document(root, "")
			doc.release()
			if len(sub.edits) == 0 {
				return nil, false
			}
			return splice(s, sub.edits), false
		}
		retry = true
	}
	if len(s) == 0 {
		return nil, false
	}
	edits := w.p.textEditsWith(s, *h, w.at(n), w.sink, nil)
	if len(edits) == 0 {
		return nil, false
	}
	return splice(s, edits), retry
}

// firstNonSpace returns the first byte of s that is no JSON white space, or 0.
func firstNonSpace(s []byte) byte {
	for _, c := range s {
		switch c {
		case ' ', '\t', '\r', '\n':
		default:
			return c
		}
	}
	return 0
}

// parse parses a document of the text whose keyword hits are h, at offset base.
func (w *walker) parse(data []byte, h *keywordHits, base int) (*jnode, *jparser, error) {
	// Redaction reads its input and never writes it, and no string of the tree
	// outlives the file's redaction: the tree's strings may be the data itself.
	return parse(&jparser{data: data, prune: w.prunes(), hits: h, base: base, alias: true})
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
