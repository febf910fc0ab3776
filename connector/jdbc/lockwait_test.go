package jdbc

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/weirstream/weir/delivery"
	"github.com/weirstream/weir/operator"
)

// TestLockWaitOnPreparedTransaction: subtask 0 prepares an XA transaction
// that wrote key 1; subtask 1 then writes key 1 and waits for its lock. The
// checkpoint that would commit it cannot complete while subtask 1 waits, so
// subtask 1 must fail after sink.lock-wait-timeout, saying why.
func TestLockWaitOnPreparedTransaction(t *testing.T) {
	eachDB(t, func(t *testing.T, db *testDB) {
		tbl := db.table(t, "lw", "id INT NOT NULL PRIMARY KEY, v INT")
		job := db.job(t) // rolls back what subtask 0 prepared
		s := db.newSink(t, tbl, Guarantee(delivery.ExactlyOnce), ExactlyOnceStrategy(StrategyXA), BufferFlush(1, 0),
			LockWaitTimeout(time.Second))
		if cs := writeAll(t, s, wctx(job, 0, 2, 0), 1, ins(1, 10)); len(cs) != 1 {
			t.Fatalf("subtask 0 prepared %q, want one xid", cs)
		}
		w, err := s.CreateWriter(wctx(job, 1, 2, 0))
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		done := make(chan error, 1)
		go func() { done <- w.Write(ins(1, 11)) }()
		select {
		case err = <-done:
		case <-time.After(30 * time.Second):
			t.Fatal("subtask 1's write still waits for the prepared transaction's lock")
		}
		var lw *LockWaitError
		if !errors.As(err, &lw) || !errors.Is(err, ErrLockWait) {
			t.Fatalf("got %v, want a *LockWaitError", err)
		}
		for _, want := range []string{`table "` + tbl + `"`, "subtask 1", "lock held by another transaction",
			"prepared XA transaction", "sink.lock-wait-timeout (1s)", "primary key", "parallelism", "checkpoint-table"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("message lacks %q: %v", want, err)
			}
		}
	})
}

func TestLockWaitDefault(t *testing.T) {
	s, err := New(URL("jdbc:postgresql://h/db"), Table("t"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ timeout, want time.Duration }{
		{0, DefaultLockWaitTimeout},
		{10 * time.Minute, DefaultLockWaitTimeout},
		{20 * time.Second, 10 * time.Second},
		{time.Second, time.Second},
	} {
		if got := s.lockWait(operator.WriterContext{CheckpointTimeout: c.timeout}); got != c.want {
			t.Errorf("checkpoint timeout %v: lock wait %v, want %v", c.timeout, got, c.want)
		}
	}
	off, _ := New(URL("jdbc:postgresql://h/db"), Table("t"), LockWaitTimeout(0))
	if got := off.lockWait(operator.WriterContext{CheckpointTimeout: time.Second}); got != 0 {
		t.Errorf("lock wait %v with the option 0, want 0 (the database's)", got)
	}
	tg := s.target.withLockWait(1500 * time.Millisecond)
	if tg.pg.RuntimeParams["lock_timeout"] != "1500" || s.target.pg.RuntimeParams["lock_timeout"] != "" {
		t.Errorf("lock_timeout %q (shared config %q)", tg.pg.RuntimeParams["lock_timeout"], s.target.pg.RuntimeParams["lock_timeout"])
	}
	m, _ := New(URL("jdbc:mysql://h/db"), Table("t"))
	if got := m.target.withLockWait(1500 * time.Millisecond).mysql.Params["innodb_lock_wait_timeout"]; got != "2" {
		t.Errorf("innodb_lock_wait_timeout %q, want 2 (whole seconds, rounded up)", got)
	}
}

// TestCancelAbortsBlockedWrite: a write waiting for a lock (the database's
// own, unbounded wait) returns once the subtask's context is cancelled, so
// stopping a job does not hang on it.
func TestCancelAbortsBlockedWrite(t *testing.T) {
	eachDB(t, func(t *testing.T, db *testDB) {
		tbl := db.table(t, "cw", "id INT NOT NULL PRIMARY KEY, v INT")
		holder, err := db.p.acquire(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		defer holder.release(true) // rolls the holder's transaction back
		if err := execAll(context.Background(), holder, db.d.begin()); err != nil {
			t.Fatal(err)
		}
		if _, err := holder.exec(context.Background(), "INSERT INTO "+tbl+" VALUES (1, 1)"); err != nil {
			t.Fatal(err)
		}
		s := db.newSink(t, tbl, BufferFlush(1, 0), LockWaitTimeout(0), MaxRetries(0))
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		wc := wctx("", 0, 1, 0)
		wc.Context = ctx
		w, err := s.CreateWriter(wc)
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		done := make(chan error, 1)
		go func() { done <- w.Write(ins(1, 2)) }()
		select {
		case err := <-done:
			t.Fatalf("the write did not wait for the holder's lock: %v", err)
		case <-time.After(300 * time.Millisecond):
		}
		cancel()
		select {
		case err = <-done:
		case <-time.After(20 * time.Second):
			t.Fatal("the blocked write ignores the cancelled context")
		}
		if err == nil {
			t.Fatal("a cancelled write reported success")
		}
	})
}
