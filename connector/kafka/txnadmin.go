package kafka

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// checkTransactionTimeout refuses a transaction timeout the broker would
// reject (above transaction.max.timeout.ms) or that cannot outlive a
// checkpoint interval.
func checkTransactionTimeout(ctx context.Context, adm *kadm.Client, cfg *sinkConfig, log *slog.Logger) error {
	limit, broker, err := brokerMaxTimeout(ctx, adm)
	if err != nil {
		return fmt.Errorf("kafka sink: reading the brokers' transaction.max.timeout.ms: %w", err)
	}
	if ms(cfg.txnTimeout) > limit {
		return unsafeTimeout("transaction.timeout.ms %d (kafka.TransactionTimeout %s) exceeds transaction.max.timeout.ms %d of broker %d: "+
			"the broker would refuse every transaction; lower kafka.TransactionTimeout or raise transaction.max.timeout.ms",
			ms(cfg.txnTimeout), cfg.txnTimeout, limit, broker)
	}
	switch {
	case cfg.interval <= 0:
		log.Warn("kafka sink: checkpoint interval unknown, cannot check transaction.timeout.ms against it; pass kafka.CheckpointInterval",
			"transaction.timeout.ms", ms(cfg.txnTimeout))
	case cfg.txnTimeout <= cfg.interval:
		return unsafeTimeout("transaction.timeout.ms %d (kafka.TransactionTimeout %s) is not larger than the checkpoint interval %s: "+
			"the broker would abort transactions before their checkpoint completes (data loss); "+
			"set kafka.TransactionTimeout well above the interval plus the longest downtime to survive",
			ms(cfg.txnTimeout), cfg.txnTimeout, cfg.interval)
	case cfg.txnTimeout < 2*cfg.interval:
		log.Warn("kafka sink: transaction.timeout.ms is less than twice the checkpoint interval; a slow checkpoint or a short outage will lose data",
			"transaction.timeout.ms", ms(cfg.txnTimeout), "checkpoint_interval", cfg.interval)
	}
	return nil
}

// brokerMaxTimeout returns the smallest transaction.max.timeout.ms over the
// brokers, and that broker's id.
func brokerMaxTimeout(ctx context.Context, adm *kadm.Client) (int64, int32, error) {
	brokers, err := adm.ListBrokers(ctx)
	if err != nil {
		return 0, 0, err
	}
	rcs, err := adm.DescribeBrokerConfigs(ctx, brokers.NodeIDs()...)
	if err != nil {
		return 0, 0, err
	}
	limit, broker := int64(-1), int32(-1)
	for _, rc := range rcs {
		if rc.Err != nil {
			return 0, 0, rc.Err
		}
		for _, c := range rc.Configs {
			if c.Key != "transaction.max.timeout.ms" || c.Value == nil {
				continue
			}
			v, err := strconv.ParseInt(*c.Value, 10, 64)
			if err != nil {
				return 0, 0, fmt.Errorf("broker %s: transaction.max.timeout.ms %q: %w", rc.Name, *c.Value, err)
			}
			if limit < 0 || v < limit {
				id, _ := strconv.Atoi(rc.Name)
				limit, broker = v, int32(id)
			}
		}
	}
	if limit < 0 {
		return 0, 0, errors.New("no broker reported transaction.max.timeout.ms")
	}
	return limit, broker, nil
}

// ownsTxnID reports whether subtask of parallelism must clean up id: its
// own ids, and those of old subtasks j ≥ parallelism with j mod
// parallelism = subtask, whose state the runtime hands to this subtask
// after a rescale down.
func ownsTxnID(prefix, id string, subtask, parallelism int) bool {
	rest, ok := strings.CutPrefix(id, prefix+"-")
	if !ok {
		return false
	}
	sub, slot, ok := strings.Cut(rest, "-")
	if !ok {
		return false
	}
	j, err1 := strconv.Atoi(sub)
	_, err2 := strconv.Atoi(slot)
	if err1 != nil || err2 != nil || j < 0 {
		return false
	}
	return j == subtask || (j >= parallelism && j%parallelism == subtask)
}

// abortLingering aborts every ongoing transaction of an id this subtask
// owns that is not protected (a restored committable the committer is about
// to commit): a crashed writer's open transaction, or a pre-committed one
// whose checkpoint never completed. ListTransactions finds them all, also
// of slots beyond today's pool size and of subtasks removed by a smaller
// parallelism. It returns how many it aborted.
func abortLingering(ctx context.Context, cl *kgo.Client, prefix string, subtask, parallelism int,
	protected func(string) bool, timeout time.Duration) (int, error) {
	listed, err := kadm.NewClient(cl).ListTransactions(ctx, nil, []string{"Ongoing"})
	if err != nil {
		return 0, fmt.Errorf("kafka sink: listing ongoing transactions: %w", err)
	}
	var ids []string
	for id, t := range listed {
		if t.State == "Ongoing" && ownsTxnID(prefix, id, subtask, max(1, parallelism)) && !protected(id) {
			ids = append(ids, id)
		}
	}
	errs := make([]error, len(ids))
	var wg sync.WaitGroup
	for i, id := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = fence(ctx, cl, id, timeout)
		}()
	}
	wg.Wait()
	return len(ids), errors.Join(errs...)
}

// fence bumps the epoch of transactional id with InitProducerId, which makes
// the coordinator abort its ongoing transaction and fence its producer.
func fence(ctx context.Context, cl *kgo.Client, id string, timeout time.Duration) error {
	for attempt := 0; ; attempt++ {
		req := kmsg.NewPtrInitProducerIDRequest()
		req.TransactionalID = &id
		req.TransactionTimeoutMillis = int32(ms(timeout))
		req.ProducerID, req.ProducerEpoch = -1, -1
		resp, err := req.RequestWith(ctx, cl)
		if err == nil {
			if err = kerr.ErrorForCode(resp.ErrorCode); err == nil {
				return nil
			}
		}
		if !retriableTxnErr(err) || !sleepCtx(ctx, backoff(attempt)) {
			return fmt.Errorf("kafka sink: aborting lingering transaction %s: %w", id, err)
		}
	}
}

// retriableTxnErr: the coordinator is busy, moving or unreachable; the same
// request may succeed later.
func retriableTxnErr(err error) bool {
	if errors.Is(err, context.Canceled) {
		return false
	}
	return errors.Is(err, kerr.ConcurrentTransactions) || kerr.IsRetriable(err) || isTransportErr(err)
}

// isTimeout: the request's outcome is unknown and the connection may be
// wedged, so the client is re-created before the next attempt.
func isTimeout(err error) bool {
	var ne interface{ Timeout() bool }
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, kerr.RequestTimedOut) ||
		(errors.As(err, &ne) && ne.Timeout())
}

func backoff(attempt int) time.Duration {
	d := 20 * time.Millisecond << min(attempt, 6)
	return min(d, time.Second)
}
