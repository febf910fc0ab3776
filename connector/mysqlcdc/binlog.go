package mysqlcdc

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/weirstream/weir/event"
)

// flavorOf is go-mysql's name of the server's kind.
func flavorOf(ctx context.Context, db *sql.DB) (string, error) {
	var v string
	if err := db.QueryRowContext(ctx, "SELECT VERSION()").Scan(&v); err != nil {
		return "", err
	}
	if strings.Contains(strings.ToLower(v), "mariadb") {
		return mysql.MariaDBFlavor, nil
	}
	return mysql.MySQLFlavor, nil
}

// txn is the transaction being read.
type txn struct {
	start   BinlogPos
	gtid    string
	time    int64 // Unix seconds of its first event
	touched bool  // it changed the captured table
}

// idleCommitEvery bounds how often a transaction of other tables moves the
// splits' positions on (so an idle table's checkpoint does not pin an old
// binlog position).
const idleCommitEvery = time.Second

// stream follows the binlog from the earliest position a split resumes at,
// handing on the captured table's changes minus those each split's
// snapshot holds or emitted before. The events come from the Source's
// hub, which reads the binlog once for all its readers in the process.
func (f *fetcher) stream(ctx context.Context, flavor string) error {
	from, gtids := BinlogPos{}, ""
	for _, s := range f.splits {
		if r, g := s.p.resume(); from.IsZero() || r.Compare(from) < 0 {
			from, gtids = r, g
		}
	}
	sub := f.hub.subscribe(ctx, from, gtids, f.serverID, flavor)
	defer f.hub.leave(sub)
	b := &binlogState{file: from.File}
	for {
		var e hubEvent
		select {
		case e = <-sub.events:
		case <-ctx.Done():
			return ctx.Err()
		}
		if e.err != nil {
			return e.err
		}
		b.file, b.gtids = e.file, e.gtids
		if err := f.handle(ctx, b, e.ev); err != nil {
			return err
		}
	}
}

// quiet passes on go-mysql's warnings and errors only: it logs every
// connection at INFO.
type quiet struct{ slog.Handler }

func (q quiet) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelWarn && q.Handler.Enabled(ctx, l)
}

func (q quiet) WithAttrs(a []slog.Attr) slog.Handler { return quiet{q.Handler.WithAttrs(a)} }
func (q quiet) WithGroup(n string) slog.Handler      { return quiet{q.Handler.WithGroup(n)} }

// binlogState is where the stream is.
type binlogState struct {
	file       string
	lastEnd    uint32
	txn        txn
	gtids      string // the GTID position after the current event, at commits ("": unknown)
	lastCommit time.Time
}

// handle takes one binlog event.
func (f *fetcher) handle(ctx context.Context, b *binlogState, ev *replication.BinlogEvent) error {
	h := ev.Header
	here := BinlogPos{File: b.file, Pos: h.LogPos - h.EventSize}
	if h.LogPos != 0 {
		b.lastEnd = h.LogPos
	}
	switch e := ev.Event.(type) {
	case *replication.MariadbGTIDEvent:
		f.begin(b, txn{start: here, gtid: e.GTID.String(), time: int64(h.Timestamp)})
	case *replication.GTIDEvent:
		f.begin(b, txn{start: here, time: int64(h.Timestamp)})
	case *replication.QueryEvent:
		return f.query(ctx, b, e, here, h)
	case *replication.RowsEvent:
		if string(e.Table.Schema) != f.tbl.schema || string(e.Table.Table) != f.tbl.name {
			return nil
		}
		b.txn.touched = true
		return f.rows(ctx, b, e)
	case *replication.XIDEvent:
		return f.commit(ctx, b, BinlogPos{File: b.file, Pos: h.LogPos})
	}
	return nil
}

// begin starts a transaction.
func (f *fetcher) begin(b *binlogState, t txn) {
	b.txn = t
	for _, s := range f.splits {
		s.index = 0
	}
}

// query handles a statement event: BEGIN (a transaction without a GTID
// event before it), COMMIT of a non-transactional one, or DDL, which
// fails the job when it changes the captured table (its rows would no
// longer match the declared columns).
func (f *fetcher) query(ctx context.Context, b *binlogState, e *replication.QueryEvent, here BinlogPos, h *replication.EventHeader) error {
	q := strings.TrimSpace(string(e.Query))
	switch strings.ToUpper(q) {
	case "BEGIN":
		if b.txn.start.IsZero() {
			f.begin(b, txn{start: here, time: int64(h.Timestamp)})
		}
		return nil
	case "COMMIT":
		return f.commit(ctx, b, BinlogPos{File: b.file, Pos: h.LogPos})
	}
	if ddlTouches(q, string(e.Schema), f.tbl.schema, f.tbl.name) {
		return fmt.Errorf("mysql-cdc table %q: %s changed at %s (%q): Weir does not follow schema changes or TRUNCATE; "+
			"start the job again without its checkpoint for a new snapshot", f.o.Name, f.tbl.qualified(), b.txn.start, q)
	}
	return f.commit(ctx, b, BinlogPos{File: b.file, Pos: h.LogPos}) // DDL commits on its own
}

// commit ends the transaction: every split past it resumes after it.
// A transaction of other tables is handed on at most once a second.
func (f *fetcher) commit(ctx context.Context, b *binlogState, end BinlogPos) error {
	t := b.txn
	b.txn = txn{}
	if t.start.IsZero() || (!t.touched && time.Since(b.lastCommit) < idleCommitEvery) {
		return nil
	}
	b.lastCommit = time.Now()
	return f.send(ctx, item{kind: commit, txn: t.start, pos: end, gtid: t.gtid, gtids: b.gtids})
}

// rows hands on a rows event's changes, each to the splits of its keys.
func (f *fetcher) rows(ctx context.Context, b *binlogState, e *replication.RowsEvent) error {
	if int(e.ColumnCount) != f.tbl.width {
		return fmt.Errorf("mysql-cdc table %q: a change at %s has %d columns, %s had %d when the job started: "+
			"Weir does not follow schema changes; start the job again without its checkpoint", f.o.Name, b.txn.start,
			e.ColumnCount, f.tbl.qualified(), f.tbl.width)
	}
	step := 1
	if e.Type() == replication.EnumRowsEventTypeUpdate {
		step = 2
	}
	for i := 0; i+step <= len(e.Rows); i += step {
		var before, after []any
		var err error
		switch e.Type() {
		case replication.EnumRowsEventTypeInsert:
			after, err = f.rowOfImage(b, e.Rows[i])
		case replication.EnumRowsEventTypeDelete:
			before, err = f.rowOfImage(b, e.Rows[i])
		case replication.EnumRowsEventTypeUpdate:
			if before, err = f.rowOfImage(b, e.Rows[i]); err == nil {
				after, err = f.rowOfImage(b, e.Rows[i+1])
			}
		}
		if err != nil {
			return err
		}
		if err := f.change(ctx, b, before, after); err != nil {
			return err
		}
	}
	return nil
}

// rowOfImage reads the declared columns of a row image.
func (f *fetcher) rowOfImage(b *binlogState, img []any) ([]any, error) {
	row := make([]any, len(f.tbl.cols))
	for i, c := range f.tbl.cols {
		v, err := f.conv.fromBinlog(i, img[c.ordinal])
		if err != nil {
			return nil, fmt.Errorf("mysql-cdc table %q: column %q (%s) in the transaction at %s: %w", f.o.Name, c.name, c.t, b.txn.start, err)
		}
		row[i] = v
	}
	return row, nil
}

// change hands one insert (before nil), update or delete (after nil) to
// the splits of its keys: -U/+U when the key stays in one split, else -D
// to the old key's split and +I to the new one's; minus the images a
// split's snapshot holds or emitted before a restore.
func (f *fetcher) change(ctx context.Context, b *binlogState, before, after []any) error {
	var bk, ak []any
	if before != nil {
		bk = f.keyOf(before)
	}
	if after != nil {
		ak = f.keyOf(after)
	}
	sameKey := bk != nil && ak != nil && compareKeys(bk, ak) == 0
	for _, s := range f.splits {
		hasB, hasA := bk != nil && s.p.contains(bk), ak != nil && s.p.contains(ak)
		if !hasB && !hasA {
			continue
		}
		index := s.index
		s.index++
		if !f.streams(s, b.txn, index) {
			continue
		}
		var rows []event.Row
		if hasB && !inSnapshot(s.p.Bands, bk, b.txn.start) {
			rows = append(rows, event.Row{Kind: pick(sameKey, event.UpdateBefore, event.Delete), Fields: before})
		}
		if hasA && !inSnapshot(s.p.Bands, ak, b.txn.start) {
			rows = append(rows, event.Row{Kind: pick(sameKey, event.UpdateAfter, event.Insert), Fields: after})
		}
		if len(rows) == 0 {
			continue
		}
		if err := f.send(ctx, item{kind: change, split: s.id, rows: rows, txn: b.txn.start, index: index}); err != nil {
			return err
		}
	}
	return nil
}

// streams tells whether the split takes the change index of t: not when
// the transaction lies before the split's stream or before its startup
// timestamp, nor when a restored checkpoint emitted it already.
func (f *fetcher) streams(s *fsplit, t txn, index int) bool {
	r := s.restored
	floor := s.p.Start
	if r.Done.Compare(floor) > 0 {
		floor = r.Done
	}
	switch {
	case t.start.Compare(floor) < 0, t.time < s.p.After:
		return false
	case t.start == r.InTxn && index < r.Emitted:
		return false
	}
	return true
}

func pick(same bool, a, b event.RowKind) event.RowKind {
	if same {
		return a
	}
	return b
}
