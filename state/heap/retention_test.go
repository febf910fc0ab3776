package heap

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weirstream/weir/state"
)

// TestIncrementalKeepsNoRemovedValues: a map value put and then removed
// is not kept reachable by the backend's record of changes, while
// checkpoints are written and while they fail (each failed capture waits
// in the chain's pending list for a later delta). A version of the
// user-key records that held the values written (958513a, reverted) kept
// every removed value of a failure streak, and about three intervals'
// worth otherwise.
func TestIncrementalKeepsNoRemovedValues(t *testing.T) {
	for _, failing := range []bool{false, true} {
		t.Run(fmt.Sprint("failing=", failing), func(t *testing.T) {
			clock, store := &fakeClock{}, newMemStore("mem://a")
			b := incBackend(t, nil, clock, nil)
			m := state.Map(b, state.MapDescriptor[string, []byte]{Name: "m", ValueCodec: state.BytesCodec{}})
			at(b, 1)
			m.Put("keep", []byte("x")) // the map exists: later puts change user keys only
			checkpointTo(t, b, store)
			var reachable atomic.Int64
			const rounds = 40
			for r := range rounds {
				at(b, 1)
				m.Put(fmt.Sprint("u", r), trackedValue(&reachable))
				m.Remove(fmt.Sprint("u", r-1))
				store.fail = failing
				s, err := b.Snapshot(0)
				if err != nil {
					t.Fatal(err)
				}
				if _, _, err := s.(state.IncrementalSnapshot).WriteFiles(store); (err != nil) != failing {
					t.Fatalf("round %d: write error %v", r, err)
				}
			}
			checkReachable(t, &reachable, rounds)
			runtime.KeepAlive(b)
		})
	}
}

// checkReachable fails the test when more than one of the rounds-1 values
// removed (counted by reachable, live ones included: the last value put)
// stays reachable after collections.
func checkReachable(t *testing.T, reachable *atomic.Int64, rounds int) {
	t.Helper()
	// Cleanups run on their own goroutine after a collection.
	for deadline := time.Now().Add(10 * time.Second); reachable.Load() > 2 && time.Now().Before(deadline); {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if n := reachable.Load() - 1; n > 1 {
		t.Errorf("%d of the %d values removed from the state are still reachable", n, rounds-1)
	}
}

// trackedValue returns a new 1 MB value that reachable counts while it is
// reachable.
func trackedValue(reachable *atomic.Int64) []byte {
	v := make([]byte, 1<<20)
	reachable.Add(1)
	runtime.AddCleanup(&v[0], func(n *atomic.Int64) { n.Add(-1) }, reachable)
	return v
}
