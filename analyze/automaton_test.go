package analyze

import (
	"sync"
	"testing"

	ahocorasick "github.com/petar-dambovaliev/aho-corasick"
)

// An analysis asks for the automaton of its signatures' literals; the same set is built
// once and shared, also by analyses running side by side, and it still finds what a new
// one finds.
func TestAutomatonIsBuiltOncePerSet(t *testing.T) {
	pats := []string{"failed to pull image", "x509: certificate", "no space left on device"}
	first := automaton(pats, true)
	var wg sync.WaitGroup
	same := make([]bool, 8)
	for i := range same {
		wg.Add(1)
		go func() {
			defer wg.Done()
			same[i] = automaton(append([]string(nil), pats...), true) == first
		}()
	}
	wg.Wait()
	for i, ok := range same {
		if !ok {
			t.Errorf("call %d built the automaton again", i)
		}
	}
	if automaton(pats[:2], true) == first {
		t.Error("another set of literals got the same automaton")
	}
	// A set built as a DFA serves those that would make do with its NFA; another set's
	// NFA is an automaton of its own, and finds what its DFA finds.
	if automaton(pats, false) != first {
		t.Error("a set built as a DFA was built again as an NFA")
	}
	if automaton(pats[1:], false) == automaton(pats[1:], true) {
		t.Error("an NFA was handed out as the DFA")
	}
	for _, dfa := range []bool{false, true} {
		var found []int
		it := automaton(pats[1:], dfa).IterOverlappingByte([]byte("X509: certificate; no space left on device"))
		for m := it.Next(); m != nil; m = it.Next() {
			found = append(found, m.Pattern())
		}
		if len(found) != 2 || found[0] != 0 || found[1] != 1 {
			t.Errorf("DFA %v found patterns %v, want [0 1]", dfa, found)
		}
	}
	var found []int
	it := first.IterOverlappingByte([]byte("Failed to pull image \"x\": X509: certificate signed by unknown authority"))
	for m := it.Next(); m != nil; m = it.Next() {
		found = append(found, m.Pattern())
	}
	if len(found) != 2 || found[0] != 0 || found[1] != 1 {
		t.Errorf("found patterns %v, want [0 1]", found)
	}
}

// Analyses that start side by side ask for the same set before any has built it: one
// builds, the others wait for that automaton.
func TestAutomatonIsBuiltOnceWhenAskedTogether(t *testing.T) {
	pats := []string{"context deadline exceeded", "connection refused", "i/o timeout", "together"}
	got := make([]ahocorasick.AhoCorasick, 8)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			got[i] = automaton(append([]string(nil), pats...), true)
		}()
	}
	close(start)
	wg.Wait()
	for i := range got {
		if got[i] != got[0] {
			t.Errorf("call %d got an automaton of its own", i)
		}
	}
}
