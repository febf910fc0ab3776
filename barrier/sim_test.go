package barrier

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/weirstream/weir/event"
)

// TestSimulation drives a Handler the way a task does, from random upstream
// streams, and checks the properties the checkpoint path relies on. Each
// upstream channel carries, for checkpoints 1..k (k random per channel), some
// records then a barrier or (rarely) a cancel-barrier, and finally its end.
func TestSimulation(t *testing.T) {
	for seed := uint64(1); seed <= 400; seed++ {
		for _, mode := range []Mode{ExactlyOnce, AtLeastOnce} {
			t.Run(fmt.Sprintf("%v/seed=%d", mode, seed), func(t *testing.T) {
				newSim(t, seed, mode).run()
			})
		}
	}
}

type itemKind int

const (
	record     itemKind = iota
	mark                // a barrier
	cancelMark          // a cancel-barrier
	end
)

type item struct {
	kind itemKind
	id   event.CheckpointID
}

type sim struct {
	t       *testing.T
	rng     *rand.Rand
	mode    Mode
	h       *Handler
	streams [][]item
	pos     []int // items consumed per channel
	blocked []bool
	now     time.Time
	// outcome per checkpoint: "snapshot" or "abort"; set once.
	outcome   map[event.CheckpointID]string
	lastSnap  event.CheckpointID
	cancelled map[event.CheckpointID]bool // some upstream cancelled it
	marked    map[event.CheckpointID]bool // some upstream sent a marker for it
}

func newSim(t *testing.T, seed uint64, mode Mode) *sim {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	n := 1 + rng.IntN(5)
	s := &sim{
		t: t, rng: rng, mode: mode, h: New(mode, n),
		streams: make([][]item, n), pos: make([]int, n), blocked: make([]bool, n),
		now: epoch, outcome: map[event.CheckpointID]string{},
		cancelled: map[event.CheckpointID]bool{}, marked: map[event.CheckpointID]bool{},
	}
	maxID := rng.IntN(7)
	for ch := range s.streams {
		s.streams[ch] = s.upstream(event.CheckpointID(rng.IntN(maxID + 1)))
	}
	return s
}

func (s *sim) upstream(k event.CheckpointID) []item {
	var out []item
	for id := event.CheckpointID(1); id <= k; id++ {
		for range s.rng.IntN(3) {
			out = append(out, item{kind: record})
		}
		kind := mark
		if s.rng.IntN(10) == 0 {
			kind = cancelMark
			s.cancelled[id] = true
		}
		s.marked[id] = true
		out = append(out, item{kind: kind, id: id})
	}
	return append(out, item{kind: record}, item{kind: end})
}

func (s *sim) run() {
	for {
		ready := s.ready()
		if len(ready) == 0 {
			break
		}
		s.step(ready[s.rng.IntN(len(ready))])
	}
	for ch := range s.streams {
		if s.pos[ch] < len(s.streams[ch]) {
			s.t.Fatalf("deadlock: channel %d blocked with input left; blocked %v", ch, s.blocked)
		}
	}
	s.checkOutcomes()
}

func (s *sim) ready() []int {
	var out []int
	for ch, st := range s.streams {
		if !s.blocked[ch] && s.pos[ch] < len(st) {
			out = append(out, ch)
		}
	}
	return out
}

func (s *sim) step(ch int) {
	it := s.streams[ch][s.pos[ch]]
	s.pos[ch]++
	s.now = s.now.Add(time.Millisecond)
	switch it.kind {
	case mark:
		s.apply(s.h.OnBarrier(s.now, ch, event.CheckpointBarrier{ID: it.id}))
	case cancelMark:
		s.apply(s.h.OnCancelBarrier(s.now, ch, it.id))
	case end:
		s.apply(s.h.OnEndOfInput(s.now, ch))
	}
}

func (s *sim) apply(d Decision) {
	for _, a := range d.Abort {
		s.settle(a.ID, "abort")
		if !errors.Is(a.Reason, ErrSubsumed) && !errors.Is(a.Reason, ErrCancelled) {
			s.t.Fatalf("abort %d: unexpected reason %v", a.ID, a.Reason)
		}
	}
	if d.Snapshot != nil {
		s.checkSnapshot(d.Snapshot.ID)
	}
	if s.mode == AtLeastOnce && (d.Unblock || len(d.Block) > 0) {
		s.t.Fatalf("at-least-once blocked or unblocked: %v", d)
	}
	if d.Unblock {
		clear(s.blocked)
	}
	for _, ch := range d.Block {
		s.blocked[ch] = true
	}
	for ch := range s.blocked {
		if s.h.Blocked(ch) != s.blocked[ch] {
			s.t.Fatalf("Blocked(%d)=%v, task thinks %v", ch, s.h.Blocked(ch), s.blocked[ch])
		}
	}
}

func (s *sim) settle(id event.CheckpointID, what string) {
	if prev, ok := s.outcome[id]; ok {
		s.t.Fatalf("checkpoint %d: %s after %s", id, what, prev)
	}
	s.outcome[id] = what
}

// checkSnapshot: ids increase, and every open channel has delivered the
// barrier — in ExactlyOnce as the very last element read from it, so the
// snapshot holds no record that came after the barrier.
func (s *sim) checkSnapshot(id event.CheckpointID) {
	s.settle(id, "snapshot")
	if id <= s.lastSnap {
		s.t.Fatalf("snapshot %d after snapshot %d", id, s.lastSnap)
	}
	s.lastSnap = id
	for ch, st := range s.streams {
		read := st[:s.pos[ch]]
		if len(read) > 0 && read[len(read)-1].kind == end {
			continue
		}
		if s.mode == ExactlyOnce && (len(read) == 0 || read[len(read)-1] != (item{kind: mark, id: id})) {
			s.t.Fatalf("snapshot %d: channel %d read %v since its barrier", id, ch, read)
		}
		if s.mode == AtLeastOnce && !containsItem(read, item{kind: mark, id: id}) {
			s.t.Fatalf("snapshot %d: channel %d has not delivered its barrier", id, ch)
		}
	}
}

func containsItem(items []item, want item) bool {
	for _, it := range items {
		if it == want {
			return true
		}
	}
	return false
}

// checkOutcomes: every checkpoint some upstream marked is settled exactly
// once, and one cancelled anywhere is never snapshotted. In ExactlyOnce,
// where alignment keeps the channels in step, nothing else is abandoned.
func (s *sim) checkOutcomes() {
	for id := range s.marked {
		got, ok := s.outcome[id]
		switch {
		case !ok:
			s.t.Fatalf("checkpoint %d never settled", id)
		case s.cancelled[id] && got == "snapshot":
			s.t.Fatalf("checkpoint %d snapshotted though cancelled upstream", id)
		case s.mode == ExactlyOnce && !s.cancelled[id] && got != "snapshot":
			s.t.Fatalf("checkpoint %d: %s, want snapshot", id, got)
		}
	}
	if len(s.outcome) != len(s.marked) {
		s.t.Fatalf("outcomes %v for marked %v", s.outcome, s.marked)
	}
}

func TestTrackerLimit(t *testing.T) {
	h := New(AtLeastOnce, 2)
	for id := event.CheckpointID(1); id <= maxTracked; id++ {
		if d := h.OnBarrier(epoch, 0, event.CheckpointBarrier{ID: id}); !d.IsZero() {
			t.Fatalf("barrier %d: %v", id, d)
		}
	}
	d := h.OnBarrier(epoch, 0, event.CheckpointBarrier{ID: maxTracked + 1})
	if len(d.Abort) != 1 || d.Abort[0].ID != 1 || !errors.Is(d.Abort[0].Reason, ErrTooManyPending) {
		t.Fatalf("got %v, want checkpoint 1 dropped", d)
	}
	if id, _, _, _, _ := h.Pending(); id != 2 {
		t.Fatalf("oldest pending %d, want 2", id)
	}
}

func TestPanics(t *testing.T) {
	for name, f := range map[string]func(){
		"no channels":  func() { New(ExactlyOnce, 0) },
		"unknown mode": func() { New(Mode(7), 1) },
		"bad channel":  func() { New(AtLeastOnce, 2).OnBarrier(epoch, 2, event.CheckpointBarrier{ID: 1}) },
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Fatal("no panic")
				}
			}()
			f()
		})
	}
}

func TestDecisionString(t *testing.T) {
	d := Decision{Abort: []Aborted{{ID: 1, Reason: subsumedBy(2)}}, Unblock: true, Block: []int{0}}
	if got, want := d.String(), "abort 1 (barrier: subsumed by checkpoint 2); unblock; block [0]"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	if got := (Decision{}).String(); got != "none" {
		t.Fatalf("zero decision: %q", got)
	}
}
