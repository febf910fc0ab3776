package task

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"slices"
	"sync/atomic"
	"time"

	"github.com/weirstream/weir/barrier"
	"github.com/weirstream/weir/checkpoint"
	"github.com/weirstream/weir/checkpointstorage"
	"github.com/weirstream/weir/clock"
	"github.com/weirstream/weir/debloat"
	"github.com/weirstream/weir/delivery"
	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/metrics"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/watermark"
)

// Mode is the delivery guarantee a job runs with.
type Mode = delivery.Guarantee

// The job's guarantees, delivery's under the names the runtime has used.
const (
	ExactlyOnce = delivery.ExactlyOnce
	AtLeastOnce = delivery.AtLeastOnce
	// AtMostOnce is delivery.None: no checkpoints; a restart starts afresh.
	AtMostOnce = delivery.None
)

// ChainedOperator is one operator of a subtask's chain, prepared by the
// runtime (its Context has backends, timers and metrics set; Output is set
// by the subtask).
type ChainedOperator struct {
	UID      string
	Op       operator.Operator
	Ctx      *operator.Context
	Side     map[string][]*RecordWriter
	Restored map[string][][]byte // nil on a fresh start
}

// Spec is everything a subtask needs to run.
type Spec struct {
	ID      event.SubtaskID
	Mode    Mode
	Chain   []ChainedOperator // head first; may be empty for a source-only chain
	Source  *SourceSpec       // set on source subtasks
	Gate    *InputGate        // nil on source subtasks
	Writers []*RecordWriter   // main outputs of the chain's last operator
	Storage *checkpointstorage.FS
	// Savepoints returns the storage of savepoint id: the directory the
	// driver created for it. Safe for concurrent use; nil when the job
	// takes no savepoints (a savepoint barrier is then declined).
	Savepoints func(event.CheckpointID) *checkpointstorage.FS
	Reports    chan<- Report
	Mail       chan Mail
	// Now is the job's processing time (Spec.Now drives the
	// processing-time service and the barrier handler).
	Now func() time.Time
	// Clock times the subtask's waits: its processing-time wake-up, the
	// source's watermark interval and polls, time accounting (busy, idle,
	// back-pressured), the debloater's samples and snapshot durations.
	// Default: clock.Real.
	Clock clock.Clock
	// TimerTick is how often a busy subtask wakes to publish its metrics,
	// sample the debloater and clean up expired state, and an aligning one
	// to check the aligned timeout (default 10 ms). Processing-time
	// callbacks run at their time; an idle subtask does not wake (see
	// wake.go).
	TimerTick time.Duration
	// Ticks, if set, replaces the TimerTick ticker: each value received
	// is a wake-up (tests drive processing time with it and a fake Now).
	Ticks <-chan time.Time
	// OnSourceExit, if set, receives a source subtask's encoded split
	// positions when it exits (used by at-most-once restarts).
	OnSourceExit func(splits []byte)
	// Counters, if set, count records in and out for live progress; they
	// are atomic and read by other goroutines.
	Counters *Counters
	// Logger receives the subtask's warnings (a stalled source watermark);
	// New adds the attributes vertex and subtask, and hands it to the
	// chain's operators and the source reader. Default: slog.Default().
	Logger *slog.Logger
	// Unaligned turns on unaligned checkpoints (Flink's
	// execution.checkpointing.unaligned.enabled) in ExactlyOnce mode, with
	// AlignedTimeout (execution.checkpointing.aligned-checkpoint-timeout):
	// see barrier.Options. New clears both in another mode, and the
	// timeout without Unaligned, as Flink ignores it there.
	Unaligned      bool
	AlignedTimeout time.Duration
	// Parallelism is that of the subtask's vertex (recorded with persisted
	// channel state).
	Parallelism int
	// ChannelEdges gives, per input channel, the number of its input edge
	// in the job graph (recorded with persisted channel state, so that a
	// restore re-partitions it by that edge). Default: all 0.
	ChannelEdges []int
	// ChannelState, if set, is the channel state of the restored
	// checkpoint to replay before any input.
	ChannelState *RestoredChannelState
	// OutputQueue is how many batches an output channel may queue before
	// the subtask stops processing input, when it takes checkpoints (see
	// queue.go; runtime.Options.MaxBuffersPerChannel, Flink's
	// taskmanager.network.memory.max-buffers-per-channel). Default 1: the subtask stops as soon as a batch waits
	// for a credit, as a subtask without queues waits in its send.
	OutputQueue int
	// Debloat sizes the batches in flight on the subtask's input channels
	// to its throughput (buffer debloating; see debloat.Options and
	// debloat.go). Off by default.
	Debloat debloat.Options
	// Metrics, if set, is the subtask's group in the metrics registry: its
	// operators are the source (on a source subtask) then Chain's. The
	// subtask publishes its counts into it at every processing-time tick
	// and when it exits.
	Metrics *metrics.Subtask
}

// Counters are a subtask's live counts: In counts records taken from input
// channels, Out records read from its source, WatermarkStalls the times a
// silent split held back its source's watermark (see SourceSpec.StallWarning)
// — or, counted by the job driver, the times this source subtask held back
// the watermark of its source's other subtasks.
type Counters struct {
	In, Out         atomic.Int64
	WatermarkStalls atomic.Int64
	// LateDropped counts the late records the chain's operators dropped,
	// as of the last processing-time tick; FutureSkewed the source records
	// too far in the future to move the watermark (see checkFutureSkew).
	LateDropped, FutureSkewed atomic.Int64
	// source is the watermark view a source subtask with watermarks
	// publishes after every periodic emit; nil before the first.
	source atomic.Pointer[SourceView]
}

// SourceView is a source subtask's watermark as of its last periodic emit:
// what the job driver needs to notice a subtask that holds back the
// watermark of the whole source (runtime's stall check across subtasks).
type SourceView struct {
	// Watermark is the subtask's output watermark, Idle whether all its
	// splits are idle (or it has none).
	Watermark event.Timestamp
	Idle      bool
	// SplitStalled is set while the subtask's own StallDetector has a
	// stall reported: its warning already names the silent split.
	SplitStalled bool
	// Splits are the ids of the splits the subtask reads.
	Splits []string
}

// Source returns the view last published by the source subtask, or nil.
func (c *Counters) Source() *SourceView { return c.source.Load() }

// PublishSource replaces the source view (tests use it to script a subtask).
func (c *Counters) PublishSource(v SourceView) { c.source.Store(&v) }

// Subtask is the running instance. Only its own goroutine touches it.
type Subtask struct {
	spec     Spec
	err      error
	ctx      context.Context
	barriers *barrier.Handler
	valve    *watermark.Valve
	ended    []bool
	endedAll bool
	idleOut  bool
	finalID  event.CheckpointID
	// stopping is the stop-with-savepoint (SnapshotSuspend) this subtask
	// snapshotted and waits to complete; 0 if none. Meanwhile a source
	// reads nothing and no processing-time callback runs, so nothing is
	// emitted behind the savepoint's barrier; an abort resumes both.
	stopping event.CheckpointID
	done     bool
	asyncs   chan struct{} // semaphore counting running async snapshot parts
	src      *sourceDriver
	head     *chainOutput // where the source (or gate) feeds records
	// outs are the outputs of the chain's operators, in chain order.
	outs []*chainOutput
	// nows are the chain's cached processing times, dropped whenever the
	// subtask takes up new work (dropNow).
	nows []*operator.CachedNow
	// writers caches allWriters (nil: not made yet, or none).
	writers  []*RecordWriter
	twoInput operator.TwoInput
	prefetch operator.Prefetcher // the chain's head, if it prefetches
	chooser  *prefetchChooser    // whether it does, batch by batch
	// pts runs the chain's processing-time callbacks, keyed timers
	// included; onTick advances it.
	pts *operator.ProcessingTimeService
	// acct splits the subtask's time into busy, idle and back-pressured.
	acct *timeAccount
	// unal is the unaligned checkpoint whose channel state is being
	// persisted, or nil; overtaking is the channel whose barrier is being
	// handled ahead of its data (-1: none). See unaligned.go.
	unal       *unalignedCheckpoint
	overtaking int
	// current is the rest of the batch being processed while the inbox is
	// admitted between two of its records, and currentCh its channel
	// (current nil: none). See admitBetween.
	current   []event.Record
	currentCh int
	// queued are the aligned snapshots whose barriers wait in an output
	// queue and may time out there, oldest first (see queue.go).
	queued []*queuedBarrier
	// debloater sizes the input's batches (nil: debloating off).
	debloater *debloat.Debloater
	// wake is the processing-time wake-up (nil when Spec.Ticks drives
	// it); see wake.go.
	wake *wake
	// sched is the simulation's scheduler when Spec.Clock is one (nil
	// otherwise): every wait of the subtask then goes through it (see
	// sim.go).
	sched clock.Scheduler
}

// maxAsyncSnapshots bounds the snapshots one subtask writes in the
// background at once (asyncs is its semaphore; waitAsync takes every slot
// to wait for all of them). Each pending checkpoint holds one slot while
// its state is written, and the coordinator allows
// checkpoint.Options.MaxConcurrent of them (default 1): 1024 is far above
// any sensible setting, so the bound only stops a runaway, never throttles.
const maxAsyncSnapshots = 1024

// New prepares a subtask; Run executes it.
func New(spec Spec) *Subtask {
	if spec.TimerTick == 0 {
		spec.TimerTick = 10 * time.Millisecond
	}
	if spec.Logger == nil {
		spec.Logger = slog.Default()
	}
	spec.Clock = clock.Or(spec.Clock)
	spec.Unaligned = spec.Unaligned && spec.Mode == ExactlyOnce
	if !spec.Unaligned {
		spec.AlignedTimeout = 0
	}
	spec.Logger = spec.Logger.With("vertex", spec.ID.Vertex, "subtask", spec.ID.Index)
	return &Subtask{spec: spec, asyncs: make(chan struct{}, maxAsyncSnapshots), pts: operator.NewProcessingTimeService(),
		overtaking: -1, sched: clock.SchedulerOf(spec.Clock)}
}

func (t *Subtask) setErr(err error) {
	if err != nil && t.err == nil {
		t.err = err
	}
}

// panicError is the error of subtask id's panic r, wrapping r when it is
// an error (a state handle's registration panics with one), so that its
// class holds: a restart does not retry what cannot succeed (see
// runtime.Restartable).
func panicError(id event.SubtaskID, r any) error {
	if e, ok := r.(error); ok {
		return fmt.Errorf("subtask %s panicked: %w", id, e)
	}
	return fmt.Errorf("subtask %s panicked: %v", id, r)
}

// Run opens the chain, runs the mailbox loop until the subtask finishes or
// ctx is cancelled, and closes the chain. It reports failures and exit.
func (t *Subtask) Run(ctx context.Context) (err error) {
	t.ctx = ctx
	t.acct = newTimeAccount(t.spec.Metrics, t.spec.Clock)
	t.acct.duringWait = func() { t.publishMetrics(false) }
	for _, w := range t.allWriters() {
		w.acct, w.queued = t.acct, t.queuesOutput()
	}
	defer func() {
		if r := recover(); r != nil {
			err = panicError(t.spec.ID, r)
		}
		err = withCloseErrors(err, t.cleanup())
	}()
	if err = t.open(); err != nil {
		return fmt.Errorf("subtask %s: open: %w", t.spec.ID, err)
	}
	if t.src != nil {
		err = t.runSource()
	} else {
		err = t.runInputs()
	}
	return err
}

// cleanup stops the subtask's parts once Run is done. It runs after Run's
// recover, so a panic in it would kill the process: every step that calls
// into an operator or the source is guarded (see guard). It returns what
// closing failed with, for Run to report: the job fails on it (a sink
// whose Close could not flush lost output).
func (t *Subtask) cleanup() []error {
	errs := []error{t.guard("source", func() error { t.handOverPositions(); return nil })}
	t.pts.Quiesce() // nothing fires once the subtask stops
	errs = append(errs, t.closeChain()...)
	t.waitAsync()
	t.publishMetrics(true) // the final counts, for a scrape after the job
	return errs
}

// withCloseErrors adds cleanup's errors to Run's error, leaving it as it
// is when cleanup went well.
func withCloseErrors(err error, cerrs []error) error {
	if errors.Join(cerrs...) == nil {
		return err
	}
	return errors.Join(append([]error{err}, cerrs...)...)
}

// guard runs fn, one part's cleanup, and turns its error or panic into a
// CloseError naming the part.
func (t *Subtask) guard(part string, fn func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			t.spec.Logger.Error("operator panicked while closing", "operator", part,
				"panic", r, "stack", string(debug.Stack()))
			err = &CloseError{Subtask: t.spec.ID, Operator: part, Panic: r}
		}
	}()
	if err := fn(); err != nil {
		return &CloseError{Subtask: t.spec.ID, Operator: part, Err: err}
	}
	return nil
}

// handOverPositions gives the source's current split positions to
// OnSourceExit: in at-most-once mode a restart resumes from them, so
// nothing is replayed (what was in flight is lost: at most once).
func (t *Subtask) handOverPositions() {
	if t.src == nil || t.spec.OnSourceExit == nil {
		return
	}
	if ss, err := t.src.reader.SnapshotState(0); err == nil {
		t.spec.OnSourceExit(EncodeSplits(ss))
	}
}

func (t *Subtask) open() error {
	t.wireChain()
	for _, c := range t.spec.Chain {
		if c.Restored != nil {
			if err := c.Op.InitializeState(c.Restored); err != nil {
				return fmt.Errorf("operator %s: restore: %w", c.UID, err)
			}
		}
	}
	// Open tail first, so an operator's successors are ready when it opens.
	for i := len(t.spec.Chain) - 1; i >= 0; i-- {
		c := t.spec.Chain[i]
		if err := c.Op.Open(c.Ctx); err != nil {
			return fmt.Errorf("operator %s: %w", c.UID, err)
		}
	}
	if t.spec.Source != nil {
		return t.openSource()
	}
	n := t.spec.Gate.NumChannels()
	mode := barrier.ExactlyOnce
	if t.spec.Mode == AtLeastOnce {
		mode = barrier.AtLeastOnce
	}
	var o barrier.Options
	if mode == barrier.ExactlyOnce {
		o = barrier.Options{Unaligned: t.spec.Unaligned, AlignedTimeout: t.spec.AlignedTimeout}
	}
	t.barriers = barrier.NewWithOptions(mode, n, o)
	t.spec.Gate.roundRobin = t.readsAhead()
	t.valve = watermark.NewValve(n)
	t.ended = make([]bool, n)
	t.openDebloater()
	return nil
}

// wireChain sets every operator's Output and processing-time service,
// and finds the chain head.
func (t *Subtask) wireChain() {
	chain := t.spec.Chain
	t.outs = make([]*chainOutput, len(chain))
	for i, c := range chain {
		out := &chainOutput{t: t, side: c.Side, lastWM: event.MinWatermark, metrics: c.Ctx.Metrics}
		t.outs[i] = out
		if i+1 < len(chain) {
			out.next, out.nextMetrics = chain[i+1].Op, chain[i+1].Ctx.Metrics
		} else {
			out.writers = t.spec.Writers
		}
		c.Ctx.Output = out
		c.Ctx.Group = t.operatorGroup(i)
		c.Ctx.Logger = t.spec.Logger.With("operator", cmp.Or(c.Ctx.Name, c.UID))
		c.Ctx.ProcessingTime = t.pts
		c.Ctx.Context = t.ctx
		if c.Ctx.Timers != nil {
			c.Ctx.Timers.UseProcessingTime(t.pts)
		}
		if c.Ctx.CachedNow != nil {
			t.nows = append(t.nows, c.Ctx.CachedNow)
		}
	}
	if len(chain) > 0 {
		t.head = &chainOutput{t: t, next: chain[0].Op, lastWM: event.MinWatermark, metrics: &operator.Metrics{},
			nextMetrics: chain[0].Ctx.Metrics}
		t.twoInput, _ = chain[0].Op.(operator.TwoInput)
		t.prefetch, _ = chain[0].Op.(operator.Prefetcher)
		t.chooser = newPrefetchChooser(prefetchTrial, prefetchKeep)
	} else {
		t.head = &chainOutput{t: t, writers: t.spec.Writers, lastWM: event.MinWatermark, metrics: &operator.Metrics{}}
	}
	if g := t.spec.Metrics; g != nil {
		t.tailedOutput().tail = &g.Tail
	}
}

// dropNow makes the chain's operators read the clock afresh: the subtask
// takes up new work (operator.CachedNow).
func (t *Subtask) dropNow() {
	for _, n := range t.nows {
		n.Drop()
	}
}

// tailedOutput is the output a tail of the subtask samples: its chain's
// last, whose records leave the vertex, or when the chain sends nothing
// downstream (it ends in a sink) the one feeding its last operator, so a
// tail of a sink shows what the sink received.
func (t *Subtask) tailedOutput() *chainOutput {
	last := len(t.outs) - 1
	if len(t.spec.Writers) == 0 && last >= 0 && len(t.spec.Chain[last].Side) == 0 {
		last--
	}
	if last < 0 {
		return t.head
	}
	return t.outs[last]
}

// operatorGroup is the metrics group of chain operator i (the source's
// is before the chain's), or nil without metrics.
func (t *Subtask) operatorGroup(i int) *metrics.Operator {
	g := t.spec.Metrics
	if g == nil {
		return nil
	}
	if t.spec.Source != nil {
		i++
	}
	if i >= len(g.Operators) {
		return nil
	}
	return g.Operators[i]
}

// closeChain closes every operator and the source reader, each whatever
// the others did, and returns their errors (nil for a clean close).
func (t *Subtask) closeChain() []error {
	var errs []error
	for _, c := range t.spec.Chain {
		errs = append(errs, t.guard(c.UID, c.Op.Close))
	}
	if t.src != nil {
		errs = append(errs, t.guard("source", t.src.reader.Close))
	}
	return errs
}

// allWriters is every writer of the chain: main and side outputs. The
// mailbox loop asks for them at every step (is the output available?), so
// the list is made once.
func (t *Subtask) allWriters() []*RecordWriter {
	if t.writers != nil {
		return t.writers
	}
	ws := append([]*RecordWriter(nil), t.spec.Writers...)
	for _, c := range t.spec.Chain {
		for _, s := range c.Side {
			ws = append(ws, s...)
		}
	}
	t.writers = ws
	return ws
}

func (t *Subtask) broadcast(c event.Control) {
	for _, w := range t.allWriters() {
		w.BroadcastControl(c)
	}
}

func (t *Subtask) flush() {
	for _, w := range t.allWriters() {
		w.Flush()
	}
}

func (t *Subtask) writerErr() error {
	for _, w := range t.allWriters() {
		if err := w.Err(); err != nil {
			return err
		}
	}
	return nil
}

// runInputs is the mailbox loop of a subtask with input channels.
func (t *Subtask) runInputs() error {
	ticks, stop := t.ticks()
	defer stop()
	g := t.spec.Gate
	if err := t.replayChannelState(); err != nil {
		return err
	}
	ahead := t.readsAhead()
	for !t.done {
		t.yield()
		if ahead {
			t.drainInbox()
		}
		if !t.outputAvailable() {
			if err := t.waitOutput(ticks); err != nil {
				return err
			}
		} else if e, ok := g.NextHeld(); ok {
			t.onEnvelope(e)
			t.rearm()
			t.pollMailbox(ticks)
		} else {
			if len(g.inbox) == 0 {
				t.flush()
			}
			out, credit := t.creditWaiting()
			idle := t.spec.Clock.Now()
			t.waitIdle(idle)
			inbox, mail, tk, done := (<-chan Envelope)(g.inbox), (<-chan Mail)(t.spec.Mail), ticks, t.ctx.Done()
			if t.sched != nil {
				i := clock.Choose(t.sched, clock.Pending(credit), clock.Pending(inbox), clock.Pending(mail),
					clock.Pending(tk), clock.Done(t.ctx))
				credit, inbox, mail = clock.Only(i, 0, credit), clock.Only(i, 1, inbox), clock.Only(i, 2, mail)
				tk, done = clock.Only(i, 3, tk), clock.Only(i, 4, done)
			}
			select {
			case <-credit:
				t.acct.idleEnd(idle)
				t.onCredit(out)
			case e := <-inbox:
				t.waitEnd(idle)
				if ahead {
					t.admit(e)
				} else if g.mustHold(e.Channel) {
					g.Hold(e)
				} else {
					t.onEnvelope(e)
				}
			case m := <-mail:
				t.waitEnd(idle)
				t.onMail(m)
			case <-tk:
				t.waitEnd(idle)
				t.onTick()
			case <-done:
				return t.ctx.Err()
			}
		}
		if err := t.check(); err != nil {
			return err
		}
	}
	return t.finishOutput()
}

// finishOutput sends what the subtask's writers still hold: the subtask
// is done.
func (t *Subtask) finishOutput() error {
	t.flush()
	if err := t.check(); err != nil {
		return err
	}
	if err := t.drainOutputs(); err != nil {
		return err
	}
	return t.check()
}

// pollMailbox handles a mail or a tick that is waiting, without waiting
// itself. The loop calls it between queued batches: a subtask whose queues
// never empty — one reading ahead under back-pressure — would otherwise
// never complete a checkpoint (commit), fire a processing-time timer or
// switch a checkpoint to unaligned on its timeout, as Flink's mailbox runs
// its mails before each default action.
func (t *Subtask) pollMailbox(ticks <-chan time.Time) {
	mail := (<-chan Mail)(t.spec.Mail)
	if t.sched != nil {
		i := clock.FirstReady(clock.Pending(mail), clock.Pending(ticks))
		mail, ticks = clock.Only(i, 0, mail), clock.Only(i, 1, ticks)
	}
	select {
	case m := <-mail:
		t.onMail(m)
	case <-ticks:
		t.onTick()
	default:
	}
}

func (t *Subtask) check() error {
	t.settleQueuedBarriers()
	if t.err != nil {
		return t.err
	}
	if err := t.writerErr(); err != nil {
		return err
	}
	return nil
}

func (t *Subtask) onEnvelope(e Envelope) {
	t.touch()
	t.dropNow()
	if c := t.spec.Counters; c != nil {
		c.In.Add(int64(len(e.Batch.Records)))
	}
	g := t.spec.Gate
	in2 := g.inputOf[e.Channel] == 1
	rs := e.Batch.Records
	between := t.readsAhead() && e.Batch.Control.Kind == event.KindNone
	prefetch := t.prefetch != nil && len(rs) > 1
	var span threadSpan // a trial batch's CPU time, less admitBetween's
	if prefetch && t.chooser.trying() {
		span.start()
	}
	if prefetch && t.chooser.use() {
		t.prefetch.Prefetch(rs, t.inputOf(in2))
	}
	for i, r := range rs {
		if t.err != nil {
			break
		}
		if between && i > 0 && len(g.inbox) > 0 {
			span.pause()
			t.admitBetween(e.Channel, rs[i:])
			span.resume()
		}
		t.processRecord(r, in2)
	}
	if prefetch {
		took, counted := span.end()
		t.chooser.took(len(rs), took, counted)
	}
	t.spec.Gate.recycle(e)
	t.countProcessed(len(e.Batch.Records))
	if e.Batch.Control.Kind != event.KindNone && t.err == nil {
		t.onControl(e.Channel, e.Batch.Control)
	}
}

// prefetchTrial and prefetchKeep are the chooser's: batches timed each
// way, batches the faster way is kept for (with batches of 256 records,
// trials of 16 K records, about 1 M kept).
const prefetchTrial, prefetchKeep = 64, 4096

// inputOf is the operator input (1 or 2) records of a channel of the
// second input (in2) or not go to.
func (t *Subtask) inputOf(in2 bool) int {
	if in2 && t.twoInput != nil {
		return 2
	}
	return 1
}

func (t *Subtask) processRecord(r event.Record, in2 bool) {
	if in2 && t.twoInput != nil {
		t.spec.Chain[0].Ctx.Metrics.RecordsIn++
		t.setErr(t.twoInput.ProcessElement2(r))
		return
	}
	t.head.Collect(r)
}

func (t *Subtask) onControl(ch int, c event.Control) {
	now := t.spec.Now()
	switch c.Kind {
	case event.KindWatermark:
		if out, adv := t.valve.OnWatermark(ch, c.Watermark); adv {
			t.emitWatermark(out)
		}
	case event.KindIdle:
		out, adv, allIdle := t.valve.OnIdle(ch)
		if adv {
			t.emitWatermark(out)
		}
		t.setIdle(allIdle)
	case event.KindActive:
		out, adv, allIdle := t.valve.OnActive(ch)
		if adv {
			t.emitWatermark(out)
		}
		t.setIdle(allIdle)
	case event.KindBarrier:
		t.apply(t.barriers.OnBarrier(now, ch, c.Barrier))
	case event.KindCancelBarrier:
		t.apply(t.barriers.OnCancelBarrier(now, ch, c.Barrier.ID))
	case event.KindEndOfInput:
		t.onEndOfInput(now, ch)
	}
}

func (t *Subtask) emitWatermark(wm event.Timestamp) { t.head.EmitWatermark(wm) }

func (t *Subtask) setIdle(idle bool) {
	if idle == t.idleOut {
		return
	}
	t.idleOut = idle
	kind := event.KindActive
	if idle {
		kind = event.KindIdle
	}
	t.broadcast(event.Control{Kind: kind})
}

// onEndOfInput handles the end of input of channel ch. When it is the last
// channel to end, the chain finishes before the barrier handler hears of
// it, because the handler counts an ended channel as arrived, so this
// end can complete an alignment:
//  1. the final checkpoint's barrier arrives on channel 0, behind its end
//     of input; channel 1's upstream lags, so the handler waits for it;
//  2. channel 1's data, then its end of input arrive: all inputs ended,
//     and the handler completes the alignment with it;
//  3. had the handler heard of it first, that snapshot (the sink's
//     pre-commit, the barrier downstream) would come before Finish, and
//     nothing after Finish would ever be checkpointed: what a sink commits
//     at the end of input (a filesystem sink's partitions) and what Finish
//     emits would be lost.
//
// Finished first, the snapshot covers the whole input and the output
// follows the same order as when every end of input comes before the
// final barrier: Finish's output, end of input, barrier. Flink's order is
// this one too: EndOfData, which every channel carries before the final
// barrier, finishes the operators.
func (t *Subtask) onEndOfInput(now time.Time, ch int) {
	t.ended[ch] = true
	if out, adv, _ := t.valve.OnEndOfInput(ch); adv {
		t.emitWatermark(out)
	}
	if !slices.Contains(t.ended, false) {
		t.endInput()
	}
	t.apply(t.barriers.OnEndOfInput(now, ch))
}

// endInput finishes the chain at the end of all input and tells
// downstream. Without checkpoints the subtask is then done; with them it
// waits for the final checkpoint to complete.
func (t *Subtask) endInput() {
	if t.endedAll {
		return
	}
	t.endedAll = true
	// Quiesce processing time before Finish, as Flink does: nothing a
	// callback emits may follow the end-of-input marker (operators flush
	// what they hold in Finish).
	t.pts.Quiesce()
	for _, c := range t.spec.Chain {
		if t.err == nil {
			t.setErr(c.Op.Finish())
		}
	}
	t.broadcast(event.Control{Kind: event.KindEndOfInput})
	if t.spec.Mode == AtMostOnce {
		t.done = true
	}
}

// apply carries out a barrier handler's decision.
func (t *Subtask) apply(d barrier.Decision) {
	for _, a := range d.Abort {
		t.dropUnaligned(a.ID)
		t.dropQueuedBarrier(a.ID)
		t.broadcast(event.Control{Kind: event.KindCancelBarrier, Barrier: event.CheckpointBarrier{ID: a.ID}})
		t.report(Report{Kind: ReportDecline, ID: a.ID, Phase: checkpoint.PhaseAlignment, Err: a.Reason})
	}
	if d.Snapshot != nil {
		t.checkpoint(*d.Snapshot, t.barriers.LastAlignmentDuration(), d.Unaligned)
	}
	t.applyUnaligned(d)
	if d.Unblock {
		t.spec.Gate.UnblockAll()
	}
	for _, c := range d.Block {
		t.spec.Gate.Block(c)
	}
	if len(d.Block) > 0 {
		if id, _, missing, _, ok := t.barriers.Pending(); ok {
			t.reportProgress(id, checkpoint.PhaseAlignment, fmt.Sprintf("waiting for barrier on inputs %v", missing))
		}
	}
}

func (t *Subtask) onMail(m Mail) {
	t.touch()
	t.dropNow()
	switch m.Kind {
	case MailTrigger:
		t.checkpoint(m.Barrier, 0, false)
	case MailComplete:
		t.notifyComplete(m.ID)
	case MailAborted:
		t.notifyAborted(m.ID)
	case MailDrain:
		t.drain()
	}
}

func (t *Subtask) notifyComplete(id event.CheckpointID) {
	if t.src != nil {
		t.setErr(t.src.reader.NotifyCheckpointComplete(id))
	}
	for _, c := range t.spec.Chain {
		if t.err == nil {
			t.setErr(c.Op.NotifyCheckpointComplete(id))
		}
	}
	if t.finalID != 0 && id >= t.finalID {
		t.done = true
	}
}

func (t *Subtask) notifyAborted(id event.CheckpointID) {
	t.dropQueuedBarrier(id)
	if id == t.stopping {
		// The stop-with-savepoint failed: the job runs on.
		t.stopping, t.finalID = 0, 0
	}
	if t.barriers != nil {
		t.apply(t.barriers.OnAbort(id))
	}
	for _, c := range t.spec.Chain {
		if t.err == nil {
			t.setErr(c.Op.NotifyCheckpointAborted(id))
		}
	}
}

// ttlCleanupBatch is how many keys each tick examines for expired state
// (Flink's incremental cleanup).
const ttlCleanupBatch = 64

// onTick runs due processing-time callbacks (keyed operators' timers
// among them) and cleans up expired state. It is the subtask's only
// processing-time wake-up; what the callbacks emit is flushed downstream
// with the rest of the mailbox's output.
func (t *Subtask) onTick() {
	t.dropNow()
	if t.err == nil && t.stopping == 0 {
		t.setErr(t.pts.Advance(t.spec.Now().UnixMilli()))
	}
	if t.barriers != nil && t.err == nil {
		t.apply(t.barriers.Tick(t.spec.Now()))
	}
	t.debloat()
	var late int64
	for _, c := range t.spec.Chain {
		if c.Ctx.Keyed != nil {
			c.Ctx.Metrics.ExpiredState += int64(c.Ctx.Keyed.CleanupExpired(ttlCleanupBatch))
		}
		if c.Ctx.Metrics != nil {
			late += c.Ctx.Metrics.LateDropped
		}
	}
	if t.spec.Counters != nil {
		t.spec.Counters.LateDropped.Store(late)
	}
	t.ticked(t.publishMetrics(false))
}

func (t *Subtask) report(r Report) {
	r.Task = t.spec.ID
	reports, done := t.spec.Reports, t.ctx.Done()
	if t.sched != nil {
		i := clock.Choose(t.sched, clock.Room(reports), clock.Done(t.ctx))
		reports, done = clock.Only(i, 0, reports), clock.Only(i, 1, done)
	}
	select {
	case reports <- r:
	case <-done:
	}
}

func (t *Subtask) reportProgress(id event.CheckpointID, p checkpoint.Phase, detail string) {
	t.report(Report{Kind: ReportProgress, ID: id, Phase: p, Detail: detail})
}
