package importer

import (
	"encoding/json"
	"slices"
	"strings"

	"podflow.dev/podflow/bundle"
)

// A ticket pastes a workload's manifest and, further down, what became of it: the
// status block of `kubectl get job -o yaml`, cut from its metadata and named by no
// command. Read alone, the status makes a second, unnamed object of the kind, and a
// finding about it cannot name the workload, its backoffLimit or its pods' command.
// When the paste names exactly one object of that kind and it shows no status of its
// own, the status is that object's.

// adoptWorkloadStatus moves each unnamed workload's status into the one named object of
// its kind that has none.
func (li *looseImport) adoptWorkloadStatus() {
	for _, k := range workloadKindFields {
		var named, unnamed []*looseItem
		for key, it := range li.byKey {
			if !strings.HasPrefix(key, k.kind+"/") {
				continue
			}
			if partialOf(it.data, partialName) {
				unnamed = append(unnamed, it)
			} else {
				named = append(named, it)
			}
		}
		if len(named) != 1 || len(unnamed) != 1 {
			continue
		}
		var into, from map[string]any
		if json.Unmarshal(named[0].data, &into) != nil || json.Unmarshal(unnamed[0].data, &from) != nil {
			continue
		}
		st, ok := from["status"].(map[string]any)
		if !ok || len(st) == 0 {
			continue
		}
		if have, ok := into["status"].(map[string]any); ok && len(have) > 0 {
			continue
		}
		into["status"] = st
		unmarkPartial(into, partialStatus)
		data, err := json.Marshal(into)
		if err != nil {
			continue
		}
		named[0].data = data
		li.dropItem(unnamed[0])
	}
}

// unmarkPartial takes what off a decoded object's partial mark: it shows it now.
func unmarkPartial(obj map[string]any, what string) {
	meta, _ := obj["metadata"].(map[string]any)
	ann, _ := meta["annotations"].(map[string]any)
	v, ok := ann[bundle.PartialAnnotation].(string)
	if !ok {
		return
	}
	kept := slices.DeleteFunc(strings.Split(v, ","), func(m string) bool { return m == what })
	if len(kept) == 0 {
		delete(ann, bundle.PartialAnnotation)
		return
	}
	ann[bundle.PartialAnnotation] = strings.Join(kept, ",")
}

// partialOf reports whether an object's partial mark says it does not show what.
func partialOf(data json.RawMessage, what string) bool {
	var o struct {
		Metadata struct {
			Annotations map[string]string `json:"annotations"`
		} `json:"metadata"`
	}
	if json.Unmarshal(data, &o) != nil {
		return false
	}
	v, ok := o.Metadata.Annotations[bundle.PartialAnnotation]
	return ok && slices.Contains(strings.Split(v, ","), what)
}

// dropItem removes an item from its list and from the index.
func (li *looseImport) dropItem(it *looseItem) {
	for list, items := range li.lists {
		if i := slices.Index(items, it); i >= 0 {
			li.lists[list] = slices.Delete(items, i, i+1)
			if len(li.lists[list]) == 0 {
				delete(li.lists, list)
			}
		}
	}
	delete(li.byKey, it.key)
}
