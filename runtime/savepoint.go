package runtime

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/weirstream/weir/checkpoint"
	"github.com/weirstream/weir/checkpointstorage"
	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/task"
)

// savepointState is the driver's part of the savepoints of one attempt.
type savepointState struct {
	// queued requests wait for the coordinator to allow a trigger (one
	// checkpoint at a time by default), oldest first.
	queued []*savepointRequest
	// pending maps a triggered savepoint's id to its request.
	pending map[event.CheckpointID]*savepointRequest
	// stop is the stop-with-savepoint in progress (queued, draining or
	// pending), if any: there is at most one.
	stop *savepointRequest
	// drain is set while a stop with drain waits for the sources to end
	// their input; its savepoint is the final checkpoint.
	drain *savepointRequest
}

// onSavepointRequest accepts a request from a JobClient: it creates the
// savepoint's directory and triggers it, or queues it until the
// coordinator allows; a drain first ends every source's input. A request
// the job cannot serve is answered at once with the reason.
func (dr *driver) onSavepointRequest(ctx context.Context, r *savepointRequest) []checkpoint.Action {
	if err := dr.acceptable(r); err != nil {
		r.answer("", err)
		return nil
	}
	if err := dr.createDir(r); err != nil {
		r.answer("", err)
		return nil
	}
	if r.typ != event.SnapshotSavepoint {
		dr.sp.stop = r
	}
	if r.typ == event.SnapshotTerminate {
		dr.sp.drain = r
		for _, s := range dr.d.sources {
			if err := dr.post(ctx, s, task.Mail{Kind: task.MailDrain}); err != nil {
				r.answer("", err)
				return nil
			}
		}
		return nil
	}
	dr.sp.queued = append(dr.sp.queued, r)
	return dr.triggerQueued(dr.j.opts.Now())
}

func (dr *driver) acceptable(r *savepointRequest) error {
	if !dr.checkpoints {
		return fmt.Errorf("runtime: job %q cannot take a %s: it runs at-most-once, without checkpoints; "+
			"turn checkpointing on (SET 'execution.checkpointing.interval' = '10 s', Go: runtime.Options.Mode)",
			dr.j.opts.JobID, r.typ)
	}
	if dr.sp.stop != nil {
		return fmt.Errorf("runtime: job %q is already stopping with a savepoint", dr.j.opts.JobID)
	}
	if r.typ != event.SnapshotSavepoint && (dr.wantFinal || dr.finalID != 0) {
		return fmt.Errorf("runtime: job %q cannot stop with a savepoint: its input has ended and it is "+
			"taking its final checkpoint", dr.j.opts.JobID)
	}
	return nil
}

// createDir creates the request's savepoint directory under its target.
func (dr *driver) createDir(r *savepointRequest) error {
	target := r.target
	if target == "" {
		target = dr.j.opts.SavepointDir
	}
	s, err := checkpointstorage.CreateSavepoint(target, dr.j.opts.JobID, dr.j.opts.CheckpointStorage)
	if err != nil {
		return fmt.Errorf("runtime: %s of job %q: %w", r.typ, dr.j.opts.JobID, err)
	}
	r.target, r.storage = target, s
	return nil
}

// close releases the savepoint's storage (an S3 client) once nothing
// writes into it any more: it completed (every part and its _metadata
// written) or was discarded. A late async writer of a discarded one gets
// an error, as it would for a removed directory.
func (r *savepointRequest) close(log *slog.Logger) {
	if r.storage == nil {
		return
	}
	if err := r.storage.Close(); err != nil {
		log.Warn("closing savepoint storage", "path", r.storage.Dir(), "err", err)
	}
}

// triggerQueued triggers the oldest queued savepoint if the coordinator
// allows it now.
func (dr *driver) triggerQueued(now time.Time) []checkpoint.Action {
	if len(dr.sp.queued) == 0 {
		return nil
	}
	r := dr.sp.queued[0]
	acts := dr.coord.TriggerSavepoint(now, r.typ)
	if acts == nil {
		return nil
	}
	dr.sp.queued = dr.sp.queued[1:]
	dr.register(acts, r)
	return acts
}

// triggerFinal triggers the final checkpoint once every source ended: the
// savepoint of a stop with drain, else a plain final checkpoint.
func (dr *driver) triggerFinal(now time.Time) []checkpoint.Action {
	r := dr.sp.drain
	if r == nil {
		return dr.coord.TriggerNow(now, true)
	}
	if r.storage == nil { // a retry after the first attempt failed
		if err := dr.createDir(r); err != nil {
			dr.j.opts.Logger.Error("stop-with-savepoint: cannot create the savepoint directory; "+
				"taking a plain final checkpoint instead", "err", err)
			r.answer("", err)
			dr.sp.drain, dr.sp.stop = nil, nil
			return dr.coord.TriggerNow(now, true)
		}
	}
	acts := dr.coord.TriggerSavepoint(now, event.SnapshotTerminate)
	dr.register(acts, r)
	return acts
}

// register files the savepoint that acts triggers under its id, before
// any barrier asks a subtask for its directory.
func (dr *driver) register(acts []checkpoint.Action, r *savepointRequest) {
	for _, a := range acts {
		if t, ok := a.(checkpoint.TriggerCheckpoint); ok {
			if dr.sp.pending == nil {
				dr.sp.pending = map[event.CheckpointID]*savepointRequest{}
			}
			dr.sp.pending[t.ID] = r
			dr.j.savepoints.put(t.ID, r.storage)
		}
	}
}

// savepointCompleted answers the request with the savepoint's directory.
// A stop-with-savepoint's completion goes to every subtask, as a
// checkpoint's does: sinks commit its transactions and the subtasks end.
// An intermediate savepoint commits nothing (Flink 1.15+): its sinks'
// transactions commit with the next checkpoint.
func (dr *driver) savepointCompleted(ctx context.Context, a checkpoint.NotifyComplete) error {
	r := dr.sp.pending[a.ID]
	delete(dr.sp.pending, a.ID)
	dr.j.savepoints.remove(a.ID)
	path := r.storage.Dir()
	dr.j.opts.Logger.Info("savepoint completed", "checkpoint", a.ID, "type", a.Type.String(), "path", path)
	dr.j.emit(Event{Kind: EventSavepointCompleted, Checkpoint: int64(a.ID), Path: path, Stats: dr.stats(a.ID)})
	if a.Type != event.SnapshotSavepoint {
		dr.j.stoppedAt = path
		for _, s := range dr.d.ids {
			if err := dr.post(ctx, s, task.Mail{Kind: task.MailComplete, ID: a.ID}); err != nil {
				r.answer("", err)
				return err
			}
		}
	}
	r.answer(path, nil)
	r.close(dr.j.opts.Logger)
	return nil
}

// savepointAborted handles the abort of a savepoint (and reports whether
// it was one): its directory is removed, and the request answered with
// the reason — except a drain's, which is the final checkpoint and is
// retried into a new directory.
func (dr *driver) savepointAborted(a checkpoint.AbortCheckpoint) bool {
	r, ok := dr.sp.pending[a.ID]
	if !ok {
		return false
	}
	delete(dr.sp.pending, a.ID)
	dr.j.savepoints.remove(a.ID)
	if err := r.storage.Discard(a.ID); err != nil {
		dr.j.opts.Logger.Warn("could not remove the directory of a failed savepoint", "path", r.storage.Dir(), "err", err)
	}
	r.close(dr.j.opts.Logger)
	dr.j.opts.Logger.Warn("savepoint failed", "checkpoint", a.ID, "reason", a.Reason)
	dr.j.emit(Event{Kind: EventSavepointFailed, Checkpoint: int64(a.ID), Err: a.Reason, Stats: dr.stats(a.ID)})
	if r.typ == event.SnapshotTerminate {
		r.storage = nil
		dr.finalID, dr.wantFinal = 0, true
		return true
	}
	if r == dr.sp.stop {
		dr.sp.stop = nil
	}
	r.answer("", fmt.Errorf("runtime: %s %d of job %q failed: %w", r.typ, a.ID, dr.j.opts.JobID, a.Reason))
	return true
}

// endSavepoints answers every request still open when the attempt ends:
// a stop-with-savepoint that completed has been answered already.
func (dr *driver) endSavepoints(err error) {
	why := errors.New("the job ended")
	if err != nil {
		why = fmt.Errorf("the job failed or was cancelled: %w", err)
	}
	open := append([]*savepointRequest(nil), dr.sp.queued...)
	for _, r := range dr.sp.queued {
		_ = r.storage.Discard(0) // best effort: the empty directory of a savepoint never triggered
		r.close(dr.j.opts.Logger)
	}
	for id, r := range dr.sp.pending {
		dr.j.savepoints.remove(id)
		if r.storage != nil {
			_ = r.storage.Discard(id) // best effort: the directory of an unfinished savepoint
			r.close(dr.j.opts.Logger)
		}
		open = append(open, r)
	}
	if dr.sp.drain != nil {
		open = append(open, dr.sp.drain)
	}
	for _, r := range open {
		r.answer("", fmt.Errorf("%w: the %s did not complete: %w", ErrJobNotRunning, r.typ, why))
	}
}
