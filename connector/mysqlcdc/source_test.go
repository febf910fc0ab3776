package mysqlcdc

import (
	"context"
	"testing"

	"github.com/weirstream/weir/connector/cdc/cdctest"
	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/types"
)

// The snapshot, split by key ranges over two subtasks, and the binlog
// meet exactly: with transactions of inserts, updates (of the key too,
// across splits) and deletes committing while the snapshot is read, the
// two subtasks' changelogs applied row by row never insert a present key
// or retract an absent one, and end equal to the table.
func TestParallelSnapshotThenBinlogExact(t *testing.T) {
	f := newFixture(t, 3000)
	s, err := NewSource(f.opts)
	if err != nil {
		t.Fatal(err)
	}
	splits, err := s.Enumerate(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(splits) != 3 {
		t.Fatalf("%d splits of 3000 rows by 1000, want 3", len(splits))
	}
	rs := []*reader{f.openReader(s, 0, 2, assign(s, splits, 0, 2)), f.openReader(s, 1, 2, assign(s, splits, 1, 2))}
	cs := []*cdctest.Collector{{}, {}}
	for _, r := range rs {
		defer r.Close()
		r.batch = 1
	}
	// Both readers are polled all along, as their subtasks run: they
	// share one binlog connection, which waits for the slower.
	pollAll(t, rs, cs, func() bool { return len(cs[0].Rows) >= 100 })
	w := f.startWriter(400, 1)
	// The writer commits while the snapshots are still being read.
	pollAll(t, rs, cs, func() bool { return w.committed() >= 60 || !rs[0].Snapshotting() && !rs[1].Snapshotting() })
	w.wait(t)
	passed := f.fence(9_000_001)
	pollAll(t, rs, cs, func() bool { return passed(rs[0])() && passed(rs[1])() })
	all := append(cs[0].Rows, cs[1].Rows...)
	got, bad := cdctest.Materialize(all)
	cdctest.CompareTables(t, got, f.tableRows(), bad)
	kinds := map[event.RowKind]int{}
	for _, row := range all {
		kinds[row.Kind]++
	}
	if kinds[event.UpdateBefore] == 0 || kinds[event.Delete] == 0 || kinds[event.UpdateBefore] != kinds[event.UpdateAfter] {
		t.Fatalf("row kinds %v: want -U as many as +U, and -D", kinds)
	}
}

// attempt is one run of a job reading the table with one subtask: it polls
// (one item at a time) until stop, takes a checkpoint there, then reads
// lost more rows that its crash throws away — a two-phase sink never
// committed them. It returns the checkpoint's splits and the rows before it.
func attempt(t *testing.T, f *fixture, s *Source, splits []operator.SplitState, stop func(*reader, *cdctest.Collector) bool, lost int) ([]operator.SplitState, []event.Row) {
	t.Helper()
	r := f.openReader(s, 0, 1, splits)
	defer r.Close()
	r.batch = 1
	c := &cdctest.Collector{}
	cdctest.PollUntil(t, r, c, func() bool { return stop(r, c) })
	st, err := r.SnapshotState(1)
	if err != nil {
		t.Fatal(err)
	}
	kept := c.Rows
	c = &cdctest.Collector{}
	cdctest.PollUntil(t, r, c, func() bool { return len(c.Rows) >= lost })
	return st, kept
}

// A failure restores the last checkpoint's positions and a new reader
// goes on from them. Crashes mid-snapshot (twice: each resumed snapshot
// is read as of another consistent snapshot) and mid-binlog inside a
// transaction, with writes going on throughout, still give a changelog
// equal to the table.
func TestRestoreMidSnapshotAndMidBinlog(t *testing.T) {
	f := newFixture(t, 3000)
	s, err := NewSource(f.opts)
	if err != nil {
		t.Fatal(err)
	}
	splits, err := s.Enumerate(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	w := f.startWriter(600, 2)
	var all []event.Row
	rows := func(n int) func(*reader, *cdctest.Collector) bool {
		return func(_ *reader, c *cdctest.Collector) bool { return len(c.Rows) >= n }
	}
	splits, kept := attempt(t, f, s, splits, rows(700), 300)
	all = append(all, kept...)
	mustSnapshotting(t, splits, true)
	// Changes after the crash to keys the checkpoint had not read yet: the
	// resumed snapshot reads them, so the binlog must skip them.
	f.exec("UPDATE " + f.q() + " SET amount = amount + 1 WHERE id BETWEEN 750 AND 1000 AND id % 10 = 0")
	f.exec("DELETE FROM " + f.q() + " WHERE id BETWEEN 750 AND 1000 AND id % 10 = 1")
	splits, kept = attempt(t, f, s, splits, rows(900), 200)
	all = append(all, kept...)
	mustSnapshotting(t, splits, true)
	f.exec("UPDATE " + f.q() + " SET amount = amount + 1 WHERE id BETWEEN 1700 AND 2000 AND id % 10 = 0")
	f.exec("UPDATE " + f.q() + " SET id = -id WHERE id BETWEEN 1700 AND 2000 AND id % 10 = 1")
	// Past the snapshot's end, inside a transaction of the binlog.
	midTxn := func(r *reader, _ *cdctest.Collector) bool {
		if r.Snapshotting() || w.committed() < 300 {
			return false
		}
		for _, p := range r.pos {
			if !p.InTxn.IsZero() && p.Emitted > 0 {
				return true
			}
		}
		return false
	}
	splits, kept = attempt(t, f, s, splits, midTxn, 100)
	all = append(all, kept...)
	mustSnapshotting(t, splits, false)
	w.wait(t)
	r := f.openReader(s, 0, 1, splits)
	defer r.Close()
	c := &cdctest.Collector{}
	cdctest.PollUntil(t, r, c, f.fence(9_000_002)(r))
	all = append(all, c.Rows...)
	got, bad := cdctest.Materialize(all)
	cdctest.CompareTables(t, got, f.tableRows(), bad)
}

// mustSnapshotting checks whether any split is still in its snapshot.
func mustSnapshotting(t *testing.T, splits []operator.SplitState, snapshotting bool) {
	t.Helper()
	any := false
	for _, sp := range splits {
		p, err := decodePosition(sp.Position, keyParser([]types.Type{bigint}))
		if err != nil {
			t.Fatal(err)
		}
		any = any || p.Snapshotting || p.Start.IsZero()
	}
	if any != snapshotting {
		t.Fatalf("positions %v: snapshotting %v, want %v", splits, any, snapshotting)
	}
}

// The readers of a Source share one binlog connection. A reader that
// joins behind it — subtask 1 restored from a checkpoint taken before
// changes that subtask 0 has read past — sends the connection back to its
// position: subtask 0 does not get those changes twice and subtask 1 gets
// them once, so the two changelogs applied row by row end equal to the
// table.
func TestLateReaderRereadsTheSharedBinlog(t *testing.T) {
	f := newFixture(t, 2000)
	s, splits := f.source()
	rs := []*reader{f.openReader(s, 0, 2, assign(s, splits, 0, 2)), f.openReader(s, 1, 2, assign(s, splits, 1, 2))}
	defer rs[0].Close()
	cs := []*cdctest.Collector{{}, {}}
	pollAll(t, rs, cs, func() bool { return !rs[0].Snapshotting() && !rs[1].Snapshotting() })
	checkpoint, err := rs[1].SnapshotState(1)
	if err != nil {
		t.Fatal(err)
	}
	kept := cs[1].Rows
	rs[1].Close()
	w := f.startWriter(100, 3)
	pollAll(t, rs[:1], cs[:1], func() bool { return w.committed() >= 100 })
	w.wait(t)
	passed := f.fence(9_000_001)
	pollAll(t, rs[:1], cs[:1], passed(rs[0]))
	rs[1] = f.openReader(s, 1, 2, checkpoint)
	defer rs[1].Close()
	cs[1] = &cdctest.Collector{Rows: kept}
	passed = f.fence(9_000_002)
	pollAll(t, rs, cs, func() bool { return passed(rs[0])() && passed(rs[1])() })
	got, bad := cdctest.Materialize(append(cs[0].Rows, cs[1].Rows...))
	cdctest.CompareTables(t, got, f.tableRows(), bad)
}

// A checkpoint in the binlog holds MariaDB's GTID position beside the
// file and offset, and a restore starts the binlog by GTID. The offsets
// in the checkpoint are made unusable (inside the file's header, where
// the server refuses to start by file and offset) and the binlog rotates
// (FLUSH BINARY LOGS) before the restore: the restored reader still
// resumes exactly after the last transaction emitted, nothing lost or
// repeated.
func TestRestoreByGTID(t *testing.T) {
	f := newFixture(t, 500)
	s, splits := f.source()
	r := f.openReader(s, 0, 1, splits)
	c := &cdctest.Collector{}
	w := f.startWriter(50, 5)
	cdctest.PollUntil(t, r, c, func() bool { return w.committed() >= 50 })
	w.wait(t)
	cdctest.PollUntil(t, r, c, f.fence(9_000_001)(r))
	checkpoint, err := r.SnapshotState(1)
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	for i, sp := range checkpoint {
		p, err := decodePosition(sp.Position, keyParser(f.opts.keyTypes()))
		if err != nil {
			t.Fatal(err)
		}
		if p.GTIDPos == "" || p.Snapshotting {
			t.Fatalf("split %s: checkpoint %s has no GTID position", sp.ID, sp.Position)
		}
		p.Done.Pos = 1 // not an event's start: only a start by GTID works
		if checkpoint[i].Position, err = encodePosition(p); err != nil {
			t.Fatal(err)
		}
	}
	f.exec("FLUSH BINARY LOGS")
	f.exec("UPDATE " + f.q() + " SET amount = amount + 1 WHERE id BETWEEN 10 AND 20")
	f.exec("DELETE FROM " + f.q() + " WHERE id BETWEEN 30 AND 35")
	f.exec("INSERT INTO " + f.q() + " VALUES (8000001, 1, 1, 'after the checkpoint')")
	r = f.openReader(s, 0, 1, checkpoint)
	defer r.Close()
	restored := &cdctest.Collector{Rows: c.Rows}
	cdctest.PollUntil(t, r, restored, f.fence(9_000_002)(r))
	got, bad := cdctest.Materialize(restored.Rows)
	cdctest.CompareTables(t, got, f.tableRows(), bad)
}
