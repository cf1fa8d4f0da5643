package analyze_test

import (
	"strings"
	"testing"

	"podflow.dev/podflow/analyze"
	"podflow.dev/podflow/rules"
)

// The described reading builds its index on each run that reads prose: every built-in
// rule's and signature's title and documentation, stemmed. Side by side with the floor,
// splitting the same text into words.
func BenchmarkDescribedIndex(b *testing.B) {
	all := rules.All()
	b.Run("index", func(b *testing.B) {
		for b.Loop() {
			if analyze.DescribedIndexSize(all) == 0 {
				b.Fatal("no documents")
			}
		}
	})
	b.Run("floor-split-words", func(b *testing.B) {
		for b.Loop() {
			n := 0
			for _, r := range all {
				n += len(strings.Fields(r.Title + " " + r.Doc))
			}
			if n == 0 {
				b.Fatal("no words")
			}
		}
	})
}
