package index

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"slices"
	"strings"

	"podflow.dev/podflow/analyze"

	"podflow.dev/podflow/internal/phrase"
)

// FingerprintVersion versions the masking and hashing below. A change to either raises
// it, so fingerprints of different versions are never compared: the store keeps the
// version beside each fingerprint ("v1:...").
//
// v2 keys a signature with a fingerprint field on its captures, and the Go rules of
// ruleKeys on the fields listed there.
const FingerprintVersion = "v2"

// The masks, applied in this order. Each replaces what differs from one cluster to the
// next by a placeholder, so two clusters failing for the same reason print the same
// template. need lists bytes of which every match holds one: a text without any is
// not searched with the expression (most causes hold no URL, path or address, and
// the expressions were a quarter of the writer's time), which changes no result.
var masks = []mask{
	// URLs carry hosts, paths and tokens of the cluster's own.
	{regexp.MustCompile(`[a-zA-Z][a-zA-Z0-9+.-]*://[^\s"'<>]+`), "<url>", ":"},
	// Absolute paths, host:port addresses and DNS names.
	{regexp.MustCompile(`(?:^|[\s=(\[])/[^\s,;:)\]"']+`), " <path>", "/"},
	{regexp.MustCompile(`(?i)\b[a-z0-9][a-z0-9_.-]*:\d+\b`), "<addr>", ":"},
	{regexp.MustCompile(`(?i)\b[a-z0-9-]+(?:\.[a-z0-9-]+)*\.(?:io|com|net|org|internal|local|sh|dev|cloud|cn|de|xxx|xxxx)\b\.?`), "<host>", "."},
	{regexp.MustCompile(`(?i)\b(?:[a-z0-9-]+\.){2,}[a-z0-9-]+\b\.?`), "<host>", "."},
	{regexp.MustCompile(`(?i)\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b`), "<uid>", "-"},
	{regexp.MustCompile(`(?i)\bsha256:[0-9a-f]{12,}\b`), "<digest>", ":"},
	{regexp.MustCompile(`(?i)\b[0-9a-f]{12,}\b`), "<id>", ""},
	// Image references: registry/path:tag or @digest.
	{regexp.MustCompile(`\b[a-z0-9][a-z0-9.-]*(?::[0-9]+)?/[a-z0-9._/-]+(?::[A-Za-z0-9._-]+)?`), "<image>", "/"},
	{regexp.MustCompile(`\b\d{1,3}(?:\.\d{1,3}){3}(?:/\d{1,2})?(?::\d+)?\b`), "<ip>", "."},
	{regexp.MustCompile(`(?i)\[?\b(?:[0-9a-f]{1,4}:){2,7}[0-9a-f]{0,4}(?:\]:\d+)?`), "<ip>", ":"},
	{regexp.MustCompile(`\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?`), "<time>", ":"},
	{regexp.MustCompile(`\b[IWEF]\d{4} \d{2}:\d{2}:\d{2}\.\d+\s+\d+ [\w.-]+:\d+\]`), "<klog>", "]"},
	{regexp.MustCompile(`\b\d{2}:\d{2}:\d{2}(?:\.\d+)?\b`), "<time>", ":"},
	// Generated names: a ReplicaSet's pod-template hash and a pod's random suffix.
	{regexp.MustCompile(`\b([a-z0-9]+(?:-[a-z0-9]+)*)-[a-z0-9]{8,10}-[a-z0-9]{5}\b`), "<name>", "-"},
	{regexp.MustCompile(`\b([a-z0-9]+(?:-[a-z0-9]+)*)-[bcdfghjklmnpqrstvwxz2-9]{5}\b`), "<name>", "-"},
	{regexp.MustCompile(`\b([a-z0-9]+(?:-[a-z0-9]+)*)-[a-z0-9]{8,10}-(?:[a-z0-9]{5}\b)?`), "<name>", "-"},
	// The name after a kind word is the cluster's own: "resourcequota compute", "node ip-10-0-0-1".
	{regexp.MustCompile(`(?i)\b(namespace|node|pod|deployment|replicaset|statefulset|daemonset|job|cronjob|service|serviceaccount|resourcequota|limitrange|configmap|secret|persistentvolumeclaim|pvc|storageclass|priorityclass|webhook|container|policy|constraint|image|registry|upstream|name) ([^\s,;:<]*[^\s,;:<'.])`), "$1 <name>", ""},
	// Command-line flags the user passed.
	{regexp.MustCompile(`(?:^|\s)--?[a-z][a-z0-9-]*[a-z0-9]\b`), " <flag>", "-"},
	// Numbers with units (512Mi, 30s, 2.5GB) and bare numbers.
	{regexp.MustCompile(`\b\d+(?:\.\d+)?(?:[KMGTPE]i?[Bb]?|ms|s|m|h|%)?\b`), "<n>", "0123456789"},
}

// mask is one expression to replace, and the bytes one of which its every match holds.
type mask struct {
	re   *regexp.Regexp
	with string
	need string
}

// apply replaces the matches of m in s.
func (m mask) apply(s string) string {
	if m.need != "" && !strings.ContainsAny(s, m.need) {
		return s
	}
	return m.re.ReplaceAllString(s, m.with)
}

// Mask replaces what is the cluster's own in s (the names given, then URLs, UIDs,
// digests, IDs, images, IPs, times, generated names and numbers) by placeholders,
// and folds runs of white space, so the result says what happened and not to whom.
func Mask(s string, names []string) string {
	s = strings.Join(strings.Fields(s), " ")
	// Longest first, so a pod's name is not masked by its namespace's.
	names = slices.Clone(names)
	slices.SortFunc(names, func(a, b string) int { return cmp.Compare(len(b), len(a)) })
	for _, n := range names {
		if len(n) < 3 {
			continue // "a" or "ns" would mask parts of words
		}
		s = phrase.ReplaceName(s, n, "<name>")
	}
	for _, m := range masks {
		s = m.apply(s)
	}
	return s
}

// maskKey masks a signature's fingerprint values: the names given and what is the
// cluster's own by its form (URLs, paths, addresses, UIDs, digests, IDs, images, IPs,
// times, generated names), but not numbers or words, which the signature's author
// chose as what tells one cause from another (a port, a resource).
func maskKey(s string, names []string) string {
	s = strings.Join(strings.Fields(s), " ")
	for _, n := range names {
		if len(n) >= 3 {
			s = phrase.ReplaceName(s, n, "<name>")
		}
	}
	for _, m := range masks[:len(masks)-3] {
		s = m.apply(s)
	}
	return s
}

// subjectNames are the cluster's own names a finding mentions: its subjects' names,
// namespaces and the stems of generated names.
func subjectNames(f *analyze.Finding) []string {
	var names []string
	for _, s := range f.Subjects {
		names = append(names, s.Name, s.Namespace, s.UID)
		if s.Namespace != "" {
			names = append(names, s.Namespace+"/"+s.Name)
		}
	}
	return slices.DeleteFunc(names, func(s string) bool { return s == "" })
}

// Key is what the index keeps of a finding to say "same cause": the cause class (the
// rule or signature ID), the masked template shown for it, and the versioned
// fingerprint. The fingerprint hashes the class and the template, or, for a signature
// with a fingerprint field or a Go rule listed in ruleKeys, the class and that key.
type Key struct {
	Class       string
	Template    string
	Fingerprint string
}

// FindingKey computes a finding's key. A signature with a fingerprint field is keyed by
// its class and the masked values of those captures, a Go rule listed in ruleKeys by
// its class and the fields listed there, any other rule's or signature's finding by its
// class and its masked cause sentence; an unexplained finding, which has no class of
// its own, by the masked template of its most telling line (its first excerpt), so
// that unexplained tickets with the same line group together and the biggest groups
// are the next signatures to write.
func FindingKey(f *analyze.Finding) Key {
	names := subjectNames(f)
	k := Key{Class: f.Rule}
	if f.Rule == analyze.UnexplainedRule {
		line := f.Cause
		if len(f.Evidence) > 0 && f.Evidence[0].Excerpt != "" {
			line = f.Evidence[0].Excerpt
		}
		k.Template = Mask(line, names)
	} else {
		k.Template = causeTemplate(Mask(f.Cause, names))
	}
	hashed := k.Template
	if f.Rule != analyze.UnexplainedRule {
		if f.FleetKey != "" {
			// A signature's fingerprint captures, masked: the values that say which cause.
			hashed = "key " + maskKey(f.FleetKey, names)
		} else if rk := ruleKey(f); rk != "" {
			hashed = rk
		}
	}
	k.Fingerprint = fingerprint(k.Class, hashed)
	return k
}

func fingerprint(class, template string) string {
	h := sha256.New()
	h.Write([]byte(FingerprintVersion))
	h.Write([]byte{0})
	h.Write([]byte(class))
	h.Write([]byte{0})
	h.Write([]byte(template))
	return FingerprintVersion + ":" + hex.EncodeToString(h.Sum(nil)[:10])
}

var (
	reQuoted = regexp.MustCompile("\"(?:[^\"\\\\]|\\\\.)*\"|`[^`]*`|'[^' ]*'")
	reParens = regexp.MustCompile(`\([^()]*\)`)
)

// causeTemplate keeps what a rule or signature says in its own words and drops what it
// quotes: a cause sentence names the class's key values first ("the kubelet evicted
// the pod to reclaim nodefs") and then, after a colon, in parentheses or in quotes,
// the component's message as printed, which carries paths, names and wording that
// differ from release to release.
func causeTemplate(s string) string {
	s = reQuoted.ReplaceAllString(s, "<q>")
	for {
		t := reParens.ReplaceAllString(s, "")
		if t == s {
			break
		}
		s = t
	}
	if i := strings.Index(s, ": "); i > 0 {
		s = s[:i]
	}
	return strings.ToLower(strings.Join(strings.Fields(s), " "))
}
