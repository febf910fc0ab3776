package operator

import (
	"fmt"
	"testing"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/state"
)

// A timeout moved on every access registers a later timer and deletes the
// earlier one each time: the heap queue must not keep every deleted timer
// until its time comes.
func TestHeapQueueDropsDeletedTimers(t *testing.T) {
	q := newHeapQueue(state.AnyCodec{})
	timer := func(key string, ts event.Timestamp) Timer {
		return Timer{Domain: ProcessingTime, Timestamp: ts, Key: key, KeyGroup: 3, Namespace: "ttl"}
	}
	for i := range 100_000 {
		key := fmt.Sprint("k", i%10)
		ts := event.Timestamp(1_000_000 + i)
		if i >= 10 && !q.remove(timer(key, ts-10)) {
			t.Fatalf("step %d: the timer of %s at %d was not registered", i, key, ts-10)
		}
		if !q.add(timer(key, ts)) {
			t.Fatalf("step %d: the timer of %s at %d was there already", i, key, ts)
		}
	}
	if q.len() != 10 {
		t.Fatalf("len %d, want 10", q.len())
	}
	if held := q.registered(); held > 2*compactGhosts+20 {
		t.Fatalf("the queue holds %d timers (registered or deleted) for 10 registered", held)
	}
	var fired []string
	for {
		tm, ok := q.peek()
		if !ok {
			break
		}
		q.pop(tm)
		fired = append(fired, fmt.Sprint(tm.Key, "@", tm.Timestamp))
	}
	want := []string{"k0@1099990", "k1@1099991", "k2@1099992", "k3@1099993", "k4@1099994",
		"k5@1099995", "k6@1099996", "k7@1099997", "k8@1099998", "k9@1099999"}
	if fmt.Sprint(fired) != fmt.Sprint(want) {
		t.Fatalf("fired %v, want %v", fired, want)
	}
	if q.registered() != 0 || len(q.buckets) != 0 || q.len() != 0 {
		t.Fatalf("after firing everything: %d in the registry, %d buckets, len %d", q.registered(), len(q.buckets), q.len())
	}
}
