package operator

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/keygroup"
	"github.com/weirstream/weir/state"
	"github.com/weirstream/weir/state/heap"
	"github.com/weirstream/weir/state/pebble"
)

// The timers' metamorphic test runs the same random operations — register
// and delete event- and processing-time timers of many keys and namespaces
// (keys of equal text too: 1 and "1"), advance the watermark and the
// processing time (timers registering timers as they fire), snapshot and
// restore at another parallelism, across backends — on timer services over
// the heap backend (timers on the Go heap) and over the Pebble backend
// (timers in Pebble), and requires the same timers to fire in the same
// order, and equal counts throughout. (It lives here, not in state/pebble,
// because the timer service is here and state may not import operator.)

const timerMaxPar = 16

// timerWorld is the subtasks of one keyed operator on one backend.
type timerWorld struct {
	pebble bool
	dir    string
	subs   []*timerSub
	log    *strings.Builder
	again  map[string]bool // timers registered again as they fired
}

type timerSub struct {
	kb state.KeyedBackend
	ts *TimerService
}

// fireLog records each fired timer. As it fires, a timer whose time is a
// multiple of 7 registers another 3 ms later; one whose time is a multiple
// of 11 another at its own time, and of 13 another 2 ms before it (both
// due at once: the heap queue's bucket being fired takes the first, a new
// earlier bucket the second). A timer whose time is a multiple of 5
// registers itself again the first time it fires (it fires once more), and
// one of a multiple of 3 deletes itself (a no-op: it has fired).
type fireLog struct {
	sub   int
	w     *timerWorld
	inner *TimerService
}

func (f *fireLog) OnTimer(t Timer) error {
	fmt.Fprintf(f.w.log, "s%d %d %d %d %T:%v %q\n", f.sub, t.Domain, t.Timestamp, t.KeyGroup, t.Key, t.Key, t.Namespace)
	if f.w.subs[f.sub].kb.CurrentKey() != t.Key {
		return fmt.Errorf("timer %v fired with current key %v", t, f.w.subs[f.sub].kb.CurrentKey())
	}
	if t.Timestamp%7 == 0 {
		f.inner.Register(t.Domain, t.Timestamp+3, t.Namespace+"+")
	}
	if id := fmt.Sprintf("%d %d %T:%v %q", t.Domain, t.Timestamp, t.Key, t.Key, t.Namespace); t.Timestamp%5 == 0 && !f.w.again[id] {
		f.w.again[id] = true
		f.inner.Register(t.Domain, t.Timestamp, t.Namespace)
	}
	if t.Timestamp%3 == 0 {
		f.inner.Delete(t.Domain, t.Timestamp, t.Namespace)
	}
	if strings.ContainsAny(t.Namespace, "=-") {
		return nil
	}
	if t.Timestamp%11 == 0 {
		f.inner.Register(t.Domain, t.Timestamp, t.Namespace+"=")
	}
	if t.Timestamp%13 == 0 {
		f.inner.Register(t.Domain, t.Timestamp-2, t.Namespace+"-")
	}
	return nil
}

func (w *timerWorld) open(t *testing.T, par int, blobs [][]byte) {
	t.Helper()
	w.close()
	w.subs = nil
	for i := range par {
		r := keygroup.RangeFor(timerMaxPar, par, i)
		var kb state.KeyedBackend
		var err error
		if w.pebble {
			kb, err = pebble.New(pebble.Options{KeyGroupRange: r, MaxParallelism: timerMaxPar, LocalDir: w.dir,
				WriteBufferSize: 256 << 10, BlockCacheSize: 1 << 20})
		} else {
			kb, err = heap.New(heap.Options{KeyGroupRange: r, MaxParallelism: timerMaxPar})
		}
		if err != nil {
			t.Fatal(err)
		}
		ts := NewTimerService(kb, state.AnyCodec{}, timerMaxPar)
		ts.SetTriggerable(&fireLog{sub: i, w: w, inner: ts})
		if len(blobs) > 0 {
			if err := ts.Restore(blobs); err != nil {
				t.Fatal(err)
			}
		}
		w.subs = append(w.subs, &timerSub{kb: kb, ts: ts})
	}
}

func (w *timerWorld) close() {
	for _, s := range w.subs {
		if c, ok := s.kb.(interface{ Close() error }); ok {
			_ = c.Close()
		}
	}
}

func (w *timerWorld) sub(key any) *timerSub {
	kg := keygroup.ForKey(key, timerMaxPar)
	for _, s := range w.subs {
		if s.kb.KeyGroupRange().Contains(kg) {
			s.kb.SetCurrentKey(key, kg)
			return s
		}
	}
	panic("no subtask owns key group")
}

func (w *timerWorld) snapshot(t *testing.T) [][]byte {
	t.Helper()
	var blobs [][]byte
	for _, s := range w.subs {
		b, err := s.ts.Snapshot().Write()
		if err != nil {
			t.Fatal(err)
		}
		blobs = append(blobs, b)
	}
	return blobs
}

func (w *timerWorld) counts() string {
	var b strings.Builder
	for i, s := range w.subs {
		fmt.Fprintf(&b, "s%d=%d ", i, s.ts.Len())
	}
	return b.String()
}

// timerOp is one random operation, applied alike to every world.
type timerOp struct {
	kind   int // 0 register, 1 delete, 2 watermark, 3 processing time, 4 snapshot+restore, 5 count
	domain TimeDomain
	ts     event.Timestamp
	key    any
	ns     string
	par    int
	cross  bool // restore the other world's snapshot
}

func randomTimerOp(rng *rand.Rand, clock *event.Timestamp) timerOp {
	keys := []any{"a", "b", "1", 1, int64(2), "a\x00", "", "zz", 3, "k9"}
	nss := []string{"", "w", "w\x00", "x", "0:10"}
	op := timerOp{domain: TimeDomain(rng.IntN(2)), key: keys[rng.IntN(len(keys))], ns: nss[rng.IntN(len(nss))]}
	op.ts = *clock + event.Timestamp(rng.IntN(40)) - 5
	switch n := rng.IntN(100); {
	case n < 55:
		op.kind = 0
	case n < 70:
		op.kind = 1
	case n < 84:
		op.kind = 2 + rng.IntN(2)
		*clock += event.Timestamp(rng.IntN(15))
		op.ts = *clock
	case n < 92:
		op.kind, op.par, op.cross = 4, 1+rng.IntN(4), rng.IntN(3) == 0
	default:
		op.kind = 5
	}
	return op
}

func (w *timerWorld) apply(t *testing.T, op timerOp, blobs [][]byte) {
	t.Helper()
	switch op.kind {
	case 0:
		w.sub(op.key).ts.Register(op.domain, op.ts, op.ns)
	case 1:
		w.sub(op.key).ts.Delete(op.domain, op.ts, op.ns)
	case 2, 3:
		for _, s := range w.subs {
			var err error
			if op.kind == 2 {
				err = s.ts.AdvanceWatermark(op.ts)
			} else {
				err = s.ts.AdvanceProcessingTime(op.ts)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
	case 4:
		w.open(t, op.par, blobs)
	case 5:
		fmt.Fprintln(w.log, w.counts())
	}
}

func TestTimersMetamorphicHeapPebble(t *testing.T) {
	defer func(n, m, r int) { compactGhosts, smallBucket, sortByRecords = n, m, r }(compactGhosts, smallBucket, sortByRecords)
	for seed := range uint64(24) {
		// Odd seeds have the heap queue drop its ghosts (removed timers
		// left in their buckets) as soon as there are more than 2. Seeds
		// 12 and up give every bucket of more than one timer a registry
		// (ghosts, stale entries of fired timers), the others scan theirs.
		// Seeds 2, 3, 6, 7 … sort every bucket of two or more by records.
		compactGhosts = map[bool]int{true: 2, false: 1024}[seed%2 == 1]
		smallBucket = map[bool]int{true: 1, false: 8}[seed >= 12]
		sortByRecords = map[bool]int{true: 2, false: 256}[seed%4 >= 2]
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 7))
			heapW := &timerWorld{log: &strings.Builder{}, again: map[string]bool{}}
			pebW := &timerWorld{pebble: true, dir: t.TempDir(), log: &strings.Builder{}, again: map[string]bool{}}
			par := 1 + rng.IntN(3)
			heapW.open(t, par, nil)
			pebW.open(t, par, nil)
			defer pebW.close()
			var clock event.Timestamp
			for i := range 200 {
				op := randomTimerOp(rng, &clock)
				var hb, pb [][]byte
				if op.kind == 4 {
					hb, pb = heapW.snapshot(t), pebW.snapshot(t)
					if op.cross {
						hb, pb = pb, hb
					}
				}
				heapW.apply(t, op, hb)
				pebW.apply(t, op, pb)
				if h, p := heapW.log.String(), pebW.log.String(); h != p {
					t.Fatalf("op %d %+v: heap and pebble differ\nheap:\n%s\npebble:\n%s", i, op, h, p)
				}
			}
			// Everything left fires, in the same order.
			final := timerOp{kind: 2, ts: event.MaxWatermark}
			heapW.apply(t, final, nil)
			pebW.apply(t, final, nil)
			final.kind = 3
			heapW.apply(t, final, nil)
			pebW.apply(t, final, nil)
			if h, p := heapW.log.String(), pebW.log.String(); h != p {
				t.Fatalf("final firing differs\nheap:\n%s\npebble:\n%s", h, p)
			}

			if heapW.counts() != pebW.counts() || !strings.Contains(heapW.log.String(), "\"w+\"") ||
				!strings.Contains(heapW.log.String(), "=\"\n") || !strings.Contains(heapW.log.String(), "-\"\n") {
				t.Fatalf("after all fired: heap %s, pebble %s (or no timer registered while firing)", heapW.counts(), pebW.counts())
			}
		})
	}
}
