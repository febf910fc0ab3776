package watermark

import (
	"slices"
	"time"

	"github.com/weirstream/weir/event"
)

// DefaultStallThreshold is how long a silent split may hold back a source
// subtask's watermark before a StallDetector reports it: one minute of
// processing time. The check runs at every periodic emit (200 ms by
// default), so the threshold is 300 checks: far above the lulls of a live
// topic — a producer's linger, a fetch that lands a few seconds after its
// siblings', a partition that is slow to start after a rebalance — which
// clear up on their own and would make a shorter threshold cry wolf. And it
// is well below the time in which a user notices windows have stopped
// firing (minutes to hours), which is the pain the report exists to spare.
const DefaultStallThreshold = time.Minute

// StallDetector notices the classic event-time stall of a source subtask:
// its watermark stops because one split — a Kafka partition that gets no
// data, an empty or newly added one — sits at the minimum while the other
// splits move on. Flink says nothing then; its users find out because
// windows stop firing. The fix is idleness (Strategy.IdleTimeout), which
// takes a silent split out of the minimum.
//
// Like Multi it is a pure state machine: after every Multi.OnPeriodicEmit
// the caller passes the same now, the output watermark, whether it
// advanced, and Multi.Splits, and reports what Check returns.
//
// A split holds the watermark when it is active (not idle), its own
// watermark is at or below the output, and another active split's is above
// it. It holds silently from the first check that finds it holding, as
// long as it reads no record: a record restarts its clock, because a split
// that reads but lags behind is a backlog, not silence, and idleness would
// not help it. A stall is reported once, when some split has held silently
// for the threshold; it ends — and only then may the next one be reported —
// when the watermark advances or no split holds it any more (the split got
// ahead, went idle, was removed, or nothing is ahead of it).
type StallDetector struct {
	threshold time.Duration
	holding   []holder // in the order of Multi.Splits
	spare     []holder // holding's previous buffer, reused by track
	warned    bool
	reported  Stall
	start     time.Time // when the reported split started holding
}

type holder struct {
	id      string
	since   time.Time
	records int64 // the split's count when since was set
}

// Stall describes a stalled watermark, as Check reports it.
type Stall struct {
	// Splits are the splits that held the watermark silently for the
	// threshold or longer, longest first.
	Splits []string
	// Held is how long the first of Splits has held it: when the stall
	// starts, its time so far; when it ends, the stall's whole length.
	Held time.Duration
	// Watermark is the subtask's output watermark: where it is stuck, or
	// where it is when the stall ends.
	Watermark event.Timestamp
	// Ahead is the active split furthest ahead when the stall starts, and
	// AheadWatermark its watermark (unset when the stall ends).
	Ahead          string
	AheadWatermark event.Timestamp
}

// StallEvent is what Check found.
type StallEvent uint8

const (
	// NoStallEvent: nothing to report.
	NoStallEvent StallEvent = iota
	// StallStarted: a split has held the watermark silently for the
	// threshold. Reported once per stall.
	StallStarted
	// StallEnded: the stall reported last has ended.
	StallEnded
)

// NewStallDetector returns a detector that reports a split that held the
// watermark silently for threshold. A threshold <= 0 turns it off: Check
// never reports anything.
func NewStallDetector(threshold time.Duration) *StallDetector {
	return &StallDetector{threshold: threshold}
}

// Check looks at the subtask after a periodic emit at now: wm and advanced
// are what Multi.OnPeriodicEmit returned, splits what Multi.Splits returns
// right after. The returned Stall is set for StallStarted and StallEnded.
func (d *StallDetector) Check(now time.Time, wm event.Timestamp, advanced bool, splits []SplitStatus) (StallEvent, Stall) {
	if d.threshold <= 0 {
		return NoStallEvent, Stall{}
	}
	ahead := furthestAhead(wm, splits)
	if advanced {
		// The stall, if any, is over; whoever is at the new minimum
		// holds from now on.
		ev, s := d.end(now, wm)
		if ahead >= 0 {
			d.track(now, wm, splits)
		}
		return ev, s
	}
	if ahead < 0 {
		return d.end(now, wm)
	}
	d.track(now, wm, splits)
	if len(d.holding) == 0 {
		return d.end(now, wm)
	}
	if d.warned {
		return NoStallEvent, Stall{}
	}
	return d.report(now, wm, splits[ahead])
}

// furthestAhead returns the index of the active split with the highest
// watermark above wm, or -1 if none is above wm.
func furthestAhead(wm event.Timestamp, splits []SplitStatus) int {
	best := -1
	for i, s := range splits {
		if !s.Idle && s.Watermark > wm && (best < 0 || s.Watermark > splits[best].Watermark) {
			best = i
		}
	}
	return best
}

// track updates the holders: every active split at or below wm. One that
// held before and read nothing since keeps its clock; others start now.
func (d *StallDetector) track(now time.Time, wm event.Timestamp, splits []SplitStatus) {
	next := d.spare[:0]
	for _, s := range splits {
		if s.Idle || s.Watermark > wm {
			continue
		}
		h := holder{id: s.ID, since: now, records: s.Records}
		if i := slices.IndexFunc(d.holding, func(o holder) bool { return o.id == s.ID }); i >= 0 && d.holding[i].records == s.Records {
			h.since = d.holding[i].since
		}
		next = append(next, h)
	}
	d.holding, d.spare = next, d.holding
}

// report starts a stall if some holder has held for the threshold.
func (d *StallDetector) report(now time.Time, wm event.Timestamp, ahead SplitStatus) (StallEvent, Stall) {
	var due []holder
	for _, h := range d.holding {
		if now.Sub(h.since) >= d.threshold {
			due = append(due, h)
		}
	}
	if len(due) == 0 {
		return NoStallEvent, Stall{}
	}
	slices.SortStableFunc(due, func(a, b holder) int { return a.since.Compare(b.since) })
	s := Stall{Held: now.Sub(due[0].since), Watermark: wm, Ahead: ahead.ID, AheadWatermark: ahead.Watermark}
	for _, h := range due {
		s.Splits = append(s.Splits, h.id)
	}
	d.warned, d.reported, d.start = true, s, due[0].since
	return StallStarted, s
}

// end forgets the holders; if a stall was reported, it is over.
func (d *StallDetector) end(now time.Time, wm event.Timestamp) (StallEvent, Stall) {
	d.holding = d.holding[:0]
	if !d.warned {
		return NoStallEvent, Stall{}
	}
	d.warned = false
	return StallEnded, Stall{Splits: d.reported.Splits, Held: now.Sub(d.start), Watermark: wm}
}
