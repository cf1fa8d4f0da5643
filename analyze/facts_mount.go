package analyze

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// MountFailure is what the evidence says about setting up the volumes of a pod bound to
// a node: the kubelet's and attach/detach controller's volume events, the node's kubelet
// lines that name the pod's UID in a volume operation's message, and the node's
// "Couldn't get configMap/secret" lines, which name the object and no pod. It is built
// for every bound pod not being deleted that is still Pending or has such evidence: a
// pod whose containers wait for a volume may have no event left.
type MountFailure struct {
	Subject PodSubject
	// Events are the pod's FailedMount and FailedAttachVolume events and any event whose
	// message starts with "MountVolume." or "AttachVolume.", oldest last-seen first.
	Events []*Event
	// UIDLines are the kubelet's lines on the pod's node about a volume operation whose
	// message names the pod's UID (nestedpendingoperations), in file order.
	UIDLines []*JournalEntry
	// objectErrors maps kind/namespace/name ("configmap/shop/web-config") to the node's
	// latest error line saying it was not found.
	objectErrors map[string]*JournalEntry
}

// ObjectError is the node's latest "Couldn't get configMap ns/name" (kind "configmap")
// or "Couldn't get secret ns/name" (kind "secret") line saying the object was not found
// (pkg/volume/configmap/configmap.go and secret.go, SetUpAt), or nil.
func (f MountFailure) ObjectError(kind, namespace, name string) *JournalEntry {
	return f.objectErrors[kind+"/"+namespace+"/"+name]
}

func isMountEvent(e *Event) bool {
	return e.Reason == "FailedMount" || e.Reason == "FailedAttachVolume" ||
		strings.HasPrefix(e.Message, "MountVolume.") || strings.HasPrefix(e.Message, "AttachVolume.")
}

// mountFacts lists the bound pods' volume setups, in pod order.
func (g *Graph) mountFacts() []MountFailure {
	objectErrors, uidLines := g.volumeLines()
	var out []MountFailure
	for _, p := range g.pods {
		pod := p.Obj
		if pod.Spec.NodeName == "" || pod.DeletionTimestamp != nil {
			continue
		}
		f := MountFailure{Subject: podSubject(p), objectErrors: objectErrors[pod.Spec.NodeName]}
		for _, e := range g.eventsForIf(p, isMountEvent) {
			if isMountEvent(e) {
				f.Events = append(f.Events, e)
			}
		}
		if uid := string(pod.UID); uid != "" {
			for _, e := range uidLines[uid] {
				if e.Node() == pod.Spec.NodeName {
					f.UIDLines = append(f.UIDLines, e)
				}
			}
		}
		pending := pod.Status.Phase == corev1.PodPending || pod.Status.Phase == ""
		if !pending && len(f.Events) == 0 && len(f.UIDLines) == 0 && len(f.objectErrors) == 0 {
			continue
		}
		out = append(out, f)
	}
	return out
}

// volumeLines reads the kubelet journal once for the lines about volumes: per node, the
// latest "Couldn't get configMap/secret" not-found line of each object, and per pod UID
// named in a volume operation's message, its lines in file order.
func (g *Graph) volumeLines() (map[string]map[string]*JournalEntry, map[string][]*JournalEntry) {
	objects := map[string]map[string]*JournalEntry{}
	byUID := map[string][]*JournalEntry{}
	for i := range g.journal.len() {
		e := g.journal.at(i)
		if e.Severity == 'E' {
			for _, src := range [...]struct{ prefix, kind string }{
				{"Couldn't get configMap ", "configmap"}, {"Couldn't get secret ", "secret"},
			} {
				rest, ok := strings.CutPrefix(e.Message, src.prefix)
				if !ok {
					continue
				}
				// "payload ns/name: …" lines follow a failure already indexed.
				obj, detail, ok := strings.Cut(rest, ": ")
				if ok && !strings.Contains(obj, " ") && strings.Contains(detail, "not found") {
					node := e.Node()
					if objects[node] == nil {
						objects[node] = map[string]*JournalEntry{}
					}
					objects[node][src.kind+"/"+obj] = e
				}
			}
		}
		if strings.Contains(e.Message, "olume") {
			for _, uid := range uuidsIn(e.Message) {
				byUID[uid] = append(byUID[uid], e)
			}
		}
	}
	return objects, byUID
}

// uuidsIn lists the UUIDs (8-4-4-4-12 hexadecimal digits) a text holds, once each.
func uuidsIn(s string) []string {
	var out []string
	for i := 0; i+36 <= len(s); i++ {
		if s[i+8] != '-' || !isUUID(s[i:i+36]) {
			continue
		}
		if (i > 0 && isHex(s[i-1])) || (i+36 < len(s) && isHex(s[i+36])) {
			continue
		}
		u := s[i : i+36]
		dup := false
		for _, o := range out {
			dup = dup || o == u
		}
		if !dup {
			out = append(out, u)
		}
		i += 35
	}
	return out
}

func isUUID(s string) bool {
	for i := 0; i < 36; i++ {
		switch i {
		case 8, 13, 18, 23:
			if s[i] != '-' {
				return false
			}
		default:
			if !isHex(s[i]) {
				return false
			}
		}
	}
	return true
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

// MountFailures lists the bound pods' volume setups with the evidence of the kinds the
// rule declared.
func (v *View) MountFailures() []MountFailure {
	if !v.allow(Pods) {
		return nil
	}
	ff := v.factFilter()
	facts := v.factsOf().mounts
	out := make([]MountFailure, len(facts))
	for i, f := range facts {
		if !ff.events {
			f.Events = nil
		}
		if !ff.journal {
			f.UIDLines, f.objectErrors = nil, nil
		}
		out[i] = f
	}
	return out
}
