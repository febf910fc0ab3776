package session

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/weirstream/weir/internal/testsvc"
	"github.com/weirstream/weir/runtime"
)

// cdcTable is the simulated source table bills(id, account_id, amount) of
// the Debezium test: it makes the change events a Debezium MySQL connector
// would write for random inserts, updates and deletes, and computes the
// expected totals from the live rows, independently of Weir.
type cdcTable struct {
	rng    *rand.Rand
	topic  string
	nextID int
	rows   map[int]cdcBill
}

type cdcBill struct {
	account string
	cents   int64
}

func (b cdcBill) json(id int) string {
	return fmt.Sprintf(`{"id":%d,"account_id":%q,"amount":%s}`, id, b.account, decimal.New(b.cents, -2).StringFixed(2))
}

// changes returns n change events (and the tombstones after deletes), keyed
// by the bill id as Debezium keys them, so a bill's events stay in order in
// one partition. The first events of a fresh table are snapshot reads (op r).
func (c *cdcTable) changes(n, accounts int) []*kgo.Record {
	var recs []*kgo.Record
	for i := 0; i < n; i++ {
		id, op := c.pick()
		before, after := "null", "null"
		if old, ok := c.rows[id]; ok {
			before = old.json(id)
		}
		switch op {
		case "c", "r", "u":
			b := cdcBill{account: fmt.Sprintf("acc-%02d", c.rng.Intn(accounts)), cents: int64(c.rng.Intn(20000)) - 2000}
			if op == "u" && c.rng.Intn(2) == 0 {
				b.account = c.rows[id].account // an amount change only
			}
			c.rows[id], after = b, b.json(id)
		case "d":
			delete(c.rows, id)
		}
		key := []byte(fmt.Sprintf(`{"id":%d}`, id))
		v := fmt.Sprintf(`{"before":%s,"after":%s,"source":{"version":"2.5.0.Final","connector":"mysql","name":"shop",`+
			`"db":"shop","table":"bills","snapshot":%q,"file":"mysql-bin.000003","pos":%d},"op":%q,"ts_ms":%d}`,
			before, after, fmt.Sprint(op == "r"), 154+i, op, 1700000000000+int64(i))
		recs = append(recs, &kgo.Record{Topic: c.topic, Key: key, Value: []byte(v)})
		if op == "d" {
			recs = append(recs, &kgo.Record{Topic: c.topic, Key: key}) // the tombstone
		}
	}
	return recs
}

// pick chooses the next bill and operation: mostly new bills while the
// table is small, then updates and deletes of live bills too.
func (c *cdcTable) pick() (int, string) {
	if len(c.rows) < 50 || c.rng.Intn(3) == 0 {
		c.nextID++
		if c.nextID <= 100 {
			return c.nextID, "r"
		}
		return c.nextID, "c"
	}
	ids := make([]int, 0, len(c.rows))
	for id := range c.rows {
		ids = append(ids, id)
	}
	sort.Ints(ids)
	id := ids[c.rng.Intn(len(ids))]
	if c.rng.Intn(4) == 0 {
		return id, "d"
	}
	return id, "u"
}

// totals is SELECT account_id, SUM(amount), COUNT(*) … GROUP BY account_id
// over the live rows, as "total|count".
func (c *cdcTable) totals() map[string]string {
	sums := map[string]total{}
	for _, b := range c.rows {
		s := sums[b.account]
		sums[b.account] = total{s.cents + b.cents, s.count + 1}
	}
	out := map[string]string{}
	for acc, s := range sums {
		out[acc] = s.String()
	}
	return out
}

// debeziumTopic materializes a debezium-json topic written by Weir's sink:
// op c sets the key's row, op d removes it and must carry the row that was
// there (Flink writes -U and -D as op d with the old row in "before").
type debeziumTopic struct {
	t    *testing.T
	cl   *kgo.Client
	rows map[string]string
	bad  []string
}

func newDebeziumTopic(t *testing.T, brokers, topic string) *debeziumTopic {
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(brokers, ",")...), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return &debeziumTopic{t: t, cl: cl, rows: map[string]string{}}
}

type debeziumTotal struct {
	Before, After *struct {
		AccountID string          `json:"account_id"`
		Total     decimal.Decimal `json:"total"`
		BillCount int64           `json:"bill_count"`
	}
	Op string
}

// poll applies what the topic has now (waiting at most a second).
func (d *debeziumTopic) poll() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	d.cl.PollFetches(ctx).EachRecord(func(r *kgo.Record) {
		var m debeziumTotal
		if err := json.Unmarshal(r.Value, &m); err != nil {
			d.t.Fatalf("sink wrote %s: %v", r.Value, err)
		}
		switch {
		case m.Op == "c" && m.After != nil && m.Before == nil:
			d.rows[m.After.AccountID] = fmt.Sprintf("%s|%d", m.After.Total.StringFixed(2), m.After.BillCount)
		case m.Op == "d" && m.Before != nil && m.After == nil:
			k, v := m.Before.AccountID, fmt.Sprintf("%s|%d", m.Before.Total.StringFixed(2), m.Before.BillCount)
			if d.rows[k] != v {
				d.bad = append(d.bad, fmt.Sprintf("offset %d retracts %s but the row is %q", r.Offset, r.Value, d.rows[k]))
			}
			delete(d.rows, k)
		default:
			d.t.Fatalf("sink wrote %s: not a Debezium insert or delete as Flink writes them", r.Value)
		}
	})
}

// waitFor polls until the topic holds want (a liveness bound, not a
// timing assertion: the rows are compared exactly).
func (d *debeziumTopic) waitFor(want map[string]string, what string) {
	d.t.Helper()
	for deadline := time.Now().Add(2 * time.Minute); !sameTotals(d.rows, want); d.poll() {
		if time.Now().After(deadline) {
			break
		}
	}
	(&e2e{t: d.t}).compare(what, d.rows, want)
	if len(d.bad) > 0 {
		d.t.Fatalf("%s: retractions that do not match the row: %s", what, strings.Join(d.bad, "; "))
	}
}

// TestDebeziumKafkaGroupByExactlyOnce: Debezium change events on a Kafka
// topic (3 partitions) → GROUP BY account → a Kafka topic in debezium-json
// (exactly-once). The job is killed once the first events' totals are
// committed, more events come (updates and deletes of the first bills
// among them), and the job restored from its latest checkpoint finishes
// them: the topic's rows equal the totals recomputed from the simulated
// table, and every retraction carries the row it takes back.
func TestDebeziumKafkaGroupByExactlyOnce(t *testing.T) {
	brokers := testsvc.Kafka(t)
	suffix := fmt.Sprint(time.Now().UnixNano())
	src := &cdcTable{rng: rand.New(rand.NewSource(18)), topic: "cdc-bills-" + suffix, rows: map[int]cdcBill{}}
	out := "cdc-totals-" + suffix
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(brokers, ",")...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	testsvc.CreateTopic(t, kadm.NewClient(cl), src.topic, 3, nil)
	testsvc.CreateTopic(t, kadm.NewClient(cl), out, 1, nil)
	produce := func(n int) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := cl.ProduceSync(ctx, src.changes(n, 20)...).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	script := fmt.Sprintf(`
SET 'execution.checkpointing.interval' = '100 ms';
SET 'execution.checkpointing.dir' = '%s';
SET 'parallelism.default' = '2';
CREATE TABLE bills (id INT, account_id STRING, amount DECIMAL(18, 2)) WITH (
  'connector' = 'kafka', 'topic' = '%s', 'properties.bootstrap.servers' = '%s',
  'scan.startup.mode' = 'earliest-offset', 'format' = 'debezium-json');
CREATE TABLE totals (account_id STRING, total DECIMAL(38, 2), bill_count BIGINT) WITH (
  'connector' = 'kafka', 'topic' = '%s', 'properties.bootstrap.servers' = '%[3]s',
  'format' = 'debezium-json', 'sink.delivery-guarantee' = 'exactly-once',
  'sink.transactional-id-prefix' = '%[4]s', 'properties.transaction.timeout.ms' = '60000');
INSERT INTO totals SELECT account_id, SUM(amount), COUNT(*) FROM bills GROUP BY account_id;
`, filepath.Join(t.TempDir(), "checkpoints"), src.topic, brokers, out)
	sink := newDebeziumTopic(t, brokers, out)

	produce(1500)
	first := src.totals()
	job, restored, cancel := startCDCJob(t, script)
	sink.waitFor(first, "totals of the first events")
	cancel() // the process dies: no final checkpoint, no stop
	if _, err := job.Wait(); err == nil {
		t.Fatal("the killed job ended without an error")
	}

	produce(1500)
	want := src.totals()
	job, restored, cancel = startCDCJob(t, script)
	defer cancel()
	sink.waitFor(want, "totals after the restore")
	if _, err := job.StopWithSavepoint(context.Background(), t.TempDir(), false); err != nil {
		t.Fatalf("stop with savepoint: %v", err)
	}
	if _, err := job.Wait(); err != nil {
		t.Fatal(err)
	}
	if restored.Load() == 0 {
		t.Fatal("the second run did not restore a checkpoint")
	}
	sink.poll()
	sink.waitFor(want, "totals after the stop")
}

// startCDCJob starts the script's job, restoring the latest checkpoint if
// there is one; restored is the checkpoint it restored (0: none).
func startCDCJob(t *testing.T, script string) (job *runtime.JobClient, restored *atomic.Int64, cancel context.CancelFunc) {
	t.Helper()
	s := New()
	if err := s.Execute(script); err != nil {
		t.Fatal(err)
	}
	jg, opts, err := s.Job("debezium-totals")
	if err != nil {
		t.Fatal(err)
	}
	restored = &atomic.Int64{}
	opts.Restore = runtime.RestoreLatestOrEmpty
	opts.Listener = func(ev runtime.Event) {
		if ev.Kind == runtime.EventRestored {
			restored.Store(ev.Checkpoint)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	if job, err = runtime.Start(ctx, jg, opts); err != nil {
		cancel()
		t.Fatal(err)
	}
	return job, restored, cancel
}

// A Debezium event that does not parse fails the job with its topic,
// partition and offset, what is wrong in the format's terms, and the
// format's option to skip such events; with that option the job skips it.
func TestDebeziumBadEventNamesOffset(t *testing.T) {
	brokers := testsvc.Kafka(t)
	topic := fmt.Sprintf("cdc-bad-%d", time.Now().UnixNano())
	cl := createTopic(t, brokers, topic)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var recs []*kgo.Record
	for _, v := range []string{`{"before":null,"after":{"id":1,"amount":1.50},"op":"c"}`, ``,
		`{"before":null,"after":{"id":2,"amount":"lots"},"op":"c"}`, `{"before":null,"after":{"id":3,"amount":2.25},"op":"c"}`} {
		recs = append(recs, &kgo.Record{Topic: topic, Value: []byte(v)})
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	script := func(opt string) string {
		return fmt.Sprintf(`
CREATE TABLE bills (id INT, amount DECIMAL(18, 2)) WITH ('connector' = 'kafka', 'topic' = '%s',
  'properties.bootstrap.servers' = '%s', 'format' = 'debezium-json', 'scan.startup.mode' = 'earliest-offset',
  'scan.bounded.mode' = 'latest-offset'%s);
CREATE TABLE total (n BIGINT, s DECIMAL(38, 2)) WITH ('connector' = 'collect');
INSERT INTO total SELECT COUNT(*), SUM(amount) FROM bills;`, topic, brokers, opt)
	}
	h := newHarness(t)
	_, err := h.run(script(""))
	want := fmt.Sprintf(`kafka source: bad record at topic %s partition 0 offset 2: debezium-json: field "after.amount" (DECIMAL(18, 2)): `, topic)
	fix := `on table "bills" ('debezium-json.ignore-parse-errors' = 'true' skips too))`
	if err == nil || !strings.Contains(err.Error(), want) || !strings.HasSuffix(err.Error(), fix) {
		t.Fatalf("got %v\nwant an error containing %s and ending with %s", err, want, fix)
	}
	h = newHarness(t)
	h.mustRun(script(", 'debezium-json.ignore-parse-errors' = 'true'"))
	expect(t, "total without the bad event", h.rows("total"), []string{"+I[1, 1.50]", "-U[1, 1.50]", "+U[2, 3.75]"})
}
