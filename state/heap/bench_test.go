package heap

import (
	"testing"

	"github.com/weirstream/weir/state"
)

// BenchmarkValueState measures a read-modify-write of a ValueState[int64]
// (a per-key counter) over 1024 keys, as a keyed operator does per record.
func BenchmarkValueState(b *testing.B) {
	for _, bc := range []struct {
		name string
		ttl  *state.TTLConfig
	}{{"plain", nil}, {"ttl", ttlOf(60_000, state.OnReadAndWrite)}} {
		b.Run(bc.name, func(b *testing.B) {
			be := newSubtask(b, 1, 0, &fakeClock{})
			v := state.Value(be, state.ValueDescriptor[int64]{Name: "count", TTL: bc.ttl})
			const nkeys = 1024
			groups := make([]int, nkeys)
			for k := range nkeys {
				groups[k] = keyGroupOf(k)
			}
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				k := i % nkeys
				be.SetCurrentKey(k, groups[k])
				n, _ := v.Value()
				v.Update(n + 1)
			}
		})
	}
}

// BenchmarkSnapshotSync measures the synchronous part of a snapshot of
// 100k keys in 4 states.
func BenchmarkSnapshotSync(b *testing.B) {
	be := newSubtask(b, 1, 0, nil)
	h := register(be)
	populate(be, h, span(0, 100_000))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := be.Snapshot(0); err != nil {
			b.Fatal(err)
		}
	}
}
