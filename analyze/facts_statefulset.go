package analyze

import (
	"regexp"
	"strconv"
	"time"
)

// What a paste shows of a StatefulSet's rolling update when it holds neither the
// StatefulSet nor its pods whole: the updateStrategy piece of its YAML, and the pods'
// controller-revision-hash labels (`kubectl get pods -o yaml | grep -A1 hash`).

// PastedPartition is a rollingUpdate.partition pasted as YAML.
type PastedPartition struct {
	Partition int
	Evidence  Evidence
}

// PastedPodRevision is a pod's controller-revision-hash label pasted with its
// statefulset.kubernetes.io/pod-name label (set by the StatefulSet controller on every
// pod it creates, pkg/controller/statefulset/stateful_set_utils.go).
type PastedPodRevision struct {
	Pod, Revision string
	Evidence      []Evidence
}

var (
	reRollingUpdateKey = regexp.MustCompile(`^\s*rollingUpdate:\s*$`)
	rePartitionKey     = regexp.MustCompile(`^\s*partition:\s*(\d+)\s*$`)
	reRevisionHash     = regexp.MustCompile(`^\s*controller-revision-hash:\s*"?([A-Za-z0-9.-]+)"?\s*$`)
	reStsPodName       = regexp.MustCompile(`^\s*statefulset\.kubernetes\.io/pod-name:\s*"?([A-Za-z0-9.-]+)"?\s*$`)
)

// PastedPartitions lists the partitions of rollingUpdate pieces pasted as YAML.
func (v *View) PastedPartitions() []PastedPartition {
	if !v.Has(Fragments) {
		return nil
	}
	var out []PastedPartition
	for _, f := range v.g.fragments {
		under := -1 // the line of the last rollingUpdate: key
		for i, s := range f.lines {
			if reRollingUpdateKey.MatchString(s) {
				under = i
				continue
			}
			if m := rePartitionKey.FindStringSubmatch(s); m != nil && under >= 0 && i-under <= 2 {
				n, _ := strconv.Atoi(m[1])
				out = append(out, PastedPartition{Partition: n, Evidence: f.loc.Lines(i+1, 0).Evidence(s, time.Time{})})
			}
		}
	}
	return out
}

// PastedPodRevisions lists the pods whose revision label is pasted next to their
// pod-name label (within one block of grep's "--" separated output).
func (v *View) PastedPodRevisions() []PastedPodRevision {
	if !v.Has(Fragments) {
		return nil
	}
	var out []PastedPodRevision
	for _, f := range v.g.fragments {
		hash, pod, hashAt, podAt := "", "", -1, -1
		flush := func() {
			if hash != "" && pod != "" {
				out = append(out, PastedPodRevision{Pod: pod, Revision: hash, Evidence: []Evidence{
					f.loc.Lines(podAt+1, 0).Evidence(f.lines[podAt], time.Time{}), f.loc.Lines(hashAt+1, 0).Evidence(f.lines[hashAt], time.Time{})}})
			}
			hash, pod, hashAt, podAt = "", "", -1, -1
		}
		for i, s := range f.lines {
			if m := reRevisionHash.FindStringSubmatch(s); m != nil {
				if hash != "" {
					flush()
				}
				hash, hashAt = m[1], i
			} else if m := reStsPodName.FindStringSubmatch(s); m != nil {
				if pod != "" {
					flush()
				}
				pod, podAt = m[1], i
			} else if s == "--" {
				flush()
			}
			if hash != "" && pod != "" {
				flush()
			}
		}
	}
	return out
}
