package analyze

import (
	"slices"
	"testing"
)

// TestKeyedListsEachKeysValuesInOrder checks what the graph's joins read of a keyed
// list: a key's values in the order they were added, none for a key never added, and
// no room in a key's values to append into the next key's.
func TestKeyedListsEachKeysValuesInOrder(t *testing.T) {
	var k keyed[int]
	for i, key := range []string{"b", "a", "c", "a", "b", "a"} {
		k.add(key, i)
	}
	k.sort()
	for key, want := range map[string][]int{"a": {1, 3, 5}, "b": {0, 4}, "c": {2}} {
		if got := k.of(key); !slices.Equal(got, want) {
			t.Errorf("of(%q) = %v, want %v", key, got, want)
		}
	}
	if got := k.of("d"); got != nil {
		t.Errorf("of(d) = %v, want none", got)
	}
	_ = append(k.of("a"), 99)
	if got := k.of("b"); !slices.Equal(got, []int{0, 4}) {
		t.Errorf("after an append to a's values, b's are %v", got)
	}
	var empty keyed[int]
	empty.sort()
	if got := empty.of("a"); got != nil {
		t.Errorf("an empty list has %v under a", got)
	}
}
