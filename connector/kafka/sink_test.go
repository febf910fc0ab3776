package kafka

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/delivery"
	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/internal/sim"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/runtime"
)

// copyJob is a Kafka→Kafka job: source (parallelism 2) → map that may crash
// → rebalance → sink (parallelism 3).
type copyJob struct {
	c        *cluster
	in, out  string
	prefix   string
	dir      string // checkpoint directory, shared by runs ("new processes")
	interval time.Duration
	crash    func(point string) error // at "process" in the map; nil: never
	mapFn    func(string) string
	sinkOpts []SinkOption
	// throttle, when > 0, makes the map sleep 1 ms every throttle records,
	// so checkpoints complete between injected failures.
	throttle int
	sinkPar  int // default 3
}

// crashPlan fails chosen calls: the n-th call of a point (1-based, counted
// over the whole run, replays included) fails when n is in the plan. Unlike
// random faults it gives every run the same failures, each far enough from
// the others to cost a restart of its own.
type crashPlan struct {
	mu    sync.Mutex
	calls map[string]int
	at    map[string]map[int]bool
	fired []string
}

func newCrashPlan(at map[string][]int) *crashPlan {
	p := &crashPlan{calls: map[string]int{}, at: map[string]map[int]bool{}}
	for point, ns := range at {
		p.at[point] = map[int]bool{}
		for _, n := range ns {
			p.at[point][n] = true
		}
	}
	return p
}

func (p *crashPlan) maybe(point string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls[point]++
	if !p.at[point][p.calls[point]] {
		return nil
	}
	p.fired = append(p.fired, point)
	return fmt.Errorf("%w at %s (call %d)", sim.ErrInjected, point, p.calls[point])
}

func (p *crashPlan) count(point string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, f := range p.fired {
		if f == point {
			n++
		}
	}
	return n
}

func span(from, to int) []int {
	var out []int
	for n := from; n <= to; n++ {
		out = append(out, n)
	}
	return out
}

func newCopyJob(t *testing.T, c *cluster, n int) (*copyJob, []string) {
	in, out := c.topic("in", 3), c.topic("out", 4)
	want := seqValues("v", n)
	c.produce(in, 3, want)
	return &copyJob{c: c, in: in, out: out, prefix: out, dir: t.TempDir(), interval: 50 * time.Millisecond}, want
}

// run runs the job once in a fresh runtime, as a new process would.
func (j *copyJob) run(t *testing.T, g delivery.Guarantee, restart runtime.RestartStrategy, restore string,
	crash func(string) error) (*Sink[string], *runtime.Result, error) {
	t.Helper()
	src, err := NewSource[string](Brokers(j.c.brokers), Topics(j.in), Bounded(), Deserializer(rawString))
	if err != nil {
		t.Fatal(err)
	}
	opts := append([]SinkOption{Brokers(j.c.brokers), Topic(j.out), Guarantee(g),
		TransactionalIDPrefix(j.prefix), TransactionTimeout(time.Minute), CheckpointInterval(j.interval)}, j.sinkOpts...)
	sink, err := NewSink[string](opts...)
	if err != nil {
		t.Fatal(err)
	}
	sink.core.crash = crash
	env := weir.NewEnvironment().SetParallelism(2).EnableCheckpointing(j.interval, weir.ExactlyOnce, j.dir)
	env.RuntimeOptions().Restart = restart
	env.RuntimeOptions().Restore = restore
	env.CheckpointOptions().TolerableFailures = -1
	s := weir.FromSource[string](env, src, "in", weir.WithUID("kafka-in"))
	var n atomic.Int64
	m := weir.MapErr(s, func(v string) (string, error) {
		if j.crash != nil {
			if err := j.crash("process"); err != nil {
				return "", err
			}
		}
		if j.throttle > 0 && n.Add(1)%int64(j.throttle) == 0 {
			time.Sleep(time.Millisecond)
		}
		if j.mapFn != nil {
			return j.mapFn(v), nil
		}
		return v, nil
	}).UID("map")
	par := j.sinkPar
	if par == 0 {
		par = 3
	}
	weir.SinkTo(m.Rebalance().Parallelism(par), sink, "out").UID("kafka-out").Parallelism(par)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	res, err := env.Execute(ctx, "copy")
	return sink, res, err
}

// output reads what the job committed. EndTxn returns once the coordinator
// has decided the commit; the commit markers follow within moments, so it
// first waits for every output partition's last stable offset to reach
// its high watermark. A transaction still open after 15 s is an error.
func (j *copyJob) output(t *testing.T) []string {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		open := j.c.openTransactions(j.out)
		if len(open) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("transactions left open (partition: [last stable offset, high watermark]): %v", open)
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	return values(j.c.readCommitted(j.out))
}

// TestExactlyOnceWithFailures copies a topic through crashes at every step
// of the two-phase commit; a read_committed reader sees the input exactly.
func TestExactlyOnceWithFailures(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	j, want := newCopyJob(t, c, 100000)
	j.throttle = 100
	plan := newCrashPlan(map[string][]int{
		// The first before any checkpoint completed, then one every few
		// checkpoints.
		"process": {300, 16000, 32000, 48000, 64000},
		// At the barrier, after the flush, before the committable exists.
		"prepare": {10},
		// Right after EndTxn: the sink operator retries in place, which
		// re-commits a committed transaction.
		"after-commit": {15, 70},
		// Before EndTxn, long enough to exhaust the in-place retries of
		// every subtask: the job restores and commits at open.
		"commit": span(40, 51),
	})
	j.crash = plan.maybe
	sink, res, err := j.run(t, delivery.ExactlyOnce, runtime.FixedDelay{Attempts: 30}, "", plan.maybe)
	if err != nil {
		for i, f := range res.Failures {
			t.Logf("failure %d: %v", i, f)
		}
		t.Fatalf("job failed: %v (faults %v)", err, plan.fired)
	}
	t.Logf("faults %v, restarts %d, commits %d", plan.fired, res.Restarts, sink.Metrics().TransactionsCommitted.Load())
	if plan.count("process") != 5 || plan.count("prepare") != 1 || plan.count("commit") < 4 || res.Restarts < 5 {
		t.Fatalf("faults %v and %d restarts; the test needs all planned faults and at least 5 restarts", plan.fired, res.Restarts)
	}
	compare(t, want, j.output(t), true)
	if n := sink.Metrics().DataLoss.Load(); n != 0 {
		t.Errorf("data loss reported %d times", n)
	}
}

// TestAtLeastOnceWithFailures: no record is lost.
func TestAtLeastOnceWithFailures(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	j, want := newCopyJob(t, c, 20000)
	plan := newCrashPlan(map[string][]int{"process": {300, 4000, 8000, 12000, 16000}})
	j.crash, j.throttle = plan.maybe, 20
	_, res, err := j.run(t, delivery.AtLeastOnce, runtime.FixedDelay{Attempts: 20}, "", nil)
	if err != nil {
		t.Fatalf("job failed: %v", err)
	}
	dups := compare(t, want, j.output(t), false)
	t.Logf("faults %v, restarts %d, duplicates %d", plan.fired, res.Restarts, dups)
	if res.Restarts < 5 {
		t.Fatalf("only %d restarts (faults %v)", res.Restarts, plan.fired)
	}
	if dups == 0 {
		t.Error("no duplicates after restarts: the replay path was not exercised")
	}
}

// crashAt fails every call at point: every sink subtask of the process
// dies there.
func crashAt(point string) func(string) error {
	return func(p string) error {
		if p == point {
			return sim.ErrInjected
		}
		return nil
	}
}

// TestCommitInNewProcess: a process pre-commits, its checkpoint completes,
// and it dies before committing. A new process restoring the checkpoint
// commits the transaction with EndTxn from the committable alone.
func TestCommitInNewProcess(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	j, want := newCopyJob(t, c, 3000)
	_, res, err := j.run(t, delivery.ExactlyOnce, runtime.NoRestart{}, "", crashAt("commit"))
	if !errors.Is(err, sim.ErrInjected) {
		t.Fatalf("first process: got %v, want the injected crash at commit", err)
	}
	if got := c.readCommitted(j.out); len(got) != 0 {
		t.Fatalf("%d records visible before any commit", len(got))
	}
	if len(c.openTransactions(j.out)) == 0 {
		t.Fatal("no open transaction after the crash; the test does not test anything")
	}
	t.Logf("first process: %d checkpoints", len(res.Checkpoints))
	sink, res, err := j.run(t, delivery.ExactlyOnce, runtime.NoRestart{}, "latest", nil)
	if err != nil {
		t.Fatalf("second process: %v", err)
	}
	if res.RestoredFrom == 0 {
		t.Fatal("second process did not restore")
	}
	compare(t, want, j.output(t), true)
	if sink.Metrics().TransactionsCommitted.Load() == 0 || sink.Metrics().DataLoss.Load() != 0 {
		t.Errorf("commits %d, data loss %d", sink.Metrics().TransactionsCommitted.Load(), sink.Metrics().DataLoss.Load())
	}
}

// TestRescaleDownRestore: three sink subtasks pre-commit and die; the job
// comes back with two. Subtask 0 inherits old subtask 2's committables
// (and its transactional ids to clean up) and commits them.
func TestRescaleDownRestore(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	j, want := newCopyJob(t, c, 3000)
	if _, _, err := j.run(t, delivery.ExactlyOnce, runtime.NoRestart{}, "", crashAt("commit")); !errors.Is(err, sim.ErrInjected) {
		t.Fatalf("first process: got %v, want the injected crash at commit", err)
	}
	j.sinkPar = 2
	sink, _, err := j.run(t, delivery.ExactlyOnce, runtime.NoRestart{}, "latest", nil)
	if err != nil {
		t.Fatalf("second process: %v", err)
	}
	compare(t, want, j.output(t), true)
	if sink.Metrics().DataLoss.Load() != 0 {
		t.Error("data loss reported")
	}
}

// TestBrokerAbortedTransactionIsDataLoss: the process dies before
// committing and stays down longer than the transaction timeout; the broker
// aborts the transaction, and the restore reports data loss.
func TestBrokerAbortedTransactionIsDataLoss(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	j, _ := newCopyJob(t, c, 500)
	j.sinkOpts = []SinkOption{TransactionTimeout(2 * time.Second)}
	if _, _, err := j.run(t, delivery.ExactlyOnce, runtime.NoRestart{}, "", crashAt("commit")); !errors.Is(err, sim.ErrInjected) {
		t.Fatalf("first process: got %v, want the injected crash at commit", err)
	}
	// The broker checks for expired transactions every 10 s by default.
	deadline := time.Now().Add(45 * time.Second)
	for len(c.openTransactions(j.out)) > 0 {
		if time.Now().After(deadline) {
			t.Fatal("the broker did not abort the transaction")
		}
		time.Sleep(500 * time.Millisecond)
	}
	// Data loss is not restartable: a restart would commit the same lost
	// transaction again. The job fails once however many restarts it has.
	sink, res, err := j.run(t, delivery.ExactlyOnce, runtime.FixedDelay{Attempts: 5}, "latest", nil)
	if !errors.Is(err, operator.ErrDataLoss) || res.Restarts != 0 {
		t.Fatalf("restore after the broker aborted: got %v after %d restarts, want data loss and no restart", err, res.Restarts)
	}
	if !strings.Contains(err.Error(), "aborted") {
		t.Errorf("message %q does not say the transaction was aborted", err)
	}
	if sink.Metrics().DataLoss.Load() == 0 {
		t.Error("the data-loss metric was not counted")
	}
	if got := c.readCommitted(j.out); len(got) != 0 {
		t.Errorf("%d records visible; nothing was ever committed", len(got))
	}
}

// TestLingeringTransactionsAborted: a writer that crashed before its first
// checkpoint left open transactions (on its own id and on an id of a
// subtask a smaller parallelism removed); they hold back read_committed
// readers until the job starts again and aborts them.
func TestLingeringTransactionsAborted(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	j, want := newCopyJob(t, c, 1000)
	for _, id := range []string{transactionalID(j.prefix, 0, 5), transactionalID(j.prefix, 4, 1)} {
		cl, err := kgo.NewClient(kgo.SeedBrokers(c.brokers), kgo.TransactionalID(id), kgo.DefaultProduceTopic(j.out))
		if err != nil {
			t.Fatal(err)
		}
		if err := cl.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		if err := cl.ProduceSync(context.Background(), &kgo.Record{Value: []byte("ghost of " + id)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
		cl.Close() // crash: the transaction stays open
	}
	if len(c.openTransactions(j.out)) == 0 {
		t.Fatal("the crashed writer left no open transaction")
	}
	sink, _, err := j.run(t, delivery.ExactlyOnce, runtime.NoRestart{}, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if n := sink.Metrics().LingeringAborted.Load(); n != 2 {
		t.Errorf("aborted %d lingering transactions, want 2", n)
	}
	compare(t, want, j.output(t), true)
}

func TestTransactionTimeoutChecked(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	cases := []struct {
		name string
		opts []SinkOption
		want string
	}{
		{"above broker max", []SinkOption{TransactionTimeout(time.Hour)}, "exceeds transaction.max.timeout.ms 900000"},
		{"below interval", []SinkOption{TransactionTimeout(time.Second), CheckpointInterval(5 * time.Second)},
			"not larger than the checkpoint interval"},
	}
	for _, tc := range cases {
		sink, err := NewSink[string](append([]SinkOption{Brokers(c.brokers), Topic("unused"),
			Guarantee(delivery.ExactlyOnce), TransactionalIDPrefix("timeout-check")}, tc.opts...)...)
		if err != nil {
			t.Fatal(err)
		}
		_, err = sink.CreateWriter(operator.WriterContext{Subtask: event.SubtaskID{Vertex: "sink"}, Parallelism: 1,
			Context: context.Background()})
		if !errors.Is(err, ErrUnsafeTransactionTimeout) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want ErrUnsafeTransactionTimeout saying %q", tc.name, err, tc.want)
		}
	}
}

// TestTooLargeRecord: a record above max.request.size is a bad record,
// checked before it is produced, so the transaction stays healthy.
func TestTooLargeRecord(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	j, want := newCopyJob(t, c, 300)
	big := want[150]
	j.mapFn = func(v string) string {
		if v == big {
			return strings.Repeat("x", 20000)
		}
		return v
	}
	j.sinkOpts = []SinkOption{MaxRequestSize(10000), BadRecords(SkipBadRecords())}
	sink, _, err := j.run(t, delivery.ExactlyOnce, runtime.NoRestart{}, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if n := sink.Metrics().RecordsSkipped.Load(); n != 1 {
		t.Errorf("skipped %d records, want 1", n)
	}
	compare(t, append(append([]string{}, want[:150]...), want[151:]...), j.output(t), true)

	j2, _ := newCopyJob(t, c, 300)
	j2.mapFn, j2.sinkOpts = j.mapFn, []SinkOption{MaxRequestSize(10000)}
	j2.in = j.in
	if _, _, err := j2.run(t, delivery.ExactlyOnce, runtime.NoRestart{}, "", nil); !errors.Is(err, ErrBadRecord) ||
		!strings.Contains(err.Error(), "max.request.size 10000") {
		t.Errorf("fail policy: got %v, want ErrBadRecord naming max.request.size", err)
	}
}

func TestUpsertSink(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	out := c.topic("out", 1)
	key := func(r event.Row) ([]byte, error) { return []byte(r.Fields[0].(string)), nil }
	val := func(r event.Row) ([]byte, error) { return []byte(r.String()), nil }
	sink, err := NewUpsertSink(key, val, Brokers(c.brokers), Topic(out))
	if err != nil {
		t.Fatal(err)
	}
	w, err := sink.CreateWriter(operator.WriterContext{Subtask: event.SubtaskID{Vertex: "sink"}, Parallelism: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	rows := []event.Row{
		{Kind: event.Insert, Fields: []any{"a", 1}},
		{Kind: event.UpdateBefore, Fields: []any{"a", 1}},
		{Kind: event.UpdateAfter, Fields: []any{"a", 2}},
		{Kind: event.Delete, Fields: []any{"a", 2}},
	}
	for _, r := range rows {
		if err := w.Write(event.Record{Value: r, Timestamp: event.NoTimestamp}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(true); err != nil {
		t.Fatal(err)
	}
	recs := c.readCommitted(out)
	var got []string
	for _, r := range recs {
		v := "<tombstone>"
		if r.Value != nil {
			v = string(r.Value)
		}
		got = append(got, string(r.Key)+"="+v)
	}
	if want := "a=+I[a, 1] a=+U[a, 2] a=<tombstone>"; strings.Join(got, " ") != want {
		t.Errorf("got %q, want %q", strings.Join(got, " "), want)
	}
}

// TestSinkOldEventTimes: records whose event time is long past (a
// backfill) are written with that time as their Kafka timestamp, and are
// not failed as timed out (franz-go measures its delivery timeout from the
// record timestamp). The topic keeps records forever: with time retention
// they would be restamped (TestSinkRestampsRecordsPastRetention).
func TestSinkOldEventTimes(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	forever := "-1"
	out := c.topicWith("out", 1, map[string]*string{"retention.ms": &forever})
	sink, err := NewSink[string](Brokers(c.brokers), Topic(out), FlushTimeout(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	w, err := sink.CreateWriter(operator.WriterContext{Subtask: event.SubtaskID{Vertex: "sink"}, Parallelism: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	old := time.Now().Add(-400 * 24 * time.Hour).UnixMilli()
	for i := range 100 {
		if err := w.Write(event.Record{Value: fmt.Sprint(i), Timestamp: old + int64(i)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(true); err != nil {
		t.Fatalf("flushing records with old event times: %v", err)
	}
	recs := c.readCommitted(out)
	if len(recs) != 100 || recs[0].Timestamp.UnixMilli() != old {
		t.Fatalf("read %d records, first timestamp %v; want 100 records from %v", len(recs), recs[0].Timestamp, time.UnixMilli(old))
	}
}

// TestMissingSinkTopic: producing into a topic that does not exist fails
// with an error naming the topic, under each guarantee.
func TestMissingSinkTopic(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	for _, g := range []delivery.Guarantee{delivery.AtLeastOnce, delivery.ExactlyOnce} {
		j, _ := newCopyJob(t, c, 20)
		j.out = fmt.Sprintf("weir-no-such-topic-%d", time.Now().UnixNano())
		_, _, err := j.run(t, g, runtime.NoRestart{}, "", nil)
		want := fmt.Sprintf("topic %q does not exist", j.out)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want an error saying %s", g, err, want)
		}
	}
}

// TestSinkCompression: the sink's record batches are uncompressed unless
// 'properties.compression.type' says otherwise, as Flink's (the Kafka
// producer's default); franz-go's default would be snappy.
func TestSinkCompression(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	for _, tc := range []struct {
		codec string // "": not set
		want  uint8  // the batch attributes' compression type
	}{{"", 0}, {"none", 0}, {"gzip", 1}, {"snappy", 2}, {"lz4", 3}, {"zstd", 4}} {
		out := c.topic("compression", 1)
		m := map[string]string{"topic": out, "properties.bootstrap.servers": c.brokers}
		if tc.codec != "" {
			m["properties.compression.type"] = tc.codec
		}
		opts, err := SinkOptionsFromMap(m)
		if err != nil {
			t.Fatal(err)
		}
		sink, err := NewSink[string](opts...)
		if err != nil {
			t.Fatal(err)
		}
		w, err := sink.CreateWriter(operator.WriterContext{Subtask: event.SubtaskID{Vertex: "sink"}, Parallelism: 1})
		if err != nil {
			t.Fatal(err)
		}
		for range 50 {
			if err := w.Write(event.Record{Value: strings.Repeat("compressible ", 20)}); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Flush(true); err != nil {
			t.Fatal(err)
		}
		w.Close()
		codecs := map[uint8]int{}
		for _, r := range c.readCommitted(out) {
			codecs[r.Attrs.CompressionType()]++
		}
		if want := map[uint8]int{tc.want: 50}; !maps.Equal(codecs, want) {
			t.Errorf("compression %q: records by batch codec %v; want %v", tc.codec, codecs, want)
		}
	}
}
