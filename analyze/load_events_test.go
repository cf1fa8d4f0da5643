package analyze

import (
	"encoding/json"
	"fmt"
	"runtime"
	"testing"
	"unsafe"
)

// A list of events is decoded into room for all of them at once: grown by doubling and
// copied to its size, a big cluster's events' lists were a fifth of what an analysis
// allocated. Here decoding allocates about 1.7 times the size of one list of the events
// (the rest is their strings); grown and copied, 5.4 times.
func TestEventsDecodeIntoOneList(t *testing.T) {
	const n = 3000
	items := make([]any, n)
	for i := range items {
		items[i] = map[string]any{
			"metadata":       map[string]any{"name": fmt.Sprintf("web-%d.%x", i, i), "namespace": "shop", "uid": fmt.Sprintf("ev-%05d", i)},
			"involvedObject": map[string]any{"kind": "Pod", "namespace": "shop", "name": fmt.Sprintf("web-%d", i)},
			"reason":         "Started", "message": "Started container web", "type": "Normal",
			"firstTimestamp": "2026-11-29T20:25:01Z", "lastTimestamp": "2026-11-29T20:25:01Z", "count": 1,
		}
	}
	data, err := json.Marshal(map[string]any{"kind": "EventList", "items": items})
	if err != nil {
		t.Fatal(err)
	}
	list := int64(n * unsafe.Sizeof(rawEvent{}))
	allocated := func(decode func()) int64 {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		decode()
		runtime.ReadMemStats(&after)
		return int64(after.TotalAlloc - before.TotalAlloc)
	}
	var d decodedList
	got := allocated(func() { d = decodeEvents(newSharedDecode(), data) })
	if evs, _ := d.items.([]rawEvent); d.err != nil || len(evs) != n || evs[n-1].InvolvedObject.Name != fmt.Sprintf("web-%d", n-1) {
		t.Fatalf("decoded %d events (%v)", len(evs), d.err)
	}
	t.Logf("decoding %d events allocated %d bytes, %.2f lists of their size", n, got, float64(got)/float64(list))
	if got > list*5/2 {
		t.Errorf("decoding %d events allocated %d bytes, want at most 2.5 lists of their size (%d bytes)", n, got, list)
	}
}
