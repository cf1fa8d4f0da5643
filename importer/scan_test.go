package importer

import (
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The hand-written scanners of the loose import read lines as the regular expressions
// they replace did; these are the references.
var (
	refGap       = regexp.MustCompile(`\s{2,}`)
	refErrorWord = regexp.MustCompile(`(?i)\b(error|fatal|panic|exception|traceback|failed|denied|refused|killed|cannot|unable)\b`)
)

var scanSeeds = []string{
	"", " ", "a", "a b", "a  b", "  a  b  ", "NAME   READY   STATUS    RESTARTS   AGE",
	"web-1   0/1     CrashLoopBackOff   5 (2m ago)   10m", "a\t\tb \t c", "x \fy", "a  \r b",
	"Warning  Failed  3m (x4 over 5m)  kubelet  Error: ErrImagePull",
	"ERROR: x", "errors are fine", "my_error", "error_x", "x-error-y", "Failed.", "FATAL", "panicked",
	"it was killed", "Cannot", "unable_to", "traceback:", "ExCePtIoN", "deniedx", "éerror", "erroré",
}

func TestSplitCellsAsRegexp(t *testing.T) {
	for _, s := range scanSeeds {
		for _, n := range []int{-1, 0, 1, 2, 3, 5} {
			want := refGap.Split(strings.TrimSpace(detab(s)), n)
			if got := splitCells(s, n); !slices.Equal(got, want) {
				t.Errorf("splitCells(%q, %d) = %q, want %q", s, n, got, want)
			}
		}
	}
}

func TestHasErrorWordAsRegexp(t *testing.T) {
	for _, s := range scanSeeds {
		if got, want := hasErrorWord(s), refErrorWord.MatchString(s); got != want {
			t.Errorf("hasErrorWord(%q) = %v, want %v", s, got, want)
		}
	}
}

func FuzzScannersAsRegexp(f *testing.F) {
	for _, s := range scanSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := hasErrorWord(s), refErrorWord.MatchString(s); got != want {
			t.Errorf("hasErrorWord(%q) = %v, want %v", s, got, want)
		}
		for _, n := range []int{-1, 2} {
			if got, want := splitCells(s, n), refGap.Split(strings.TrimSpace(detab(s)), n); !slices.Equal(got, want) {
				t.Errorf("splitCells(%q, %d) = %q, want %q", s, n, got, want)
			}
		}
	})
}
