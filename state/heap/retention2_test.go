package heap

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/weirstream/weir/state"
)

// TestIncrementalKeepsNoRemovedValuesAnyFate (a review's): as
// TestIncrementalKeepsNoRemovedValues, with snapshots dropped unwritten
// (the collector lands them), savepoints between checkpoints, deltas that
// cover several captures (a snapshot written late), and records past
// smallRecord.
func TestIncrementalKeepsNoRemovedValuesAnyFate(t *testing.T) {
	for _, mode := range []string{"dropped", "savepoint", "late", "indexed"} {
		t.Run(mode, func(t *testing.T) {
			clock, store := &fakeClock{}, newMemStore("mem://a")
			b := incBackend(t, nil, clock, nil)
			m := state.Map(b, state.MapDescriptor[string, []byte]{Name: "m", ValueCodec: state.BytesCodec{}})
			at(b, 1)
			m.Put("keep", []byte("x"))
			checkpointTo(t, b, store)
			var reachable atomic.Int64
			const rounds = 40
			var late state.Snapshot
			for r := range rounds {
				at(b, 1)
				m.Put(fmt.Sprint("u", r), trackedValue(&reachable))
				m.Remove(fmt.Sprint("u", r-1))
				if mode == "indexed" {
					for j := range 20 {
						m.Put(fmt.Sprint("x", j), []byte("y"))
					}
				}
				b.SnapshotFor(!(mode == "savepoint" && r%2 == 0))
				s, err := b.Snapshot(0)
				if err != nil {
					t.Fatal(err)
				}
				switch {
				case mode == "dropped" && r%3 != 0:
					// never written
				case mode == "savepoint" && r%2 == 0:
					write(t, s)
				case mode == "late" && r%4 == 0:
					if late != nil {
						writeTo(t, late, store)
					}
					late = s
				default:
					writeTo(t, s, store)
				}
				s = nil
			}
			if late != nil {
				writeTo(t, late, store)
				late = nil
			}
			checkReachable(t, &reachable, rounds)
			runtime.KeepAlive(b)
		})
	}
}
