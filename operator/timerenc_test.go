package operator

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/keygroup"
	"github.com/weirstream/weir/state"
	"github.com/weirstream/weir/state/heap"
)

const encMaxPar = 8

// modelFirer removes each timer that fires from the model, and
// sometimes registers another, as a window operator's next window does.
type modelFirer struct {
	ts    *TimerService
	model map[string]bool
	rng   *rand.Rand
}

func timerText(t Timer) string {
	return fmt.Sprintf("%d %d %d %v %q", t.Domain, t.Timestamp, t.KeyGroup, t.Key, t.Namespace)
}

func (f *modelFirer) OnTimer(t Timer) error {
	if !f.model[timerText(t)] {
		return fmt.Errorf("fired %s, not registered", timerText(t))
	}
	delete(f.model, timerText(t))
	if f.rng.IntN(4) == 0 {
		next := t
		next.Timestamp += event.Timestamp(1 + f.rng.IntN(3))
		f.ts.Register(next.Domain, next.Timestamp, next.Namespace)
		f.model[timerText(next)] = true
	}
	return nil
}

func newEncService(t *testing.T) (*TimerService, state.KeyedBackend) {
	t.Helper()
	kb, err := heap.New(heap.Options{KeyGroupRange: keygroup.Range{Start: 0, End: encMaxPar - 1}, MaxParallelism: encMaxPar})
	if err != nil {
		t.Fatal(err)
	}
	return NewTimerService(kb, state.Erase[string](state.StringCodec{}), encMaxPar), kb
}

// writtenIDs is the timers a snapshot's blob holds, sorted, duplicates kept.
func writtenIDs(t *testing.T, blob []byte) []string {
	t.Helper()
	ts, err := decodeTimers(blob, state.Erase[string](state.StringCodec{}))
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]string, len(ts))
	for i, x := range ts {
		ids[i] = timerText(x)
	}
	slices.Sort(ids)
	return ids
}

// TestTimerSnapshotsKeepEncodings runs random registrations, deletions
// (ghosts in large buckets, removals in small ones, revivals), firings,
// snapshots written and snapshots abandoned on one heap timer service,
// and checks that every snapshot written holds exactly the registered
// timers, each once, however much of it came from the buckets' kept
// encodings; and that a restore of it snapshots the same. Odd seeds
// have fewer keys, delete more, compact the ghosts early and keep
// buckets small for 2 timers only.
func TestTimerSnapshotsKeepEncodings(t *testing.T) {
	for seed := range uint64(40) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			if seed%2 == 1 {
				defer func(c, s int) { compactGhosts, smallBucket = c, s }(compactGhosts, smallBucket)
				compactGhosts, smallBucket = 4, 2
			}
			rng := rand.New(rand.NewPCG(seed, 7))
			s, kb := newEncService(t)
			model := map[string]bool{}
			s.SetTriggerable(&modelFirer{ts: s, model: model, rng: rng})
			var wm event.Timestamp
			kept := 0
			registers, keys := 60, 40 // of 100 operations, then deletions up to 75
			if seed%2 == 1 {
				registers, keys = 30, 6
			}
			for step := range 3000 {
				key := fmt.Sprint("k", rng.IntN(keys))
				kb.SetCurrentKey(key, keygroup.ForKey(key, encMaxPar))
				tm := Timer{Domain: EventTime, Timestamp: wm + 1 + event.Timestamp(rng.IntN(6)), Key: key,
					KeyGroup: keygroup.ForKey(key, encMaxPar), Namespace: fmt.Sprint("w", rng.IntN(2))}
				switch n := rng.IntN(100); {
				case n < registers:
					s.Register(tm.Domain, tm.Timestamp, tm.Namespace)
					model[timerText(tm)] = true
				case n < 75:
					s.Delete(tm.Domain, tm.Timestamp, tm.Namespace)
					delete(model, timerText(tm))
				case n < 80:
					wm++
					if err := s.AdvanceWatermark(wm); err != nil {
						t.Fatal(err)
					}
				case n < 84:
					s.Snapshot() // never written
				default:
					snap := s.Snapshot()
					for _, d := range snap.(timerSnapshot).domains {
						for _, p := range d.pieces {
							kept += p.enc.count
						}
					}
					blob, err := snap.Write()
					if err != nil {
						t.Fatal(err)
					}
					want := slices.Sorted(maps.Keys(model))
					if got := writtenIDs(t, blob); !slices.Equal(got, want) {
						t.Fatalf("step %d: snapshot holds %d timers %q,\nregistered %d %q", step, len(got), got, len(want), want)
					}
					r, _ := newEncService(t)
					if err := r.Restore([][]byte{blob}); err != nil {
						t.Fatal(err)
					}
					again, err := r.Snapshot().Write()
					if err != nil {
						t.Fatal(err)
					}
					if got := writtenIDs(t, again); !slices.Equal(got, want) {
						t.Fatalf("step %d: restored snapshot holds %q, want %q", step, got, want)
					}
				}
			}
			if kept == 0 {
				t.Fatal("no snapshot copied a kept encoding")
			}
		})
	}
}

// TestTimerSnapshotEncodesOnlyNewTimers checks that a bucket only added
// to since the last snapshot written gives the next its kept encoding
// and the new timers alone, and that a removal makes it encode all again.
func TestTimerSnapshotEncodesOnlyNewTimers(t *testing.T) {
	s, kb := newEncService(t)
	register := func(from, to int) {
		for i := from; i < to; i++ {
			key := fmt.Sprint("k", i)
			kb.SetCurrentKey(key, keygroup.ForKey(key, encMaxPar))
			s.Register(EventTime, 10, "")
		}
	}
	piece := func() timerPiece {
		t.Helper()
		snap := s.Snapshot()
		if _, err := snap.Write(); err != nil {
			t.Fatal(err)
		}
		ps := snap.(timerSnapshot).domains[EventTime].pieces
		if len(ps) != 1 {
			t.Fatalf("%d pieces, want one bucket's", len(ps))
		}
		return ps[0]
	}
	register(0, 100)
	if p := piece(); p.enc.count != 0 || len(p.ts) != 100 {
		t.Fatalf("first snapshot: %d kept, %d to encode; want 0, 100", p.enc.count, len(p.ts))
	}
	register(100, 103)
	if p := piece(); p.enc.count != 100 || len(p.ts) != 3 {
		t.Fatalf("after three added: %d kept, %d to encode; want 100, 3", p.enc.count, len(p.ts))
	}
	if p := piece(); p.enc.count != 103 || len(p.ts) != 0 {
		t.Fatalf("nothing added: %d kept, %d to encode; want 103, 0", p.enc.count, len(p.ts))
	}
	kb.SetCurrentKey("k5", keygroup.ForKey("k5", encMaxPar))
	s.Delete(EventTime, 10, "")
	if p := piece(); p.enc.count != 0 || len(p.ts) != 102 {
		t.Fatalf("after a removal: %d kept, %d to encode; want 0, 102", p.enc.count, len(p.ts))
	}
}

// TestTimerSnapshotWrittenWhileOwnerGoesOn writes each snapshot on
// another goroutine while the owner registers, deletes and captures
// again (run with -race): every snapshot holds the timers registered at
// its capture.
func TestTimerSnapshotWrittenWhileOwnerGoesOn(t *testing.T) {
	s, kb := newEncService(t)
	registered := map[string]bool{}
	type inFlight struct {
		snap state.Snapshot
		want []string
		done chan []byte
	}
	var flights []inFlight
	kept := 0
	rng := rand.New(rand.NewPCG(3, 4))
	for round := range 30 {
		for range 200 {
			key := fmt.Sprint("k", rng.IntN(300))
			kg := keygroup.ForKey(key, encMaxPar)
			kb.SetCurrentKey(key, kg)
			tm := Timer{Domain: EventTime, Timestamp: event.Timestamp(rng.IntN(4)), Key: key, KeyGroup: kg}
			if round%5 == 4 && rng.IntN(10) == 0 { // some rounds drop the kept encodings
				s.Delete(tm.Domain, tm.Timestamp, "")
				delete(registered, timerText(tm))
				continue
			}
			s.Register(tm.Domain, tm.Timestamp, "")
			registered[timerText(tm)] = true
		}
		f := inFlight{snap: s.Snapshot(), done: make(chan []byte, 1)}
		for _, p := range f.snap.(timerSnapshot).domains[EventTime].pieces {
			kept += p.enc.count
		}
		for id := range registered {
			f.want = append(f.want, id)
		}
		slices.Sort(f.want)
		go func() {
			blob, err := f.snap.Write()
			if err != nil {
				t.Error(err)
			}
			f.done <- blob
		}()
		flights = append(flights, f)
		if round%3 == 2 { // let some writers finish before the next capture
			for _, f := range flights {
				if got := writtenIDs(t, <-f.done); !slices.Equal(got, f.want) {
					t.Fatalf("round %d: snapshot holds %d timers, want %d", round, len(got), len(f.want))
				}
			}
			flights = nil
		}
	}
	for _, f := range flights {
		if got := writtenIDs(t, <-f.done); !slices.Equal(got, f.want) {
			t.Fatalf("snapshot holds %d timers, want %d", len(got), len(f.want))
		}
	}
	if kept == 0 {
		t.Fatal("no capture took a kept encoding")
	}
}

// TestTimerEncodingJoinsSegments: a bucket added to before every one of
// many snapshots keeps at most maxSegments segments, and its snapshots
// still hold every timer.
func TestTimerEncodingJoinsSegments(t *testing.T) {
	s, kb := newEncService(t)
	var want []string
	for i := range 3 * maxSegments {
		key := fmt.Sprint("k", i)
		kg := keygroup.ForKey(key, encMaxPar)
		kb.SetCurrentKey(key, kg)
		s.Register(EventTime, 10, "")
		want = append(want, timerText(Timer{Domain: EventTime, Timestamp: 10, Key: key, KeyGroup: kg}))
		snap := s.Snapshot()
		blob, err := snap.Write()
		if err != nil {
			t.Fatal(err)
		}
		if got, w := writtenIDs(t, blob), slices.Sorted(slices.Values(want)); !slices.Equal(got, w) {
			t.Fatalf("snapshot %d holds %q, want %q", i, got, w)
		}
		if p := snap.(timerSnapshot).domains[EventTime].pieces[0]; len(p.enc.segs) > maxSegments {
			t.Fatalf("snapshot %d: the kept encoding has %d segments", i, len(p.enc.segs))
		}
	}
}
