package nexmark

import (
	"context"
	"encoding/binary"
	"fmt"
	"strconv"
	"time"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
)

// pollBurst is how many events one Poll emits at most; the subtask checks
// its mailbox between polls.
const pollBurst = 128

// Source is the Nexmark generator as a split source (operator.Source)
// producing Event values whose record timestamp is the event's dateTime in
// ms. Split i (ID "i") is generator split i; its position is the number of
// its events already emitted. Splits go to readers i mod parallelism, so 8
// splits spread evenly over 1, 2, 4 or 8 readers.
type Source struct {
	gen  *Generator
	rows bool
}

// NewSource returns the source of cfg (after EnsureDefaults).
func NewSource(cfg Config) (*Source, error) {
	g, err := NewGenerator(cfg)
	if err != nil {
		return nil, err
	}
	return &Source{gen: g}, nil
}

// FromOptions returns the source of a `'connector' = 'nexmark'` table's
// WITH options (see ParseOptions).
func FromOptions(opts map[string]string) (*Source, error) {
	cfg, err := ParseOptions(opts)
	if err != nil {
		return nil, err
	}
	return NewSource(cfg)
}

// Rows returns the same source producing each event as the SQL row of
// the Nexmark source table (an event.Row, +I, of Event.Row's fields)
// instead of an Event: the row costs fewer allocations made so than
// from an Event.
func (s *Source) Rows() *Source { return &Source{gen: s.gen, rows: true} }

// Generator returns the source's generator.
func (s *Source) Generator() *Generator { return s.gen }

// Bounded reports whether events.num is set.
func (s *Source) Bounded() bool { return s.gen.cfg.EventsNum > 0 }

// Enumerate returns every split at position 0.
func (s *Source) Enumerate(context.Context) ([]operator.SplitState, error) {
	out := make([]operator.SplitState, s.gen.Splits())
	for i := range out {
		out[i] = operator.SplitState{ID: strconv.Itoa(i), Position: binary.AppendUvarint(nil, 0)}
	}
	return out, nil
}

// AssignSplit gives split i to reader i mod n.
func (s *Source) AssignSplit(id string, n int) int {
	i, _ := strconv.Atoi(id)
	return i % n
}

// CreateReader implements operator.Source.
func (s *Source) CreateReader(operator.ReaderContext) (operator.SourceReader, error) {
	return &reader{gen: s.gen, rows: s.rows, now: time.Now}, nil
}

type splitCursor struct {
	id    string
	index int
	next  int64 // position: the next k to emit
	// start is the wall-clock time at which event time BaseTime is due,
	// set at the first poll (RateLimited only).
	start time.Time
}

// reader emits its splits' events round-robin, one event of each split in
// turn, so that its output is ordered by (k, split) and its timestamps
// never decrease.
type reader struct {
	gen    *Generator
	rows   bool // emit rowValue, not Event
	splits []*splitCursor
	done   operator.FinishedSplits
	cur    int
	now    func() time.Time
	ready  chan struct{}
}

func (r *reader) AddSplits(splits []operator.SplitState) error {
	for _, sp := range splits {
		i, err := strconv.Atoi(sp.ID)
		if err != nil || i < 0 || i >= r.gen.Splits() {
			return fmt.Errorf("nexmark source: unknown split %q (the source has %d splits)", sp.ID, r.gen.Splits())
		}
		k, n := binary.Uvarint(sp.Position)
		if n <= 0 || int64(k) > r.gen.SplitLen(i) {
			return fmt.Errorf("nexmark source: corrupt position of split %s", sp.ID)
		}
		r.splits = append(r.splits, &splitCursor{id: sp.ID, index: i, next: int64(k)})
	}
	return nil
}

// Poll emits up to pollBurst events. A split is reported finished
// (operator.SplitListener) right after its last event.
func (r *reader) Poll(out operator.ReaderOutput) (operator.ReaderStatus, error) {
	var now time.Time
	if r.gen.cfg.RateLimited {
		now = r.now()
	}
	emitted, idle := 0, 0
	for emitted < pollBurst && idle < len(r.splits) {
		sc := r.splits[r.cur]
		r.cur = (r.cur + 1) % len(r.splits)
		if r.ended(sc) {
			r.done.Finish(out, sc.id) // a no-op unless it was restored at its end
			idle++
			continue
		}
		if r.gen.cfg.RateLimited && !r.due(sc, now) {
			idle++
			continue
		}
		idle = 0
		var v any
		if r.rows {
			v = r.gen.rowValue(sc.index, sc.next)
		} else {
			v = r.gen.Event(sc.index, sc.next)
		}
		out.Collect(sc.id, event.Record{Value: v, Timestamp: r.gen.Timestamp(sc.next)})
		sc.next++
		emitted++
		if r.ended(sc) {
			r.done.Finish(out, sc.id)
		}
	}
	switch {
	case emitted > 0:
		return operator.MoreAvailable, nil
	case len(r.splits) == 0 && r.gen.cfg.EventsNum == 0:
		// An unbounded source's reader without splits idles for ever.
		r.ready = make(chan struct{})
		return operator.NothingAvailable, nil
	case r.finished():
		return operator.EndOfInput, nil
	}
	r.wakeAt(now)
	return operator.NothingAvailable, nil
}

// due reports whether the split's next event may be emitted at now. A
// split's clock starts at its first poll, from its position, so a restored
// split resumes at the configured rate instead of catching up.
func (r *reader) due(sc *splitCursor, now time.Time) bool {
	if sc.start.IsZero() {
		sc.start = now.Add(-r.sinceBase(sc.next))
	}
	return !now.Before(sc.start.Add(r.sinceBase(sc.next)))
}

func (r *reader) sinceBase(k int64) time.Duration {
	return time.Duration(r.gen.Timestamp(k)-r.gen.cfg.BaseTime) * time.Millisecond
}

func (r *reader) finished() bool {
	for _, sc := range r.splits {
		if !r.ended(sc) {
			return false
		}
	}
	return true
}

// ended reports whether the split emitted all its events.
func (r *reader) ended(sc *splitCursor) bool { return sc.next >= r.gen.SplitLen(sc.index) }

// wakeAt arms Available for the earliest due event of the splits.
func (r *reader) wakeAt(now time.Time) {
	var first time.Time
	for _, sc := range r.splits {
		if r.ended(sc) {
			continue
		}
		if t := sc.start.Add(r.sinceBase(sc.next)); first.IsZero() || t.Before(first) {
			first = t
		}
	}
	ready := make(chan struct{})
	r.ready = ready
	time.AfterFunc(max(first.Sub(now), 0), func() { close(ready) })
}

func (r *reader) Available() <-chan struct{} { return r.ready }

func (r *reader) SnapshotState(event.CheckpointID) ([]operator.SplitState, error) {
	out := make([]operator.SplitState, len(r.splits))
	for i, sc := range r.splits {
		out[i] = operator.SplitState{ID: sc.id, Position: binary.AppendUvarint(nil, uint64(sc.next))}
	}
	return out, nil
}

func (r *reader) NotifyCheckpointComplete(event.CheckpointID) error { return nil }
func (r *reader) Close() error                                      { return nil }
