package jdbc

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/weirstream/weir/delivery"
	"github.com/weirstream/weir/operator"
)

// Two jobs under one identity (the same job id and sink.name, writing to
// different tables): the second's writer must fail on the identity lock
// before its recovery or fresh start touches the first's prepared
// transactions or checkpoint rows, naming the identity and the holder;
// once the first writer closes, the lock is free again. Both exactly-once
// strategies.
func TestIdentityLeaseRefusesASecondWriter(t *testing.T) {
	for _, st := range []Strategy{StrategyXA, StrategyCheckpointTable} {
		t.Run(string(st), func(t *testing.T) {
			eachDB(t, func(t *testing.T, db *testDB) {
				job := db.job(t)
				first := db.table(t, "lease_a", "id INT NOT NULL PRIMARY KEY, v INT")
				second := db.table(t, "lease_b", "id INT NOT NULL PRIMARY KEY, v INT")
				opts := []Opt{Guarantee(delivery.ExactlyOnce), ExactlyOnceStrategy(st), Name("shared_" + randHex(3))}
				a := db.newSink(t, first, opts...)
				b := db.newSink(t, second, opts...)
				b.identityWait = 300 * time.Millisecond

				wa, err := a.CreateWriter(wctx(job, 1, 2, 0))
				if err != nil {
					t.Fatal(err)
				}
				if err := wa.Write(ins(1, 10)); err != nil {
					t.Fatal(err)
				}
				if err := wa.Flush(true); err != nil {
					t.Fatal(err)
				}
				cs, err := wa.PrepareCommit(1)
				if err != nil {
					t.Fatal(err)
				}
				preparedBefore := db.prepared(t, "weir:"+job)

				// The second job starts afresh at parallelism 2 and at 1:
				// its subtask 1, and its only subtask 0 (which would own
				// old subtask 1's transactions), must both refuse.
				for _, w := range []operator.WriterContext{wctx(job, 1, 2, 0), wctx(job, 0, 1, 0)} {
					if w.Subtask.Index == 0 {
						// the first job's subtask 0 runs too
						w0, err := a.CreateWriter(wctx(job, 0, 2, 0))
						if err != nil {
							t.Fatal(err)
						}
						defer w0.Close()
					}
					_, err = b.CreateWriter(w)
					if err == nil {
						t.Fatalf("subtask %d of %d: a second writer under the same identity started", w.Subtask.Index, w.Parallelism)
					}
					for _, want := range []string{"another running writer holds this sink's identity", "sink.name", job} {
						if !strings.Contains(err.Error(), want) {
							t.Fatalf("error %q does not say %q", err, want)
						}
					}
					if errors.Is(err, operator.ErrNonRestartable) {
						t.Fatalf("a held identity is worth a restart (the other job may end): %v", err)
					}
				}
				equal(t, "prepared transactions after the refusals", db.prepared(t, "weir:"+job), preparedBefore)
				if err := commit(t, a, wctx(job, 1, 2, 1), 1, cs); err != nil {
					t.Fatal(err)
				}
				equal(t, "first table", db.rows(t, first), []string{"1|10"})

				wa.Close()
				wb, err := b.CreateWriter(wctx(job, 1, 2, 0))
				if err != nil {
					t.Fatalf("after the first writer closed: %v", err)
				}
				wb.Close()
			})
		})
	}
}
