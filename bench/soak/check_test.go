package main

import (
	"reflect"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/weirstream/weir/examples/billing/pipeline"
)

// resolve learns each record's outcome from the markers that follow it,
// per producer: interleaved transactions, a non-transactional record, an
// open transaction at the end.
func TestResolve(t *testing.T) {
	es := []entry{
		{offset: 0, producerID: 7, txn: true},
		{offset: 1, producerID: 8, txn: true},
		{offset: 2, producerID: 7, txn: true},
		{offset: 3, producerID: 8, control: true, commit: false}, // ABORT of 8
		{offset: 4}, // outside any transaction
		{offset: 5, producerID: 7, control: true, commit: true}, // COMMIT of 7
		{offset: 6, producerID: 9, txn: true},                   // never ended
	}
	want := map[int64]outcome{0: committedRec, 1: abortedRec, 2: committedRec, 4: committedRec, 6: openRec}
	if got := resolve(es); !reflect.DeepEqual(got, want) {
		t.Fatalf("resolve = %v, want %v", got, want)
	}
}

// compareCopy counts each kind of anomaly exactly.
func TestCompareCopy(t *testing.T) {
	rec := func(id int64, p int32, off int64, o outcome) idRec {
		return idRec{id: id, pos: pos{p, off}, outcome: o}
	}
	in := outcomes{
		raw: []idRec{rec(1, 0, 0, committedRec), rec(2, 0, 1, committedRec), rec(3, 0, 2, abortedRec),
			rec(4, 1, 0, committedRec), rec(5, 1, 1, committedRec)},
		visible: []idRec{rec(1, 0, 0, 0), rec(2, 0, 1, 0), rec(4, 1, 0, 0), rec(5, 1, 1, 0)},
	}
	out := outcomes{
		raw: []idRec{rec(1, 0, 0, committedRec), rec(1, 0, 1, committedRec), rec(2, 0, 2, abortedRec),
			rec(3, 0, 3, committedRec), rec(4, 0, 4, abortedRec), rec(99, 0, 5, committedRec)},
		// Served to read_committed: 1 twice (a duplicate), 2 from an aborted
		// output transaction, 3 copied from an aborted input transaction,
		// 99 never written; 4 (aborted, not served) and 5 are lost.
		visible: []idRec{rec(1, 0, 0, 0), rec(1, 0, 1, 0), rec(2, 0, 2, 0), rec(3, 0, 3, 0), rec(99, 0, 5, 0)},
		outcome: map[pos]outcome{{0, 0}: committedRec, {0, 1}: committedRec, {0, 2}: abortedRec,
			{0, 3}: committedRec, {0, 4}: abortedRec, {0, 5}: committedRec},
	}
	got := compareCopy(in, out)
	want := copyCheck{inCommitted: 4, inAborted: 1, outVisible: 5, outAbortedTxn: 2, lost: 2, duplicated: 1,
		abortedRead: 2, phantom: 1, lostSample: []int64{4, 5}, dupSample: []int64{1}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("compareCopy =\n%+v, want\n%+v", got, want)
	}
	if got.ok() {
		t.Fatal("ok() with anomalies")
	}
	clean := compareCopy(in, outcomes{raw: in.visible, visible: in.visible, outcome: map[pos]outcome{}})
	if !clean.ok() || clean.lost+clean.duplicated+clean.abortedRead+clean.phantom != 0 {
		t.Fatalf("an exact copy: %+v", clean)
	}
}

// compareBilling counts bills lost and counted twice per account, and
// accounts with a wrong total, a missing row or a row no bill names.
func TestCompareBilling(t *testing.T) {
	bill := func(id, acc, amount string) pipeline.Bill {
		return pipeline.Bill{BillID: id, AccountID: acc, Amount: decimal.RequireFromString(amount)}
	}
	bills := []pipeline.Bill{bill("b1", "a", "1.00"), bill("b2", "a", "2.50"), bill("b1", "a", "1.00"), // b1 sent twice
		bill("b3", "b", "4.00"), bill("b4", "c", "5.00"), bill("b5", "d", "6.00")}
	total := func(acc, amount string, n int64) pipeline.Total {
		return pipeline.Total{AccountID: acc, Total: decimal.RequireFromString(amount), Count: n}
	}
	exact := map[string]pipeline.Total{"a": total("a", "3.5", 2), "b": total("b", "4", 1), "c": total("c", "5", 1), "d": total("d", "6", 1)}
	if c := compareBilling(bills, exact); !c.ok() || c.lost+c.duplicated != 0 || c.distinct != 5 || c.billsCounted != 5 {
		t.Fatalf("exact totals: %+v", c)
	}
	got := map[string]pipeline.Total{
		"a": total("a", "4.50", 3), // b1 counted twice
		"b": total("b", "4.01", 1), // right count, wrong total
		// c missing: b4 lost
		"d": total("d", "6.00", 1),
		"x": total("x", "1.00", 1), // no bill names x
	}
	want := billingCheck{billRecords: 6, distinct: 5, accountsWant: 4, accounts: 4, billsCounted: 6, lost: 1, duplicated: 2,
		wrongAccounts: 4, samples: []string{"a: got 4.50/3, want 3.50/2", "b: got 4.01/1, want 4.00/1",
			"c: missing, want 5.00/1", "x: got 1.00/1, want 0.00/0"}}
	if c := compareBilling(bills, got); !reflect.DeepEqual(c, want) {
		t.Fatalf("compareBilling =\n%+v, want\n%+v", c, want)
	}
}
