package session

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/weirstream/weir/internal/testsvc"
	"github.com/weirstream/weir/runtime"
)

// The fixtures in testdata/debezium were written by a real Debezium (see
// testdata/debezium/README.md and bench/debezium): its PostgreSQL connector
// captured a billing workload, and Kafka Connect's JsonConverter turned
// each change into a Kafka value, with and without the schema envelope.
// The line null is a tombstone (a Kafka record without a value).

const recordedDir = "testdata/debezium"

// recordedEvents reads a recording as Kafka records for topic, in order.
func recordedEvents(t *testing.T, path, topic string) (recs []*kgo.Record, tombstones int) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		r := &kgo.Record{Topic: topic}
		if line := sc.Text(); line != "null" {
			r.Value = []byte(line)
		} else {
			tombstones++
		}
		recs = append(recs, r)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return recs, tombstones
}

// recordedTotals computes account → "total/count/noted" from the source
// table's final rows the recorder dumped after the workload: the expected
// result, independent of the events and of Weir's decoding.
func recordedTotals(t *testing.T, dir, file string) map[string]string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, file))
	if err != nil {
		t.Fatal(err)
	}
	type acc struct {
		sum          decimal.Decimal
		count, noted int
	}
	by := map[string]*acc{}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n")[1:] {
		f := strings.SplitN(line, ",", 4) // id,account,amount,note (\N: NULL)
		amount, err := decimal.NewFromString(f[2])
		if err != nil {
			t.Fatalf("%s: %q: %v", file, line, err)
		}
		a := by[f[1]]
		if a == nil {
			a = &acc{}
			by[f[1]] = a
		}
		a.sum, a.count = a.sum.Add(amount), a.count+1
		if f[3] != `\N` {
			a.noted++
		}
	}
	out := map[string]string{}
	for k, a := range by {
		out[k] = fmt.Sprintf("%s/%d/%d", a.sum.StringFixed(2), a.count, a.noted)
	}
	return out
}

// TestRecordedDebeziumGroupByIntoMariaDB: the change events a real
// Debezium PostgreSQL connector wrote (snapshot reads, inserts, updates of
// the amount and the NULL-able note, bills moved to another account,
// deletes each followed by its tombstone) on a Kafka topic → debezium-json,
// with and without 'debezium-json.schema-include' → GROUP BY account →
// MariaDB exactly once (XA). The job is killed after a checkpoint with half
// the events produced and restored with the rest: the MariaDB totals equal
// those of the source table's final rows.
func TestRecordedDebeziumGroupByIntoMariaDB(t *testing.T) {
	runRecordedBoth(t, recordedDir)
}

// TestLiveDebeziumGroupByIntoMariaDB (opt-in: WEIR_DEBEZIUM_LIVE=1) runs
// the recorder, a real Debezium (bench/debezium; Maven builds it the first
// time), on a new table of the test's PostgreSQL, and checks its output
// through the same job as TestRecordedDebeziumGroupByIntoMariaDB.
func TestLiveDebeziumGroupByIntoMariaDB(t *testing.T) {
	if os.Getenv("WEIR_DEBEZIUM_LIVE") != "1" {
		t.Skip("set WEIR_DEBEZIUM_LIVE=1 to run a real Debezium (Java 17 and Maven)")
	}
	testsvc.PostgresLogical(t)
	dir := t.TempDir()
	cmd := exec.Command("bash", "../../bench/debezium/record.sh", "postgres", dir)
	cmd.Env = append(os.Environ(), fmt.Sprintf("DEBEZIUM_TABLE=dbz_bills_live_%d", time.Now().UnixNano()))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("bench/debezium/record.sh postgres: %v\n%s", err, out)
	}
	runRecordedBoth(t, dir)
}

// runRecordedBoth runs the PostgreSQL recording of dir with and without
// the schema envelope.
func runRecordedBoth(t *testing.T, dir string) {
	want := recordedTotals(t, dir, "postgres-final.csv")
	for _, c := range []struct{ name, file, opt string }{
		{"schema", "postgres-schema.jsonl", ", 'debezium-json.schema-include' = 'true'"},
		{"noschema", "postgres-noschema.jsonl", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			runRecorded(t, filepath.Join(dir, c.file), c.opt, want)
		})
	}
}

func runRecorded(t *testing.T, file, formatOpt string, want map[string]string) {
	brokers := testsvc.Kafka(t)
	dsn := testsvc.MySQL(t)
	suffix := fmt.Sprint(time.Now().UnixNano())
	topic := "dbz-recorded-" + suffix
	cl := createTopic(t, brokers, topic)
	recs, tombstones := recordedEvents(t, file, topic)
	if tombstones == 0 {
		t.Fatalf("%s has no tombstone: Debezium writes one after each delete", file)
	}
	mdb, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer mdb.Close()
	dst := "dbz_totals_" + suffix
	if _, err := mdb.Exec("CREATE TABLE " + dst +
		" (account VARCHAR(32) PRIMARY KEY, total DECIMAL(38, 2), bill_count BIGINT, noted BIGINT)"); err != nil {
		t.Fatal(err)
	}
	defer mdb.Exec("DROP TABLE " + dst)
	script := fmt.Sprintf(`SET 'execution.checkpointing.interval' = '100 ms';
SET 'execution.checkpointing.dir' = '%s';
SET 'parallelism.default' = '2';
SET 'pipeline.name' = 'dbz-recorded-%s';
CREATE TABLE bills (id INT, account STRING, amount DECIMAL(12, 2), note STRING) WITH (
  'connector' = 'kafka', 'topic' = '%s', 'properties.bootstrap.servers' = '%s',
  'scan.startup.mode' = 'earliest-offset', 'format' = 'debezium-json'%s);
CREATE TABLE jdbc_totals (account STRING, total DECIMAL(38, 2), bill_count BIGINT, noted BIGINT,
  PRIMARY KEY (account) NOT ENFORCED) WITH ('connector' = 'jdbc', 'url' = '%s', 'table-name' = '%s',
  'username' = 'weir', 'password' = 'weir', 'sink.name' = 'totals-%[2]s',
  'sink.delivery-guarantee' = 'exactly-once', 'sink.exactly-once.strategy' = 'xa');
INSERT INTO jdbc_totals SELECT account, SUM(amount), COUNT(*), COUNT(note) FROM bills GROUP BY account;`,
		filepath.Join(t.TempDir(), "checkpoints"), suffix, topic, brokers, formatOpt, jdbcURL(t, dsn), dst)
	produce := func(recs []*kgo.Record) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}

	half := len(recs) / 2
	produce(recs[:half])
	job, cancel := startRecordedJob(t, script, 3)
	cancel() // the process dies after its third checkpoint: no final checkpoint, no stop
	if _, err := job.Wait(); err == nil {
		t.Fatal("the killed job ended without an error")
	}
	produce(recs[half:])
	job, cancel = startRecordedJob(t, script, 0)
	defer cancel()
	deadline := time.Now().Add(time.Minute)
	got := recordedMariaTotals(t, mdb, dst)
	for ; !equalTotals(got, want); got = recordedMariaTotals(t, mdb, dst) {
		if time.Now().After(deadline) {
			t.Fatalf("MariaDB totals after a minute:\n %s\nwant (from the source table's final rows):\n %s",
				totalsText(got), totalsText(want))
		}
		select {
		case <-job.Done():
			_, err := job.Wait()
			t.Fatalf("the restored job ended (%v) with MariaDB totals\n %s\nwant\n %s", err, totalsText(got), totalsText(want))
		case <-time.After(50 * time.Millisecond):
		}
	}
	cancel()
	if _, err := job.Wait(); err != nil && !errors.Is(err, context.Canceled) {
		t.Fatalf("job: %v", err)
	}
}

// startRecordedJob starts the script's job, restoring the latest checkpoint
// if there is one, and returns once it completed checkpoints checkpoints.
func startRecordedJob(t *testing.T, script string, checkpoints int) (*runtime.JobClient, context.CancelFunc) {
	t.Helper()
	s := New()
	if err := s.Execute(script); err != nil {
		t.Fatal(err)
	}
	jg, opts, err := s.Job("debezium-recorded")
	if err != nil {
		t.Fatal(err)
	}
	completed := make(chan struct{}, 64)
	opts.Restore = runtime.RestoreLatestOrEmpty
	opts.Listener = func(ev runtime.Event) {
		if ev.Kind == runtime.EventCheckpointCompleted {
			select {
			case completed <- struct{}{}:
			default:
			}
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	job, err := runtime.Start(ctx, jg, opts)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	for i := 0; i < checkpoints; i++ {
		select {
		case <-completed:
		case <-ctx.Done():
			t.Fatalf("job ended before its checkpoint %d", i+1)
		}
	}
	return job, cancel
}

// recordedMariaTotals reads the sink table as account → "total/count/noted".
func recordedMariaTotals(t *testing.T, db *sql.DB, table string) map[string]string {
	t.Helper()
	rows, err := db.Query("SELECT account, total, bill_count, noted FROM " + table)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var account, total string
		var count, noted int64
		if err := rows.Scan(&account, &total, &count, &noted); err != nil {
			t.Fatal(err)
		}
		out[account] = fmt.Sprintf("%s/%d/%d", total, count, noted)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func equalTotals(a, b map[string]string) bool {
	return totalsText(a) == totalsText(b)
}

func totalsText(m map[string]string) string {
	var out []string
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}
