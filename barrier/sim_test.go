package barrier

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/weirstream/weir/event"
)

// TestSimulation drives a Handler the way a task does, from random upstream
// streams, and checks the properties the checkpoint path relies on. Each
// upstream channel carries, for checkpoints 1..k (k random per channel), some
// records then a barrier or (rarely) a cancel-barrier, and finally its end.
//
// Unaligned configurations (timeout 0, and an aligned timeout of 3 steps
// with random ticks) also check the channel state: at the unaligned
// snapshot no channel has been read past the checkpoint's barrier, and the
// records persisted per channel are exactly those between the snapshot and
// the channel's barrier.
func TestSimulation(t *testing.T) {
	configs := []struct {
		name string
		mode Mode
		opt  Options
	}{
		{"EXACTLY_ONCE", ExactlyOnce, Options{}},
		{"AT_LEAST_ONCE", AtLeastOnce, Options{}},
		{"unaligned", ExactlyOnce, Options{Unaligned: true}},
		{"aligned-timeout", ExactlyOnce, Options{Unaligned: true, AlignedTimeout: 3 * time.Millisecond}},
	}
	for seed := uint64(1); seed <= 400; seed++ {
		for _, c := range configs {
			t.Run(fmt.Sprintf("%s/seed=%d", c.name, seed), func(t *testing.T) {
				newSim(t, seed, c.mode, c.opt).run()
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
	opt       Options
	unal      *unalignedRun               // the unaligned checkpoint persisting, if any
	done      map[event.CheckpointID]bool // unaligned channel state done
	unaligned map[event.CheckpointID]bool // snapshotted unaligned
}

// unalignedRun is what the simulated task persists for an unaligned
// checkpoint: per channel, whether it is persisted now and how many records.
type unalignedRun struct {
	id         event.CheckpointID
	snapPos    []int
	persisting []bool
	persist    []bool // in the snapshot's Persist list
	records    []int
}

func newSim(t *testing.T, seed uint64, mode Mode, opt Options) *sim {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	n := 1 + rng.IntN(5)
	s := &sim{
		t: t, rng: rng, mode: mode, h: NewWithOptions(mode, n, opt), opt: opt,
		done: map[event.CheckpointID]bool{}, unaligned: map[event.CheckpointID]bool{},
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
		if s.opt.AlignedTimeout > 0 && s.rng.IntN(4) == 0 {
			s.now = s.now.Add(time.Millisecond)
			s.apply(s.h.Tick(s.now))
			continue
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
	case record:
		if u := s.unal; u != nil && u.persisting[ch] {
			u.records[ch]++
		}
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
	if d.Unaligned {
		s.startUnaligned(d)
	}
	for _, ch := range d.Persisted {
		s.stopPersisting(ch)
	}
	if d.ChannelStateDone != 0 {
		s.checkChannelState(d.ChannelStateDone)
	}
	if (s.mode == AtLeastOnce || (s.opt.Unaligned && s.opt.AlignedTimeout == 0)) && (d.Unblock || len(d.Block) > 0) {
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
	if u := s.unal; u != nil && u.id == id && what == "abort" {
		s.unal = nil // an unaligned snapshot abandoned while persisting
		s.outcome[id] = what
		return
	}
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
		if s.opt.Unaligned && !containsItem(read, item{kind: mark, id: id}) {
			continue // persisted until its barrier: checked at ChannelStateDone
		}
		if s.mode == ExactlyOnce && (len(read) == 0 || read[len(read)-1] != (item{kind: mark, id: id})) {
			s.t.Fatalf("snapshot %d: channel %d read %v since its barrier", id, ch, read)
		}
		if s.mode == AtLeastOnce && !containsItem(read, item{kind: mark, id: id}) {
			s.t.Fatalf("snapshot %d: channel %d has not delivered its barrier", id, ch)
		}
	}
}

func (s *sim) startUnaligned(d Decision) {
	n := len(s.streams)
	u := &unalignedRun{id: d.Snapshot.ID, snapPos: append([]int(nil), s.pos...),
		persisting: make([]bool, n), persist: make([]bool, n), records: make([]int, n)}
	for _, ch := range d.Persist {
		u.persisting[ch], u.persist[ch] = true, true
	}
	s.unal = u
	s.unaligned[u.id] = true
}

// stopPersisting: ch's last element read is its barrier of the checkpoint
// or its end.
func (s *sim) stopPersisting(ch int) {
	u := s.unal
	if u == nil || !u.persisting[ch] {
		s.t.Fatalf("persisted [%d] while not persisting it", ch)
	}
	u.persisting[ch] = false
	last := s.streams[ch][s.pos[ch]-1]
	if last != (item{kind: mark, id: u.id}) && last.kind != end {
		s.t.Fatalf("checkpoint %d: channel %d persisted up to %v", u.id, ch, last)
	}
}

// checkChannelState: per channel, the records persisted are exactly the
// records between the snapshot and the barrier.
func (s *sim) checkChannelState(id event.CheckpointID) {
	u := s.unal
	if u == nil || u.id != id {
		s.t.Fatalf("channel state %d done, none persisting", id)
	}
	s.unal, s.done[id] = nil, true
	for ch, st := range s.streams {
		if u.persisting[ch] {
			s.t.Fatalf("checkpoint %d done, channel %d still persisting", id, ch)
		}
		want, upTo := 0, len(st)-1 // its end, without a barrier of id
		if i := slices.Index(st, item{kind: mark, id: id}); i >= 0 {
			upTo = i
		}
		for _, it := range st[min(u.snapPos[ch], upTo):upTo] {
			if it.kind == record {
				want++
			}
		}
		if !u.persist[ch] {
			want = 0 // its barrier was in before the snapshot, or it had ended
		}
		if u.records[ch] != want {
			s.t.Fatalf("checkpoint %d channel %d: persisted %d records, want %d", id, ch, u.records[ch], want)
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
		case s.opt.Unaligned && !s.cancelled[id] && got == "abort":
			// subsumed after its snapshot: a channel not blocked delivered
			// a newer barrier first
		case s.unaligned[id] && got == "snapshot" && !s.done[id]:
			s.t.Fatalf("unaligned checkpoint %d: channel state never done", id)
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
