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

// BenchmarkReadModifyWriteDuringSnapshot measures `x := Value(); modify x
// in place; Update(x)` over 1024 keys, taking a snapshot every 1024
// operations: never ("none"), written at once ("written": reads do not
// copy), or kept in flight until the next one ("in-flight": the first read
// of each key copies its value). Values are an int64 (immutable: never
// copied) and a *tally copied with GobCodec or with a Copier.
func BenchmarkReadModifyWriteDuringSnapshot(b *testing.B) {
	var copies int
	copier := countingCodec[*tally]{copies: &copies, copy: func(x *tally) *tally {
		return &tally{x.Count, append([]string(nil), x.Seen...)}
	}}
	values := []struct {
		name string
		rmw  func(be *Backend) func()
	}{
		{"int64", func(be *Backend) func() {
			v := state.Value(be, state.ValueDescriptor[int64]{Name: "n"})
			return func() { n, _ := v.Value(); v.Update(n + 1) }
		}},
		{"ptr-gob", func(be *Backend) func() { return bumpTally(be, nil) }},
		{"ptr-copier", func(be *Backend) func() { return bumpTally(be, copier) }},
	}
	for _, val := range values {
		for _, mode := range []string{"none", "written", "in-flight"} {
			b.Run(val.name+"/"+mode, func(b *testing.B) {
				be := newSubtask(b, 1, 0, nil)
				rmw := val.rmw(be)
				const nkeys = 1024
				groups := make([]int, nkeys)
				for k := range nkeys {
					groups[k] = keyGroupOf(k)
					be.SetCurrentKey(k, groups[k])
					rmw()
				}
				var inFlight *snapshot
				b.ReportAllocs()
				for i := 0; b.Loop(); i++ {
					k := i % nkeys
					if k == 0 && mode != "none" {
						s, _ := be.Snapshot(0)
						if inFlight != nil {
							inFlight.flight.land() // as if written
						}
						if inFlight = s.(*snapshot); mode == "written" {
							inFlight.flight.land()
						}
					}
					be.SetCurrentKey(k, groups[k])
					rmw()
				}
			})
		}
	}
}

func bumpTally(be *Backend, c state.Codec[*tally]) func() {
	v := state.Value(be, state.ValueDescriptor[*tally]{Name: "t", Codec: c})
	return func() {
		x, ok := v.Value()
		if !ok {
			x = &tally{Seen: []string{"a", "b"}}
		}
		x.Count++
		v.Update(x)
	}
}
