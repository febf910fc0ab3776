package heap

import (
	"testing"
	"time"

	"github.com/weirstream/weir/state"
)

// ttlReadMap is a map state whose TTL of 10 s reads refresh.
var ttlReadMap = state.MapDescriptor[string, int64]{Name: "m", ValueCodec: state.Int64Codec{},
	TTL: &state.TTLConfig{TTL: 10 * time.Second, UpdateType: state.OnReadAndWrite}}

// TestIncrementalTTLMapRefreshReachesDelta (a review's): a TTL map's
// refresh by a read (and a put) reaches the next delta, the map written
// whole with the refreshed timestamps, and survives a restore.
func TestIncrementalTTLMapRefreshReachesDelta(t *testing.T) {
	for _, how := range []string{"get", "contains", "range", "put"} {
		t.Run(how, func(t *testing.T) {
			clock, store := &fakeClock{ms: 1000}, newMemStore("mem://a")
			b := incBackend(t, nil, clock, nil)
			d := ttlReadMap
			m := state.Map(b, d)
			at(b, 1)
			m.Put("a", 1)
			m.Put("b", 2)
			checkpointTo(t, b, store) // base
			at(b, 2)
			m.Put("z", 9)
			checkpointTo(t, b, store) // a delta
			clock.ms += 8000
			at(b, 1)
			switch how {
			case "get":
				m.Get("a")
			case "contains":
				m.Contains("a")
			case "range":
				m.Range(func(string, int64) bool { return true })
			case "put":
				m.Put("a", 1)
			}
			man, _ := checkpointTo(t, b, store)
			clock.ms += 5000 // b expired, a refreshed
			r := incBackend(t, store, clock, man)
			rm := state.Map(r, d)
			at(r, 1)
			_, okA := rm.Get("a")
			_, okB := rm.Get("b")
			if !okA || okB && how != "range" {
				t.Fatalf("restored: a %v b %v", okA, okB)
			}
		})
	}
}

// TestMapGetViewKeepsNoView: a read through state.GetView takes the key's
// bytes in place, and a write the read makes (a TTL refreshed on read)
// keeps a copy of them: the caller's buffer written again afterwards does
// not change the key in the map.
func TestMapGetViewKeepsNoView(t *testing.T) {
	clock := &fakeClock{ms: 1000}
	b := incBackend(t, nil, clock, nil)
	m := state.Map(b, ttlReadMap)
	at(b, 1)
	m.Put("key1", 7)
	long := "a user key longer than a short key's room"
	m.Put(long, 8)
	clock.ms += 5000
	for _, k := range []string{"key1", long} {
		buf := []byte(k)
		if v, ok := state.GetView(m, buf); !ok || v != map[string]int64{"key1": 7, long: 8}[k] {
			t.Fatalf("GetView(%q) = %d, %v", k, v, ok)
		}
		for i := range buf {
			buf[i] = 'X'
		}
	}
	got := map[string]int64{}
	m.Range(func(k string, v int64) bool { got[k] = v; return true })
	if len(got) != 2 || got["key1"] != 7 || got[long] != 8 {
		t.Fatalf("after the reads' buffers changed, the map holds %v", got)
	}
	if _, ok := state.GetView(m, []byte("nokey")); ok {
		t.Fatal("GetView found a key never put")
	}
}
