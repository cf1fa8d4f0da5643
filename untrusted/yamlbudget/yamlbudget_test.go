package yamlbudget

import (
	"errors"
	"runtime"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// Bomb is one anchored value of valueBytes aliased n times: the shape that passes
// the YAML libraries' alias ratio check and expands to valueBytes*n.
func Bomb(valueBytes, n int) []byte {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nbig: &a \"")
	b.WriteString(strings.Repeat("x", valueBytes))
	b.WriteString("\"\nlist: [")
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("*a")
	}
	b.WriteString("]\n")
	return []byte(b.String())
}

func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

func TestAliasBombRefusedBeforeExpanding(t *testing.T) {
	bomb := Bomb(64<<10, 1000) // 64 MiB once expanded, from 70 KB
	for name, decode := range map[string]func() error{
		"Unmarshal":       func() error { var v map[string]any; return Unmarshal(bomb, &v) },
		"UnmarshalStrict": func() error { var v map[string]any; return UnmarshalStrict(bomb, &v) },
		"YAMLToJSON":      func() error { _, err := YAMLToJSON(bomb); return err },
	} {
		var err error
		alloc := allocated(func() { err = decode() })
		if !errors.Is(err, ErrExpansion) {
			t.Errorf("%s: %v, want ErrExpansion", name, err)
		}
		if alloc > 16<<20 {
			t.Errorf("%s: allocated %d bytes to refuse a %d-byte document", name, alloc, len(bomb))
		}
	}
}

func TestAliasesWithinBudgetDecode(t *testing.T) {
	doc := []byte("base: &b {cpu: 1, memory: 1Gi}\nfirst: *b\nsecond:\n  <<: *b\n  cpu: 2\n")
	var v map[string]any
	if err := Unmarshal(doc, &v); err != nil {
		t.Fatal(err)
	}
	if v["first"].(map[string]any)["memory"] != "1Gi" || v["second"].(map[string]any)["cpu"] != float64(2) {
		t.Errorf("decoded %v", v)
	}
	// Many small aliases are fine: what counts is the size they expand to.
	if err := Check(Bomb(10, 5000)); err != nil {
		t.Errorf("5,000 aliases of 10 bytes: %v", err)
	}
	// Text with & and * that is no anchor is not refused.
	if err := Check([]byte("cmd: \"a && b * c\"\n")); err != nil {
		t.Error(err)
	}
}

func TestSelfAliasRefused(t *testing.T) {
	if err := Check([]byte("a: &x [1, *x]\n")); err == nil {
		t.Error("an anchor holding an alias of itself passed")
	}
}

func TestStreamSharesOneBudget(t *testing.T) {
	// Each document alone expands within the budget; together they do not.
	one := string(Bomb(1<<20, 12)) // 12 MiB each
	stream := []byte(one + "---\n" + one + "---\n" + one)
	if err := Check([]byte(one)); err != nil {
		t.Fatalf("one document: %v", err)
	}
	if err := Check(stream); !errors.Is(err, ErrExpansion) {
		t.Errorf("three documents: %v, want ErrExpansion", err)
	}
}

// FuzzCheck: Check never panics, and what it lets through decodes to no more than
// its budget (as JSON, about the expanded size).
func FuzzCheck(f *testing.F) {
	f.Add([]byte("a: &x [1, 2]\nb: *x\n"))
	f.Add(Bomb(100, 50))
	f.Add([]byte("a: &x [*x]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 4096 || Check(data) != nil {
			return
		}
		out, err := yaml.YAMLToJSON(data)
		if err == nil && int64(len(out)) > 4*Budget(len(data)) {
			t.Fatalf("%d-byte document passed Check and decoded to %d bytes", len(data), len(out))
		}
	})
}
