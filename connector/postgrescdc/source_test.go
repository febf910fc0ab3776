package postgrescdc

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pglogrepl"

	"github.com/weirstream/weir/connector/cdc/cdctest"
	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/types"
)

// The snapshot and the stream meet exactly: with transactions of inserts,
// updates (of the key too) and deletes committing while the snapshot is
// read, the changelog applied row by row never inserts a present key or
// retracts an absent one, and ends equal to the table.
func TestSnapshotThenStreamExact(t *testing.T) {
	f := newFixture(t, 3000)
	r := f.openReader(nil)
	defer r.Close()
	c := &cdctest.Collector{}
	cdctest.PollUntil(t, r, c, func() bool { return len(c.Rows) >= 100 })
	w := f.startWriter(400, 1)
	// The writer commits while the snapshot (3000 rows) is still being read.
	cdctest.PollUntil(t, r, c, func() bool { return w.committed() >= 50 || len(c.Rows) >= 3000 })
	w.wait(t)
	cdctest.PollUntil(t, r, c, f.fence(c, 9_000_001))
	got, bad := cdctest.Materialize(c.Rows)
	cdctest.CompareTables(t, got, f.tableRows(), bad)
	kinds := map[event.RowKind]int{}
	for _, row := range c.Rows {
		kinds[row.Kind]++
	}
	if kinds[event.UpdateBefore] == 0 || kinds[event.Delete] == 0 || kinds[event.UpdateBefore] != kinds[event.UpdateAfter] {
		t.Fatalf("row kinds %v: want -U as many as +U, and -D", kinds)
	}
}

// attempt is one run of a job reading the table: it polls (one change at a
// time) until stop, takes a checkpoint there (and completes it, if
// complete), then reads lost more rows that its crash throws away — a
// two-phase sink never committed them. It returns the checkpoint's
// position and the rows before it.
func attempt(t *testing.T, f *fixture, pos []byte, stop func(*reader, *cdctest.Collector) bool, lost int, complete bool) ([]byte, []event.Row) {
	t.Helper()
	r := f.openReader(pos).(*reader)
	defer r.Close()
	r.batch = 1
	c := &cdctest.Collector{}
	cdctest.PollUntil(t, r, c, func() bool { return stop(r, c) })
	st, err := r.SnapshotState(1)
	if err != nil {
		t.Fatal(err)
	}
	if complete {
		if err := r.NotifyCheckpointComplete(1); err != nil {
			t.Fatal(err)
		}
	}
	kept := c.Rows
	c = &cdctest.Collector{}
	cdctest.PollUntil(t, r, c, func() bool { return len(c.Rows) >= lost })
	return st[0].Position, kept
}

// A failure restores the last checkpoint's position and a new reader goes
// on from it. Crashes mid-snapshot (twice: each resumed snapshot is read
// from another exported snapshot) and mid-stream inside a transaction,
// with writes going on throughout, still give a changelog equal to the
// table.
func TestRestoreMidSnapshotAndMidStream(t *testing.T) {
	f := newFixture(t, 3000)
	w := f.startWriter(600, 2)
	var all []event.Row
	rows := func(n int) func(*reader, *cdctest.Collector) bool {
		return func(_ *reader, c *cdctest.Collector) bool { return len(c.Rows) >= n }
	}
	pos, kept := attempt(t, f, nil, rows(700), 300, false)
	all = append(all, kept...)
	mustPhase(t, pos, true)
	pos, kept = attempt(t, f, pos, rows(900), 200, false)
	all = append(all, kept...)
	mustPhase(t, pos, true)
	// Past the snapshot's end, inside a transaction of the stream.
	midTxn := func(r *reader, _ *cdctest.Collector) bool {
		return !r.pos.Snapshotting && w.committed() >= 300 && r.pos.InTxn != 0 && r.pos.Emitted > 0
	}
	pos, kept = attempt(t, f, pos, midTxn, 100, true)
	all = append(all, kept...)
	mustPhase(t, pos, false)
	w.wait(t)
	r := f.openReader(pos)
	defer r.Close()
	c := &cdctest.Collector{}
	cdctest.PollUntil(t, r, c, f.fence(c, 9_000_002))
	all = append(all, c.Rows...)
	got, bad := cdctest.Materialize(all)
	cdctest.CompareTables(t, got, f.tableRows(), bad)
}

// mustPhase checks whether pos is in the snapshot.
func mustPhase(t *testing.T, pos []byte, snapshotting bool) {
	t.Helper()
	p, err := decodePosition(pos, keyParser([]types.Type{bigint}))
	if err != nil {
		t.Fatal(err)
	}
	if p.Snapshotting != snapshotting {
		t.Fatalf("position %s: snapshotting %v, want %v", pos, p.Snapshotting, snapshotting)
	}
}

// The slot's confirmed position moves only when a checkpoint completes,
// and to that checkpoint's position.
func TestSlotAdvancesOnCheckpointComplete(t *testing.T) {
	f := newFixture(t, 10)
	r := f.openReader(nil).(*reader)
	defer r.Close()
	c := &cdctest.Collector{}
	fenced := func(id int64) func() bool { // the fence and its commit are in
		seen := f.fence(c, id)
		return func() bool { return seen() && r.pos.InTxn == 0 }
	}
	cdctest.PollUntil(t, r, c, func() bool { return len(c.Rows) == 10 && !r.pos.Snapshotting })
	cdctest.PollUntil(t, r, c, fenced(9_000_003))
	confirmed := func() pglogrepl.LSN {
		s, err := f.opts.slot(context.Background(), f.db)
		if err != nil {
			t.Fatal(err)
		}
		return s.confirmed
	}
	start := confirmed()
	st, err := r.SnapshotState(7)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := decodePosition(st[0].Position, keyParser([]types.Type{bigint}))
	if p.Done <= start {
		t.Fatalf("position %s after the fence insert, slot at %s", p.Done, start)
	}
	cdctest.PollUntil(t, r, c, fenced(9_000_004))
	if got := confirmed(); got != start {
		t.Fatalf("the slot moved to %s before any checkpoint completed (was %s)", got, start)
	}
	if err := r.NotifyCheckpointComplete(7); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(3 * statusInterval) // reported within a second
	for confirmed() != p.Done {
		if time.Now().After(deadline) {
			t.Fatalf("slot at %s %v after checkpoint 7 completed at %s", confirmed(), 3*statusInterval, p.Done)
		}
		// Each poll lets the stream send its status.
		_, _ = r.Poll(c)
		time.Sleep(100 * time.Millisecond)
	}
}
