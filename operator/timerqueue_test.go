package operator

import (
	"fmt"
	"math/rand/v2"
	"slices"
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

// TestSortBucketByRecordsAsTimerCompare sorts random buckets by records
// and checks the order against timerCompare's: keys of 0 to 24 bytes
// sharing long prefixes and holding zero bytes (alike in their first 16
// bytes, or a shorter one padded to look alike), of other types with the
// same text, in several key groups and namespaces.
func TestSortBucketByRecordsAsTimerCompare(t *testing.T) {
	defer func(n int) { sortByRecords = n }(sortByRecords)
	sortByRecords = 2
	rng := rand.New(rand.NewPCG(5, 9))
	alphabet := "\x00\x01ab"
	for round := range 200 {
		ts := make([]Timer, 2+rng.IntN(300))
		for i := range ts {
			b := []byte("prefix-shared-16")[:rng.IntN(17)]
			for range rng.IntN(9) {
				b = append(b, alphabet[rng.IntN(len(alphabet))])
			}
			var key any = string(b)
			if rng.IntN(8) == 0 {
				key = int64(rng.IntN(3))
			} else if rng.IntN(8) == 0 {
				key = fmt.Sprint(rng.IntN(3))
			}
			ts[i] = Timer{Timestamp: 5, Key: key, KeyGroup: rng.IntN(3), Namespace: fmt.Sprint(rng.IntN(2))}
		}
		want := slices.Clone(ts)
		slices.SortFunc(want, func(x, y Timer) int { return timerCompare(x, y, state.AnyCodec{}) })
		got := sortBucket(slices.Clone(ts), state.AnyCodec{})
		if !slices.EqualFunc(got, want, func(a, b Timer) bool { return a == b }) {
			t.Fatalf("round %d: records sort %v,\ntimerCompare %v", round, got, want)
		}
	}
}
