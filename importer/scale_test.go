package importer

import (
	"fmt"
	"strings"
	"testing"
)

// eventsTable prints a `kubectl get events` table of n rows about n/4 pods, each pod
// with four different events, as kubectl prints it.
func eventsTable(n int) []byte {
	var b strings.Builder
	b.WriteString("LAST SEEN   TYPE      REASON      OBJECT              MESSAGE\n")
	reasons := []string{"Scheduled", "Pulling", "Failed", "BackOff"}
	for i := 0; i < n; i++ {
		typ := "Normal"
		if i%4 >= 2 {
			typ = "Warning"
		}
		fmt.Fprintf(&b, "5m          %-8s  %-10s  pod/web-%06d     %s web-%06d\n", typ, reasons[i%4], i/4, reasons[i%4], i/4)
	}
	return []byte(b.String())
}

// TestEventImportIsLinear compares the event comparisons of 5k and 20k rows: four times
// the rows may cost at most about four times the work.
func TestEventImportIsLinear(t *testing.T) {
	ops := func(n int) int {
		li := newLooseImport(newReport(FormatLoose, "t"))
		li.file("events.txt", eventsTable(n))
		got := 0
		for _, evs := range li.events {
			got += len(evs)
		}
		if got != n {
			t.Fatalf("%d rows gave %d events", n, got)
		}
		return li.eventOps
	}
	small, large := ops(5000), ops(20000)
	if large > 4*small+100 {
		t.Errorf("5k rows took %d event comparisons, 20k took %d: more than linear", small, large)
	}
	// The same rows pasted twice are kept once, still at linear cost.
	li := newLooseImport(newReport(FormatLoose, "t"))
	data := eventsTable(5000)
	li.file("a.txt", data)
	li.file("b.txt", data)
	if n := len(li.events["default"]); n != 5000 {
		t.Errorf("a table pasted twice gave %d events, want 5000", n)
	}
	if li.eventOps > 2*small+100 {
		t.Errorf("a table pasted twice took %d comparisons, once %d", li.eventOps, small)
	}
}
