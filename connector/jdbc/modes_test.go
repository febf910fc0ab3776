package jdbc

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/weirstream/weir/delivery"
	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
)

// A changelog into a keyed table: +I/+U upsert, -D deletes, -U deletes
// (Flink's behaviour); within one batch the last change per key wins.
func TestUpsertChangelog(t *testing.T) {
	eachDB(t, func(t *testing.T, db *testDB) {
		tbl := db.table(t, "ups", "id INT NOT NULL PRIMARY KEY, name VARCHAR(20), n INT")
		s := db.newSink(t, tbl, Guarantee(delivery.AtLeastOnce), BufferFlush(3, 0))
		writeAll(t, s, wctx("job", 0, 1, 0), 1,
			ins(1, "a", 1), ins(2, "b", 2), ins(3, "c", 3), // flushed by size
			row(event.UpdateBefore, 1, "a", 1), row(event.UpdateAfter, 1, "a2", 10), // one batch: +U wins
			row(event.Delete, 2, "b", 2),
			ins(4, "d", 4), row(event.UpdateBefore, 3, "c", 3), // -U alone deletes
			ins(5, nil, nil))
		equal(t, "table", db.rows(t, tbl), []string{"1|a2|10", "4|d|4", "5||"})
	})
}

// Append mode batches plain INSERTs; the interval timer flushes a partial
// batch without any further call.
func TestAppendIntervalFlush(t *testing.T) {
	eachDB(t, func(t *testing.T, db *testDB) {
		tbl := db.table(t, "app", "id INT NOT NULL, name VARCHAR(20)")
		s := db.newSink(t, tbl, Guarantee(delivery.None), BufferFlush(1000, 30*time.Millisecond))
		w, err := s.CreateWriter(wctx("job", 0, 1, 0))
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		for _, r := range []event.Record{ins(1, "a"), ins(1, "a"), ins(2, "b")} {
			if err := w.Write(r); err != nil {
				t.Fatal(err)
			}
		}
		if !within(t, 5*time.Second, func() bool { return len(db.rows(t, tbl)) == 3 }) {
			t.Fatalf("interval flush did not happen: %v", db.rows(t, tbl))
		}
		equal(t, "table", db.rows(t, tbl), []string{"1|a", "1|a", "2|b"})
		if err := w.Write(row(event.Delete, 1, "a")); err == nil || !strings.Contains(err.Error(), "needs a key") {
			t.Errorf("a -D row into an append sink: got %v, want an error that asks for a key", err)
		}
	})
}

// Bad rows fail with an error that names the table, the key and the column.
func TestBadRowErrors(t *testing.T) {
	eachDB(t, func(t *testing.T, db *testDB) {
		tbl := db.table(t, "bad", "id INT NOT NULL PRIMARY KEY, name VARCHAR(5), n INT")
		cases := []struct {
			name string
			recs []event.Record
			opts []Opt
			want []string
		}{
			{"too long", []event.Record{ins(1, "ok", 1), ins(7, "much too long", 2), ins(3, "ok", 3)}, nil,
				[]string{`table "` + tbl + `"`, "key id=7", `column "name"`, "value too long"}},
			{"type", []event.Record{ins(1, "ok", 1), ins(8, "ok", "eight")}, nil,
				[]string{`table "` + tbl + `"`, "key id=8", `column "n"`, "column's type"}},
			{"duplicate", []event.Record{ins(9, "a", 1), ins(9, "b", 2)}, []Opt{Append()},
				[]string{`table "` + tbl + `"`, "id=9", `column "id"`, "duplicate key"}},
			{"null", []event.Record{ins(10, "a", 1), ins(nil, "b", 2)}, []Opt{Append()},
				[]string{`table "` + tbl + `"`, `column "id"`, "NULL"}},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				s := db.newSink(t, tbl, append([]Opt{Guarantee(delivery.AtLeastOnce)}, c.opts...)...)
				w, err := s.CreateWriter(wctx("job", 0, 1, 0))
				if err != nil {
					t.Fatal(err)
				}
				defer w.Close()
				for _, r := range c.recs {
					if err = w.Write(r); err != nil {
						break
					}
				}
				if err == nil {
					err = w.Flush(true)
				}
				if !errors.Is(err, ErrBadRow) {
					t.Fatalf("got %v, want a bad row error", err)
				}
				for _, sub := range c.want {
					if !strings.Contains(err.Error(), sub) {
						t.Errorf("error %q lacks %q", err, sub)
					}
				}
				t.Log(err)
			})
		}
	})
}

// The checkpoint-table sink applies a replayed checkpoint once: committing
// the same committable twice, even from a new committer, changes nothing.
func TestCheckpointTableReplay(t *testing.T) {
	eachDB(t, func(t *testing.T, db *testDB) {
		tbl := db.table(t, "wal", "id INT NOT NULL, v INT")
		job := db.job(t)
		s := db.newSink(t, tbl, Guarantee(delivery.ExactlyOnce), ExactlyOnceStrategy(StrategyCheckpointTable))
		w := wctx(job, 0, 1, 0)
		cs := writeAll(t, s, w, 1, ins(1, 10), ins(2, 20), ins(2, 20))
		if len(db.rows(t, tbl)) != 0 {
			t.Fatal("rows visible before the commit")
		}
		for i := 0; i < 2; i++ {
			if err := commit(t, s, w, 1, cs); err != nil {
				t.Fatal(err)
			}
		}
		// Restore of checkpoint 1: the same committable once more.
		if err := commit(t, s, wctx(job, 0, 1, 1), 1, cs); err != nil {
			t.Fatal(err)
		}
		equal(t, "after three commits of checkpoint 1", db.rows(t, tbl), []string{"1|10", "2|20", "2|20"})
		cs2 := writeAll(t, s, wctx(job, 0, 1, 1), 2, ins(3, 30))
		if err := commit(t, s, w, 2, cs2); err != nil {
			t.Fatal(err)
		}
		equal(t, "after checkpoint 2", db.rows(t, tbl), []string{"1|10", "2|20", "2|20", "3|30"})
		got := db.query(t, "SELECT checkpoint_id FROM weir_sink_checkpoints WHERE job = "+db.d.placeholder(1), job)
		if len(got) != 1 || got[0][0] != "2" {
			t.Errorf("bookkeeping rows %v, want one at checkpoint 2", got)
		}
	})
}

// XA: two prepared transactions; the first was committed before the process
// died. A new committer commits both: each once, nothing left prepared.
func TestXACommitAfterPartialCommit(t *testing.T) {
	eachDB(t, func(t *testing.T, db *testDB) {
		tbl := db.table(t, "xa2", "id INT NOT NULL, v INT")
		job := db.job(t)
		s := db.newSink(t, tbl, Guarantee(delivery.ExactlyOnce), ExactlyOnceStrategy(StrategyXA))
		c1 := writeAll(t, s, wctx(job, 0, 2, 0), 5, ins(1, 10), ins(2, 20))
		c2 := writeAll(t, s, wctx(job, 1, 2, 0), 5, ins(3, 30))
		if len(c1) != 1 || len(c2) != 1 {
			t.Fatalf("committables %q %q, want one xid each", c1, c2)
		}
		both := append(c1, c2...)
		if got := db.prepared(t, "weir:"+job); len(got) != 2 {
			t.Fatalf("prepared %v, want 2", got)
		}
		if len(db.rows(t, tbl)) != 0 {
			t.Fatal("prepared rows are visible")
		}
		db.xaEnd(t, db.d.xaCommit(string(c1[0]))) // the first made it; then the process died
		if err := commit(t, s, wctx(job, 0, 1, 5), 5, both); err != nil {
			t.Fatal(err)
		}
		equal(t, "table", db.rows(t, tbl), []string{"1|10", "2|20", "3|30"})
		if err := commit(t, s, wctx(job, 0, 1, 5), 5, both); err != nil { // and once more: idempotent
			t.Fatal(err)
		}
		equal(t, "table after a second commit", db.rows(t, tbl), []string{"1|10", "2|20", "3|30"})
		if got := db.prepared(t, "weir:"+job); len(got) != 0 {
			t.Errorf("left prepared: %v", got)
		}
	})
}

// XA: a committable whose transaction was rolled back behind the sink's
// back is data loss, named, never success.
func TestXALostTransactionIsDataLoss(t *testing.T) {
	eachDB(t, func(t *testing.T, db *testDB) {
		tbl := db.table(t, "xal", "id INT NOT NULL, v INT")
		job := db.job(t)
		s := db.newSink(t, tbl, Guarantee(delivery.ExactlyOnce), ExactlyOnceStrategy(StrategyXA))
		cs := writeAll(t, s, wctx(job, 0, 1, 0), 3, ins(1, 10))
		db.xaEnd(t, db.d.xaRollback(string(cs[0])))
		err := commit(t, s, wctx(job, 0, 1, 3), 3, cs)
		if !errors.Is(err, operator.ErrDataLoss) || !strings.Contains(err.Error(), string(cs[0])) {
			t.Fatalf("got %v, want data loss naming %s", err, cs[0])
		}
	})
}

// XA recovery: a writer restored from checkpoint 4 rolls back what was
// prepared for later checkpoints and keeps the rest for its committer.
func TestXARecoveryRollsBackNewer(t *testing.T) {
	eachDB(t, func(t *testing.T, db *testDB) {
		tbl := db.table(t, "xar", "id INT NOT NULL, v INT")
		job := db.job(t)
		s := db.newSink(t, tbl, Guarantee(delivery.ExactlyOnce), ExactlyOnceStrategy(StrategyXA))
		old := writeAll(t, s, wctx(job, 1, 2, 3), 4, ins(1, 10)) // seq 4: checkpoint 4
		newer := writeAll(t, s, wctx(job, 1, 2, 4), 5, ins(2, 20))
		other := writeAll(t, s, wctx(job, 0, 2, 4), 5, ins(3, 30)) // subtask 0: not ours
		// Rescaled to parallelism 1: subtask 0 owns old subtasks 0 and 1.
		w, err := s.CreateWriter(wctx(job, 0, 1, 4))
		if err != nil {
			t.Fatal(err)
		}
		w.Close()
		got := db.prepared(t, "weir:"+job)
		if len(got) != 1 || got[0] != string(old[0]) {
			t.Fatalf("prepared after recovery: %v, want only %s (rolled back %s, %s)", got, old[0], newer[0], other[0])
		}
		if err := commit(t, s, wctx(job, 0, 1, 4), 4, old); err != nil {
			t.Fatal(err)
		}
		equal(t, "table", db.rows(t, tbl), []string{"1|10"})
	})
}

// Interval flushes write into the open XA transaction from the timer
// goroutine; the rows stay invisible until the commit.
func TestXAIntervalFlushStaysInvisible(t *testing.T) {
	eachDB(t, func(t *testing.T, db *testDB) {
		tbl := db.table(t, "xai", "id INT NOT NULL, v INT")
		job := db.job(t)
		s := db.newSink(t, tbl, Guarantee(delivery.ExactlyOnce), ExactlyOnceStrategy(StrategyXA), BufferFlush(0, 10*time.Millisecond))
		w, err := s.CreateWriter(wctx(job, 0, 1, 0))
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		for i := 0; i < 5; i++ {
			if err := w.Write(ins(i, i)); err != nil {
				t.Fatal(err)
			}
			time.Sleep(15 * time.Millisecond)
		}
		if got := db.rows(t, tbl); len(got) != 0 {
			t.Fatalf("uncommitted rows visible: %v", got)
		}
		cs, err := w.PrepareCommit(1)
		if err != nil {
			t.Fatal(err)
		}
		if err := commit(t, s, wctx(job, 0, 1, 0), 1, cs); err != nil {
			t.Fatal(err)
		}
		equal(t, "table", db.rows(t, tbl), []string{"0|0", "1|1", "2|2", "3|3", "4|4"})
	})
}

// XA on a keyed table: while a prepared transaction is uncommitted, writes
// of the next interval would wait for its row locks, and its commit runs on
// the same goroutine. The writer defers them; rows still deferred at the
// next barrier become a write-ahead-log committable, applied once.
func TestXAUpsertDefersBehindPrepared(t *testing.T) {
	eachDB(t, func(t *testing.T, db *testDB) {
		tbl := db.table(t, "xad", "id INT NOT NULL PRIMARY KEY, v INT")
		job := db.job(t)
		s := db.newSink(t, tbl, Guarantee(delivery.ExactlyOnce), ExactlyOnceStrategy(StrategyXA), BufferFlush(1, 0))
		w, err := s.CreateWriter(wctx(job, 0, 1, 0))
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		c, err := s.CreateCommitter(wctx(job, 0, 1, 0))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		step := func(what string, fn func() error) {
			t.Helper()
			done := make(chan error, 1)
			go func() { done <- fn() }()
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("%s: %v", what, err)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("%s blocked (waiting for the locks of a prepared transaction?)", what)
			}
		}
		write := func(r event.Record) { step("write "+r.Value.(event.Row).String(), func() error { return w.Write(r) }) }
		prepare := func(id event.CheckpointID) (cs [][]byte) {
			step("prepare", func() (err error) { cs, err = w.PrepareCommit(id); return err })
			return cs
		}
		commitNow := func(id event.CheckpointID, cs [][]byte) {
			step("commit", func() error { return c.Commit(context.Background(), id, cs) })
		}
		write(ins(1, 10))
		cs1 := prepare(1)
		write(row(event.UpdateAfter, 1, 11)) // deferred: key 1 is locked by cs1
		write(ins(2, 20))
		cs2 := prepare(2)
		if len(cs1) != 1 || len(cs2) != 1 || cs2[0][0] != walMagic {
			t.Fatalf("committables %q, %q: want an xid, then a write-ahead-log batch", cs1, cs2)
		}
		commitNow(1, cs1)
		equal(t, "after checkpoint 1", db.rows(t, tbl), []string{"1|10"})
		write(row(event.UpdateAfter, 2, 21)) // deferred behind the batch
		commitNow(2, cs2)
		commitNow(2, cs2) // a replay is skipped
		equal(t, "after checkpoint 2", db.rows(t, tbl), []string{"1|11", "2|20"})
		write(row(event.UpdateAfter, 1, 12))
		cs3 := prepare(3)
		commitNow(3, cs3)
		equal(t, "after checkpoint 3", db.rows(t, tbl), []string{"1|12", "2|21"})
		if left := db.prepared(t, "weir:"+job+":"); len(left) != 0 {
			t.Errorf("left prepared: %v", left)
		}
	})
}

// XA names are unique per attempt. A job killed right after checkpoint 1,
// while the transaction of the next interval is open (XA START done, not
// prepared), leaves that branch on the server until the server drops the
// dead session; it is invisible to XA RECOVER, so recovery cannot roll it
// back. The restored attempt's first transaction has the same seq (the
// restored checkpoint + 1): with xids of job, sink, subtask and seq alone its
// XA START failed with XAER_DUPID (MySQL 1440). Then the same again one step
// later: checkpoint 2 prepared by the second attempt, crash before it
// completes, restore from 1, seq 2 reached a third time — recovery must
// still find and roll back the second attempt's branch, and commit the
// restored checkpoint's.
func TestXANamesAreUniquePerAttempt(t *testing.T) {
	eachDB(t, func(t *testing.T, db *testDB) {
		tbl := db.table(t, "xau", "id INT NOT NULL, v INT")
		job := db.job(t)
		attempt := func(restored event.CheckpointID) (*Sink, operator.SinkWriter) {
			s := db.newSink(t, tbl, Guarantee(delivery.ExactlyOnce), ExactlyOnceStrategy(StrategyXA))
			w, err := s.CreateWriter(wctx(job, 0, 1, restored))
			if err != nil {
				t.Fatal(err)
			}
			return s, w
		}
		write := func(w operator.SinkWriter, recs ...event.Record) {
			t.Helper()
			for _, r := range recs {
				if err := w.Write(r); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.Flush(false); err != nil {
				t.Fatalf("flush (XA START): %v", err)
			}
		}
		prepare := func(w operator.SinkWriter, id event.CheckpointID) [][]byte {
			t.Helper()
			cs, err := w.PrepareCommit(id)
			if err != nil || len(cs) != 1 {
				t.Fatalf("prepare %d: %q, %v", id, cs, err)
			}
			return cs
		}

		// Attempt 1: checkpoint 1 prepared and completed; the next
		// interval's transaction (seq 2) is open when the process dies.
		_, a := attempt(0)
		write(a, ins(1, 10))
		c1 := prepare(a, 1)
		write(a, ins(2, 20)) // a stays open: the server has not dropped its session yet
		defer a.Close()
		// The server has processed the disconnect of attempt 1's identity
		// lock session (see identityLease) and of the session that
		// prepared checkpoint 1, not yet that of its open XA session.
		a.(*xaWriter).lease.release()
		for _, h := range a.(*xaWriter).link.drop() {
			a.(*xaWriter).s.detach(h.sess, h.connID)
		}

		// Attempt 2 restores checkpoint 1: commits its transaction, then
		// opens seq 2 while attempt 1's seq 2 still exists.
		s2, b := attempt(1)
		if err := commit(t, s2, wctx(job, 0, 1, 1), 1, c1); err != nil {
			t.Fatal(err)
		}
		write(b, ins(2, 20))
		c2 := prepare(b, 2) // checkpoint 2 is never completed
		b.Close()

		// Attempt 3 restores checkpoint 1 again: attempt 2's seq 2 is
		// rolled back, and seq 2 opens a third time.
		s3, c := attempt(1)
		if got := db.prepared(t, "weir:"+job); len(got) != 0 {
			t.Fatalf("prepared after recovery: %v (attempt 2 prepared %s)", got, c2[0])
		}
		if err := commit(t, s3, wctx(job, 0, 1, 1), 1, c1); err != nil { // committed already: success
			t.Fatal(err)
		}
		write(c, ins(2, 20), ins(3, 30))
		c3 := prepare(c, 3)
		if err := commit(t, s3, wctx(job, 0, 1, 1), 3, c3); err != nil {
			t.Fatal(err)
		}
		c.Close()
		a.Close() // the server drops attempt 1's session: its open branch rolls back
		equal(t, "table", db.rows(t, tbl), []string{"1|10", "2|20", "3|30"})
		if got := db.prepared(t, "weir:"+job); len(got) != 0 {
			t.Errorf("left prepared: %v", got)
		}
		if string(c1[0]) == string(c2[0]) || string(c2[0]) == string(c3[0]) {
			t.Errorf("xids repeat across attempts: %s %s %s", c1[0], c2[0], c3[0])
		}
	})
}
