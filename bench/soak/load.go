package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math/rand"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shopspring/decimal"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirstream/weir/examples/billing/pipeline"
)

// copyRecord is one record of the copy job's input and output topics.
type copyRecord struct {
	ID      int64  `json:"id"`
	Payload string `json:"payload"`
}

// copyProducer writes the copy job's input in transactions of 1–20
// records, aborting abortRate of them, as transactions_test.py's input
// does with aborted transactions interleaved. The outcome of a
// transaction cut by a broker bounce is unknown here; the checker reads
// it from the log at the end.
type copyProducer struct {
	brokers, topic string
	every          time.Duration
	abortRate      float64
	rnd            *rand.Rand
	next           int64
	txns, aborts   atomic.Int64
	errs           atomic.Int64
}

func (p *copyProducer) run(ctx context.Context) {
	for ctx.Err() == nil {
		cl, err := kgo.NewClient(kgo.SeedBrokers(p.brokers), kgo.DefaultProduceTopic(p.topic),
			kgo.TransactionalID("soak-input"), kgo.TransactionTimeout(20*time.Second))
		if err != nil {
			p.errs.Add(1)
			sleepCtx(ctx, time.Second)
			continue
		}
		for ctx.Err() == nil {
			if err := p.txn(ctx, cl); err != nil {
				p.errs.Add(1)
				break // a new client fences and aborts whatever this one left open
			}
			sleepCtx(ctx, p.every)
		}
		cl.Close()
		sleepCtx(ctx, 500*time.Millisecond)
	}
	p.fence()
}

// fence ends whatever transaction a failed client left open (a new
// producer epoch aborts it), so that the input's LSO reaches its HWM.
func (p *copyProducer) fence() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(p.brokers))
	if err != nil {
		p.errs.Add(1)
		return
	}
	defer cl.Close()
	id := "soak-input"
	for ctx.Err() == nil {
		req := kmsg.NewPtrInitProducerIDRequest()
		req.TransactionalID = &id
		req.TransactionTimeoutMillis = 20000
		req.ProducerID, req.ProducerEpoch = -1, -1
		resp, err := req.RequestWith(ctx, cl)
		if err == nil {
			if err = kerr.ErrorForCode(resp.ErrorCode); err == nil {
				return
			}
		}
		sleepCtx(ctx, 200*time.Millisecond) // CONCURRENT_TRANSACTIONS while the abort completes
	}
	p.errs.Add(1)
}

func (p *copyProducer) txn(ctx context.Context, cl *kgo.Client) error {
	if err := cl.BeginTransaction(); err != nil {
		return err
	}
	n := 1 + p.rnd.Intn(20)
	recs := make([]*kgo.Record, n)
	for i := range recs {
		p.next++
		v, _ := json.Marshal(copyRecord{ID: p.next, Payload: fmt.Sprintf("payload-%d", p.next)})
		recs[i] = &kgo.Record{Value: v}
	}
	// Not ctx: a stop must not cut a transaction in half.
	tctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	produceErr := cl.ProduceSync(tctx, recs...).FirstErr()
	commit := kgo.TryCommit
	if produceErr != nil || p.rnd.Float64() < p.abortRate {
		commit = kgo.TryAbort
	}
	if err := cl.EndTransaction(tctx, commit); err != nil {
		return err
	}
	if produceErr != nil {
		return produceErr
	}
	p.txns.Add(1)
	if commit == kgo.TryAbort {
		p.aborts.Add(1)
	}
	return nil
}

// billProducer writes bills as the billing job's users do: an idempotent
// producer keyed by account, a fraction dupRate of bills sent a second
// time up to a few thousand bills later (a retrying client).
type billProducer struct {
	brokers, topic string
	perTick        int
	every          time.Duration
	dupRate        float64
	accounts       int
	rnd            *rand.Rand
	next           int
	recent         []pipeline.Bill
	sent, dups     atomic.Int64
	errs           atomic.Int64
}

func (p *billProducer) run(ctx context.Context) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(p.brokers), kgo.DefaultProduceTopic(p.topic),
		kgo.ProducerLinger(5*time.Millisecond))
	if err != nil {
		p.errs.Add(1)
		return
	}
	defer cl.Close()
	var wg sync.WaitGroup
	for ctx.Err() == nil {
		for i := 0; i < p.perTick; i++ {
			b := p.bill()
			v, _ := json.Marshal(b)
			wg.Add(1)
			// Not ctx: a record handed to the client is delivered (the
			// client retries through bounces) or counted as an error.
			cl.Produce(context.Background(), &kgo.Record{Key: []byte(b.AccountID), Value: v}, func(_ *kgo.Record, err error) {
				if err != nil {
					p.errs.Add(1)
				} else {
					p.sent.Add(1)
				}
				wg.Done()
			})
		}
		sleepCtx(ctx, p.every)
	}
	fctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_ = cl.Flush(fctx)
	wg.Wait()
}

func (p *billProducer) bill() pipeline.Bill {
	if len(p.recent) > 0 && p.rnd.Float64() < p.dupRate {
		p.dups.Add(1)
		return p.recent[p.rnd.Intn(len(p.recent))]
	}
	p.next++
	b := pipeline.Bill{
		BillID:    fmt.Sprintf("bill-%09d", p.next),
		AccountID: fmt.Sprintf("acc-%04d", p.rnd.Intn(p.accounts)),
		Amount:    decimal.New(p.rnd.Int63n(100_000)+1, -2),
		Currency:  "EUR",
		TS:        time.Now().UTC().Truncate(time.Millisecond),
	}
	if len(p.recent) < 5000 {
		p.recent = append(p.recent, b)
	} else {
		p.recent[p.rnd.Intn(len(p.recent))] = b
	}
	return b
}

func sleepCtx(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// outputTail follows the copy job's output under read_committed and
// counts the distinct ids it has seen: the soak's measure of progress.
type outputTail struct {
	distinct atomic.Int64
}

func (t *outputTail) run(ctx context.Context, brokers, topic string) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers), kgo.ConsumeTopics(topic),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		return err
	}
	defer cl.Close()
	seen := map[int64]bool{}
	for ctx.Err() == nil {
		fs := cl.PollFetches(ctx)
		fs.EachRecord(func(r *kgo.Record) {
			var c copyRecord
			if json.Unmarshal(r.Value, &c) == nil && !seen[c.ID] {
				seen[c.ID] = true
			}
		})
		t.distinct.Store(int64(len(seen)))
	}
	return nil
}

// billsCounted is SUM(bill_count) of account_totals, or -1 when the
// database does not answer.
func billsCounted(db *sql.DB) int64 {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	var n sql.NullInt64
	if err := db.QueryRowContext(ctx, "SELECT SUM(bill_count) FROM account_totals").Scan(&n); err != nil {
		return -1
	}
	return n.Int64
}
