package mysqlcdc

import (
	"context"
	"database/sql"
	"log/slog"

	"github.com/weirstream/weir/event"
)

// itemKind is what the fetcher hands the reader.
type itemKind uint8

const (
	snapBegin   itemKind = iota // a split's snapshot starts: band (and the split's start)
	snapRow                     // a snapshot row: rows[0], key
	snapDone                    // the split's snapshot has been read to its end
	streamStart                 // latest-offset / timestamp: the split streams from pos, no snapshot
	change                      // a change of the transaction starting at txn: rows, index
	commit                      // the transaction starting at txn ended at pos (every split)
	failed                      // err
)

type item struct {
	kind  itemKind
	split string
	rows  []event.Row
	key   []any
	band  Band
	pos   BinlogPos
	txn   BinlogPos
	gtid  string
	gtids string // the GTID position after the transaction (commit)
	index int
	after int64
	err   error
}

// advance moves a split's position past an item: the reader's only
// state change, a pure function.
func advance(p *Position, it item) {
	switch it.kind {
	case snapBegin:
		if p.Start.IsZero() {
			p.Start = it.band.At
		}
		p.Snapshotting, p.Bands = true, addBand(p.Bands, it.band.After, it.band.At)
	case snapRow:
		p.LastKey = it.key
	case snapDone:
		p.Snapshotting, p.LastKey, p.Done = false, nil, p.Start
	case streamStart:
		p.Start, p.Done, p.After = it.pos, it.pos, it.after
	case change:
		p.InTxn, p.Emitted = it.txn, it.index+1
	case commit:
		if p.Snapshotting || p.Start.IsZero() || it.txn.Compare(p.Done) < 0 {
			return // before the split's stream: nothing of it was emitted
		}
		p.Done, p.GTID, p.GTIDPos, p.InTxn, p.Emitted = it.pos, it.gtid, it.gtids, BinlogPos{}, 0
		if it.txn.Compare(maxBand(p.Bands)) >= 0 {
			p.Bands = nil
		}
	}
}

// fsplit is the fetcher's view of a split: its position as restored (for
// what was emitted before) and as the fetcher has handed it on (bands).
type fsplit struct {
	id       string
	restored Position
	p        Position
	index    int // changes of the split in the current transaction
}

// fetcher is the reader's I/O goroutine: it reads the snapshots its
// splits need, in one consistent snapshot, and then follows the binlog
// from the earliest split's position, handing items to the reader in
// order.
type fetcher struct {
	o        Options
	log      *slog.Logger
	serverID uint32
	items    chan<- item
	avail    chan struct{}
	splits   []*fsplit
	hub      *hub // the Source's binlog reader, shared with its other readers
	tbl      *table
	conv     *converter
}

// send hands an item to the reader and wakes it; the fetcher's view of
// the split advances as the reader's will.
func (f *fetcher) send(ctx context.Context, it item) error {
	for _, s := range f.splits {
		if it.split == s.id || it.kind == commit {
			advance(&s.p, it)
		}
	}
	select {
	case f.items <- it:
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case f.avail <- struct{}{}:
	default:
	}
	return nil
}

func (f *fetcher) run(ctx context.Context) error {
	db, err := f.o.open()
	if err != nil {
		return err
	}
	defer db.Close()
	if f.tbl, err = f.o.inspect(ctx, db); err != nil {
		return err
	}
	f.conv = &converter{cols: f.tbl.cols, tz: f.o.TimeZone}
	if err := f.prepare(ctx, db); err != nil {
		return err
	}
	flavor, err := flavorOf(ctx, db)
	if err != nil {
		return f.o.connectErr(err)
	}
	db.Close()
	return f.stream(ctx, flavor)
}

// prepare brings every split to the point where the binlog goes on:
// fresh splits in initial mode and splits restored mid-snapshot read
// their keys, all in one consistent snapshot; fresh splits of the other
// modes get their start position.
func (f *fetcher) prepare(ctx context.Context, db *sql.DB) error {
	var snap []*fsplit
	for _, s := range f.splits {
		fresh := s.p.Start.IsZero()
		switch {
		case fresh && f.o.StartupMode == "latest-offset":
			pos, err := masterPos(ctx, db)
			if err == nil {
				err = f.send(ctx, item{kind: streamStart, split: s.id, pos: pos})
			}
			if err != nil {
				return err
			}
		case fresh && f.o.StartupMode == "timestamp":
			pos, err := f.binlogAt(ctx, db, f.o.StartupTimestamp.Unix())
			if err == nil {
				err = f.send(ctx, item{kind: streamStart, split: s.id, pos: pos, after: f.o.StartupTimestamp.Unix()})
			}
			if err != nil {
				return err
			}
		case fresh || s.p.Snapshotting:
			snap = append(snap, s)
		}
	}
	if len(snap) == 0 {
		return nil
	}
	return f.snapshot(ctx, db, snap)
}

// snapshot reads the splits' keys (after the last one emitted) as of one
// consistent snapshot, recording it as each split's band.
func (f *fetcher) snapshot(ctx context.Context, db *sql.DB, splits []*fsplit) error {
	c, err := db.Conn(ctx)
	if err != nil {
		return f.o.connectErr(err)
	}
	defer c.Close()
	at, err := consistentSnapshot(ctx, c)
	if err != nil {
		return f.o.connectErr(err)
	}
	defer c.ExecContext(context.Background(), "ROLLBACK")
	f.log.Info("mysql-cdc: reading the snapshot", "table", f.tbl.qualified(), "splits", len(splits), "as_of", at.String())
	for _, s := range splits {
		if err := f.send(ctx, item{kind: snapBegin, split: s.id, band: Band{After: s.p.LastKey, At: at}}); err != nil {
			return err
		}
		if err := f.readSplit(ctx, c, s); err != nil {
			return err
		}
	}
	return nil
}
