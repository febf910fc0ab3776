package main

import (
	"reflect"
	"testing"
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
