package bundle

import (
	"testing"
)

func TestOriginCite(t *testing.T) {
	describe := Origin{Path: "ticket.txt", ItemLines: []int{40, 0}}
	dump := Origin{Path: "dump/pods.json", ItemLines: []int{3}, ItemPaths: []string{"", "dump/other/pods.json"}, SameShape: true}
	fragment := Origin{Path: "ticket.txt", LineOffset: 11}
	for _, c := range []struct {
		name          string
		o             Origin
		pointer       string
		line, endLine int
		want          Spot
	}{
		{"item line replaces the pointer", describe, "/items/0/status", 0, 0, Spot{Path: "ticket.txt", Line: 40}},
		{"item without a known line", describe, "/items/1", 0, 0, Spot{Path: "ticket.txt"}},
		{"same shape keeps the pointer", dump, "/items/0/status/phase", 0, 0, Spot{Path: "dump/pods.json", Pointer: "/items/0/status/phase", Line: 3}},
		{"item of another file", dump, "/items/1", 0, 0, Spot{Path: "dump/other/pods.json", Pointer: "/items/1"}},
		{"bare array", dump, "/0/status", 0, 0, Spot{Path: "dump/pods.json", Pointer: "/0/status", Line: 3}},
		{"crictl containers", dump, "/containers/0", 0, 0, Spot{Path: "dump/pods.json", Pointer: "/containers/0", Line: 3}},
		{"a pointer to no item", dump, "/items", 0, 0, Spot{Path: "dump/pods.json", Pointer: "/items"}},
		{"line moved by the offset", fragment, "", 2, 0, Spot{Path: "ticket.txt", Line: 13}},
		{"range moved by the offset", fragment, "", 2, 4, Spot{Path: "ticket.txt", Line: 13, EndLine: 15}},
		{"whole file", fragment, "", 0, 0, Spot{Path: "ticket.txt"}},
	} {
		if got := c.o.Cite(c.pointer, c.line, c.endLine); got != c.want {
			t.Errorf("%s: Cite(%q, %d, %d) = %+v, want %+v", c.name, c.pointer, c.line, c.endLine, got, c.want)
		}
	}
}

func TestReadImportReport(t *testing.T) {
	collected, err := New("collected", map[string][]byte{NamespacedResourcePath(KindPods, "shop"): []byte(`{"items":[]}`)})
	if err != nil {
		t.Fatal(err)
	}
	if r, err := ReadImportReport(collected); r != nil || err != nil {
		t.Errorf("a bundle without an import report: %+v, %v; want nil, nil", r, err)
	}
	imported, err := New("imported", map[string][]byte{ImportReportPath: []byte(`{"version":"1.0","format":"loose","input":"-",` +
		`"files":[{"path":"a.txt","detected":"text","status":"unreadable","reason":"binary"}]}`)})
	if err != nil {
		t.Fatal(err)
	}
	r, err := ReadImportReport(imported)
	if err != nil || r.Format != "loose" || r.Count(ImportUnreadable) != 1 || r.File("a.txt") == nil || r.Origins == nil {
		t.Errorf("ReadImportReport = %+v, %v", r, err)
	}
	broken, err := New("broken", map[string][]byte{ImportReportPath: []byte("{")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ReadImportReport(broken); err == nil {
		t.Error("a broken import report read without error")
	}
}
