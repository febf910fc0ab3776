package jdbc

import (
	"context"

	"github.com/weirstream/weir/delivery"
	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
)

// directWriter is the sink of delivery.None and delivery.AtLeastOnce: rows
// are buffered and written in batches, each in one local transaction,
// retried on transient errors. delivery.AtLeastOnce also flushes at every barrier,
// so every row before a completed checkpoint is in the table; a replay after
// a failure writes some rows again, which an upsert makes harmless.
type directWriter struct {
	s     *Sink
	t     *tableInfo
	ctx   context.Context
	buf   *buffer
	onBar bool // flush at barriers (delivery.AtLeastOnce)
}

func (s *Sink) newDirectWriter(ctx context.Context, wctx operator.WriterContext, p pool, t *tableInfo) *directWriter {
	w := &directWriter{s: s, t: t, ctx: ctx, onBar: s.opts.Guarantee == delivery.AtLeastOnce}
	lockWait, subtask := s.lockWait(wctx), wctx.Subtask.Index
	w.buf = newBuffer(s.opts.BufferFlushMaxRows, s.opts.BufferFlushInterval, func(rows []event.Row) error {
		err := retry(ctx, s.target.dialect, s.opts.MaxRetries, "flush to "+t.name, s.opts.Logger.Warn, func() error {
			return inLocalTx(ctx, s, p, "flush", func(sess session) error { return t.apply(ctx, sess, rows) })
		})
		return s.explainLockWait(err, t, subtask, lockWait, false)
	})
	return w
}

func (w *directWriter) Write(r event.Record) error {
	row, err := w.s.rowOf(w.t, r.Value)
	if err != nil {
		return err
	}
	return w.buf.add(row)
}

func (w *directWriter) Flush(bool) error { return w.buf.flushThen(nil) }

func (w *directWriter) PrepareCommit(event.CheckpointID) ([][]byte, error) {
	if w.onBar {
		return nil, w.buf.flushThen(nil)
	}
	return nil, nil
}

func (w *directWriter) SnapshotState(event.CheckpointID) ([]byte, error) { return nil, nil }

func (w *directWriter) Close() error {
	w.buf.close(nil)
	w.s.release()
	return nil
}
