package scenario

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"

	"podflow.dev/podflow/bundle"
)

// Owners maps an object, as "Kind/namespace/name", to its owners from ownerReferences.
type Owners map[string][]string

// ownedKinds are the bundle lists whose objects are typically owned, with their Kind.
var ownedKinds = map[string]string{
	bundle.KindPods:        "Pod",
	bundle.KindReplicaSets: "ReplicaSet",
	bundle.KindJobs:        "Job",
}

// OwnersFromBundle reads the owner references of a namespace's pods, ReplicaSets and Jobs.
func OwnersFromBundle(b *bundle.Bundle, namespace string) (Owners, error) {
	out := Owners{}
	for kind, objKind := range ownedKinds {
		p := bundle.NamespacedResourcePath(kind, namespace)
		data, err := b.ReadFile(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		var list struct {
			Items []struct {
				Metadata struct {
					Name            string `json:"name"`
					OwnerReferences []struct {
						Kind string `json:"kind"`
						Name string `json:"name"`
					} `json:"ownerReferences"`
				} `json:"metadata"`
			} `json:"items"`
		}
		if err := json.Unmarshal(data, &list); err != nil {
			return nil, fmt.Errorf("decode %s: %w", p, err)
		}
		for _, it := range list.Items {
			key := objKind + "/" + namespace + "/" + it.Metadata.Name
			for _, o := range it.Metadata.OwnerReferences {
				out[key] = append(out[key], o.Kind+"/"+namespace+"/"+o.Name)
			}
		}
	}
	return out, nil
}

// Covers reports whether subject is want or is owned, directly or through its owners'
// owners, by want: a finding about a Deployment's Pod or ReplicaSet is about the
// Deployment.
func (o Owners) Covers(subject, want string) bool {
	seen := map[string]bool{}
	queue := []string{subject}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		if cur == want {
			return true
		}
		if seen[cur] {
			continue
		}
		seen[cur] = true
		queue = append(queue, o[cur]...)
	}
	return false
}
