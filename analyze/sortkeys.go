package analyze

import (
	"cmp"
	"sort"
)

// byKeys sorts items by the key at the same index, the keys moving with them.
type byKeys[T any, K cmp.Ordered] struct {
	items []T
	keys  []K
}

func (s byKeys[T, K]) Len() int           { return len(s.items) }
func (s byKeys[T, K]) Less(i, j int) bool { return s.keys[i] < s.keys[j] }
func (s byKeys[T, K]) Swap(i, j int) {
	s.items[i], s.items[j] = s.items[j], s.items[i]
	s.keys[i], s.keys[j] = s.keys[j], s.keys[i]
}

// sortByKeys sorts items, and keys with them, by keys (of the same length), keeping
// the order of items with equal keys.
func sortByKeys[T any, K cmp.Ordered](items []T, keys []K) {
	sort.Stable(byKeys[T, K]{items, keys})
}
