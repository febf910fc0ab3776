package session

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/weirstream/weir/internal/testsvc"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/runtime"
)

// Jobs without checkpointing (no 'execution.checkpointing.interval') and
// sinks that commit in two phases: a bounded job commits everything at the
// end of input; an unbounded one fails at once, naming the sink and the
// fix, instead of running and writing nothing.

// runScript runs a script's INSERTs as one job.
func runScript(t *testing.T, script string) (*runtime.Result, error) {
	t.Helper()
	s := New()
	if err := s.Execute(script); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return s.Run(ctx, "commit-test", nil)
}

// wantNeverCommits checks the error of an unbounded job into sink table.
func wantNeverCommits(t *testing.T, res *runtime.Result, err error, table string) {
	t.Helper()
	want := fmt.Sprintf(`operator: sink can never commit: "Sink: %s" writes its output only when a checkpoint completes, `+
		`but this job takes no checkpoints and never ends, so it would never write anything; hint: enable checkpointing, `+
		`e.g. SET 'execution.checkpointing.interval' = '10 s' (Go: runtime.Options.Checkpoint.Interval)`, table)
	if !errors.Is(err, operator.ErrNeverCommits) || !strings.HasSuffix(err.Error(), want) || res.Restarts != 0 {
		t.Fatalf("unbounded job without checkpoints into %s: err %v\nwant it to end with %s", table, err, want)
	}
}

// commitCSV renders the same way whatever the formats' DECIMAL and
// TIMESTAMP precision rules (no trailing zeros to drop or add).
const commitCSV = "a,1.25,2024-01-01 00:00:00.125\na,3.25,2024-01-01 00:00:01.375\nb,2.75,2024-01-01 00:00:02.875\n"

// billsTable declares a bounded CSV table of commitCSV, written to dir.
func billsTable(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "bills.csv")
	if err := os.WriteFile(path, []byte(commitCSV), 0o644); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf(`CREATE TABLE bills (account_id STRING, amount DECIMAL(18,2), ts TIMESTAMP(3))
  WITH ('connector'='filesystem','path'='%s','format'='csv');`, path)
}

const genTable = `CREATE TABLE gen (account_id STRING, amount DECIMAL(18,2), ts TIMESTAMP(3))
  WITH ('connector'='datagen','rows-per-second'='10');`

func TestFilesystemSinkWithoutCheckpointing(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	sink := fmt.Sprintf(`CREATE TABLE f (account_id STRING, amount DECIMAL(18,2), ts TIMESTAMP(3))
  WITH ('connector'='filesystem','path'='%s','format'='csv');`, out)
	if _, err := runScript(t, billsTable(t, dir)+sink+"INSERT INTO f SELECT * FROM bills;"); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if e.Name() != ".weir-committed" { // the sink's committed-checkpoint markers
			names = append(names, e.Name())
		}
	}
	if len(names) != 1 || !strings.HasPrefix(names[0], "part-") || !strings.HasSuffix(names[0], "-0-1") {
		t.Fatalf("output files %v, want one part-<run>-0-1 (committed, nothing pending)", names)
	}
	got, err := os.ReadFile(filepath.Join(out, names[0]))
	if err != nil || string(got) != commitCSV {
		t.Fatalf("%s = %q (%v), want %q", names[0], got, err, commitCSV)
	}

	res, err := runScript(t, genTable+sink+"INSERT INTO f SELECT * FROM gen;")
	wantNeverCommits(t, res, err, "f")
}

func TestKafkaExactlyOnceSinkWithoutCheckpointing(t *testing.T) {
	brokers := testsvc.Kafka(t)
	dir := t.TempDir()
	topic := fmt.Sprintf("commit-test-%d", time.Now().UnixNano())
	createTopic(t, brokers, topic)
	sink := fmt.Sprintf(`CREATE TABLE k (account_id STRING, amount DECIMAL(18,2), ts TIMESTAMP(3)) WITH (
  'connector'='kafka','topic'='%[1]s','properties.bootstrap.servers'='%[2]s','format'='csv',
  'sink.delivery-guarantee'='exactly-once','sink.transactional-id-prefix'='%[1]s');`, topic, brokers)
	if _, err := runScript(t, billsTable(t, dir)+sink+"INSERT INTO k SELECT * FROM bills;"); err != nil {
		t.Fatal(err)
	}
	if got := readCommitted(t, brokers, topic, 3); got != commitCSV {
		t.Fatalf("committed records of %s:\n%s\nwant\n%s", topic, got, commitCSV)
	}
	res, err := runScript(t, genTable+sink+"INSERT INTO k SELECT * FROM gen;")
	wantNeverCommits(t, res, err, "k")
}

// createTopic creates topic with one partition and returns a client of
// the cluster (closed when the test ends).
func createTopic(t *testing.T, brokers, topic string) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(brokers, ",")...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	testsvc.CreateTopic(t, kadm.NewClient(cl), topic, 1, nil)
	return cl
}

// readCommitted reads n committed records of topic, sorted, one a line.
func readCommitted(t *testing.T, brokers, topic string, n int) string {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(brokers, ",")...), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var lines []string
	for len(lines) < n && ctx.Err() == nil {
		cl.PollFetches(ctx).EachRecord(func(r *kgo.Record) { lines = append(lines, string(r.Value)+"\n") })
	}
	sort.Strings(lines)
	return strings.Join(lines, "")
}

// JDBC exactly-once, both strategies: XA (an append table) and the
// checkpoint table (a table with a primary key).
func TestJDBCExactlyOnceSinkWithoutCheckpointing(t *testing.T) {
	dsn := testsvc.MySQL(t)
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	url := jdbcURL(t, dsn)
	for _, c := range []struct{ strategy, key string }{{"xa", ""}, {"checkpoint-table", ", PRIMARY KEY (account_id, ts) NOT ENFORCED"}} {
		t.Run(c.strategy, func(t *testing.T) {
			table := fmt.Sprintf("commit_test_%d", time.Now().UnixNano())
			ddl := "CREATE TABLE " + table + " (account_id VARCHAR(16), amount DECIMAL(18,2), ts DATETIME(3)"
			if c.key != "" {
				ddl += ", PRIMARY KEY (account_id, ts)"
			}
			if _, err := db.Exec(ddl + ")"); err != nil {
				t.Fatal(err)
			}
			defer db.Exec("DROP TABLE " + table)
			sink := fmt.Sprintf(`CREATE TABLE j (account_id STRING, amount DECIMAL(18,2), ts TIMESTAMP(3)%s) WITH (
  'connector'='jdbc','url'='%s','table-name'='%s','username'='weir','password'='weir',
  'sink.delivery-guarantee'='exactly-once','sink.exactly-once.strategy'='%s');`, c.key, url, table, c.strategy)
			if _, err := runScript(t, billsTable(t, t.TempDir())+sink+"INSERT INTO j SELECT * FROM bills;"); err != nil {
				t.Fatal(err)
			}
			if got := dumpTable(t, db, table); got != commitCSV {
				t.Fatalf("%s after the job:\n%s\nwant\n%s", table, got, commitCSV)
			}
			res, err := runScript(t, genTable+sink+"INSERT INTO j SELECT * FROM gen;")
			wantNeverCommits(t, res, err, "j")
		})
	}
}

func dumpTable(t *testing.T, db *sql.DB, table string) string {
	t.Helper()
	rows, err := db.Query("SELECT account_id, amount, DATE_FORMAT(ts, '%Y-%m-%d %H:%i:%s.%f') FROM " + table + " ORDER BY ts")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		var a, amount, ts string
		if err := rows.Scan(&a, &amount, &ts); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%s,%s,%s\n", a, amount, ts[:len(ts)-3])
	}
	return b.String()
}

// jdbcURL is Flink's jdbc:mysql://host:port/db for a Go MySQL DSN.
func jdbcURL(t *testing.T, dsn string) string {
	t.Helper()
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("jdbc:mysql://%s/%s", cfg.Addr, cfg.DBName)
}
