package session

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/weirstream/weir/runtime"
)

// The billing job through Kafka → MariaDB (and upsert-kafka) at
// parallelism 2 is stopped with a savepoint once it has committed the
// totals of the first half of the bills; the second half is produced, and
// the savepoint restored at parallelism 3 (the topic's 3 partitions
// reassigned, key groups split) reads to the end: the totals are exact,
// every bill counted once, and no transaction is left open.
func TestBillingStopWithSavepointRestoresAtParallelism3(t *testing.T) {
	e := newE2E(t)
	half := e.produceBills(6000, 100)
	unbounded := strings.ReplaceAll(e.script(), "'scan.bounded.mode' = 'latest-offset',", "")
	s := New()
	if err := s.Execute(unbounded); err != nil {
		t.Fatal(err)
	}
	jg, opts, err := s.Job("e2e")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	job, err := runtime.Start(ctx, jg, opts)
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(2 * time.Minute); !sameTotals(e.mariaDB(e.table), half); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the first half's totals never reached MariaDB")
		}
	}
	path, err := job.StopWithSavepoint(ctx, t.TempDir(), false)
	if err != nil {
		t.Fatalf("stop with savepoint: %v", err)
	}
	if _, err := job.Wait(); err != nil {
		t.Fatalf("job after stop-with-savepoint: %v", err)
	}
	e.compare("MariaDB after the stop", e.mariaDB(e.table), half)
	e.checkNoOpenTransactions()

	e.produceBills(6000, 100) // the same bills again: every total doubles
	want := map[string]string{}
	for acc, v := range half {
		want[acc] = doubled(t, v)
	}
	s = New()
	if err := s.Execute(unbounded); err != nil {
		t.Fatal(err)
	}
	s.Settings["parallelism.default"] = "3"
	jg, opts, err = s.Job("e2e")
	if err != nil {
		t.Fatal(err)
	}
	opts.Restore = path
	var restored atomic.Int64
	opts.Listener = func(ev runtime.Event) {
		if ev.Kind == runtime.EventRestored {
			restored.Store(ev.Checkpoint)
		}
	}
	if job, err = runtime.Start(ctx, jg, opts); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(2 * time.Minute); !sameTotals(e.mariaDB(e.table), want); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			e.compare("MariaDB table after the restore at parallelism 3", e.mariaDB(e.table), want)
			t.Fatal("the totals of all bills never reached MariaDB")
		}
	}
	// Stop again, so that the upsert-kafka transactions commit too.
	if _, err := job.StopWithSavepoint(ctx, t.TempDir(), false); err != nil {
		t.Fatalf("second stop with savepoint: %v", err)
	}
	if _, err := job.Wait(); err != nil {
		t.Fatal(err)
	}
	if restored.Load() == 0 {
		t.Fatal("the second run did not restore the savepoint")
	}
	e.compare("MariaDB table after the restore at parallelism 3", e.mariaDB(e.table), want)
	e.compare("upsert-kafka topic after the restore", e.readUpsertTopic(), want)
	e.checkNoOpenTransactions()
}

func sameTotals(got, want map[string]string) bool {
	if len(got) != len(want) {
		return false
	}
	for k, w := range want {
		if got[k] != w {
			return false
		}
	}
	return true
}

// doubled turns "total|count" into the row of twice the bills.
func doubled(t *testing.T, v string) string {
	t.Helper()
	amount, count, _ := strings.Cut(v, "|")
	d, err := decimal.NewFromString(amount)
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	fmt.Sscan(count, &n)
	return fmt.Sprintf("%s|%d", d.Mul(decimal.NewFromInt(2)).StringFixed(2), 2*n)
}
