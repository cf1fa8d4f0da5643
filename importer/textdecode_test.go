package importer

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf16"
)

func utf16Bytes(s string, bigEndian, bom bool) []byte {
	var out []byte
	units := utf16.Encode([]rune(s))
	if bom {
		units = append([]uint16{0xFEFF}, units...)
	}
	for _, u := range units {
		if bigEndian {
			out = append(out, byte(u>>8), byte(u))
		} else {
			out = append(out, byte(u), byte(u>>8))
		}
	}
	return out
}

// TestPastesInUTF16AndWithNULs: a describe paste saved as UTF-16 (PowerShell 5.1's
// >, with its byte order mark, or without one) and one with stray NUL bytes import
// as the UTF-8 paste does, from a file and from standard input.
func TestPastesInUTF16AndWithNULs(t *testing.T) {
	plain, err := os.ReadFile(filepath.Join(looseDir("oom-killed"), "describe-pod.txt"))
	if err != nil {
		t.Fatal(err)
	}
	want := importedNames(t, plain)
	if !slices.ContainsFunc(want, func(n string) bool {
		return filepath.Base(n) == "pods.json" || filepath.Base(n) == "shop.json" || len(n) > 0
	}) || len(want) < 2 {
		t.Fatalf("the UTF-8 paste imports %v: nothing to compare", want)
	}
	withNULs := append([]byte{0}, plain...)
	withNULs = append(withNULs[:200:200], append([]byte{0, 0}, withNULs[200:]...)...)
	for name, data := range map[string][]byte{
		"utf-16le with BOM":    utf16Bytes(string(plain), false, true),
		"utf-16le without BOM": utf16Bytes(string(plain), false, false),
		"utf-16be with BOM":    utf16Bytes(string(plain), true, true),
		"utf-8 with BOM":       append([]byte{0xEF, 0xBB, 0xBF}, plain...),
		"stray NULs":           withNULs,
	} {
		if got := importedNames(t, data); !slices.Equal(got, want) {
			t.Errorf("%s: imported %v, want %v", name, got, want)
		}
		if !bytes.Equal(decodeText(data), plain) {
			t.Errorf("%s: decoded text differs from the paste", name)
		}
	}
	// Binary data stays binary.
	if isText(bytes.Repeat([]byte{0, 1, 2, 0xff}, 1000)) {
		t.Error("binary data read as text")
	}
}

func importedNames(t *testing.T, data []byte) []string {
	t.Helper()
	var names [][]string
	path := filepath.Join(t.TempDir(), "paste.txt")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, open := range []func() (namer, error){
		func() (namer, error) { b, _, err := Open(path, Options{}); return b, err },
		func() (namer, error) { b, _, err := Open("-", Options{Stdin: bytes.NewReader(data)}); return b, err },
	} {
		b, err := open()
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, n := range b.Names() {
			if n != "import-report.json" {
				got = append(got, n)
			}
		}
		slices.Sort(got)
		names = append(names, got)
	}
	if !slices.Equal(names[0], names[1]) {
		t.Errorf("file and standard input differ: %v, %v", names[0], names[1])
	}
	return names[0]
}

type namer interface{ Names() []string }

// TestPasteThroughMailOrChat: a describe paste whose indentation came back as
// no-break spaces, one quoted "> > " by a mail client, and one indented as a Markdown
// code block (a forum's), import as the paste does.
func TestPasteThroughMailOrChat(t *testing.T) {
	plain, err := os.ReadFile(filepath.Join(looseDir("oom-killed"), "describe-pod.txt"))
	if err != nil {
		t.Fatal(err)
	}
	want := importedNames(t, plain)
	// prefixed is plain with prefix before every line, blank for its blank lines.
	prefixed := func(prefix, blank string) string {
		var b strings.Builder
		for line := range strings.Lines(string(plain)) {
			if strings.TrimSpace(line) == "" {
				b.WriteString(blank + "\n")
				continue
			}
			b.WriteString(prefix + line)
		}
		return b.String()
	}
	for name, data := range map[string][]byte{
		"no-break spaces":          []byte(strings.ReplaceAll(string(plain), "  ", "\u00a0\u00a0")),
		"quoted > > ":              []byte(prefixed("> > ", "> >")),
		"indented as a code block": []byte(prefixed("    ", "")),
		"quoted and indented":      []byte(prefixed("> >     ", "> >")),
	} {
		if got := importedNames(t, data); !slices.Equal(got, want) {
			t.Errorf("%s: imported %v, want %v", name, got, want)
		}
	}
	// Text indented less than a code block, or not every line of it, keeps its indent.
	for _, keep := range []string{"  Warning  Failed  3s  kubelet  Error: ErrImagePull\n  Normal  Pulling  9s  kubelet  Pulling image\n",
		"    spec:\n      containers:\nkind: Pod\n",
		"    State:          Terminated\n      Reason:       OOMKilled\n      Exit Code:    137\n"} {
		if got := decodeText([]byte(keep)); string(got) != keep {
			t.Errorf("indent taken off %q: %q", keep, got)
		}
	}
	// A message a pane wrapped, copied from inside the pane, reads on; a bar inside a
	// line, or a line framed on both sides, stays for the line reader.
	framed := "failed - error: rpc error: code = Unknown desc = command error: EOF, │\n│  stdout: conmon: option parsing failed\n"
	if got := string(decodeText([]byte(framed))); got != "failed - error: rpc error: code = Unknown desc = command error: EOF, \nstdout: conmon: option parsing failed\n" {
		t.Errorf("framed lines: %q", got)
	}
	for _, keep := range []string{"NAME │ READY │ STATUS\nweb  │ 1/1   │ Running\n", "│ Error: x │\n│ more │\n", "text │\nnext\n"} {
		if got := string(decodeText([]byte(keep))); got != keep {
			t.Errorf("frame taken off %q: %q", keep, got)
		}
	}
	// A log whose lines do not all start with '>' keeps them.
	log := []byte("> starting\nplain line\n")
	if got := decodeText(log); string(got) != string(log) {
		t.Errorf("partly quoted text changed: %q", got)
	}
}
