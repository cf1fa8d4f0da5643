package importer

import (
	"os"
	"path/filepath"
	"testing"
)

func addLooseSeeds(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "loose", "*", "*"))
	for _, p := range files {
		if data, err := os.ReadFile(p); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte("Name: x\nNamespace: y\nContainers:\n  c:\n    State: Terminated\n      Exit Code: x\nEvents:\n  Type  Reason\n  Normal\n"))
	f.Add([]byte("LAST SEEN   TYPE\n5m   Warning   x\n"))
}

// FuzzLooseImport runs every loose parser over arbitrary text: it must never panic.
func FuzzLooseImport(f *testing.F) {
	addLooseSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		r := newReport(FormatLoose, "fuzz")
		li := newLooseImport(r)
		li.file("f.txt", data)
		files := map[string][]byte{}
		li.layoutEvents()
		li.layoutLists(files)
		li.layoutJournals(files)
		li.layoutCrictl(files)
		li.layoutLogs(files)
	})
}

// FuzzDescribe feeds arbitrary lines to the describe reader directly.
func FuzzDescribe(f *testing.F) {
	addLooseSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, c := range splitChunks(data) {
			if len(c.lines) > 0 {
				parseDescribe(c.lines)
				parseEventsTable(c.lines, "ns")
				parsePodsTable(c.lines, "ns")
				_, _ = parseObjects(c.lines)
			}
		}
	})
}
