package session

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/internal/testsvc"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/sql/catalog"
)

// pgCDCTable is a PostgreSQL table captured by postgres-cdc in a test, with
// the WITH options that name it.
type pgCDCTable struct {
	db          *pgx.Conn
	dsn         string
	name, slot  string
	withOptions string
}

func newPGCDCTable(t *testing.T, rows int) *pgCDCTable {
	t.Helper()
	pc := testsvc.PostgresCDCTable(t, "bills", "CREATE TABLE %[1]s (id BIGINT PRIMARY KEY, k INT NOT NULL, amount BIGINT NOT NULL)",
		"ALTER TABLE %[1]s REPLICA IDENTITY FULL",
		fmt.Sprintf("INSERT INTO %%[1]s SELECT i, i %%%% 11, i FROM generate_series(1, %d) i", rows))
	dsn := pc.DSN
	c := &pgCDCTable{db: pc.DB, dsn: dsn, name: pc.Table, slot: pc.Slot}
	cfg, err := pgconn.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	c.withOptions = fmt.Sprintf(`'connector' = 'postgres-cdc', 'hostname' = '%s', 'port' = '%d', 'username' = '%s',
  'password' = '%s', 'database-name' = '%s', 'schema-name' = 'public', 'table-name' = '%s', 'slot.name' = '%s',
  'decoding.plugin.name' = 'pgoutput'`, cfg.Host, cfg.Port, cfg.User, cfg.Password, cfg.Database, c.name, c.slot)
	return c
}

// write runs n transactions of inserts, updates (of the group key too) and
// deletes on the table.
func (c *pgCDCTable) write(t *testing.T, n int, seed uint64) {
	ctx := context.Background()
	db, err := pgx.Connect(ctx, c.dsn)
	if err != nil {
		t.Error(err)
		return
	}
	defer db.Close(ctx)
	rng := rand.New(rand.NewPCG(seed, 7))
	next := int64(1_000_000 * seed) // each writer its own new ids
	for range n {
		stmts := []string{}
		for range 1 + rng.IntN(3) {
			id := 1 + rng.IntN(2000)
			switch op := rng.IntN(10); {
			case op < 3:
				next++
				stmts = append(stmts, fmt.Sprintf("INSERT INTO %s VALUES (%d, %d, %d)", c.name, next, rng.IntN(11), rng.IntN(1000)))
			case op < 6:
				stmts = append(stmts, fmt.Sprintf("UPDATE %s SET amount = amount + %d WHERE id = %d", c.name, 1+rng.IntN(99), id))
			case op < 8:
				stmts = append(stmts, fmt.Sprintf("UPDATE %s SET k = %d WHERE id = %d", c.name, rng.IntN(11), id))
			default:
				stmts = append(stmts, fmt.Sprintf("DELETE FROM %s WHERE id = %d", c.name, id))
			}
		}
		if _, err := db.Exec(ctx, "BEGIN; "+strings.Join(stmts, "; ")+"; COMMIT"); err != nil {
			t.Error(err)
			return
		}
	}
}

// totals is SELECT k, SUM(amount), COUNT(*) … GROUP BY k as "k:sum:count"
// lines, sorted.
func pgTotals(t *testing.T, db *pgx.Conn, table string) string {
	t.Helper()
	rows, err := db.Query(context.Background(), "SELECT k, SUM(amount)::bigint, COUNT(*) FROM "+table+" GROUP BY k ORDER BY k")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for rows.Next() {
		var k int32
		var sum, cnt int64
		if err := rows.Scan(&k, &sum, &cnt); err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%d:%d:%d", k, sum, cnt))
	}
	return strings.Join(out, " ")
}

func mariaTotals(t *testing.T, db *sql.DB, table string) string {
	t.Helper()
	rows, err := db.Query("SELECT k, total, cnt FROM " + table + " ORDER BY k")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var k, sum, cnt int64
		if err := rows.Scan(&k, &sum, &cnt); err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%d:%d:%d", k, sum, cnt))
	}
	return strings.Join(out, " ")
}

// faultySource fails its reader once in the snapshot and once in the
// stream, each time after a checkpoint completed in that phase (the first
// one holding 300 snapshot rows or more), so each restart restores a
// checkpoint taken in that phase.
type faultySource struct {
	operator.Source
	failures atomic.Int32
}

func (s *faultySource) CreateReader(ctx operator.ReaderContext) (operator.SourceReader, error) {
	r, err := s.Source.CreateReader(ctx)
	if err != nil {
		return nil, err
	}
	return &faultyReader{SourceReader: r, s: s, streamMark: -1, taken: map[event.CheckpointID]int{}}, nil
}

type faultyReader struct {
	operator.SourceReader
	s       *faultySource
	emitted int
	// completed: a checkpoint completed in this attempt; streamMark is
	// emitted when one first completed past the snapshot (-1: none yet).
	completed  bool
	streamMark int
	hold       bool
	taken      map[event.CheckpointID]int // rows emitted at each checkpoint
}

func (r *faultyReader) SnapshotState(id event.CheckpointID) ([]operator.SplitState, error) {
	r.taken[id] = r.emitted
	return r.SourceReader.SnapshotState(id)
}

// Available wakes a held reader every few ms to look again.
func (r *faultyReader) Available() <-chan struct{} {
	if !r.hold {
		return r.SourceReader.Available()
	}
	c := make(chan struct{})
	time.AfterFunc(5*time.Millisecond, func() { close(c) })
	return c
}

type countingOutput struct {
	operator.ReaderOutput
	n *int
}

func (o countingOutput) Collect(split string, r event.Record) {
	*o.n++
	o.ReaderOutput.Collect(split, r)
}

func (r *faultyReader) Poll(out operator.ReaderOutput) (operator.ReaderStatus, error) {
	snap := r.SourceReader.(interface{ Snapshotting() bool }).Snapshotting()
	r.hold = false
	switch f := r.s.failures.Load(); {
	case f == 0 && snap && r.emitted >= 300 && !r.completed:
		r.hold = true // hold the snapshot until a checkpoint completes in it
		return operator.NothingAvailable, nil
	case f == 0 && snap && r.completed && r.emitted >= 300, f == 1 && r.streamMark >= 0 && r.emitted >= r.streamMark+100:
		r.s.failures.Add(1)
		return 0, fmt.Errorf("injected failure %d after %d rows (snapshot %v)", f+1, r.emitted, snap)
	}
	return r.SourceReader.Poll(countingOutput{ReaderOutput: out, n: &r.emitted})
}

func (r *faultyReader) NotifyCheckpointComplete(id event.CheckpointID) error {
	r.completed = r.completed || r.taken[id] >= 300
	if r.streamMark < 0 && !r.SourceReader.(interface{ Snapshotting() bool }).Snapshotting() {
		r.streamMark = r.emitted
	}
	return r.SourceReader.NotifyCheckpointComplete(id)
}

// A bills table in PostgreSQL, captured by postgres-cdc while transactions
// insert, update (amounts and group keys) and delete rows, through a GROUP
// BY into MariaDB exactly once (XA). The job fails once in the snapshot
// and once in the stream; each restart restores the last checkpoint. The
// MariaDB totals end equal to the same GROUP BY computed on the source
// table.
func TestPostgresCDCGroupByExactlyOnceAcrossFailures(t *testing.T) {
	src := newPGCDCTable(t, 2000)
	dsn := testsvc.MySQL(t)
	mdb, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer mdb.Close()
	dst := "cdc_totals_" + src.name[len("bills_"):]
	if _, err := mdb.Exec("CREATE TABLE " + dst + " (k BIGINT PRIMARY KEY, total BIGINT, cnt BIGINT)"); err != nil {
		t.Fatal(err)
	}
	defer mdb.Exec("DROP TABLE " + dst)
	script := fmt.Sprintf(`SET 'execution.checkpointing.interval' = '100 ms';
SET 'restart-strategy.type' = 'fixed-delay';
SET 'restart-strategy.fixed-delay.attempts' = '5';
SET 'restart-strategy.fixed-delay.delay' = '10 ms';
CREATE TABLE bills (id BIGINT, k INT, amount BIGINT, PRIMARY KEY (id) NOT ENFORCED) WITH (%s);
CREATE TABLE totals (k BIGINT, total BIGINT, cnt BIGINT, PRIMARY KEY (k) NOT ENFORCED) WITH ('connector' = 'jdbc',
  'url' = '%s', 'table-name' = '%s', 'username' = 'weir', 'password' = 'weir',
  'sink.delivery-guarantee' = 'exactly-once', 'sink.exactly-once.strategy' = 'xa');
INSERT INTO totals SELECT k, SUM(amount), COUNT(*) FROM bills GROUP BY k;`, src.withOptions, jdbcURL(t, dsn), dst)
	runThroughTwoFailures(t, script, cdcRun{
		connector: "postgres-cdc",
		name:      "cdc" + src.name[len("bills_"):len("bills_")+6],
		write: func(ctx context.Context, fs *faultySource) {
			src.write(t, 300, 1)
			// The second failure needs 100 stream rows after a checkpoint
			// completed in the stream: if the job caught up with the first
			// 300 transactions before that, more must come.
			for seed := uint64(3); fs.failures.Load() < 2 && ctx.Err() == nil; seed++ {
				src.write(t, 10, seed)
			}
		},
		final: func() { src.write(t, 100, 2) },
		want:  func() string { return pgTotals(t, src.db, src.name) },
		got:   func() string { return mariaTotals(t, mdb, dst) },
	})
}

// A postgres-cdc table without a PRIMARY KEY, or with an option Weir does
// not implement, is refused when the job is planned, naming it.
func TestPostgresCDCPlanErrors(t *testing.T) {
	with := `'connector' = 'postgres-cdc', 'hostname' = 'localhost', 'username' = 'u', 'database-name' = 'd',
  'table-name' = 't', 'slot.name' = 's'`
	for _, c := range []struct{ ddl, want string }{
		{"CREATE TABLE src (id BIGINT, v BIGINT) WITH (" + with + ")", `'PRIMARY KEY': a postgres-cdc table needs a primary key`},
		{"CREATE TABLE src (id BIGINT, v BIGINT, PRIMARY KEY (id) NOT ENFORCED) WITH (" + with +
			", 'scan.incremental.snapshot.chunk.size' = '100')", `does not support these options of Flink's 'postgres-cdc' connector yet: scan.incremental.snapshot.chunk.size`},
		{"CREATE TABLE src (id BIGINT, v BIGINT, PRIMARY KEY (id) NOT ENFORCED) WITH (" + with +
			", 'scan.startup.mode' = 'earliest-offset')", `'scan.startup.mode' = 'earliest-offset': want initial or latest-offset`},
		{"CREATE TABLE src (id BIGINT, v BIGINT, PRIMARY KEY (id) NOT ENFORCED) WITH (" + strings.Replace(with, "'slot.name' = 's'", "'slot.nam' = 's'", 1) + ")",
			`Unsupported options found for 'postgres-cdc'. Unsupported options: slot.nam`},
	} {
		s := New()
		err := s.Execute(c.ddl + `;
CREATE TABLE out (id BIGINT, v BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO out SELECT id, v FROM src;`)
		if err == nil {
			_, _, err = s.Job("plan")
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s:\n error %v\n want %q", c.ddl, err, c.want)
		}
	}
}

// cdcRun is a CDC job through two injected failures: write feeds the
// source table until both happened, final writes once more after them,
// and the MariaDB totals (got) must then settle on the source's (want).
type cdcRun struct {
	connector, name string
	write           func(ctx context.Context, fs *faultySource)
	final           func()
	want, got       func() string
}

// runThroughTwoFailures runs script with r.connector's source wrapped in a
// faultySource and checks that the totals end equal, within 30 s.
func runThroughTwoFailures(t *testing.T, script string, r cdcRun) {
	t.Helper()
	s := New()
	fs := &faultySource{}
	orig := s.Connectors.Sources[r.connector]
	s.Connectors.Sources[r.connector] = func(tb *catalog.Table) (operator.Source, error) {
		inner, err := orig(tb)
		fs.Source = inner
		return fs, err
	}
	if err := s.Execute(script); err != nil {
		t.Fatal(err)
	}
	s.Settings["execution.checkpointing.dir"] = filepath.Join(t.TempDir(), "checkpoints")
	s.Settings["pipeline.name"] = r.name
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := s.Run(ctx, "cdc", nil)
		done <- err
	}()
	wrote := make(chan struct{})
	go func() {
		defer close(wrote)
		r.write(ctx, fs)
	}()
	// The writer goes on through both failures; the totals must then
	// settle on the source's.
	for fs.failures.Load() < 2 {
		select {
		case err := <-done:
			t.Fatalf("job ended: %v", err)
		case <-time.After(20 * time.Millisecond):
		}
	}
	<-wrote
	r.final()
	want := r.want()
	deadline := time.Now().Add(30 * time.Second)
	for got := r.got(); got != want; got = r.got() {
		if time.Now().After(deadline) {
			t.Fatalf("MariaDB totals after 30 s:\n %s\nwant (from the source table):\n %s", got, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
		t.Fatalf("job: %v", err)
	}
}
