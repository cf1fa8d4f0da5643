package analyze

import (
	"slices"
	"strings"
)

// keyed lists values under string keys, as a map from a key to a list would, held as
// one list of the values sorted by key and, under each key, in the order they were
// added. The graph's joins of an object to those of another that name it (the
// endpoints that target a pod, a Service's EndpointSlices, a Deployment's ReplicaSets)
// have a key or two for each object of a big cluster: as maps to lists of one or two,
// at 80k pods they held about 14 MB of tables and lists to the end of an analysis.
type keyed[V any] struct {
	keys []string
	vals []V
}

// add lists v under key; sort makes it found.
func (k *keyed[V]) add(key string, v V) {
	k.keys = append(k.keys, key)
	k.vals = append(k.vals, v)
}

// sort orders the values by key, each key's in the order they were added, in room of
// their own size.
func (k *keyed[V]) sort() {
	order := make([]int32, len(k.keys))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortStableFunc(order, func(a, b int32) int { return strings.Compare(k.keys[a], k.keys[b]) })
	keys, vals := make([]string, len(order)), make([]V, len(order))
	for i, j := range order {
		keys[i], vals[i] = k.keys[j], k.vals[j]
	}
	k.keys, k.vals = keys, vals
}

// of lists the values under key, nil for none. The list has no room to append into
// the next key's values.
func (k *keyed[V]) of(key string) []V {
	lo, found := slices.BinarySearch(k.keys, key)
	if !found {
		return nil
	}
	hi := lo + 1
	for hi < len(k.keys) && k.keys[hi] == key {
		hi++
	}
	return k.vals[lo:hi:hi]
}
