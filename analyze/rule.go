package analyze

// Rule is one failure mode podflow can diagnose. A rule is a value: the registry in
// package rules lists them. Run is pure: it reads the View, returns findings, and does
// no I/O, no logging and no clock reads (View.CollectedAt is "now").
//
//	var ImagePullDNS = &analyze.Rule{
//		ID:    "image-pull-dns",
//		Stage: analyze.StageImage,
//		Title: "image registry host name does not resolve",
//		Doc:   imagePullDNSDoc,
//		Severity: analyze.SeverityError,
//		Needs: analyze.Needs{
//			Required: []analyze.Kind{analyze.Pods},
//			Optional: []analyze.Kind{analyze.Events, analyze.KubeletJournal},
//		},
//		Run: imagePullDNS,
//	}
type Rule struct {
	// ID is stable kebab-case, equal to the rule's file name and test folder.
	ID    string
	Stage Stage
	// Title says in a few words what breaks.
	Title string
	// Doc is the rule's documentation in Markdown: what it means, how to confirm on a
	// live cluster, how to fix. `podflow rules ID` prints it.
	Doc      string
	Severity Severity
	Needs    Needs
	Run      func(*View) []Finding
	// Outcome marks a rule that reports what its pods' failures did to their workload (a
	// Job out of retries, a Deployment past its progress deadline) rather than a broken
	// link of its own: the controller did its part. Such a finding is a pod's root cause
	// only when nothing else explains that pod; otherwise the pod's own finding, at
	// whatever stage, is the root and explains it.
	Outcome bool
	// Catchall marks a rule that reports a failure class without knowing its cause
	// (a sandbox that could not be created, a container that exited non-zero): a
	// signature that knows the cause from the message wins over it for the same pod.
	Catchall bool
	// Examples are messages the rule reads as its own, in the wording a component prints
	// them (written from that component's source), and near misses it does not. With the
	// firing examples of the rule's companion signatures (a signature whose rule field
	// names it) they tie the rule to the catalog's call sites: a line printed by one of
	// them in another release's wording carries the rule's finding (rule_tie.go,
	// docs/signatures.md "Ties of Go rules").
	Examples RuleExamples

	// signature is set on the rule a Signature made (Signature.Rule).
	signature *Signature
}

// RuleExamples are a Go rule's own example messages: Fires it reads as its own, Quiet
// near misses of the same call sites it does not.
type RuleExamples struct {
	Fires []string
	Quiet []string
}

// Signature is the signature this rule was made from, or nil for a Go rule.
func (r *Rule) Signature() *Signature { return r.signature }

// Needs declares a rule's inputs. Without every Required kind the rule is skipped and
// the report says why; Optional kinds are used when the bundle has them. A rule's View
// hands out only declared kinds.
type Needs struct {
	Required []Kind
	// AnyOf, when set, skips the rule unless at least one of its kinds is present (a
	// Service's trouble shows in the Service or in its Endpoints alone).
	AnyOf    []Kind
	Optional []Kind
}

// Finding is what a rule reports. A rule fills Subjects, Cause, Evidence, Remediation,
// Confirm and, to merge findings that share a cause, GroupKey; the engine fills the rest.
type Finding struct {
	// ID identifies the finding within a report, e.g. image-pull-dns#1.
	ID       string   `json:"id"`
	Rule     string   `json:"rule"`
	Stage    Stage    `json:"stage"`
	Severity Severity `json:"severity"`
	Title    string   `json:"title"`
	// Root is true when this finding is the earliest broken stage for at least one of its
	// pods (or, without pods, when no other finding explains it).
	Root bool `json:"root"`
	// Subjects are the pods affected and the owner, node, service or other objects involved.
	Subjects []ObjectRef `json:"subjects"`
	// Cause is one sentence with concrete values.
	Cause string `json:"cause"`
	// Evidence cites what the cause rests on; at least one item.
	Evidence []Evidence `json:"evidence"`
	// EvidenceOmitted counts evidence left out of a large group.
	EvidenceOmitted int    `json:"evidenceOmitted,omitempty"`
	Remediation     string `json:"remediation"`
	// Confirm lists commands that confirm the cause on a live cluster.
	Confirm []string `json:"confirm,omitempty"`
	// History is true when every pod of the finding later got past its stage (the
	// sandbox failed, then was created): it is the chain's past, never a root cause.
	History bool `json:"history,omitempty"`
	// Catalog cites the catalog entries of the components that print the finding's
	// message: the outermost layer, which gives the stage, and the innermost, which
	// gives the cause.
	Catalog []CatalogRef `json:"catalog,omitempty"`
	// Explains and ExplainedBy link root causes and their consequences by finding ID.
	Explains    []string `json:"explains,omitempty"`
	ExplainedBy []string `json:"explainedBy,omitempty"`
	// Plan says, for a root cause, what to change, what deleting its pods would do,
	// what to save first and which permissions the commands need; the engine fills it.
	Plan *Plan `json:"plan,omitempty"`
	// GroupKey merges the findings of one rule that share a cause (one quota blocking 50
	// replicas is one finding). Findings with the same non-empty key become one, with the
	// union of subjects and evidence and the first one's text.
	GroupKey string `json:"-"`
	// FleetKey is what makes two findings of this rule the same cause across clusters,
	// for an index of many analyses: a signature's fingerprint captures (name=value).
	// Empty, the index keys on the rule and its masked cause sentence. Like GroupKey it
	// is not part of the JSON report (whose schema is versioned on its own).
	FleetKey string `json:"-"`

	// NodeCondition is set by a rule whose refusal is a node condition's consequence (a
	// scheduler refusal for a node.kubernetes.io/ taint, or for taints its message does
	// not name): a node-stage finding about the same pod is the root that explains it.
	NodeCondition bool `json:"-"`

	// HeldDeletion is set by a rule that finds a deleted pod held because every update
	// that would release it is refused: the request-stage refusal of such an update
	// about the same pod is its evidence, not a root of its own.
	HeldDeletion bool `json:"-"`

	// outcome is copied from Rule.Outcome by the engine.
	outcome bool
	// signature is true for a finding a signature made; ruleBacked when that signature
	// holds a Go rule's message knowledge.
	signature, ruleBacked bool
	// sig is the signature that made the finding, nil for a Go rule's.
	sig *Signature
	// fallback is copied from Signature.Fallback.
	fallback bool
	// catchall is copied from Rule.Catchall; catchallPods counts the pods it had.
	catchall     bool
	catchallPods int
	// backsCatchall marks a signature that is a catch-all rule's message knowledge: of
	// several signatures about one pod at one stage, it yields to one that is not.
	backsCatchall bool
	// ownRefusal marks a request-stage signature's finding read from a container's own
	// log while the evidence shows a pod dying: the engine places it at runtime
	// (podsDying).
	ownRefusal bool
	// alsoCauses counts the causes of other lines about its pods added to its own
	// (alsoCause).
	alsoCauses int
}

// Pods lists the pods among the subjects.
func (f *Finding) Pods() []ObjectRef {
	var out []ObjectRef
	for _, s := range f.Subjects {
		if s.Kind == "Pod" {
			out = append(out, s)
		}
	}
	return out
}

// evidenceMax caps the evidence kept for one finding; a grouped finding about thousands
// of pods cites a representative few and counts the rest.
const evidenceMax = 20
