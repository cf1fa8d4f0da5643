package collect

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// withinWindow keeps the events last seen inside the --since window. The window is
// measured on the API server's clock, which stamped the events.
func (c *collector) withinWindow(items []runtime.Object) []runtime.Object {
	if c.opts.Since <= 0 {
		return items
	}
	cutoff := c.serverNow().Add(-c.opts.Since)
	kept := items[:0]
	for _, item := range items {
		ev, ok := item.(*corev1.Event)
		if !ok || !eventTime(ev).Before(cutoff) {
			kept = append(kept, item)
		}
	}
	return kept
}

// eventTime is when an event was last seen. Which field carries it depends on the
// API that recorded the event (core/v1 counts, events.k8s.io series, or neither).
func eventTime(ev *corev1.Event) time.Time {
	t := ev.LastTimestamp.Time
	if ev.Series != nil && ev.Series.LastObservedTime.After(t) {
		t = ev.Series.LastObservedTime.Time
	}
	if ev.EventTime.After(t) {
		t = ev.EventTime.Time
	}
	if t.IsZero() {
		t = ev.FirstTimestamp.Time
	}
	if t.IsZero() {
		t = ev.CreationTimestamp.Time
	}
	return t
}
