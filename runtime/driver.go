package runtime

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/weirstream/weir/checkpoint"
	"github.com/weirstream/weir/checkpointstorage"
	"github.com/weirstream/weir/clock"
	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/task"
)

// driver carries out the coordinator's actions for one attempt: it owns the
// coordinator and talks to subtasks only through mailboxes and reports.
type driver struct {
	j           *job
	d           *deployment
	coord       *checkpoint.Coordinator
	reports     chan task.Report
	exits       chan exit
	running     int
	finished    map[event.SubtaskID]bool
	wantFinal   bool
	ticks       int
	lastDone    time.Time
	finalID     event.CheckpointID // pending final checkpoint, 0 if none
	checkpoints bool
	sp          savepointState
	// moved: a pending checkpoint changed since the last
	// EventCheckpointPending.
	moved bool
}

func newDriver(j *job, d *deployment, reports chan task.Report, exits chan exit, restore *restoredState) (*driver, error) {
	dr := &driver{j: j, d: d, reports: reports, exits: exits, running: len(d.ids),
		finished: map[event.SubtaskID]bool{}, checkpoints: j.opts.Mode != task.AtMostOnce}
	next := event.CheckpointID(1)
	if dr.checkpoints {
		var err error
		if next, err = j.fs.NextID(); err != nil {
			return nil, err
		}
	}
	if restore != nil && next <= restore.id {
		// Restored from another directory (a savepoint, another job's
		// checkpoint): ids go on from the restored one, as in Flink, or a
		// sink would take checkpoint 1 for a replay of what it committed.
		next = restore.id + 1
	}
	dr.coord = checkpoint.New(j.opts.Checkpoint, d.ids, d.sources, next, j.opts.Now())
	return dr, nil
}

// driverTick is how often the driver triggers due checkpoints, expires
// late ones and reports progress.
const driverTick = 10 * time.Millisecond

// loop runs until every subtask exited (nil) or one failed (its error).
func (dr *driver) loop(ctx context.Context) error {
	tick := dr.j.opts.Clock.NewTicker(driverTick)
	defer tick.Stop()
	sched := clock.SchedulerOf(dr.j.opts.Clock)
	for dr.running > 0 {
		var acts []checkpoint.Action
		reports, exits, ticks, requests, done := (<-chan task.Report)(dr.reports), (<-chan exit)(dr.exits), tick.C(),
			(<-chan *savepointRequest)(dr.j.requests), ctx.Done()
		if sched != nil {
			// A simulation: the first ready case, as the scheduler saw it.
			i := clock.Choose(sched, clock.Pending(reports), clock.Pending(exits), clock.Pending(ticks),
				clock.Pending(requests), clock.Done(ctx))
			reports, exits, ticks = clock.Only(i, 0, reports), clock.Only(i, 1, exits), clock.Only(i, 2, ticks)
			requests, done = clock.Only(i, 3, requests), clock.Only(i, 4, done)
		}
		select {
		case r := <-reports:
			acts = dr.onReport(r)
		case e := <-exits:
			if err := dr.onExit(e); err != nil {
				return err
			}
		case <-ticks:
			acts = dr.onTick()
		case r := <-requests:
			acts = dr.onSavepointRequest(ctx, r)
		case <-done:
			return ctx.Err()
		}
		if err := dr.carryOut(ctx, acts); err != nil {
			return err
		}
	}
	return nil
}

func (dr *driver) onExit(e exit) error {
	dr.running--
	if e.err != nil {
		return &SubtaskFailedError{Subtask: e.id, Err: e.err}
	}
	return nil
}

// SubtaskFailedError is an attempt's failure that began in one subtask:
// Err is what its run returned. The JobManager shows Subtask as the
// exception's taskName.
type SubtaskFailedError struct {
	Subtask event.SubtaskID
	Err     error
}

func (e *SubtaskFailedError) Error() string {
	return fmt.Sprintf("subtask %s failed: %v", e.Subtask, e.Err)
}

// Unwrap returns the subtask's error.
func (e *SubtaskFailedError) Unwrap() error { return e.Err }

// stallCheckTicks is how many ticks apart the driver checks its sources
// for stalls across subtasks: every 200 ms, the default interval at which
// source subtasks publish the watermarks it reads. Every tick it cost
// 5,000 source views 100 times a second at parallelism 5,000.
const stallCheckTicks = 20

func (dr *driver) onTick() []checkpoint.Action {
	if dr.ticks++; dr.ticks%100 == 0 {
		dr.reportProgress()
	}
	dr.reportPending()
	if len(dr.d.stalls) > 0 && dr.ticks%stallCheckTicks == 0 {
		dr.checkSourceStalls(dr.j.opts.Now())
	}
	if !dr.checkpoints {
		return nil
	}
	now := dr.j.opts.Now()
	// The final checkpoint goes first: a periodic one taking the free slot
	// on every tick would starve it.
	if dr.wantFinal {
		if a := dr.triggerFinal(now); a != nil {
			dr.wantFinal = false
			return a
		}
	}
	if a := dr.triggerQueued(now); a != nil {
		return a
	}
	return dr.coord.Tick(now)
}

func (dr *driver) onReport(r task.Report) []checkpoint.Action {
	now := dr.j.opts.Now()
	switch r.Kind {
	case task.ReportAck:
		dr.moved = true
		return dr.coord.Acknowledge(now, r.ID, r.Task, r.Ack)
	case task.ReportDecline:
		return dr.coord.Decline(now, r.ID, r.Task, r.Phase, r.Err)
	case task.ReportProgress:
		dr.moved = true
		dr.coord.ProgressDetail(now, r.ID, r.Task, r.Phase, r.Detail)
	case task.ReportSourceFinished:
		dr.finished[r.Task] = true
		if len(dr.finished) == len(dr.d.sources) && dr.checkpoints {
			dr.wantFinal = true
		}
	}
	return nil
}

// carryOut performs actions in order; some produce further actions.
func (dr *driver) carryOut(ctx context.Context, acts []checkpoint.Action) error {
	for len(acts) > 0 {
		a := acts[0]
		acts = acts[1:]
		more, err := dr.perform(ctx, a)
		if err != nil {
			return err
		}
		acts = append(acts, more...)
	}
	return nil
}

func (dr *driver) perform(ctx context.Context, a checkpoint.Action) ([]checkpoint.Action, error) {
	switch a := a.(type) {
	case checkpoint.TriggerCheckpoint:
		return nil, dr.trigger(ctx, a)
	case checkpoint.PersistCheckpoint:
		return dr.persist(a), nil
	case checkpoint.NotifyComplete:
		if a.Type.IsSavepoint() {
			return nil, dr.savepointCompleted(ctx, a)
		}
		return nil, dr.complete(ctx, a.ID)
	case checkpoint.AbortCheckpoint:
		return nil, dr.abort(ctx, a)
	case checkpoint.FailJob:
		return nil, a.Err
	}
	return nil, fmt.Errorf("runtime: unknown action %T", a)
}

func (dr *driver) trigger(ctx context.Context, a checkpoint.TriggerCheckpoint) error {
	if a.Final {
		dr.finalID = a.ID
	}
	dr.moved = true
	// The id must be durable before any barrier carries it.
	if err := dr.j.fs.SetNextID(a.ID + 1); err != nil {
		return fmt.Errorf("runtime: persisting checkpoint id %d: %w", a.ID, err)
	}
	b := event.CheckpointBarrier{ID: a.ID, Timestamp: a.Timestamp.UnixMilli(), Final: a.Final, Type: a.Type}
	for _, s := range a.Sources {
		if err := dr.post(ctx, s, task.Mail{Kind: task.MailTrigger, ID: a.ID, Barrier: b}); err != nil {
			return err
		}
	}
	return nil
}

func (dr *driver) persist(a checkpoint.PersistCheckpoint) []checkpoint.Action {
	now := dr.j.opts.Now()
	m := checkpointstorage.Metadata{ID: a.ID, Timestamp: a.Timestamp.UnixMilli(), JobID: dr.j.opts.JobID,
		Final: a.Final, Tasks: map[string][]byte{}}
	seen := map[string]bool{}
	for id, blob := range a.States {
		m.Tasks[taskKey(id)] = blob
		ts, err := task.DecodeTaskState(blob)
		if err != nil {
			return dr.coord.PersistFailed(now, a.ID, err)
		}
		for _, parts := range ts.Operators {
			for _, h := range parts {
				m.Handles = append(m.Handles, h)
			}
		}
		for _, h := range ts.Files {
			if !seen[h.Path] { // subtasks restored from one old subtask share its files
				seen[h.Path] = true
				m.Handles = append(m.Handles, h)
			}
		}
	}
	m.StateSchemas = dr.j.stateSchemas()
	storage := dr.j.fs
	if a.Type.IsSavepoint() {
		storage = dr.j.savepoints.get(a.ID)
		m.Stop = a.Type != event.SnapshotSavepoint
	}
	if err := storage.WriteMetadata(m); err != nil {
		return dr.coord.PersistFailed(now, a.ID, err)
	}
	return dr.coord.Persisted(now, a.ID)
}

func (dr *driver) complete(ctx context.Context, id event.CheckpointID) error {
	dr.j.lastOwn = id
	dr.j.own = append(dr.j.own, id)
	dr.lastDone = dr.j.opts.Now()
	dr.checkpointCompletedMetrics(id)
	dr.j.emit(Event{Kind: EventCheckpointCompleted, Checkpoint: int64(id), Stats: dr.stats(id)})
	for _, s := range dr.d.ids {
		if err := dr.post(ctx, s, task.Mail{Kind: task.MailComplete, ID: id}); err != nil {
			return err
		}
	}
	dr.j.reportCleanup(dr.j.fs.Retain(dr.j.opts.Retained, 0))
	return nil
}

func (dr *driver) abort(ctx context.Context, a checkpoint.AbortCheckpoint) error {
	if a.ID == dr.finalID {
		// Subtasks wait for a final checkpoint before they exit: try again.
		dr.finalID, dr.wantFinal = 0, true
	}
	if dr.savepointAborted(a) {
		return dr.postAborted(ctx, a.ID)
	}
	dr.checkpointFailedMetrics(a.Reason)
	if !errors.Is(a.Reason, checkpoint.ErrSubsumed) {
		dr.j.opts.Logger.Warn("checkpoint failed", "checkpoint", a.ID, "reason", a.Reason)
		dr.j.emit(Event{Kind: EventCheckpointFailed, Checkpoint: int64(a.ID), Err: a.Reason, Stats: dr.stats(a.ID)})
	} else {
		dr.j.emit(Event{Kind: EventCheckpointPending, Checkpoint: int64(a.ID), Err: a.Reason, Stats: dr.stats(a.ID)})
	}
	if err := dr.postAborted(ctx, a.ID); err != nil {
		return err
	}
	if err := dr.j.fs.Discard(a.ID); err != nil {
		dr.j.opts.Logger.Warn("could not discard aborted checkpoint", "checkpoint", a.ID, "err", err)
	}
	return nil
}

// postAborted tells every subtask that checkpoint id will never complete.
func (dr *driver) postAborted(ctx context.Context, id event.CheckpointID) error {
	for _, s := range dr.d.ids {
		if err := dr.post(ctx, s, task.Mail{Kind: task.MailAborted, ID: id}); err != nil {
			return err
		}
	}
	return nil
}

// post delivers mail to a subtask. Mailboxes hold mailboxCapacity mails and subtasks
// drain them first, so this waits only while a subtask is busy.
func (dr *driver) post(ctx context.Context, s event.SubtaskID, m task.Mail) error {
	mail, done := (chan<- task.Mail)(dr.d.mail[s]), ctx.Done()
	if sched := clock.SchedulerOf(dr.j.opts.Clock); sched != nil {
		i := clock.Choose(sched, clock.Room(mail), clock.Done(ctx))
		mail, done = clock.Only(i, 0, mail), clock.Only(i, 1, done)
	}
	select {
	case mail <- m:
		return nil
	case <-done:
		return ctx.Err()
	}
}

// stats returns the coordinator's record of checkpoint id, if it has one.
func (dr *driver) stats(id event.CheckpointID) *checkpoint.CheckpointStats {
	if dr.j.opts.Listener == nil {
		return nil
	}
	return dr.findStats(id)
}

// reportPending tells the listener of the pending checkpoints that moved
// on since the last tick: their records so far. Once per tick, not per
// acknowledgement: a record lists every subtask.
func (dr *driver) reportPending() {
	if !dr.moved || dr.j.opts.Listener == nil {
		return
	}
	dr.moved = false
	for _, s := range dr.coord.PendingStats() {
		dr.j.emit(Event{Kind: EventCheckpointPending, Checkpoint: int64(s.ID), Stats: &s})
	}
}

// reportProgress hands the live figures to Options.Progress.
func (dr *driver) reportProgress() {
	if dr.j.opts.Progress == nil {
		return
	}
	p := Progress{Restarts: dr.j.res.Restarts, LastCheckpoint: int64(dr.j.lastOwn)}
	for _, c := range dr.d.readers {
		p.RecordsRead += c.Out.Load()
		p.WatermarkStalls += c.WatermarkStalls.Load()
	}
	for _, c := range dr.d.writers {
		p.RecordsWritten += c.In.Load()
	}
	for _, c := range dr.d.counters {
		p.LateDropped += c.LateDropped.Load()
		p.FutureSkewed += c.FutureSkewed.Load()
	}
	if id, ok := dr.coord.LatestCompleted(); ok {
		for _, s := range dr.coord.Stats() {
			if s.ID == id {
				p.LastCheckpointDuration = s.Duration
			}
		}
		p.SinceCheckpoint = dr.j.opts.Now().Sub(dr.lastDone)
	}
	dr.j.opts.Progress(p)
}
