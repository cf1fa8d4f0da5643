package analyze

import (
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// hexIDsByScan is the plain reading of "runs of exactly 64 hexadecimal digits": every
// maximal run of digits, kept when it is 64 long.
func hexIDsByScan(s string) []string {
	var out []string
	start := -1
	for i := 0; i <= len(s); i++ {
		if i < len(s) && isHex(s[i]) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 && i-start == 64 {
			out = append(out, s[start:i])
		}
		start = -1
	}
	return out
}

// nextHexID skips most of a text; it must find exactly the IDs a scan of every byte
// finds, whatever the runs' lengths and places.
func TestNextHexIDFindsWhatAScanFinds(t *testing.T) {
	id := strings.Repeat("0123456789abcdef", 4)
	cases := []string{
		"", id, id + "0", "0" + id, id[:63], id + " " + id, id + "-" + id[:63] + "-" + id,
		"StartContainer for \"" + id + "\" returns successfully",
		"msg=\"RunPodSandbox for &PodSandboxMetadata{Name:web,Uid:0fea2224-58d1-49e8-b040-b6d4b6fa41fb,} returns sandbox id \\\"" + id + "\\\"\"",
		strings.Repeat("a", 200), strings.Repeat("a", 128) + " " + id,
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 5000 {
		var b strings.Builder
		for b.Len() < r.IntN(400) {
			switch r.IntN(4) {
			case 0:
				b.WriteString(id[:60+r.IntN(5)])
			case 1:
				b.WriteString(strings.ToUpper(id[:r.IntN(65)]))
			case 2:
				b.WriteByte(" g-\"xZ"[r.IntN(6)])
			default:
				b.WriteString(id)
			}
		}
		cases = append(cases, b.String())
	}
	for _, s := range cases {
		if got, want := hexIDsIn(s), hexIDsByScan(s); !reflect.DeepEqual(got, want) {
			t.Fatalf("hexIDsIn(%q) = %q, want %q", s, got, want)
		}
	}
}
