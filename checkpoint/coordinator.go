package checkpoint

import (
	"fmt"
	"slices"
	"time"

	"github.com/weirstream/weir/event"
)

// Coordinator decides when checkpoints start, end and fail. It is a
// deterministic state machine: it does no I/O, reads no clock and starts no
// goroutine. It is not safe for concurrent use; one goroutine owns it. See
// the package documentation for what the driver does with each Action.
type Coordinator struct {
	opts    Options
	tasks   []event.SubtaskID // every task that must acknowledge, sorted
	sources []event.SubtaskID // the tasks to trigger, sorted
	nextID  event.CheckpointID

	pending []*pendingCheckpoint // not yet ended, ascending id
	history history

	lastTrigger time.Time // of any trigger; New's now before the first
	lastEnd     time.Time // of the last completion or abort
	anyEnded    bool      // whether lastEnd is set

	latest    event.CheckpointID // last completed; 0 if none
	failures  int                // consecutive counted failures
	failing   bool               // FailJob returned, AbortAll not yet called
	finalDone bool               // a final checkpoint completed
}

// New returns a coordinator for a job whose tasks must all acknowledge
// every checkpoint and whose sources are triggered. The first checkpoint
// gets nextID: a fresh job passes 1, a restarted one the id it persisted
// last. The first periodic trigger is due Options.Interval after now.
//
// New applies opts.EnsureDefaults. It panics on invalid options, on an
// empty tasks or sources list, on a source missing from tasks, and on a
// nextID below 1: all are programming errors, so Validate options first.
func New(opts Options, tasks, sources []event.SubtaskID, nextID event.CheckpointID, now time.Time) *Coordinator {
	opts.EnsureDefaults()
	c := &Coordinator{opts: opts, tasks: sortedUnique(tasks), sources: sortedUnique(sources),
		nextID: nextID, lastTrigger: now}
	if err := c.check(); err != nil {
		panic(err)
	}
	return c
}

func (c *Coordinator) check() error {
	if err := c.opts.Validate(); err != nil {
		return err
	}
	if len(c.tasks) == 0 || len(c.sources) == 0 {
		return fmt.Errorf("checkpoint: New needs at least one task and one source")
	}
	for _, s := range c.sources {
		if _, found := slices.BinarySearchFunc(c.tasks, s, compareTasks); !found {
			return fmt.Errorf("checkpoint: source %s is not among the tasks; list every source in tasks too", s)
		}
	}
	if c.nextID < 1 {
		return fmt.Errorf("checkpoint: next id %d; ids start at 1", c.nextID)
	}
	return nil
}

// Tick advances time: it expires every checkpoint pending for
// Options.Timeout or longer, then triggers a periodic checkpoint if one is
// due. Call it often, e.g. every 100ms; expiry and periodic triggers are
// only as precise as the ticks.
func (c *Coordinator) Tick(now time.Time) []Action {
	acts := c.expire(now)
	if c.periodicDue(now) {
		acts = append(acts, c.trigger(now, false, event.SnapshotCheckpoint))
	}
	return acts
}

// TriggerNow triggers a checkpoint at once, regardless of Interval and
// MinPause, if fewer than MaxConcurrent are pending. final marks the last
// checkpoint of a bounded job: while it is pending nothing else is
// triggered, and once it completes nothing ever is. TriggerNow returns nil
// when it may not trigger: too many pending, a final checkpoint pending or
// completed, or a FailJob not yet followed by AbortAll.
func (c *Coordinator) TriggerNow(now time.Time, final bool) []Action {
	if !c.mayTrigger() {
		return nil
	}
	return []Action{c.trigger(now, final, event.SnapshotCheckpoint)}
}

// TriggerSavepoint triggers a savepoint of type typ at once, under the
// rules of TriggerNow; it returns nil when it may not trigger yet (the
// driver queues the request and tries again on a later event). A savepoint
// differs from a checkpoint as Flink's does: its completion neither
// subsumes older pending checkpoints nor is subsumed by newer ones, it is
// not LatestCompleted (failovers restore checkpoints), and its failure does
// not count towards TolerableFailures. A SnapshotSuspend savepoint ends the
// job like a final checkpoint: while it is pending nothing else is
// triggered, once it completes nothing ever is; a SnapshotTerminate one is
// the final checkpoint (Final is set). Panics on SnapshotCheckpoint.
func (c *Coordinator) TriggerSavepoint(now time.Time, typ event.SnapshotType) []Action {
	if !typ.IsSavepoint() {
		panic("checkpoint: TriggerSavepoint of a checkpoint; use TriggerNow")
	}
	if !c.mayTrigger() {
		return nil
	}
	return []Action{c.trigger(now, typ == event.SnapshotTerminate, typ)}
}

func (c *Coordinator) mayTrigger() bool {
	return !c.failing && !c.finalDone && !c.finalPending() && len(c.pending) < c.opts.MaxConcurrent
}

func (c *Coordinator) finalPending() bool {
	return slices.ContainsFunc(c.pending, func(a *pendingCheckpoint) bool { return a.endsJob() })
}

func (c *Coordinator) periodicDue(now time.Time) bool {
	if c.opts.Interval == 0 || !c.mayTrigger() || now.Before(c.lastTrigger.Add(c.opts.Interval)) {
		return false
	}
	return !c.anyEnded || !now.Before(c.lastEnd.Add(c.opts.MinPause))
}

func (c *Coordinator) trigger(now time.Time, final bool, typ event.SnapshotType) Action {
	a := newPendingCheckpoint(c.nextID, now, final, c.tasks)
	a.typ = typ
	c.nextID++
	c.pending = append(c.pending, a)
	c.history.add(a)
	c.lastTrigger = now
	return TriggerCheckpoint{ID: a.id, Timestamp: now, Final: final, Type: typ, Sources: slices.Clone(c.sources)}
}

func (c *Coordinator) expire(now time.Time) []Action {
	var acts []Action
	for _, a := range slices.Clone(c.pending) {
		if a.expiredAt(now, c.opts.Timeout) {
			acts = append(acts, c.fail(now, a, a.expiredError(now))...)
		}
	}
	return acts
}

// Progress records that task entered phase p of checkpoint id; failure
// messages report it. It is ProgressDetail without detail.
func (c *Coordinator) Progress(now time.Time, id event.CheckpointID, task event.SubtaskID, p Phase) {
	c.ProgressDetail(now, id, task, p, "")
}

// ProgressDetail records that task entered phase p of checkpoint id, with a
// detail for failure messages such as "waiting for barrier on inputs 0,2".
// Repeating the phase updates the detail and keeps the phase's start time.
// Reports for unknown, ended or fully acknowledged checkpoints, from unknown
// or acknowledged tasks, or of PhaseAcked (use Acknowledge) are ignored.
func (c *Coordinator) ProgressDetail(now time.Time, id event.CheckpointID, task event.SubtaskID, p Phase, detail string) {
	if a := c.find(id); a != nil {
		a.progress(now, task, p, detail)
	}
}

// Acknowledge records that task finished its part of checkpoint id. When
// it is the last acknowledgement it returns PersistCheckpoint. An
// acknowledgement for an unknown, ended or already fully acknowledged
// checkpoint, from a task outside the job, or repeated, is ignored; the
// state it carries is then garbage for checkpoint storage to collect.
func (c *Coordinator) Acknowledge(now time.Time, id event.CheckpointID, task event.SubtaskID, ack Ack) []Action {
	a := c.find(id)
	if a == nil || !a.ack(now, task, ack) || !a.fullyAcked() {
		return nil
	}
	a.status = persisting
	states := a.states
	a.states = nil
	return []Action{PersistCheckpoint{ID: a.id, Timestamp: a.triggered, Final: a.final, Type: a.typ, States: states}}
}

// Decline records that task cannot take checkpoint id, failing in phase p
// for reason. It aborts the checkpoint with a *FailedError whose cause is
// ErrDeclined and which names the task and phase, counts a failure, and
// may return FailJob. Declines for unknown, ended or fully acknowledged
// checkpoints, from unknown tasks or from tasks that already acknowledged,
// are ignored.
func (c *Coordinator) Decline(now time.Time, id event.CheckpointID, task event.SubtaskID, p Phase, reason error) []Action {
	a := c.find(id)
	if a == nil || a.status != waitingAcks {
		return nil
	}
	if ts := a.tasks[task]; ts == nil || ts.acked() {
		return nil
	}
	return c.fail(now, a, declinedError(id, task, p, reason))
}

// Persisted records that the driver wrote the metadata of checkpoint id
// durably. The checkpoint completes: it returns NotifyComplete, then an
// AbortCheckpoint (ErrSubsumed, not counted as a failure) for every older
// checkpoint still pending. It resets the failure count. Persisted for a
// checkpoint that is not awaiting persistence (e.g. subsumed meanwhile)
// returns nil; its metadata is then garbage for storage to collect.
func (c *Coordinator) Persisted(now time.Time, id event.CheckpointID) []Action {
	a := c.find(id)
	if a == nil || a.status != persisting {
		return nil
	}
	c.remove(a)
	a.end(now, StatusCompleted, nil)
	c.finalDone = c.finalDone || a.endsJob()
	c.markEnd(now)
	done := []Action{NotifyComplete{ID: a.id, Type: a.typ}}
	if a.typ.IsSavepoint() {
		return done // savepoints neither subsume nor count as the latest
	}
	c.latest, c.failures = a.id, 0
	return append(done, c.subsume(now, a.id)...)
}

// PersistFailed records that the driver could not write the metadata of
// checkpoint id. It aborts the checkpoint (ErrPersistFailed wrapping err),
// counts a failure and may return FailJob. It returns nil for a checkpoint
// that is not awaiting persistence.
func (c *Coordinator) PersistFailed(now time.Time, id event.CheckpointID, err error) []Action {
	a := c.find(id)
	if a == nil || a.status != persisting {
		return nil
	}
	return c.fail(now, a, persistFailedError(id, err))
}

// AbortAll aborts every pending checkpoint that still waits for
// acknowledgements, with ErrAborted wrapping reason; call it on job
// failover or cancellation. It counts no failure and re-enables triggers
// after a FailJob. Checkpoints whose metadata is being persisted are left
// alone: their outcome is the driver's write, reported with Persisted or
// PersistFailed, and the driver should wait for it before choosing the
// checkpoint to restore.
func (c *Coordinator) AbortAll(now time.Time, reason error) []Action {
	c.failing = false
	var acts []Action
	for _, a := range slices.Clone(c.pending) {
		if a.status == waitingAcks {
			acts = append(acts, c.abort(now, a, abortedError(a.id, reason)))
		}
	}
	return acts
}

func (c *Coordinator) subsume(now time.Time, completed event.CheckpointID) []Action {
	var acts []Action
	for _, a := range slices.Clone(c.pending) {
		if a.id < completed && !a.typ.IsSavepoint() {
			acts = append(acts, c.abort(now, a, subsumedError(a.id, completed)))
		}
	}
	return acts
}

// fail aborts a and counts the failure; the result may end with FailJob.
func (c *Coordinator) fail(now time.Time, a *pendingCheckpoint, err *FailedError) []Action {
	acts := []Action{c.abort(now, a, err)}
	if a.typ.IsSavepoint() {
		return acts // a failed savepoint is the requester's error, not the job's
	}
	return append(acts, c.countFailure(err)...)
}

func (c *Coordinator) abort(now time.Time, a *pendingCheckpoint, err *FailedError) Action {
	c.remove(a)
	a.end(now, StatusFailed, err)
	c.markEnd(now)
	return AbortCheckpoint{ID: a.id, Reason: err}
}

// countFailure counts err towards TolerableFailures. Failures while the job
// is already failing are not counted: they are the failover's echo.
func (c *Coordinator) countFailure(err *FailedError) []Action {
	if c.failing || !err.countsAsFailure() {
		return nil
	}
	c.failures++
	tol := c.opts.TolerableFailures
	if tol == UnlimitedFailures || c.failures <= tol {
		return nil
	}
	n := c.failures
	c.failures, c.failing = 0, true
	return []Action{FailJob{Err: tooManyFailures(n, tol, err)}}
}

func (c *Coordinator) markEnd(now time.Time) {
	c.lastEnd, c.anyEnded = now, true
}

func (c *Coordinator) find(id event.CheckpointID) *pendingCheckpoint {
	i := slices.IndexFunc(c.pending, func(a *pendingCheckpoint) bool { return a.id == id })
	if i < 0 {
		return nil
	}
	return c.pending[i]
}

func (c *Coordinator) remove(a *pendingCheckpoint) {
	c.pending = slices.DeleteFunc(c.pending, func(p *pendingCheckpoint) bool { return p == a })
}

// Pending describes every checkpoint not yet ended, in id order.
func (c *Coordinator) Pending() []PendingInfo {
	out := make([]PendingInfo, len(c.pending))
	for i, a := range c.pending {
		out[i] = a.pendingInfo()
	}
	return out
}

// PendingStats describes every checkpoint not yet ended as Stats does,
// in id order: the acknowledgements so far.
func (c *Coordinator) PendingStats() []CheckpointStats {
	out := make([]CheckpointStats, len(c.pending))
	for i, a := range c.pending {
		out[i] = a.stats()
	}
	return out
}

// LatestCompleted returns the id of the newest completed checkpoint and
// true, or 0 and false if none completed since New.
func (c *Coordinator) LatestCompleted() (event.CheckpointID, bool) {
	return c.latest, c.latest != 0
}

// NextID returns the id the next trigger will use.
func (c *Coordinator) NextID() event.CheckpointID { return c.nextID }

// Stats describes the newest HistorySize checkpoints, pending or ended, in
// id order.
func (c *Coordinator) Stats() []CheckpointStats {
	out := make([]CheckpointStats, len(c.history.checkpoints))
	for i, a := range c.history.checkpoints {
		out[i] = a.stats()
	}
	return out
}
