package postgrescdc

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/weirstream/weir/event"
)

// statusInterval is how often the stream reports the confirmed position
// (well inside the server's wal_sender_timeout, 60 s by default).
const statusInterval = 5 * time.Second

// replicationConn opens a walsender connection.
func (f *fetcher) replicationConn(ctx context.Context) (*pgconn.PgConn, error) {
	rc, err := pgconn.Connect(ctx, f.o.connString(true))
	if err != nil {
		return nil, fmt.Errorf("postgres-cdc table %q: replication connection to %s:%d (check 'username' has REPLICATION "+
			"and pg_hba.conf allows replication connections): %w", f.o.Name, f.o.Hostname, f.o.Port, err)
	}
	return rc, nil
}

// txnState is the transaction being decoded: its commit LSN and how many
// changes of the captured table it has had.
type txnState struct {
	commit pglogrepl.LSN
	index  int
}

// stream follows the slot from start: the changes of the captured table,
// transaction by transaction, minus those the snapshot bands hold and
// those the restored position emitted already.
func (f *fetcher) stream(ctx context.Context, start pglogrepl.LSN) error {
	rc, err := f.replicationConn(ctx)
	if err != nil {
		return err
	}
	defer rc.Close(context.Background())
	args := []string{"proto_version '1'", fmt.Sprintf("publication_names '%s'", f.o.publication())}
	err = pglogrepl.StartReplication(ctx, rc, f.o.Slot, start, pglogrepl.StartReplicationOptions{PluginArgs: args})
	if err != nil {
		return fmt.Errorf("postgres-cdc table %q: start replication on slot %q: %w", f.o.Name, f.o.Slot, err)
	}
	f.log.Info("postgres-cdc: streaming", "slot", f.o.Slot, "from", start.String())
	d := &decoder{f: f, rel: map[uint32][]int{}}
	var lastStatus time.Time
	var sent uint64
	for {
		// Report at the interval, and as soon as a checkpoint completed.
		if c := f.confirmed.Load(); c != sent || time.Since(lastStatus) >= statusInterval {
			if err := f.status(rc, start); err != nil {
				return err
			}
			lastStatus, sent = time.Now(), c
		}
		rctx, cancel := context.WithTimeout(ctx, time.Second)
		msg, err := rc.ReceiveMessage(rctx)
		cancel()
		switch {
		case err != nil && pgconn.Timeout(err) && ctx.Err() == nil:
			continue
		case err != nil:
			return fmt.Errorf("postgres-cdc table %q: replication stream of slot %q: %w", f.o.Name, f.o.Slot, err)
		}
		reply, err := f.handle(ctx, d, msg)
		if err != nil {
			return err
		}
		if reply {
			lastStatus = time.Time{}
		}
	}
}

// status reports the confirmed position (never below start, which the slot
// has confirmed already or the restored checkpoint completed).
func (f *fetcher) status(rc *pgconn.PgConn, start pglogrepl.LSN) error {
	lsn := max(pglogrepl.LSN(f.confirmed.Load()), start)
	return pglogrepl.SendStandbyStatusUpdate(context.Background(), rc, pglogrepl.StandbyStatusUpdate{WALWritePosition: lsn})
}

// handle takes one message of the walsender; reply asks for a status now.
func (f *fetcher) handle(ctx context.Context, d *decoder, msg pgproto3.BackendMessage) (reply bool, err error) {
	switch m := msg.(type) {
	case *pgproto3.ErrorResponse:
		return false, fmt.Errorf("postgres-cdc table %q: slot %q: %w", f.o.Name, f.o.Slot, pgconn.ErrorResponseToPgError(m))
	case *pgproto3.CopyData:
		if len(m.Data) == 0 {
			return false, nil
		}
		switch m.Data[0] {
		case pglogrepl.PrimaryKeepaliveMessageByteID:
			k, err := pglogrepl.ParsePrimaryKeepaliveMessage(m.Data[1:])
			return k.ReplyRequested, err
		case pglogrepl.XLogDataByteID:
			x, err := pglogrepl.ParseXLogData(m.Data[1:])
			if err != nil {
				return false, err
			}
			return false, d.decode(ctx, x.WALData)
		}
	}
	return false, nil
}

// decoder turns pgoutput messages into items.
type decoder struct {
	f *fetcher
	// rel maps the captured table's relation id to the position of each
	// declared column in its tuples.
	rel map[uint32][]int
	txn txnState
}

func (d *decoder) decode(ctx context.Context, data []byte) error {
	m, err := pglogrepl.Parse(data)
	if err != nil {
		return err
	}
	f := d.f
	switch m := m.(type) {
	case *pglogrepl.RelationMessage:
		return d.relation(m)
	case *pglogrepl.BeginMessage:
		d.txn = txnState{commit: m.FinalLSN}
	case *pglogrepl.CommitMessage:
		return f.send(ctx, item{kind: commit, lsn: m.TransactionEndLSN, commit: m.CommitLSN})
	case *pglogrepl.InsertMessage:
		return d.change(ctx, m.RelationID, nil, m.Tuple)
	case *pglogrepl.UpdateMessage:
		return d.change(ctx, m.RelationID, m.OldTuple, m.NewTuple)
	case *pglogrepl.DeleteMessage:
		return d.change(ctx, m.RelationID, m.OldTuple, nil)
	case *pglogrepl.TruncateMessage:
		for _, id := range m.RelationIDs {
			if _, ok := d.rel[id]; ok {
				return fmt.Errorf("postgres-cdc table %q: %s was truncated (transaction at %s): a TRUNCATE has no rows "+
					"to retract; start the job again without its checkpoint for a new snapshot", f.o.Name, f.o.qualified(), d.txn.commit)
			}
		}
	}
	return nil
}

// relation maps a relation of the captured table (the publication may list
// others: they are ignored).
func (d *decoder) relation(m *pglogrepl.RelationMessage) error {
	o := d.f.o
	if m.Namespace != o.Schema || m.RelationName != o.Table {
		return nil
	}
	cols := make([]int, len(o.Fields))
	for i, fl := range o.Fields {
		cols[i] = -1
		for j, c := range m.Columns {
			if c.Name == fl.Name {
				cols[i] = j
			}
		}
		if cols[i] < 0 {
			return o.optErr("table-name", o.Table, fmt.Sprintf("column %q is declared but %s no longer has it", fl.Name, o.qualified()), nil)
		}
	}
	d.rel[m.RelationID] = cols
	return nil
}

// change emits one insert (old nil), update or delete (new nil) of the
// captured table, as +I, -U/+U (-D/+I when the key changed) or -D, minus
// the sides a snapshot band holds; the restored position's already emitted
// changes of its transaction are skipped.
func (d *decoder) change(ctx context.Context, relID uint32, old, new *pglogrepl.TupleData) error {
	cols, ok := d.rel[relID]
	if !ok {
		return nil
	}
	f := d.f
	index := d.txn.index
	d.txn.index++
	if p := f.restored; d.txn.commit == p.InTxn && index < p.Emitted {
		return nil
	}
	var before, after []any
	var err error
	if old != nil {
		if before, err = d.row(cols, old, nil); err != nil {
			return err
		}
	}
	if new != nil {
		if after, err = d.row(cols, new, before); err != nil {
			return err
		}
	}
	rows := changeRows(before, after, f.o.keyIndexes(), func(key []any) bool { return inSnapshot(f.bands, key, d.txn.commit, compareKeys) })
	return f.send(ctx, item{kind: change, rows: rows, commit: d.txn.commit, index: index})
}

// changeRows is the changelog of one change: before and after images
// (either nil), minus the images whose key skip says the snapshot holds.
func changeRows(before, after []any, keys []int, skip func(key []any) bool) []event.Row {
	keyOf := func(row []any) []any {
		k := make([]any, len(keys))
		for i, c := range keys {
			k[i] = row[c]
		}
		return k
	}
	var rows []event.Row
	sameKey := before != nil && after != nil && compareKeys(keyOf(before), keyOf(after)) == 0
	if before != nil && !skip(keyOf(before)) {
		k := event.Delete
		if sameKey {
			k = event.UpdateBefore
		}
		rows = append(rows, event.Row{Kind: k, Fields: before})
	}
	if after != nil && !skip(keyOf(after)) {
		k := event.Insert
		if sameKey {
			k = event.UpdateAfter
		}
		rows = append(rows, event.Row{Kind: k, Fields: after})
	}
	return rows
}

// row reads a tuple as a row of the declared columns; an unchanged TOASTed
// value is taken from the old row (REPLICA IDENTITY FULL sends it there).
func (d *decoder) row(cols []int, t *pglogrepl.TupleData, old []any) ([]any, error) {
	o := d.f.o
	row := make([]any, len(cols))
	for i, j := range cols {
		c := t.Columns[j]
		switch c.DataType {
		case pglogrepl.TupleDataTypeNull:
		case pglogrepl.TupleDataTypeToast:
			if old == nil {
				return nil, fmt.Errorf("postgres-cdc table %q: column %q: an unchanged TOASTed value without the old row "+
					"(ALTER TABLE %s REPLICA IDENTITY FULL)", o.Name, o.Fields[i].Name, o.qualified())
			}
			row[i] = old[i]
		default:
			v, err := pgValue(string(c.Data), o.Fields[i].Type)
			if err != nil {
				return nil, fmt.Errorf("postgres-cdc table %q: column %q (%s) in the transaction at %s: %w",
					o.Name, o.Fields[i].Name, o.Fields[i].Type, d.txn.commit, err)
			}
			row[i] = v
		}
	}
	return row, nil
}
