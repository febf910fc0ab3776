package kafka

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/weirstream/weir/delivery"
	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
)

// plainWriter is the writer of the none and at-least-once guarantees: one
// idempotent producer; at-least-once flushes at every barrier, so every
// record before a checkpoint is acknowledged before the checkpoint can
// complete.
type plainWriter struct {
	c      *sinkCore
	sub    int
	cl     *kgo.Client
	ctx    context.Context
	cancel context.CancelFunc
	err    asyncErr
	ret    *retentionGuard
	m      *operator.Metrics // nil outside a job
}

func newPlainWriter(c *sinkCore, wctx operator.WriterContext) (*plainWriter, error) {
	cl, err := c.newClient(c.producerOpts())
	if err != nil {
		return nil, err
	}
	w := &plainWriter{c: c, sub: wctx.Subtask.Index, cl: cl, ret: newRetentionGuard(c, cl), m: wctx.Metrics}
	w.ctx, w.cancel = context.WithCancel(context.Background())
	return w, nil
}

func (w *plainWriter) Write(r event.Record) error {
	if err := w.err.get(); err != nil {
		return w.failed(err)
	}
	rec, err := w.c.prepare(r)
	if rec == nil || err != nil {
		return err
	}
	w.ret.stamp(w.ctx, rec, time.Now())
	countBytesOut(w.m, rec)
	w.cl.Produce(w.ctx, rec, func(r *kgo.Record, err error) {
		if err != nil {
			w.err.set(produceError(r, err))
		}
	})
	return nil
}

func (w *plainWriter) failed(err error) error {
	return fmt.Errorf("kafka sink (%s, subtask %d): producing failed: %w", w.c.cfg.guarantee, w.sub, err)
}

// Flush waits for every record to be acknowledged: at each barrier for
// at-least-once, at the end of input for both guarantees.
func (w *plainWriter) Flush(endOfInput bool) error {
	if w.c.cfg.guarantee == delivery.None && !endOfInput {
		return nil
	}
	ctx, cancel := context.WithTimeout(w.ctx, w.c.cfg.flushTimeout)
	defer cancel()
	if err := w.cl.Flush(ctx); err != nil {
		return w.failed(err)
	}
	if err := w.err.get(); err != nil {
		return w.failed(err)
	}
	return nil
}

func (w *plainWriter) PrepareCommit(event.CheckpointID) ([][]byte, error) { return nil, nil }
func (w *plainWriter) SnapshotState(event.CheckpointID) ([]byte, error)   { return nil, nil }

func (w *plainWriter) Close() error {
	w.cancel()
	w.cl.Close()
	return nil
}
