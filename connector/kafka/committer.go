package kafka

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
)

// committer ends pre-committed transactions with raw EndTxn requests built
// from the committable alone, so it needs no producer state: the process
// that pre-committed and a new process restoring its checkpoint commit the
// same way. franz-go's transactional client cannot adopt a transaction it
// did not begin, hence the raw request.
type committer struct {
	c    *sinkCore
	sub  int
	pool *txnPool // nil when no writer of this subtask runs here
	cl   *kgo.Client
	log  *slog.Logger
}

func newCommitter(c *sinkCore, wctx operator.WriterContext) (*committer, error) {
	cm := &committer{c: c, sub: wctx.Subtask.Index, pool: c.lookupPool(wctx.Subtask.Index), log: c.cfg.loggerFor(wctx.Logger)}
	if err := cm.connect(); err != nil {
		return nil, err
	}
	return cm, nil
}

// connect (re)creates the client. On a cluster without KIP-890 part 2
// (transaction.version < 2) EndTxn is capped at v4, as franz-go's own
// producer does there, so the transaction ends under the protocol it began.
func (c *committer) connect() error {
	if c.cl != nil {
		c.cl.Close()
		c.cl = nil
	}
	cl, err := c.c.newClient(c.c.clientOpts())
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if tv2, err := supportsTV2(ctx, cl); err == nil && !tv2 {
		cl.Close()
		v := kversion.Stable()
		v.SetMaxKeyVersion(int16(kmsg.EndTxn), 4)
		if cl, err = c.c.newClient(append(c.c.clientOpts(), kgo.MaxVersions(v))); err != nil {
			return err
		}
	}
	c.cl = cl
	return nil
}

func supportsTV2(ctx context.Context, cl *kgo.Client) (bool, error) {
	vs, err := kadm.NewClient(cl).ApiVersions(ctx)
	if err != nil {
		return false, err
	}
	for _, v := range vs {
		if v.Err != nil || v.Raw() == nil {
			continue
		}
		for _, f := range v.Raw().FinalizedFeatures {
			if f.Name == "transaction.version" && f.MaxVersionLevel >= 2 {
				return true, nil
			}
		}
		return false, nil
	}
	return false, errors.New("no broker answered ApiVersions")
}

// Commit ends every transaction of checkpoint due with a commit.
func (c *committer) Commit(ctx context.Context, due event.CheckpointID, committables [][]byte) error {
	if c.pool != nil {
		c.pool.commitDue(due)
	}
	for _, b := range committables {
		cm, err := decodeCommittable(b)
		if err != nil {
			return fmt.Errorf("kafka sink subtask %d, checkpoint %d: %w", c.sub, due, err)
		}
		if err := c.c.maybeCrash("commit"); err != nil {
			return err
		}
		if err := c.commit(ctx, cm); err != nil {
			return err
		}
		if err := c.c.maybeCrash("after-commit"); err != nil {
			return err
		}
		c.c.metrics.TransactionsCommitted.Add(1)
		if c.pool != nil {
			c.pool.committed(cm.txnID)
		}
	}
	return nil
}

// commit sends EndTxn(commit) until the coordinator gives a definite
// answer: committed (also when it was already committed: a retried commit
// of a completed one succeeds), aborted (data loss), or the id has moved on
// past the epoch (outcome unknown: data loss, loudly).
func (c *committer) commit(ctx context.Context, cm committable) error {
	deadline := time.Now().Add(c.c.cfg.commitTimeout)
	for attempt := 0; ; attempt++ {
		err := c.endTxn(ctx, cm)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, kerr.InvalidTxnState):
			return c.dataLoss(ctx, cm, "the broker aborted the transaction (did it outlive transaction.timeout.ms?)", err)
		case errors.Is(err, kerr.ProducerFenced), errors.Is(err, kerr.InvalidProducerEpoch),
			errors.Is(err, kerr.InvalidProducerIDMapping), errors.Is(err, kerr.TransactionalIDNotFound):
			return c.dataLoss(ctx, cm, "the transactional id has moved past this transaction, so it was aborted or its outcome is lost "+
				"(another job using the same transactional id prefix? a restore from an older checkpoint?)", err)
		case !retriableTxnErr(err) || time.Now().After(deadline):
			return fmt.Errorf("kafka sink subtask %d: committing %s: %w", c.sub, cm, err)
		}
		if isTimeout(err) {
			if cerr := c.connect(); cerr != nil {
				return cerr
			}
		}
		if !sleepCtx(ctx, backoff(attempt)) {
			return ctx.Err()
		}
	}
}

func (c *committer) endTxn(ctx context.Context, cm committable) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req := kmsg.NewPtrEndTxnRequest()
	req.TransactionalID = cm.txnID
	req.ProducerID = cm.producerID
	req.ProducerEpoch = cm.epoch
	req.Commit = true
	resp, err := req.RequestWith(ctx, c.cl)
	if err != nil {
		return err
	}
	return kerr.ErrorForCode(resp.ErrorCode)
}

// dataLoss reports a committable that can never be committed.
func (c *committer) dataLoss(ctx context.Context, cm committable, why string, cause error) error {
	c.c.metrics.DataLoss.Add(1)
	state := c.describe(ctx, cm.txnID)
	c.log.Error("kafka sink: DATA LOSS: a pre-committed transaction cannot be committed", "subtask", c.sub,
		"transaction", cm.txnID, "producer_id", cm.producerID, "epoch", cm.epoch, "checkpoint", cm.checkpoint,
		"reason", why, "broker_error", cause, "now", state)
	return fmt.Errorf("kafka sink subtask %d: committing %s: %w: %s; broker said %v; the id is now %s",
		c.sub, cm, operator.ErrDataLoss, why, cause, state)
}

// describe tells what the coordinator knows of id now, for the report.
func (c *committer) describe(ctx context.Context, id string) string {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	ds, err := kadm.NewClient(c.cl).DescribeTransactions(ctx, id)
	if err != nil {
		return "unknown (" + err.Error() + ")"
	}
	d, ok := ds[id]
	if !ok || d.Err != nil {
		return fmt.Sprintf("unknown (%v)", d.Err)
	}
	return fmt.Sprintf("in state %s with producer id %d, epoch %d", d.State, d.ProducerID, d.ProducerEpoch)
}

// Close closes the client.
func (c *committer) Close() error {
	if c.cl != nil {
		c.cl.Close()
	}
	return nil
}
