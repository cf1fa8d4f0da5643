package analyze

// DescribedIndexSize builds the described reading's index over rules and returns how
// many documents it holds: the benchmark of its cost lives beside the rules.
func DescribedIndexSize(rules []*Rule) int { return len(newDescribedIndex(describable(rules)).docs) }
