package heap

import (
	"fmt"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/weirstream/weir/state"
	"github.com/weirstream/weir/state/internal/wire"
)

// benchRowCodec encodes a []any row of int64 and string fields, each
// behind AnyCodec's tag, as SQL's row codecs do, without reflection. Rows
// are never modified once stored, so Copy returns the row itself.
type benchRowCodec struct{}

func (benchRowCodec) Encode(buf []byte, r []any) []byte {
	buf = wire.AppendUvarint(buf, uint64(len(r)))
	for _, f := range r {
		buf = state.AnyCodec{}.Encode(buf, f)
	}
	return buf
}

func (benchRowCodec) Decode(b []byte) ([]any, []byte, error) {
	r := wire.NewReader(b)
	n := r.Count(1)
	if r.Err() != nil {
		return nil, b, r.Err()
	}
	b = r.Rest()
	row := make([]any, n)
	for i := range row {
		var err error
		if row[i], b, err = (state.AnyCodec{}).Decode(b); err != nil {
			return nil, b, err
		}
	}
	return row, b, nil
}

func (benchRowCodec) Copy(r []any) []any { return r }

func benchRow(k int) []any {
	return []any{int64(k), "auction-" + fmt.Sprint(k%977), int64(k * 7), "2026-12-03 14:00:00.000"}
}

// BenchmarkSnapshot measures a whole snapshot (Snapshot and Write) of
// 1,000,000 entries of []any rows, keyed by string: a ValueState with a
// row per key, and a MapState with 4 rows under each of 250,000 keys. It
// reports the time, the process's CPU time (garbage collection included,
// and comparable on a loaded machine), bytes allocated and allocations per
// entry.
func BenchmarkSnapshot(b *testing.B) {
	const entries = 1_000_000
	for _, kind := range []string{"value", "map"} {
		b.Run(kind, func(b *testing.B) {
			be := newSubtask(b, 1, 0, nil)
			fillRows(be, kind, entries)
			b.ReportAllocs()
			var size int
			runtime.GC()
			cpu0 := cpuTime(b)
			for b.Loop() {
				s, err := be.Snapshot(0)
				if err != nil {
					b.Fatal(err)
				}
				size = len(write(b, s))
			}
			b.ReportMetric(float64(size)/entries, "blob-B/entry")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/entries, "ns/entry")
			b.ReportMetric(float64((cpuTime(b)-cpu0).Nanoseconds())/float64(b.N)/entries, "cpu-ns/entry")
		})
	}
}

// fillRows stores entries rows in a ValueState ("value") or a MapState
// of 4 rows per key ("map").
func fillRows(be *Backend, kind string, entries int) {
	switch kind {
	case "value":
		v := state.Value(be, state.ValueDescriptor[[]any]{Name: "rows", Codec: benchRowCodec{}})
		for k := range entries {
			key := fmt.Sprintf("key-%d", k)
			be.SetCurrentKey(key, keyGroupOf(key))
			v.Update(benchRow(k))
		}
	case "map":
		m := state.Map(be, state.MapDescriptor[int64, []any]{Name: "rows", ValueCodec: benchRowCodec{}})
		for k := range entries / 4 {
			key := fmt.Sprintf("key-%d", k)
			be.SetCurrentKey(key, keyGroupOf(key))
			for j := range 4 {
				m.Put(int64(j), benchRow(k*4+j))
			}
		}
	}
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
