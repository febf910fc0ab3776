package kafka

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
)

// txnWriter is the exactly-once writer of one subtask: one transaction per
// checkpoint, each on a transactional id taken from the subtask's pool and
// a producer client of its own. The client is closed at the barrier once
// the transaction is flushed: the transaction stays open on the broker until
// the committer ends it, and every transaction starts on a fresh client,
// whose InitProducerId bumps the id's epoch (so a committable's epoch names
// exactly one transaction) and aborts whatever the id still had open.
type txnWriter struct {
	c    *sinkCore
	sub  int
	par  int
	adm  *kgo.Client // raw requests: fencing, listing, configs
	pool *txnPool
	cur  *openTxn
	ctx  context.Context
	stop context.CancelFunc
	err  asyncErr
	log  *slog.Logger
	ret  *retentionGuard
	m    *operator.Metrics // nil outside a job
}

// openTxn is the transaction taking records since the last barrier. Its
// broker-side transaction starts with the first record.
type openTxn struct {
	id      string
	cl      *kgo.Client
	records int
	topic   string // of the last record: where the committed-checkpoint marker goes
}

func newTxnWriter(c *sinkCore, wctx operator.WriterContext) (_ *txnWriter, err error) {
	adm, err := c.newClient(c.clientOpts())
	if err != nil {
		return nil, err
	}
	w := &txnWriter{c: c, sub: wctx.Subtask.Index, par: max(1, wctx.Parallelism), adm: adm, log: c.cfg.loggerFor(wctx.Logger), m: wctx.Metrics,
		pool: newTxnPool(c.cfg.prefix, wctx.Subtask.Index, c.cfg.poolSize, wctx.RestoredCheckpoint)}
	w.ctx, w.stop = context.WithCancel(context.Background())
	w.ret = newRetentionGuard(c, adm)
	defer func() {
		if err != nil {
			w.stop()
			adm.Close()
		}
	}()
	if err := w.start(wctx); err != nil {
		return nil, err
	}
	c.registerPool(w.sub, w.pool)
	return w, nil
}

// start checks the timeout, protects the restored committables' ids and
// aborts every other lingering transaction of this subtask's ids.
func (w *txnWriter) start(wctx operator.WriterContext) error {
	ctx, cancel := context.WithTimeout(w.ctx, 2*time.Minute)
	defer cancel()
	cfg := w.c.cfg
	if cfg.interval <= 0 {
		cfg.interval = wctx.CheckpointInterval // the job's, unless kafka.CheckpointInterval says otherwise
	}
	if err := checkTransactionTimeout(ctx, kadm.NewClient(w.adm), &cfg, w.log); err != nil {
		return err
	}
	for _, st := range wctx.WriterState {
		ids, err := decodeWriterState(st)
		if err != nil {
			return fmt.Errorf("kafka sink: restoring subtask %d: %w", w.sub, err)
		}
		for _, id := range ids {
			w.pool.protect(id, wctx.RestoredCheckpoint)
		}
	}
	n, err := abortLingering(ctx, w.adm, w.c.cfg.prefix, w.sub, w.par, w.pool.protected, w.c.cfg.txnTimeout)
	if n > 0 {
		w.c.metrics.LingeringAborted.Add(int64(n))
		w.log.Info("kafka sink: aborted lingering transactions", "subtask", w.sub, "count", n)
	}
	if err != nil {
		return err
	}
	return w.checkNotAhead(ctx, wctx)
}

func (w *txnWriter) Write(r event.Record) error {
	if err := w.errIfFailed(); err != nil {
		return err
	}
	rec, err := w.c.prepare(r)
	if rec == nil || err != nil {
		return err
	}
	w.ret.stamp(w.ctx, rec, time.Now())
	if w.cur == nil {
		if err := w.begin(); err != nil {
			return err
		}
	}
	w.cur.records++
	countBytesOut(w.m, rec)
	w.cur.topic = rec.Topic
	w.cur.cl.Produce(w.ctx, rec, func(r *kgo.Record, err error) {
		if err != nil {
			w.err.set(produceError(r, err))
		}
	})
	return nil
}

// begin opens a transaction on a free id with a fresh client.
func (w *txnWriter) begin() error {
	id, err := w.pool.acquire()
	if err != nil {
		return fmt.Errorf("kafka sink subtask %d: %w", w.sub, err)
	}
	cl, err := kgo.NewClient(w.c.producerOpts(kgo.TransactionalID(id), kgo.TransactionTimeout(w.c.cfg.txnTimeout))...)
	if err != nil {
		return fmt.Errorf("kafka sink: %w", err)
	}
	if err := cl.BeginTransaction(); err != nil {
		cl.Close()
		return fmt.Errorf("kafka sink: beginning a transaction on %s: %w", id, err)
	}
	w.err.reset()
	w.cur = &openTxn{id: id, cl: cl}
	return nil
}

// fail closes the open transaction's client: after an error (a timeout
// above all) its state is unknown, so the next transaction gets a fresh
// one, and the records of this one are replayed after the job restores.
func (w *txnWriter) fail(err error) error {
	id := ""
	if w.cur != nil {
		id = w.cur.id
		if w.cur.cl != nil {
			w.cur.cl.Close()
			w.cur.cl = nil
		}
	}
	return fmt.Errorf("kafka sink (exactly-once, subtask %d, transaction %s): %w", w.sub, id, err)
}

// Flush waits for the open transaction's records to be acknowledged.
func (w *txnWriter) Flush(bool) error {
	if w.cur == nil || w.cur.records == 0 || w.cur.cl == nil {
		return w.errIfFailed()
	}
	ctx, cancel := context.WithTimeout(w.ctx, w.c.cfg.flushTimeout)
	defer cancel()
	if err := w.cur.cl.Flush(ctx); err != nil {
		return w.fail(err)
	}
	return w.errIfFailed()
}

func (w *txnWriter) errIfFailed() error {
	if w.cur != nil && w.cur.cl == nil {
		return fmt.Errorf("kafka sink (exactly-once, subtask %d): transaction %s failed earlier; the job must restore", w.sub, w.cur.id)
	}
	if err := w.err.get(); err != nil {
		return w.fail(err)
	}
	return nil
}

// PrepareCommit flushes the open transaction and returns its committable;
// an empty transaction is no transaction: nothing to commit, and its id
// stays open for the next checkpoint's records.
func (w *txnWriter) PrepareCommit(id event.CheckpointID) ([][]byte, error) {
	w.pool.barrier(id)
	if w.cur == nil || w.cur.records == 0 {
		return nil, w.errIfFailed()
	}
	if err := w.Flush(false); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(w.ctx, w.c.cfg.flushTimeout)
	defer cancel()
	pid, epoch, err := w.cur.cl.ProducerID(ctx)
	if err != nil {
		return nil, w.fail(err)
	}
	if err := w.c.maybeCrash("prepare"); err != nil {
		return nil, err
	}
	c := committable{txnID: w.cur.id, producerID: pid, epoch: epoch, checkpoint: id}
	if err := markCommitted(ctx, w.adm, c, markerGroup(w.c.cfg.prefix, w.sub), w.cur.topic); err != nil {
		return nil, w.fail(err)
	}
	w.pool.precommit(c.txnID, id)
	w.cur.cl.Close()
	w.cur = nil
	return [][]byte{c.encode()}, nil
}

// SnapshotState returns the pre-committed, uncommitted ids: a restore must
// not abort them before the committer commits them.
func (w *txnWriter) SnapshotState(event.CheckpointID) ([]byte, error) {
	return encodeWriterState(w.pool.pendingIDs()), nil
}

// Close closes the open transaction's client and aborts the transaction if
// it had records: no checkpoint holds it, and left open it would hold back
// read_committed consumers until the transaction timeout.
func (w *txnWriter) Close() error {
	w.stop()
	if w.cur != nil {
		if w.cur.cl != nil {
			w.cur.cl.Close()
		}
		if w.cur.records > 0 {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			if err := fence(ctx, w.adm, w.cur.id, w.c.cfg.txnTimeout); err != nil {
				w.log.Warn("kafka sink: could not abort the open transaction on close; the next start or the transaction timeout will",
					"transaction", w.cur.id, "err", err)
			}
			cancel()
		}
		w.cur = nil
	}
	w.adm.Close()
	w.c.unregisterPool(w.sub, w.pool)
	return nil
}

func (c *sinkCore) registerPool(sub int, p *txnPool) {
	c.pools.Lock()
	defer c.pools.Unlock()
	c.pools.bySubtask[sub] = p
}

func (c *sinkCore) lookupPool(sub int) *txnPool {
	c.pools.Lock()
	defer c.pools.Unlock()
	return c.pools.bySubtask[sub]
}

func (c *sinkCore) unregisterPool(sub int, p *txnPool) {
	c.pools.Lock()
	defer c.pools.Unlock()
	if c.pools.bySubtask[sub] == p {
		delete(c.pools.bySubtask, sub)
	}
}
