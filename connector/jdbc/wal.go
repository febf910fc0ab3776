package jdbc

import (
	"context"
	"fmt"
	"strconv"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
)

// walWriter is the writer of StrategyCheckpointTable, a write-ahead-log
// sink: it keeps the rows of the current checkpoint interval in memory and,
// at the barrier, hands them over as the committable, so they are stored in
// the checkpoint. Nothing touches the table before the checkpoint completes.
// Memory grows with the rows of one checkpoint interval.
type walWriter struct {
	s       *Sink
	t       *tableInfo
	subtask int
	rows    []event.Row
	lease   *identityLease // held until Close
}

// newWALWriter forgets the sink's bookkeeping rows on a fresh start: no
// checkpoint of this job has completed, so nothing can be replayed, and a
// job started afresh under an old job id counts checkpoints from 1 again.
func (s *Sink) newWALWriter(ctx context.Context, wctx operator.WriterContext, p pool, t *tableInfo, lease *identityLease) (*walWriter, error) {
	w := &walWriter{s: s, t: t, subtask: wctx.Subtask.Index, lease: lease}
	if wctx.RestoredCheckpoint > 0 {
		return w, s.checkNotAhead(ctx, wctx, p)
	}
	d := s.target.dialect
	err := retry(ctx, d, s.opts.MaxRetries, "reset "+s.opts.CheckpointTable, s.opts.Logger.Warn, func() error {
		sess, err := p.acquire(ctx)
		if err != nil {
			return err
		}
		_, err = sess.exec(ctx, "UPDATE "+quoteQualified(s.opts.CheckpointTable, d.quoteIdent)+
			" SET checkpoint_id = 0 WHERE job = "+d.placeholder(1)+" AND sink = "+d.placeholder(2)+
			" AND MOD(subtask, "+d.placeholder(3)+") = "+d.placeholder(4),
			wctx.JobID, s.opts.Name, max(1, wctx.Parallelism), wctx.Subtask.Index)
		sess.release(err != nil)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("jdbc: resetting %s for a fresh start: %w", s.opts.CheckpointTable, err)
	}
	return w, nil
}

func (w *walWriter) Write(r event.Record) error {
	row, err := w.s.rowOf(w.t, r.Value)
	if err != nil {
		return err
	}
	if row, err = normalize(w.t, row); err != nil {
		return err
	}
	w.rows = append(w.rows, row)
	return nil
}

// Flush does nothing: rows wait for their checkpoint.
func (w *walWriter) Flush(bool) error { return nil }

func (w *walWriter) PrepareCommit(id event.CheckpointID) ([][]byte, error) {
	if len(w.rows) == 0 {
		return nil, nil
	}
	b, err := walBatch{origin: w.subtask, id: id, rows: w.rows}.encode()
	if err != nil {
		return nil, err
	}
	w.rows = nil
	return [][]byte{b}, w.s.hooks.maybe("prepare")
}

func (w *walWriter) SnapshotState(event.CheckpointID) ([]byte, error) { return nil, nil }

func (w *walWriter) Close() error {
	w.rows = nil
	w.lease.release()
	w.s.release()
	return nil
}

// walCommitter writes a committed checkpoint's rows in one local
// transaction that also moves the (job, sink, origin subtask) row of the
// checkpoint table to the checkpoint's id; if that row is already at or
// past the id, the checkpoint was written before and is skipped. The row is
// locked (SELECT … FOR UPDATE) first, so two commits of one checkpoint
// cannot both apply. Commits of one origin come in increasing checkpoint
// order, so "at or past" means "already written".
type walCommitter struct {
	committerBase
}

func (c *walCommitter) Commit(ctx context.Context, _ event.CheckpointID, committables [][]byte) error {
	for _, raw := range committables {
		b, err := decodeWAL(raw)
		if err != nil {
			return fmt.Errorf("jdbc: table %q: %w", c.t.name, err)
		}
		if err := c.s.hooks.maybe("commit"); err != nil {
			return err
		}
		what := fmt.Sprintf("commit of checkpoint %d (subtask %d, %d rows)", b.id, b.origin, len(b.rows))
		err = retry(ctx, c.s.target.dialect, c.s.opts.MaxRetries, what, c.log, func() error {
			return inLocalTx(ctx, c.s, c.p, "wal-apply", func(s session) error { return c.apply(ctx, s, b) })
		})
		if err != nil {
			return err
		}
	}
	return c.s.hooks.maybe("after-commit")
}

func (c *walCommitter) apply(ctx context.Context, s session, b walBatch) error {
	d := c.s.target.dialect
	table := quoteQualified(c.s.opts.CheckpointTable, d.quoteIdent)
	where := func(first int) string {
		return " WHERE job = " + d.placeholder(first) + " AND sink = " + d.placeholder(first+1) +
			" AND subtask = " + d.placeholder(first+2)
	}
	key := []any{c.job, c.s.opts.Name, b.origin}
	if _, err := s.exec(ctx, d.insertIfAbsent(c.s.opts.CheckpointTable), key...); err != nil {
		return err
	}
	rows, err := s.query(ctx, "SELECT checkpoint_id FROM "+table+where(1)+" FOR UPDATE", key...)
	if err != nil {
		return err
	}
	if len(rows) != 1 {
		return fmt.Errorf("jdbc: bookkeeping row (%s, %s, %d) missing from %s", c.job, c.s.opts.Name, b.origin, table)
	}
	stored, err := strconv.ParseInt(rows[0][0], 10, 64)
	if err != nil {
		return err
	}
	if event.CheckpointID(stored) >= b.id {
		return nil // written before: a replay after a restore
	}
	if err := c.t.apply(ctx, s, b.rows); err != nil {
		return err
	}
	_, err = s.exec(ctx, "UPDATE "+table+" SET checkpoint_id = "+d.placeholder(1)+where(2),
		append([]any{int64(b.id)}, key...)...)
	return err
}

// checkNotAhead compares the restored checkpoint with the bookkeeping rows
// of the origin subtasks this subtask owns: a row past it means the sink
// committed a newer checkpoint (since deleted or corrupt), whose rows going
// on would write again. That is an operator.ReplayError, unless
// sink.allow-replay accepts it (then a warning).
func (s *Sink) checkNotAhead(ctx context.Context, wctx operator.WriterContext, p pool) error {
	d := s.target.dialect
	var rows [][]string
	err := retry(ctx, d, s.opts.MaxRetries, "read "+s.opts.CheckpointTable, s.opts.Logger.Warn, func() error {
		sess, err := p.acquire(ctx)
		if err != nil {
			return err
		}
		rows, err = sess.query(ctx, "SELECT MAX(checkpoint_id) FROM "+quoteQualified(s.opts.CheckpointTable, d.quoteIdent)+
			" WHERE job = "+d.placeholder(1)+" AND sink = "+d.placeholder(2)+
			" AND MOD(subtask, "+d.placeholder(3)+") = "+d.placeholder(4),
			wctx.JobID, s.opts.Name, max(1, wctx.Parallelism), wctx.Subtask.Index)
		sess.release(err != nil)
		return err
	})
	if err != nil {
		return fmt.Errorf("jdbc: reading %s on restore: %w", s.opts.CheckpointTable, err)
	}
	if len(rows) == 0 || rows[0][0] == "" {
		return nil
	}
	committed, err := strconv.ParseInt(rows[0][0], 10, 64)
	if err != nil || event.CheckpointID(committed) <= wctx.RestoredCheckpoint {
		return err
	}
	return s.replay(wctx, event.CheckpointID(committed), fmt.Sprintf("its row in %s", s.opts.CheckpointTable))
}

// replay reports a restore behind the sink's committed checkpoint: an
// operator.ReplayError, or with sink.allow-replay a warning.
func (s *Sink) replay(wctx operator.WriterContext, committed event.CheckpointID, evidence string) error {
	e := &operator.ReplayError{
		Sink:     fmt.Sprintf("jdbc sink %q (table %q, subtask %d)", s.opts.Name, s.opts.Table, wctx.Subtask.Index),
		Restored: wctx.RestoredCheckpoint, Committed: committed, Evidence: evidence,
		Fix: "'sink.allow-replay' = 'true' on the table (Go: jdbc.AllowReplay())"}
	if !s.opts.AllowReplay {
		return e
	}
	s.opts.Logger.Warn("jdbc: replay accepted (sink.allow-replay): rows of committed checkpoints will be written again",
		"sink", s.opts.Name, "table", s.opts.Table, "subtask", wctx.Subtask.Index, "restored", e.Restored, "committed", committed)
	return nil
}
