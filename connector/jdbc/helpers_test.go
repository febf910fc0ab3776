package jdbc

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/internal/testsvc"
	"github.com/weirstream/weir/operator"
)

// testDB is a test's administrative handle on one real database.
type testDB struct {
	kind string // "mysql" or "postgres"
	url  string
	key  string // the sinks' key of closing (target.closingKey)
	d    dialect
	p    pool
}

// eachDB runs fn against MariaDB and PostgreSQL (testsvc skips or fails
// when they are not configured).
func eachDB(t *testing.T, fn func(t *testing.T, db *testDB)) {
	for _, kind := range []string{"mysql", "postgres"} {
		t.Run(kind, func(t *testing.T) { fn(t, openTestDB(t, kind)) })
	}
}

func openTestDB(t testing.TB, kind string) *testDB {
	t.Helper()
	var url string
	if kind == "mysql" {
		url = testsvc.MySQL(t)
	} else {
		url = testsvc.Postgres(t)
	}
	tg, err := parseTarget(url, "", "")
	if err != nil {
		t.Fatal(err)
	}
	p, err := tg.dialect.open(tg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.close() })
	return &testDB{kind: kind, url: url, key: tg.closingKey(), d: tg.dialect, p: p}
}

func (db *testDB) exec(t testing.TB, q string, args ...any) int64 {
	t.Helper()
	s, err := db.p.acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	n, err := s.exec(context.Background(), q, args...)
	s.release(err != nil)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

func (db *testDB) query(t testing.TB, q string, args ...any) [][]string {
	t.Helper()
	s, err := db.p.acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	rows, err := s.query(context.Background(), q, args...)
	s.release(err != nil)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return rows
}

// table creates a table with a unique name from the column definitions and
// drops it when the test ends.
func (db *testDB) table(t testing.TB, prefix, cols string) string {
	t.Helper()
	name := prefix + "_" + randHex(4)
	db.exec(t, "CREATE TABLE "+name+" ("+cols+")")
	t.Cleanup(func() { db.exec(t, "DROP TABLE IF EXISTS "+name) })
	return name
}

// rows returns the table's rows, each as "a|b|c", sorted.
func (db *testDB) rows(t testing.TB, table string) []string {
	t.Helper()
	var out []string
	for _, r := range db.query(t, "SELECT * FROM "+table) {
		out = append(out, strings.Join(r, "|"))
	}
	sort.Strings(out)
	return out
}

// prepared lists the prepared transactions whose ids start with prefix.
func (db *testDB) prepared(t testing.TB, prefix string) []string {
	t.Helper()
	s, err := db.p.acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer s.release(false)
	ids, err := db.d.xaRecover(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, id := range ids {
		if strings.HasPrefix(id, prefix) {
			out = append(out, id)
		}
	}
	return out
}

// job returns a fresh job id; prepared transactions it leaves behind (a
// failed test) are rolled back when the test ends, before its tables go.
func (db *testDB) job(t testing.TB) string {
	job := "j" + randHex(4)
	t.Cleanup(func() {
		for _, x := range db.prepared(t, "weir:"+job+":") {
			t.Logf("rolling back leftover %s", x)
			db.xaEnd(t, db.d.xaRollback(x))
		}
	})
	return job
}

// xaEnd runs an XA COMMIT or ROLLBACK, as a sink's committer would: once
// the server has dropped the sessions the sinks closed holding prepared
// branches (see handover.go), and waiting while the branch is still
// attached to the session that prepared it.
func (db *testDB) xaEnd(t testing.TB, stmt string) {
	t.Helper()
	var err error
	for i := 0; i < 50; i++ {
		s, aerr := db.p.acquire(context.Background())
		if aerr != nil {
			t.Fatal(aerr)
		}
		if err = awaitClosed(context.Background(), db.d, db.key, s, detachWait); err == nil {
			_, err = s.exec(context.Background(), stmt)
		}
		s.release(err != nil)
		if err == nil || !db.d.unknownXid(err) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("%s: %v", stmt, err)
	}
}

// kill ends connection id from another session, as an administrator would.
// kill terminates the server connection id from another session. It
// reports gone, and no error, when the connection had already closed: a
// sink's session ends when its job restarts, possibly between the sink
// naming it and the kill.
func (db *testDB) kill(id int64) (gone bool, err error) {
	s, err := db.p.acquire(context.Background())
	if err != nil {
		return false, err
	}
	defer func() { s.release(err != nil) }()
	if db.kind == "mysql" {
		_, err = s.exec(context.Background(), fmt.Sprintf("KILL %d", id))
		var me *mysql.MySQLError
		if errors.As(err, &me) && me.Number == 1094 { // ER_NO_SUCH_THREAD
			return true, nil
		}
		return false, err
	}
	rows, err := s.query(context.Background(), "SELECT pg_terminate_backend($1, 5000)", int32(id))
	if err != nil {
		return false, err
	}
	return rows[0][0] != "true", nil
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// newSink builds a sink on db with opts.
func (db *testDB) newSink(t testing.TB, table string, opts ...Opt) *Sink {
	t.Helper()
	s, err := New(append([]Opt{URL(db.url), Table(table), BufferFlush(100, 0)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func wctx(job string, subtask, parallelism int, restored event.CheckpointID) operator.WriterContext {
	return operator.WriterContext{Subtask: event.SubtaskID{Vertex: "Sink: test", Index: subtask},
		Parallelism: parallelism, JobID: job, Context: context.Background(), RestoredCheckpoint: restored}
}

func ins(fields ...any) event.Record {
	return event.Record{Value: event.Row{Kind: event.Insert, Fields: fields}}
}

func row(kind event.RowKind, fields ...any) event.Record {
	return event.Record{Value: event.Row{Kind: kind, Fields: fields}}
}

// writeAll writes recs through a fresh writer and returns what it prepared
// for checkpoint id, closing the writer.
func writeAll(t testing.TB, s *Sink, w operator.WriterContext, id event.CheckpointID, recs ...event.Record) [][]byte {
	t.Helper()
	wr, err := s.CreateWriter(w)
	if err != nil {
		t.Fatal(err)
	}
	defer wr.Close()
	for _, r := range recs {
		if err := wr.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := wr.Flush(true); err != nil {
		t.Fatal(err)
	}
	c, err := wr.PrepareCommit(id)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func commit(t testing.TB, s *Sink, w operator.WriterContext, id event.CheckpointID, cs [][]byte) error {
	t.Helper()
	c, err := s.CreateCommitter(w)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	return c.Commit(context.Background(), id, cs)
}

func equal(t testing.TB, what string, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("%s:\n got %v\nwant %v", what, got, want)
	}
}

func within(t testing.TB, d time.Duration, cond func() bool) bool {
	t.Helper()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if cond() {
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return cond()
}

func sortStrings(s []string) []string {
	sort.Strings(s)
	return s
}
