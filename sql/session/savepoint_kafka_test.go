package session

import (
	"fmt"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/weirstream/weir/graph"
	"github.com/weirstream/weir/internal/savepointtest"
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
	job := func(par string) (*graph.JobGraph, runtime.Options) {
		s := New()
		if err := s.Execute(unbounded); err != nil {
			t.Fatal(err)
		}
		s.Settings["parallelism.default"] = par
		jg, opts, err := s.Job("e2e")
		if err != nil {
			t.Fatal(err)
		}
		return jg, opts
	}
	jg, opts := job("2")
	first := savepointtest.StopWhen(t, jg, opts, t.TempDir(), "the first half's totals in MariaDB",
		func() bool { return sameTotals(e.mariaDB(e.table), half) })
	e.compare("MariaDB after the stop", e.mariaDB(e.table), half)
	e.checkNoOpenTransactions()

	e.produceBills(6000, 100) // the same bills again: every total doubles
	want := map[string]string{}
	for acc, v := range half {
		want[acc] = doubled(t, v)
	}
	jg, opts = job("3")
	opts.Restore = first.Path
	// Stopped again, so that the upsert-kafka transactions commit too.
	second := savepointtest.StopWhen(t, jg, opts, t.TempDir(), "the totals of all bills in MariaDB",
		func() bool { return sameTotals(e.mariaDB(e.table), want) })
	if second.Restored == 0 {
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
