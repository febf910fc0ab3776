package pebble_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/weirstream/weir/keygroup"
	"github.com/weirstream/weir/state"
	"github.com/weirstream/weir/state/pebble"
)

// TestTTLSweepFollowsWrites: without a compaction filter, a state with a
// TTL is swept in proportion to what is written to it. 1,000 keys written
// at time 0 have expired at 20; 300 more written then make 1,300 writes,
// 13 chunks of 100 (QueryTimeAfterNumEntries): the next cleanup, with no
// round-robin budget (0 keys), examines all 1,300 keys and removes the
// 1,000 expired ones, which no read has touched. With the sweep off it
// removes none.
func TestTTLSweepFollowsWrites(t *testing.T) {
	for _, c := range []struct {
		every   int64
		removed int
	}{{100, 1000}, {-1, 0}} {
		t.Run(fmt.Sprint(c.every), func(t *testing.T) {
			now := int64(0)
			b, err := pebble.New(pebble.Options{LocalDir: t.TempDir(), KeyGroupRange: keygroup.Range{Start: 0, End: metaMaxPar - 1},
				MaxParallelism: metaMaxPar, Clock: func() int64 { return now }})
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			ttl := &state.TTLConfig{TTL: 10 * time.Millisecond, QueryTimeAfterNumEntries: c.every}
			v := state.Value(b, state.ValueDescriptor[int]{Name: "v", TTL: ttl})
			put := func(from, n int) {
				for k := from; k < from+n; k++ {
					b.SetCurrentKey(k, keygroup.ForKey(k, metaMaxPar))
					v.Update(k)
				}
			}
			put(0, 1000)
			now = 20
			put(1000, 300)
			if got := b.CleanupExpired(0); got != c.removed {
				t.Fatalf("cleanup removed %d entries, want %d", got, c.removed)
			}
			if got := b.CleanupExpired(0); got != 0 {
				t.Fatalf("a second cleanup with nothing written since removed %d entries, want 0", got)
			}
			if got := len(b.Keys("v")); got != 300 {
				t.Fatalf("%d keys live, want 300", got)
			}
		})
	}
}
