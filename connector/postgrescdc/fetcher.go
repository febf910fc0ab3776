package postgrescdc

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5"
	"github.com/shopspring/decimal"

	"github.com/weirstream/weir/event"
)

// fetcher is the reader's I/O goroutine: it takes the snapshot (when the
// position asks for one) and then follows the slot, handing items to the
// reader in order.
type fetcher struct {
	o         Options
	log       *slog.Logger
	items     chan<- item
	avail     chan struct{}
	confirmed *atomic.Uint64
	restored  Position
	fresh     bool
	info      tableInfo
	bands     []Band
}

// send hands an item to the reader and wakes it.
func (f *fetcher) send(ctx context.Context, it item) error {
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
	c, err := f.o.connect(ctx)
	if err != nil {
		return err
	}
	defer c.Close(context.Background())
	if f.info, err = f.o.inspect(ctx, c); err != nil {
		return err
	}
	start, err := f.prepare(ctx, c)
	if err != nil {
		return err
	}
	return f.stream(ctx, start)
}

// prepare brings the slot and the snapshot to where the position says,
// and returns the LSN the stream starts at.
func (f *fetcher) prepare(ctx context.Context, c *pgx.Conn) (pglogrepl.LSN, error) {
	p := f.restored
	f.bands = p.Bands
	if f.fresh {
		return f.freshStart(ctx, c)
	}
	s, err := f.o.waitInactive(ctx, c)
	if err != nil {
		return 0, err
	}
	start := p.Done
	if p.Snapshotting {
		start = p.SlotStart
	}
	if !s.found {
		return 0, f.o.optErr("slot.name", f.o.Slot, fmt.Sprintf("the checkpoint resumes slot %q at %s, but the slot is gone: "+
			"the changes since the checkpoint are lost; start the job without the checkpoint for a new snapshot", f.o.Slot, start), nil)
	}
	if s.confirmed > start {
		return 0, f.o.optErr("slot.name", f.o.Slot, fmt.Sprintf("the slot has confirmed %s, after the checkpoint's position %s: "+
			"the changes in between are gone (an older checkpoint restored?); restore the latest checkpoint, or start without one", s.confirmed, start), nil)
	}
	if p.Snapshotting {
		return start, f.resumeSnapshot(ctx, p.LastKey)
	}
	return start, nil
}

// freshStart creates the publication and the slot (dropping an unused slot
// of the same name: a fresh start is a new snapshot) and, in initial mode,
// reads the snapshot the slot exported.
func (f *fetcher) freshStart(ctx context.Context, c *pgx.Conn) (pglogrepl.LSN, error) {
	if err := f.o.ensurePublication(ctx, c); err != nil {
		return 0, err
	}
	s, err := f.o.waitInactive(ctx, c)
	if err != nil {
		return 0, err
	}
	if s.active {
		return 0, f.o.optErr("slot.name", f.o.Slot, "the slot is in use by another connection (another job?): give each job its own 'slot.name'", nil)
	}
	if s.found {
		f.log.Warn("postgres-cdc: dropping the existing replication slot for a fresh start", "slot", f.o.Slot)
		if _, err := c.Exec(ctx, "SELECT pg_drop_replication_slot($1)", f.o.Slot); err != nil {
			return 0, f.o.optErr("slot.name", f.o.Slot, "drop the old slot", err)
		}
	}
	if f.o.StartupMode == "latest-offset" {
		lsn, err := f.createSlot(ctx, f.o.Slot, false, func(string) error { return nil })
		if err == nil {
			err = f.send(ctx, item{kind: streamStart, lsn: lsn})
		}
		return lsn, err
	}
	var tx pgx.Tx
	lsn, err := f.createSlot(ctx, f.o.Slot, false, func(snap string) error {
		var err error
		tx, err = importSnapshot(ctx, c, snap)
		return err
	})
	if err != nil {
		return 0, err
	}
	if err := f.send(ctx, item{kind: snapBegin, lsn: lsn, band: Band{At: lsn}}); err != nil {
		return 0, err
	}
	f.bands = addBand(nil, nil, lsn, compareKeys)
	return lsn, f.readSnapshot(ctx, tx, nil)
}

// resumeSnapshot reads the keys after lastKey as of a new exported
// snapshot (a temporary slot's): the old exported snapshot died with its
// connection. The band it adds makes the stream skip the changes to
// those keys that the new snapshot holds already.
func (f *fetcher) resumeSnapshot(ctx context.Context, lastKey []any) error {
	c, err := f.o.connect(ctx)
	if err != nil {
		return err
	}
	defer c.Close(context.Background())
	var tx pgx.Tx
	tmp := fmt.Sprintf("%s_r%d", f.o.Slot, time.Now().UnixNano()%1e9)
	at, err := f.createSlot(ctx, tmp, true, func(snap string) error {
		tx, err = importSnapshot(ctx, c, snap)
		return err
	})
	if err != nil {
		return err
	}
	f.log.Info("postgres-cdc: resuming the snapshot", "slot", f.o.Slot, "after", fmt.Sprint(lastKey), "as_of", at.String())
	if err := f.send(ctx, item{kind: snapBegin, band: Band{After: lastKey, At: at}}); err != nil {
		return err
	}
	f.bands = addBand(f.bands, lastKey, at, compareKeys)
	return f.readSnapshot(ctx, tx, lastKey)
}

// createSlot creates a logical slot on a replication connection; with an
// exported snapshot, use is called while the snapshot is alive (it dies
// with the connection's next command), and the connection is closed
// after it (a temporary slot with it).
func (f *fetcher) createSlot(ctx context.Context, name string, temporary bool, use func(snapshot string) error) (pglogrepl.LSN, error) {
	rc, err := f.replicationConn(ctx)
	if err != nil {
		return 0, err
	}
	defer rc.Close(context.Background())
	res, err := pglogrepl.CreateReplicationSlot(ctx, rc, name, "pgoutput",
		pglogrepl.CreateReplicationSlotOptions{Temporary: temporary, Mode: pglogrepl.LogicalReplication, SnapshotAction: "EXPORT_SNAPSHOT"})
	if err != nil {
		return 0, f.o.optErr("slot.name", name, "create the replication slot", err)
	}
	lsn, err := pglogrepl.ParseLSN(res.ConsistentPoint)
	if err != nil {
		return 0, err
	}
	return lsn, use(res.SnapshotName)
}

// importSnapshot starts a repeatable-read transaction on c that sees the
// exported snapshot.
func importSnapshot(ctx context.Context, c *pgx.Conn, name string) (pgx.Tx, error) {
	tx, err := c.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return nil, err
	}
	if _, err := tx.Exec(ctx, "SET TRANSACTION SNAPSHOT '"+name+"'"); err != nil {
		_ = tx.Rollback(ctx)
		return nil, fmt.Errorf("postgres-cdc: import snapshot %s: %w", name, err)
	}
	return tx, nil
}

// readSnapshot reads the table's rows after key (all with nil) in key
// order inside tx and hands them over, then the end of the snapshot.
func (f *fetcher) readSnapshot(ctx context.Context, tx pgx.Tx, after []any) error {
	defer tx.Rollback(context.Background())
	q, args := f.snapshotQuery(after)
	rows, err := tx.Query(ctx, q, args...)
	if err != nil {
		return fmt.Errorf("postgres-cdc table %q: snapshot of %s: %w", f.o.Name, f.o.qualified(), err)
	}
	defer rows.Close()
	text := make([]*string, len(f.o.Fields))
	dest := make([]any, len(text))
	for i := range text {
		dest[i] = &text[i]
	}
	keys := f.o.keyIndexes()
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return err
		}
		row, err := f.rowOf(text)
		if err != nil {
			return err
		}
		key := make([]any, len(keys))
		for i, k := range keys {
			key[i] = row[k]
		}
		if err := f.send(ctx, item{kind: snapRow, rows: []event.Row{{Kind: event.Insert, Fields: row}}, key: key}); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("postgres-cdc table %q: snapshot of %s: %w", f.o.Name, f.o.qualified(), err)
	}
	return f.send(ctx, item{kind: snapDone})
}

// snapshotQuery selects every declared column as text, in key order
// (strings COLLATE "C", byte order, as compareKeys), after the key.
func (f *fetcher) snapshotQuery(after []any) (string, []any) {
	var cols, keys, bounds []string
	for _, fl := range f.o.Fields {
		cols = append(cols, "t."+quoteIdent(fl.Name)+"::text")
	}
	var args []any
	for i, k := range f.o.PrimaryKey {
		// Qualified: a bare "id" in ORDER BY would be the output column,
		// id::text, and order keys as text.
		col, bound := "t."+quoteIdent(k), fmt.Sprintf("($%d::text)::%s", i+1, f.info.keyTypes[i])
		if f.info.collatable[i] {
			col, bound = col+` COLLATE "C"`, bound+` COLLATE "C"`
		}
		keys, bounds = append(keys, col), append(bounds, bound)
		if after != nil {
			args = append(args, keyText(after[i]))
		}
	}
	q := "SELECT " + strings.Join(cols, ", ") + " FROM " + f.o.qualified() + " AS t"
	if after != nil {
		q += " WHERE (" + strings.Join(keys, ", ") + ") > (" + strings.Join(bounds, ", ") + ")"
	}
	return q + " ORDER BY " + strings.Join(keys, ", "), args
}

// keyText is a key value's PostgreSQL text form.
func keyText(v any) string {
	switch x := v.(type) {
	case int64:
		return strconv.FormatInt(x, 10)
	case decimal.Decimal:
		return x.String()
	}
	return fmt.Sprint(v)
}

// rowOf makes a row of the declared types from the columns' text.
func (f *fetcher) rowOf(text []*string) ([]any, error) {
	row := make([]any, len(text))
	for i, s := range text {
		if s == nil {
			continue
		}
		v, err := pgValue(*s, f.o.Fields[i].Type)
		if err != nil {
			return nil, fmt.Errorf("postgres-cdc table %q: column %q (%s): %w", f.o.Name, f.o.Fields[i].Name, f.o.Fields[i].Type, err)
		}
		row[i] = v
	}
	return row, nil
}
