package task

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/weirstream/weir/clock"
	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/metrics"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/watermark"
)

// SourceSpec describes the source at the head of a source subtask.
type SourceSpec struct {
	UID         string
	Source      operator.Source
	Parallelism int
	// Name is the source's name in logs, e.g. "Source: orders". Default: UID.
	Name string
	// Watermarks, when set, makes a watermark generator per split.
	Watermarks *watermark.Strategy
	// Timestamps, when set, assigns event time to each value.
	Timestamps operator.TimestampAssigner
	// Restored holds the "splits" part of every old subtask; nil on a
	// fresh start (then the source enumerates its splits).
	Restored [][]byte
	// WatermarkInterval is how often watermarks are emitted (default 200 ms,
	// Flink's pipeline.auto-watermark-interval).
	WatermarkInterval time.Duration
	// MaxPollRecords bounds the records emitted between mailbox checks
	// (default 1024).
	MaxPollRecords int
	// Metrics receives the source's counters (records out, future-skewed,
	// watermark stalls).
	Metrics *operator.Metrics
	// StallWarning is how long a split without records may hold back the
	// subtask's watermark while another split is ahead before a warning is
	// logged (Weir's weir.source.watermark-stall-warning). Default 0:
	// watermark.DefaultStallThreshold (1 min). Negative: no warning. Never
	// shorter than the strategy's IdleTimeout, and off for bounded sources
	// (see StallThreshold).
	StallWarning time.Duration
}

// PartSplits is the part name of a source's split state.
const PartSplits = "splits"

type sourceDriver struct {
	t      *Subtask
	spec   *SourceSpec
	reader operator.SourceReader
	multi  *watermark.Multi
	now    time.Time
	ended  bool
	polled int
	// waiting is the reader's Available channel after NothingAvailable.
	waiting <-chan struct{}
	stalls  *watermark.StallDetector
	splits  []watermark.SplitStatus // reused by checkStall
	// splitStalled: stalls reported a stall that has not ended yet.
	splitStalled bool
	// skewWarned: the splits whose too-far-future record was logged.
	skewWarned map[string]bool
}

// pollSoon stands in for the Available channel of a reader that has none:
// it is ready after a millisecond.
func (t *Subtask) pollSoon() <-chan struct{} {
	c := make(chan struct{})
	t.spec.Clock.AfterFunc(time.Millisecond, func() { close(c) })
	return c
}

func (t *Subtask) openSource() error {
	s := t.spec.Source
	if s.WatermarkInterval == 0 {
		s.WatermarkInterval = 200 * time.Millisecond
	}
	if s.MaxPollRecords == 0 {
		s.MaxPollRecords = 1024
	}
	if s.Metrics == nil {
		s.Metrics = &operator.Metrics{}
	}
	if s.Name == "" {
		s.Name = s.UID
	}
	var group *metrics.Operator
	if g := t.spec.Metrics; g != nil && len(g.Operators) > 0 {
		group = g.Operators[0]
	}
	r, err := s.Source.CreateReader(operator.ReaderContext{Subtask: t.spec.ID, Parallelism: s.Parallelism, Context: t.ctx,
		Metrics: s.Metrics, Group: group, Logger: t.spec.Logger.With("operator", s.Name)})
	if err != nil {
		return fmt.Errorf("source %s: create reader: %w", s.UID, err)
	}
	t.src = &sourceDriver{t: t, spec: s, reader: r, multi: watermark.NewMulti(),
		stalls: watermark.NewStallDetector(StallThreshold(s))}
	splits, err := t.mySplits()
	if err != nil {
		return err
	}
	for _, sp := range splits {
		t.src.SplitAdded(sp.ID)
	}
	return r.AddSplits(splits)
}

// mySplits returns the splits this subtask reads: restored ones, or the
// enumerated ones, filtered by assignment.
func (t *Subtask) mySplits() ([]operator.SplitState, error) {
	s := t.spec.Source
	var all []operator.SplitState
	if s.Restored != nil {
		for _, b := range s.Restored {
			ss, err := DecodeSplits(b)
			if err != nil {
				return nil, fmt.Errorf("source %s: %w", s.UID, err)
			}
			all = append(all, ss...)
		}
	} else {
		var err error
		if all, err = s.Source.Enumerate(t.ctx); err != nil {
			return nil, fmt.Errorf("source %s: enumerate splits: %w", s.UID, err)
		}
	}
	var mine []operator.SplitState
	for _, sp := range all {
		if assignSplit(s.Source, sp.ID, s.Parallelism) == t.spec.ID.Index {
			mine = append(mine, sp)
		}
	}
	return mine, nil
}

func assignSplit(src operator.Source, id string, n int) int {
	if a, ok := src.(operator.SplitAssigner); ok {
		return a.AssignSplit(id, n)
	}
	return operator.HashSplit(id, n)
}

// Collect receives a record from the reader.
func (d *sourceDriver) Collect(split string, r event.Record) {
	if d.spec.Timestamps != nil {
		r.Timestamp = d.spec.Timestamps(r.Value)
	}
	if d.spec.Watermarks != nil && r.Timestamp != event.NoTimestamp {
		d.multi.OnEvent(split, r.Timestamp, d.now)
		d.checkFutureSkew(split, r.Timestamp)
	}
	d.polled++
	d.spec.Metrics.RecordsIn++ // read from outside: the source's numRecordsIn (FLIP-33)
	d.spec.Metrics.RecordsOut++
	d.t.head.Collect(r)
}

var _ operator.SplitListener = (*sourceDriver)(nil)

// SplitAdded implements operator.SplitListener: the split gets a generator
// of its own and takes part in the subtask's watermark from now on. It
// starts at MinWatermark, so it holds the output where it is (never back)
// until its records catch up or it turns idle — a discovered partition's
// records are not late merely because older partitions ran ahead.
func (d *sourceDriver) SplitAdded(id string) {
	if d.spec.Watermarks == nil || d.multi.Tracks(id) {
		return
	}
	d.multi.AddSplit(id, d.spec.Watermarks.NewGenerator())
}

// SplitFinished implements operator.SplitListener: the split leaves the
// minimum, so the next periodic emit may advance past it.
func (d *sourceDriver) SplitFinished(id string) { d.multi.RemoveSplit(id) }

func (d *sourceDriver) snapshot(id event.CheckpointID) (operator.Part, error) {
	ss, err := d.reader.SnapshotState(id)
	if err != nil {
		return operator.Part{}, err
	}
	return operator.Part{Name: PartSplits, Snap: splitSnapshot(EncodeSplits(ss))}, nil
}

type splitSnapshot []byte

func (s splitSnapshot) Write() ([]byte, error) { return s, nil }

// runSource is the mailbox loop of a source subtask: mail first, then poll.
func (t *Subtask) runSource() error {
	d := t.src
	wmTicks, stopWM := t.watermarkTicks(d.spec)
	defer stopWM()
	ticks, stop := t.ticks()
	defer stop()
	for !t.done {
		t.yield()
		if !t.outputAvailable() {
			if err := t.waitOutput(ticks); err != nil {
				return err
			}
			if err := t.check(); err != nil {
				return err
			}
			continue
		}
		wait, err := t.sourceStep(d)
		if err != nil {
			return err
		}
		if wait == nil && !d.ended {
			// Busy: the reader has more. Still serve the tickers, or a
			// source that never runs dry would never emit a watermark.
			t.rearm()
			wm, tk := wmTicks, ticks
			if t.sched != nil {
				i := clock.FirstReady(clock.Pending(wm), clock.Pending(tk))
				wm, tk = clock.Only(i, 0, wm), clock.Only(i, 1, tk)
			}
			select {
			case <-wm:
				t.emitSourceWatermark(d)
			case <-tk:
				t.onTick()
			default:
			}
			if err := t.check(); err != nil {
				return err
			}
			continue
		}
		if t.done {
			// Ended in this step (at-most-once ends with its input): no
			// wake-up is armed any more to bring the loop round.
			break
		}
		t.flush()
		out, credit := t.creditWaiting()
		idle := t.spec.Clock.Now()
		t.waitIdle(idle)
		mail, wm, tk, done := (<-chan Mail)(t.spec.Mail), wmTicks, ticks, t.ctx.Done()
		if t.sched != nil {
			i := clock.Choose(t.sched, clock.Pending(credit), clock.Pending(mail), clock.Closed(wait),
				clock.Pending(wm), clock.Pending(tk), clock.Done(t.ctx))
			credit, mail, wait = clock.Only(i, 0, credit), clock.Only(i, 1, mail), clock.Only(i, 2, wait)
			wm, tk, done = clock.Only(i, 3, wm), clock.Only(i, 4, tk), clock.Only(i, 5, done)
		}
		select {
		case <-credit:
			t.acct.idleEnd(idle)
			t.onCredit(out)
		case m := <-mail:
			t.waitEnd(idle)
			t.onMail(m)
		case <-wait:
			t.waitEnd(idle)
			d.waiting = nil
		case <-wm:
			t.waitEnd(idle)
			t.emitSourceWatermark(d)
		case <-tk:
			t.waitEnd(idle)
			t.onTick()
		case <-done:
			return t.ctx.Err()
		}
		if err := t.check(); err != nil {
			return err
		}
	}
	return t.finishOutput()
}

// watermarkTicks returns the channel of a source's periodic watermark
// emission (nil for a source without watermarks: it never fires) and its
// stop.
func (t *Subtask) watermarkTicks(s *SourceSpec) (<-chan time.Time, func()) {
	if s.Watermarks == nil {
		return nil, func() {}
	}
	tk := t.spec.Clock.NewTicker(s.WatermarkInterval)
	return tk.C(), tk.Stop
}

// sourceStep handles pending mail without blocking, then polls the reader.
// It returns the channel to wait on when the reader has nothing.
func (t *Subtask) sourceStep(d *sourceDriver) (<-chan struct{}, error) {
	select {
	case m := <-t.spec.Mail:
		t.onMail(m)
		return nil, t.check()
	default:
	}
	if d.ended {
		return nil, nil
	}
	if t.stopping != 0 {
		return never, nil // stopped by a stop-with-savepoint: read nothing more
	}
	if d.waiting != nil {
		// The reader said NothingAvailable: poll again only once it
		// signalled Available (FLIP-27's contract).
		select {
		case <-d.waiting:
			d.waiting = nil
		default:
			return d.waiting, nil
		}
	}
	d.now, d.polled = t.spec.Now(), 0
	t.dropNow()
	var st operator.ReaderStatus
	var err error
	// A full output queue ends the step too, as Flink checks its record
	// writer's availability before each record: else one step could queue
	// up to MaxPollRecords records past the limit, all of them output
	// state for an unaligned checkpoint.
	for d.polled < d.spec.MaxPollRecords && err == nil && st == operator.MoreAvailable && t.outputAvailable() {
		st, err = d.reader.Poll(d)
		if e := t.check(); e != nil {
			return nil, e
		}
	}
	if err != nil {
		return nil, fmt.Errorf("source %s: %w", d.spec.UID, err)
	}
	if c := t.spec.Counters; c != nil {
		c.Out.Add(int64(d.polled))
	}
	if d.polled > 0 {
		t.touch()
	}
	switch st {
	case operator.NothingAvailable:
		if d.waiting = d.reader.Available(); d.waiting == nil {
			return t.pollSoon(), nil
		}
		return d.waiting, nil
	case operator.EndOfInput:
		t.sourceEnded(d)
		return nil, t.check()
	}
	return nil, nil
}

func (t *Subtask) emitSourceWatermark(d *sourceDriver) {
	if d.spec.Watermarks == nil || d.ended || t.stopping != 0 {
		return // stopped by a stop-with-savepoint: event time stops with the input
	}
	now := t.spec.Now()
	t.dropNow()
	wm, idle, adv := d.multi.OnPeriodicEmit(now)
	d.spec.Metrics.FutureSkewed = d.multi.FutureSkewed()
	t.setIdle(idle)
	if adv && !idle {
		t.emitWatermark(wm)
	}
	t.checkStall(d, now, wm, adv)
	if c := t.spec.Counters; c != nil {
		c.FutureSkewed.Store(d.spec.Metrics.FutureSkewed)
	}
	t.publishSource(d, wm, idle)
}

// never is a channel nothing is ever sent on: what a stopped source waits on.
var never = make(chan struct{})

// drain ends a source subtask's input at once, for a stop-with-savepoint
// with drain; a subtask whose input already ended, or that is no source,
// ignores it.
func (t *Subtask) drain() {
	if t.src == nil || t.src.ended {
		return
	}
	t.sourceEnded(t.src)
}

// sourceEnded: a bounded source read everything. Event time ends (the max
// watermark fires every timer), the chain finishes, downstream is told.
func (t *Subtask) sourceEnded(d *sourceDriver) {
	d.ended = true
	d.spec.Metrics.FutureSkewed = d.multi.FutureSkewed()
	t.setIdle(false)
	t.emitWatermark(event.MaxWatermark)
	t.endInput()
	t.report(Report{Kind: ReportSourceFinished})
}

// EncodeSplits encodes split states for a checkpoint.
func EncodeSplits(ss []operator.SplitState) []byte {
	buf := binary.AppendUvarint(nil, uint64(len(ss)))
	for _, s := range ss {
		buf = binary.AppendUvarint(buf, uint64(len(s.ID)))
		buf = append(buf, s.ID...)
		buf = binary.AppendUvarint(buf, uint64(len(s.Position)))
		buf = append(buf, s.Position...)
	}
	return buf
}

var errCorruptSplits = errors.New("task: corrupt split state")

// DecodeSplits is the inverse of EncodeSplits.
func DecodeSplits(b []byte) ([]operator.SplitState, error) {
	n, k := binary.Uvarint(b)
	if k <= 0 {
		return nil, errCorruptSplits
	}
	b = b[k:]
	out := make([]operator.SplitState, 0, n)
	for i := uint64(0); i < n; i++ {
		id, rest, ok := readBytes(b)
		if !ok {
			return nil, errCorruptSplits
		}
		pos, rest, ok := readBytes(rest)
		if !ok {
			return nil, errCorruptSplits
		}
		out = append(out, operator.SplitState{ID: string(id), Position: pos})
		b = rest
	}
	return out, nil
}

func readBytes(b []byte) ([]byte, []byte, bool) {
	n, k := binary.Uvarint(b)
	if k <= 0 || uint64(len(b)-k) < n {
		return nil, nil, false
	}
	return append([]byte(nil), b[k:k+int(n)]...), b[k+int(n):], true
}
