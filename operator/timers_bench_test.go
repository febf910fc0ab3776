package operator

import (
	"encoding/binary"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/keygroup"
	"github.com/weirstream/weir/state"
	"github.com/weirstream/weir/state/heap"
)

// windowFirer re-arms each key's timer windows-1 times, step ms later, as
// a sliced HOP window aggregation does (one timer per key pending).
type windowFirer struct {
	ts      *TimerService
	windows event.Timestamp
	fired   int
}

func (f *windowFirer) OnTimer(t Timer) error {
	f.fired++
	if t.Timestamp < (f.windows-1)*2000 {
		f.ts.Register(t.Domain, t.Timestamp+2000, "next")
	}
	return nil
}

// BenchmarkTimersFireWindows is q5's end of input on the heap timer queue:
// n keys, each with a window timer at one time, fire at the final
// watermark, each re-registering its next window's timer 5 times over.
// cpu-ns/timer is the process's CPU (GC included), steadier than the wall
// clock on a shared machine.
//
//	go test -run '^$' -bench TimersFireWindows ./operator/
func BenchmarkTimersFireWindows(b *testing.B) {
	const maxPar = 128
	for _, n := range []int{10_000, 100_000, 400_000} {
		keys := make([]string, n)
		for i := range keys {
			keys[i] = string(binary.BigEndian.AppendUint64([]byte{1}, uint64(i)*7919))
		}
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			cpu0 := processCPU()
			for b.Loop() {
				kb, err := heap.New(heap.Options{KeyGroupRange: keygroup.Range{Start: 0, End: maxPar - 1}, MaxParallelism: maxPar})
				if err != nil {
					b.Fatal(err)
				}
				ts := NewTimerService(kb, state.AnyCodec{}, maxPar)
				f := &windowFirer{ts: ts, windows: 5}
				ts.SetTriggerable(f)
				for _, k := range keys {
					kb.SetCurrentKey(k, keygroup.ForKey(k, maxPar))
					ts.Register(EventTime, 1999, "first")
				}
				if err := ts.AdvanceWatermark(event.MaxWatermark); err != nil {
					b.Fatal(err)
				}
				if f.fired != 5*n {
					b.Fatalf("fired %d timers, want %d", f.fired, 5*n)
				}
			}
			b.ReportMetric((processCPU()-cpu0).Seconds()*1e9/float64(b.N)/float64(5*n), "cpu-ns/timer")
		})
	}
}

// processCPU is the process's user + system CPU time so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
