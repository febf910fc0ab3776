package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/weirstream/weir/examples/billing/pipeline"
	"github.com/weirstream/weir/internal/savepointtest"
	"github.com/weirstream/weir/internal/testsvc"
	"github.com/weirstream/weir/runtime"
)

// rescaleRun is one acceptance run of issue 12: a SQL job from Kafka into
// MariaDB, stopped with a savepoint on the heap backend at parallelism 2
// once it has the first half of the input, then restored on Pebble at
// parallelism 3 and at 1 — each restore into MariaDB as the stop left it —
// reading the second half. The table must equal, exactly, the result
// computed from the input without Weir: after the first half at the stop,
// after all of it at the end of each restore.
type rescaleRun struct {
	script, job, table string
	db                 *sql.DB
	// produce writes half h (0, 1) of the input to Kafka and returns how
	// many records it wrote.
	produce func(h int) int64
	// want is the table expected after the first half (0) and after all
	// of the input (1), as read returns it.
	want [2]map[string]string
	read func() (map[string]string, error)
}

func (r *rescaleRun) run(t *testing.T) {
	dir := t.TempDir()
	first := r.stopWhen(t, dir, nil, "hashmap", 2, r.produce(0), 0)
	atStop := saveAtStop(t, r.db, r.table, r.job)
	second := r.produce(1)
	for _, par := range []int{3, 1} {
		t.Run(fmt.Sprintf("pebble parallelism %d", par), func(t *testing.T) {
			atStop.reset(t)
			got := r.stopWhen(t, dir, &first, "pebble", par, second, 1)
			if got.Restored == 0 {
				t.Fatalf("the run did not restore the savepoint %s", first.Path)
			}
		})
	}
}

// stopWhen runs the job on backend at parallelism par (restoring from, if
// set) until it read n records and the table holds want[h], stops it with
// a savepoint and checks the table then.
func (r *rescaleRun) stopWhen(t *testing.T, dir string, from *savepointtest.Stopped, backend string, par int, n int64, h int) savepointtest.Stopped {
	t.Helper()
	s, err := loadScript(&cobra.Command{}, r.script, []string{
		"pipeline.name=" + r.job,
		"execution.checkpointing.interval=200 ms",
		"execution.checkpointing.dir=" + filepath.Join(t.TempDir(), "checkpoints"),
		"parallelism.default=" + strconv.Itoa(par),
		"state.backend.type=" + backend,
		"state.backend.local-dir=" + t.TempDir(),
	})
	if err != nil {
		t.Fatal(err)
	}
	jg, opts, err := s.Job(r.job)
	if err != nil {
		t.Fatal(err)
	}
	if from != nil {
		opts.Restore = from.Path
	}
	var records atomic.Int64
	opts.Progress = func(p runtime.Progress) { records.Store(p.RecordsRead) }
	what := fmt.Sprintf("%s at parallelism %d to read %d records and write the expected table", backend, par, n)
	st := savepointtest.StopWhen(t, jg, opts, dir, what, func() bool {
		got, err := r.read()
		return err == nil && records.Load() == n && reflect.DeepEqual(got, r.want[h])
	})
	got, err := r.read()
	if err != nil {
		t.Fatal(err)
	}
	if diff := diffTables(got, r.want[h]); diff != "" {
		t.Fatalf("%s after the stop-with-savepoint: %s", r.table, diff)
	}
	return st
}

// diffTables says how got differs from want (up to 10 rows), or "".
func diffTables(got, want map[string]string) string {
	var d []string
	for k, w := range want {
		if g := got[k]; g != w && len(d) < 10 {
			d = append(d, fmt.Sprintf("%s: got %q, want %q", k, g, w))
		}
	}
	for k, g := range got {
		if _, ok := want[k]; !ok && len(d) < 10 {
			d = append(d, fmt.Sprintf("%s: got %q, want no row", k, g))
		}
	}
	return strings.Join(d, "; ")
}

// atStop keeps what a stop-with-savepoint left in MariaDB — the result
// table and the JDBC sink's bookkeeping rows of the job — so that each
// restore of the savepoint starts from it, as a restore of a backup would.
type atStop struct {
	db                      *sql.DB
	table, job, copy, books string
}

func saveAtStop(t *testing.T, db *sql.DB, table, job string) *atStop {
	t.Helper()
	a := &atStop{db: db, table: table, job: job, copy: table + "_at_stop", books: table + "_books_at_stop"}
	a.exec(t, "CREATE TABLE "+a.copy+" AS SELECT * FROM "+table)
	a.exec(t, "CREATE TABLE "+a.books+" AS SELECT * FROM weir_sink_checkpoints WHERE job = ?", job)
	t.Cleanup(func() { _, _ = db.Exec("DROP TABLE IF EXISTS " + a.copy + ", " + a.books) })
	return a
}

func (a *atStop) reset(t *testing.T) {
	t.Helper()
	a.exec(t, "DELETE FROM "+a.table)
	a.exec(t, "INSERT INTO "+a.table+" SELECT * FROM "+a.copy)
	a.exec(t, "DELETE FROM weir_sink_checkpoints WHERE job = ?", a.job)
	a.exec(t, "INSERT INTO weir_sink_checkpoints SELECT * FROM "+a.books)
}

func (a *atStop) exec(t *testing.T, q string, args ...any) {
	t.Helper()
	if _, err := a.db.Exec(q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

func openMariaDB(t *testing.T) (*sql.DB, string) {
	dsn := testsvc.MySQL(t)
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db, "jdbc:mysql://" + hostPort(dsn, "tcp(", ")") + "/weir"
}

// The billing job (examples/billing/billing.sql: bills from Kafka,
// de-duplicated, summed per account into MariaDB exactly once), made
// unbounded. A bill's duplicate may come in the other half, so the
// savepoint's de-duplication state decides whether it counts.
func TestBillingSavepointHeapToPebbleRescale(t *testing.T) {
	r := newBillingRun(t, 3000, "mysql")
	db, _ := openMariaDB(t)
	path := r.script()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	unbounded := strings.Replace(string(src), "'scan.bounded.mode' = 'latest-offset',", "", 1)
	if err := os.WriteFile(path, []byte(unbounded), 0o644); err != nil {
		t.Fatal(err)
	}
	h := len(r.events) / 2
	halves := [2][]pipeline.Bill{r.events[:h], r.events[h:]}
	rr := &rescaleRun{script: path, job: fmt.Sprintf("billing-rescale-%d", time.Now().UnixNano()), table: r.table, db: db,
		want: [2]map[string]string{truthTable(r.events[:h]), truthTable(r.events)},
		read: func() (map[string]string, error) { return queryTotals(db, r.table) }}
	rr.produce = func(i int) int64 {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if i == 0 { // the dead-letter topic is the operator's to create
			if err := ProduceBills(ctx, r.brokers, r.dlq, 1, nil); err != nil {
				t.Fatal(err)
			}
		}
		if err := ProduceBills(ctx, r.brokers, r.topic, 3, halves[i]); err != nil {
			t.Fatal(err)
		}
		return int64(len(halves[i]))
	}
	rr.run(t)
}

// truthTable is pipeline.Truth as queryTotals reads the table.
func truthTable(events []pipeline.Bill) map[string]string {
	out := map[string]string{}
	for id, tot := range pipeline.Truth(events) {
		out[id] = tot.Total.StringFixed(2) + "/" + strconv.FormatInt(tot.Count, 10)
	}
	return out
}

// A SQL group aggregation with retraction, Kafka → MariaDB: the number of
// keys per count. As a key's count grows, its old count's row is
// retracted (updated, or deleted when no key has that count any more).
func TestSQLGroupAggregationSavepointHeapToPebbleRescale(t *testing.T) {
	db, url := openMariaDB(t)
	brokers := testsvc.Kafka(t)
	suffix := strconv.FormatInt(time.Now().UnixNano(), 10)
	topic, table := "keys-"+suffix, "count_of_counts_"+suffix
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers), kgo.DefaultProduceTopic(topic))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	testsvc.CreateTopic(t, kadm.NewClient(cl), topic, 3, nil)
	if _, err := db.Exec("CREATE TABLE " + table + " (cnt BIGINT PRIMARY KEY, n BIGINT NOT NULL)"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = db.Exec("DROP TABLE IF EXISTS " + table) })
	script := filepath.Join(t.TempDir(), "counts.sql")
	err = os.WriteFile(script, []byte(fmt.Sprintf(`
SET 'execution.checkpointing.mode' = 'EXACTLY_ONCE';
CREATE TABLE words (k STRING) WITH ('connector' = 'kafka', 'topic' = '%s', 'properties.bootstrap.servers' = '%s',
  'scan.startup.mode' = 'earliest-offset', 'format' = 'json');
CREATE TABLE counts (cnt BIGINT, n BIGINT, PRIMARY KEY (cnt) NOT ENFORCED) WITH ('connector' = 'jdbc',
  'url' = '%s', 'table-name' = '%s', 'username' = 'weir', 'password' = 'weir', 'sink.delivery-guarantee' = 'exactly-once');
INSERT INTO counts SELECT cnt, COUNT(*) AS n FROM (SELECT k, COUNT(*) AS cnt FROM words GROUP BY k) GROUP BY cnt;
`, topic, brokers, url, table)), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	var keys [2][]string
	for i := 0; i < 3000; i++ {
		keys[i*2/3000] = append(keys[i*2/3000], fmt.Sprintf("k%d", (i*i+7*i)%61))
	}
	rr := &rescaleRun{script: script, job: "counts-" + suffix, table: table, db: db,
		want: [2]map[string]string{countOfCounts(keys[0]), countOfCounts(append(append([]string(nil), keys[0]...), keys[1]...))},
		read: func() (map[string]string, error) { return queryCounts(db, table) }}
	rr.produce = func(h int) int64 {
		recs := make([]*kgo.Record, len(keys[h]))
		for i, k := range keys[h] {
			v, _ := json.Marshal(map[string]string{"k": k})
			recs[i] = &kgo.Record{Key: []byte(k), Value: v}
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
		return int64(len(recs))
	}
	rr.run(t)
}

// countOfCounts computes the query's result from the keys directly.
func countOfCounts(keys []string) map[string]string {
	perKey := map[string]int{}
	for _, k := range keys {
		perKey[k]++
	}
	perCount := map[int]int{}
	for _, n := range perKey {
		perCount[n]++
	}
	out := map[string]string{}
	for c, n := range perCount {
		out[strconv.Itoa(c)] = strconv.Itoa(n)
	}
	return out
}

func queryCounts(db *sql.DB, table string) (map[string]string, error) {
	rows, err := db.Query("SELECT cnt, n FROM " + table)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var c, n int64
		if err := rows.Scan(&c, &n); err != nil {
			return nil, err
		}
		out[strconv.FormatInt(c, 10)] = strconv.FormatInt(n, 10)
	}
	return out, rows.Err()
}
