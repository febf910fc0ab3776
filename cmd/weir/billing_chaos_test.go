package main

import (
	"bytes"
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/weirstream/weir/examples/billing/pipeline"
	"github.com/weirstream/weir/internal/testsvc"
	"github.com/weirstream/weir/task"
)

// billingRun is one run of examples/billing/billing.sql against the real
// Kafka and a real database, with its own topic, table and checkpoints.
type billingRun struct {
	t                      *testing.T
	dir, topic, dlq, table string
	brokers                string
	events                 []pipeline.Bill
	dups                   int
	truth                  string
	flags                  chaosFlags
	// interval and delays are the checkpoint interval and the range of
	// the kill delays; zero: chaos's defaults below.
	interval           string
	minDelay, maxDelay time.Duration
}

func newBillingRun(t *testing.T, bills int, db string) *billingRun {
	suffix := fmt.Sprint(time.Now().UnixNano())
	r := &billingRun{t: t, dir: t.TempDir(), topic: "bills-" + suffix, dlq: "bills-dlq-" + suffix,
		table: "account_totals_" + suffix, brokers: testsvc.Kafka(t)}
	r.events, r.dups = pipeline.Generate(pipeline.GenOptions{Bills: bills, Accounts: 1000, DupRate: 0.05,
		DupDelay: 20000, Spread: 5 * time.Second, Seed: 2026})
	r.truth = filepath.Join(r.dir, "truth.csv")
	if err := os.WriteFile(r.truth, []byte(pipeline.FormatTruth(pipeline.Truth(r.events))), 0o644); err != nil {
		t.Fatal(err)
	}
	// billing.sql's pipeline.name: the verdict counts only this job's
	// prepared transactions (the server is shared with other tests).
	r.flags = chaosFlags{truth: r.truth, table: r.table, seed: 42, job: "billing"}
	switch db {
	case "mysql":
		dsn := testsvc.MySQL(t)
		r.flags.mysqlDSN = dsn
		createMySQLTotals(t, dsn, r.table)
		t.Setenv("WEIR_BILLING_JDBC_URL", "jdbc:mysql://"+hostPort(dsn, "tcp(", ")")+"/weir")
	case "postgres":
		dsn := testsvc.Postgres(t)
		r.flags.postgresDSN = dsn
		createPostgresTotals(t, dsn, r.table)
		t.Setenv("WEIR_BILLING_JDBC_URL", "jdbc:postgresql://"+hostPort(dsn, "@", "/")+"/weir")
	}
	t.Setenv("WEIR_KAFKA_BROKERS", r.brokers)
	t.Setenv("WEIR_BILLING_CHECKPOINTS", filepath.Join(r.dir, "checkpoints"))
	return r
}

func (r *billingRun) produce(ctx context.Context, extra ...*kgo.Record) {
	// The dead-letter topic is the operator's to create, as in Flink.
	if err := ProduceBills(ctx, r.brokers, r.dlq, 1, nil); err != nil {
		r.t.Fatal(err)
	}
	if err := ProduceBills(ctx, r.brokers, r.topic, 3, r.events); err != nil {
		r.t.Fatal(err)
	}
	if len(extra) == 0 {
		return
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(r.brokers), kgo.DefaultProduceTopic(r.topic))
	if err != nil {
		r.t.Fatal(err)
	}
	defer cl.Close()
	if err := cl.ProduceSync(ctx, extra...).FirstErr(); err != nil {
		r.t.Fatal(err)
	}
}

// script writes billing.sql with this run's topic, dead-letter topic and table.
func (r *billingRun) script() string {
	src, err := os.ReadFile("../../examples/billing/billing.sql")
	if err != nil {
		r.t.Fatal(err)
	}
	s := strings.Replace(string(src), "'topic' = 'bills'", "'topic' = '"+r.topic+"'", 1)
	s = strings.Replace(s, "'bills-dlq'", "'"+r.dlq+"'", 1)
	// sink.name as unique as the table: it keys the sink's XA transaction
	// ids and bookkeeping rows with the job's name, and every billing test
	// runs a job named billing (concurrent ones rolled back each other's
	// prepared transactions in XA recovery).
	s = strings.Replace(s, "'table-name' = 'account_totals'", "'table-name' = '"+r.table+"', 'sink.name' = '"+r.table+"'", 1)
	path := filepath.Join(r.dir, "billing.sql")
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		r.t.Fatal(err)
	}
	return path
}

// chaos runs `weir run billing.sql` (this test binary acts as weir) under
// the chaos runner and returns its report.
//
// With kills, the job reads the topic unbounded and the run after the
// last kill settles: it is stopped with a savepoint once the table equals
// the truth. A bounded job could finish before its last kill, and did
// on an idle machine as the job got faster (13 of 20 kills on
// PostgreSQL, 2 of 8 in a rescale test), failing the verdict.
func (r *billingRun) chaos(ctx context.Context, kills int, sets ...string) string {
	self, _ := os.Executable()
	var out bytes.Buffer
	f := r.flags
	// Kills come 0.1–0.45 s after each start, with one subtask per
	// operator and checkpoints every 250 ms. A test may set other delays
	// and interval (r.minDelay, …) and parallelisms (r.flags.parallelism,
	// appended after these settings).
	f.kills, f.minDelay, f.maxDelay = kills, cmp.Or(r.minDelay, 100*time.Millisecond), cmp.Or(r.maxDelay, 450*time.Millisecond)
	script := r.script()
	if kills > 0 {
		script, f.settle = unbounded(r.t, script), 2*time.Minute
	}
	args := []string{self, "run", script,
		"--set", "execution.checkpointing.interval=" + cmp.Or(r.interval, "250ms"), "--set", "parallelism.default=1"}
	if f.logs == "" {
		args = append(args, "-q") // runs log into the test's stderr otherwise
	}
	for _, kv := range sets {
		args = append(args, "--set", kv)
	}
	err := runChaos(ctx, &out, f, args)
	r.t.Logf("%d bills (%d duplicates)\n%s", len(r.events), r.dups, out.String())
	if err != nil {
		r.t.Fatal(err)
	}
	if n := strings.Count(out.String(), "killed with SIGKILL"); n < kills {
		r.t.Fatalf("only %d of %d kills happened: the job finished too early", n, kills)
	}
	return out.String()
}

// The acceptance run of the billing job: 200,000 bills with 5 % duplicates
// on the real Kafka and MariaDB, 20 SIGKILLs of `weir run` at random
// moments, each followed by --restore latest. account_totals must equal
// the ground truth exactly and XA RECOVER must be empty.
func TestBillingSQLExactlyOnceThrough20Kills(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	r := newBillingRun(t, 200000, "mysql")
	r.produce(ctx)
	r.chaos(ctx, 20)
}

// The same on PostgreSQL (prepared transactions), sized for CI: 100,000
// bills would do; 200,000 keep the job long enough for 20 kills; pg_prepared_xacts must be empty at the end.
func TestBillingSQLOnPostgresThrough20Kills(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	r := newBillingRun(t, 200000, "postgres")
	r.produce(ctx)
	r.chaos(ctx, 20)
}

// The billing job with unaligned checkpoints on the real Kafka and
// MariaDB (XA): every checkpoint is unaligned from its first barrier
// (aligned timeout 0), so in-flight rows between the job's vertices are
// persisted and replayed first after each of 10 SIGKILLs. The totals must
// equal the ground truth exactly and XA RECOVER must be empty: the JDBC
// sink never commits rows a restore replays. Checkpoints are all retained
// so that the test can count those that persisted channel state; how many
// depends on timing, so it is logged, not asserted (TestSoakUnaligned
// asserts that the path runs).
func TestBillingSQLUnalignedThrough10Kills(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	r := newBillingRun(t, 100000, "mysql")
	r.produce(ctx)
	r.chaos(ctx, 10, "execution.checkpointing.unaligned.enabled=true", "execution.checkpointing.num-retained=100000")
	withState, withOutput := map[string]bool{}, map[string]bool{}
	err := filepath.WalkDir(filepath.Join(r.dir, "checkpoints"), func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.Contains(d.Name(), "channel-state") {
			withState[filepath.Dir(path)] = true
			if strings.HasSuffix(d.Name(), task.PartOutputState) {
				withOutput[filepath.Dir(path)] = true
			}
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d retained checkpoints hold channel state, %d of them output channel state", len(withState), len(withOutput))
}

// The billing job with unaligned checkpoints and an aligned timeout of
// 5 ms (Flink's execution.checkpointing.aligned-checkpoint-timeout): each
// checkpoint starts aligned and turns unaligned where its barrier waits
// longer — in an input's alignment or in an output queue — through 10
// SIGKILLs; the totals must equal the ground truth exactly.
func TestBillingSQLAlignedTimeoutThrough10Kills(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	r := newBillingRun(t, 100000, "mysql")
	r.produce(ctx)
	r.chaos(ctx, 10, "execution.checkpointing.unaligned.enabled=true",
		"execution.checkpointing.aligned-checkpoint-timeout=5ms")
}

// Bad input in the topic — not JSON, a bill without an amount, timestamps
// that do not parse or are numbers — goes to the dead-letter topic with its
// origin; the totals of the good bills stay exact.
func TestBillingBadInputGoesToDeadLetterTopic(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	r := newBillingRun(t, 5000, "mysql")
	bad := []string{
		`this is not json`,
		`{"bill_id":"bad-1","account_id":"acc-0001","currency":"EUR","ts":"2026-11-01 00:00:01.000"}`,
		`{"bill_id":"bad-2","account_id":"acc-0001","amount":"1.00","currency":"EUR","ts":"99999-99-99 99:99:99"}`,
		`{"bill_id":"bad-3","account_id":"acc-0001","amount":"1.00","currency":"EUR","ts":-5}`,
	}
	var recs []*kgo.Record
	for _, b := range bad {
		recs = append(recs, &kgo.Record{Value: []byte(b), Partition: 0})
	}
	r.produce(ctx, recs...)
	r.chaos(ctx, 0)
	got := readDeadLetters(ctx, t, r.brokers, r.dlq, len(bad))
	if strings.Join(got, "\n") != strings.Join(sortedCopy(bad), "\n") {
		t.Fatalf("dead-letter topic holds\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(sortedCopy(bad), "\n"))
	}
}

func readDeadLetters(ctx context.Context, t *testing.T, brokers, topic string, want int) []string {
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var got []string
	deadline := time.Now().Add(30 * time.Second)
	for len(got) < want && time.Now().Before(deadline) {
		pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		fs := cl.PollFetches(pctx)
		cancel()
		fs.EachRecord(func(rec *kgo.Record) {
			hdr := map[string]string{}
			for _, h := range rec.Headers {
				hdr[h.Key] = string(h.Value)
			}
			if len(hdr) == 0 {
				t.Errorf("dead letter %q has no headers naming its origin", rec.Value)
			}
			got = append(got, string(rec.Value))
		})
	}
	return sortedCopy(got)
}

func sortedCopy(xs []string) []string {
	out := append([]string(nil), xs...)
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

func createMySQLTotals(t *testing.T, dsn, table string) {
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	_, err = db.Exec("CREATE TABLE " + table + " (account_id VARCHAR(64) PRIMARY KEY, total DECIMAL(38,2) NOT NULL, bill_count BIGINT NOT NULL)")
	if err != nil {
		t.Fatal(err)
	}
}

func createPostgresTotals(t *testing.T, dsn, table string) {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, "CREATE TABLE "+table+" (account_id VARCHAR(64) PRIMARY KEY, total DECIMAL(38,2) NOT NULL, bill_count BIGINT NOT NULL)")
	if err != nil {
		t.Fatal(err)
	}
}

// hostPort cuts host:port out of a DSN between the markers.
func hostPort(dsn, from, to string) string {
	i := strings.Index(dsn, from)
	if i < 0 {
		return "127.0.0.1"
	}
	rest := dsn[i+len(from):]
	if j := strings.Index(rest, to); j >= 0 {
		return rest[:j]
	}
	return rest
}
