package heap

import (
	"testing"
	"time"

	"github.com/weirstream/weir/state"
)

// TestIncrementalTTLMapRefreshReachesDelta (a review's): a TTL map's
// refresh by a read (and a put) reaches the next delta, the map written
// whole with the refreshed timestamps, and survives a restore.
func TestIncrementalTTLMapRefreshReachesDelta(t *testing.T) {
	for _, how := range []string{"get", "contains", "range", "put"} {
		t.Run(how, func(t *testing.T) {
			clock, store := &fakeClock{ms: 1000}, newMemStore("mem://a")
			b := incBackend(t, nil, clock, nil)
			d := state.MapDescriptor[string, int64]{Name: "m", ValueCodec: state.Int64Codec{},
				TTL: &state.TTLConfig{TTL: 10 * time.Second, UpdateType: state.OnReadAndWrite}}
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
