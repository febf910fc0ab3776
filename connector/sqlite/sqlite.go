// Package sqlite is an exactly-once upsert sink for SQLite (through the
// pure-Go modernc.org/sqlite driver) without two-phase commit: each
// checkpoint's rows are kept in the checkpoint (a write-ahead log) and, once
// it completes, written in one local transaction together with the
// checkpoint id in a bookkeeping table, so a replay of an already written
// checkpoint is detected and skipped. It is what `weir demo billing` writes
// to; the jdbc connector offers the same for MySQL and PostgreSQL.
package sqlite

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"sync"

	_ "modernc.org/sqlite" // registers the "sqlite" driver

	"github.com/weirstream/weir/connector/format"
	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/types"
)

// Checkpoints is the bookkeeping table: the last checkpoint written per
// (job, sink, subtask).
const Checkpoints = "weir_sink_checkpoints"

// Open opens (creating) a SQLite database file with settings that suit a
// single writer: WAL journal, a busy timeout.
func Open(path string) (*sql.DB, error) {
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)")
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	return db, nil
}

// UpsertSink writes changelog rows (event.Row) into Table by Key: +I/+U
// upsert, -D delete, -U ignored (the +U that follows replaces the row).
type UpsertSink struct {
	DB      *sql.DB
	Table   string
	Columns []types.Field // the table's columns, in row order
	Key     []string
	// Name distinguishes sinks of one job in the bookkeeping table.
	Name string
	// once guards wal and job: every subtask's writer and committer is
	// created on its own goroutine.
	once sync.Once
	wal  *operator.WriteAheadSink
	job  string
}

// EnsureTables creates the bookkeeping table (and nothing else: the target
// table is the user's).
func (s *UpsertSink) EnsureTables(ctx context.Context) error {
	_, err := s.DB.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS `+Checkpoints+` (
		job TEXT NOT NULL, sink TEXT NOT NULL, subtask INTEGER NOT NULL, checkpoint_id INTEGER NOT NULL,
		PRIMARY KEY (job, sink, subtask))`)
	return err
}

func (s *UpsertSink) init(job string) {
	s.once.Do(func() {
		s.job = job
		s.wal = &operator.WriteAheadSink{Codec: rowCodec{cols: s.Columns}, Write: s.write}
	})
}

// CreateWriter implements operator.Sink.
func (s *UpsertSink) CreateWriter(ctx operator.WriterContext) (operator.SinkWriter, error) {
	s.init(ctx.JobID)
	if err := s.EnsureTables(ctx.Context); err != nil {
		return nil, fmt.Errorf("sqlite sink %s: %w", s.Table, err)
	}
	return s.wal.CreateWriter(ctx)
}

// CreateCommitter implements operator.Sink.
func (s *UpsertSink) CreateCommitter(ctx operator.WriterContext) (operator.Committer, error) {
	s.init(ctx.JobID)
	return s.wal.CreateCommitter(ctx)
}

// write applies one checkpoint's rows of one subtask, once.
func (s *UpsertSink) write(ctx context.Context, subtask int, id event.CheckpointID, rows []any) error {
	tx, err := s.DB.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var last int64
	err = tx.QueryRowContext(ctx, `SELECT checkpoint_id FROM `+Checkpoints+` WHERE job = ? AND sink = ? AND subtask = ?`,
		s.job, s.Name, subtask).Scan(&last)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	if last >= int64(id) {
		return nil // already written: a replay after a restore
	}
	for _, r := range rows {
		if err := s.apply(ctx, tx, r.(event.Row)); err != nil {
			return err
		}
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO `+Checkpoints+` (job, sink, subtask, checkpoint_id) VALUES (?, ?, ?, ?)
		ON CONFLICT (job, sink, subtask) DO UPDATE SET checkpoint_id = excluded.checkpoint_id`, s.job, s.Name, subtask, int64(id))
	if err != nil {
		return err
	}
	return tx.Commit()
}

func (s *UpsertSink) apply(ctx context.Context, tx *sql.Tx, r event.Row) error {
	switch r.Kind {
	case event.UpdateBefore:
		return nil
	case event.Delete:
		_, err := tx.ExecContext(ctx, s.deleteSQL(), s.keyArgs(r)...)
		return s.rowErr(err, r)
	}
	_, err := tx.ExecContext(ctx, s.upsertSQL(), s.args(r)...)
	return s.rowErr(err, r)
}

func (s *UpsertSink) rowErr(err error, r event.Row) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("sqlite sink: table %s, key %v: %w", s.Table, s.keyArgs(r), err)
}

func (s *UpsertSink) names() []string {
	out := make([]string, len(s.Columns))
	for i, c := range s.Columns {
		out[i] = `"` + c.Name + `"`
	}
	return out
}

func (s *UpsertSink) upsertSQL() string {
	cols := s.names()
	var sets []string
	for _, c := range cols {
		sets = append(sets, c+" = excluded."+c)
	}
	keys := make([]string, len(s.Key))
	for i, k := range s.Key {
		keys[i] = `"` + k + `"`
	}
	return fmt.Sprintf(`INSERT INTO "%s" (%s) VALUES (%s) ON CONFLICT (%s) DO UPDATE SET %s`, s.Table,
		strings.Join(cols, ", "), strings.TrimSuffix(strings.Repeat("?, ", len(cols)), ", "), strings.Join(keys, ", "), strings.Join(sets, ", "))
}

func (s *UpsertSink) deleteSQL() string {
	var conds []string
	for _, k := range s.Key {
		conds = append(conds, `"`+k+`" = ?`)
	}
	return fmt.Sprintf(`DELETE FROM "%s" WHERE %s`, s.Table, strings.Join(conds, " AND "))
}

// args converts fields to driver values; decimals and times go as text so
// money stays exact.
func (s *UpsertSink) args(r event.Row) []any {
	out := make([]any, len(r.Fields))
	for i, f := range r.Fields {
		out[i] = driverValue(f, s.Columns[i].Type)
	}
	return out
}

func driverValue(f any, t types.Type) any {
	switch f.(type) {
	case nil, string, int64, float64, bool, []byte:
		return f
	}
	return format.Text(f, t) // a DATE as yyyy-MM-dd, a DECIMAL at its scale
}

func (s *UpsertSink) keyArgs(r event.Row) []any {
	var out []any
	for _, k := range s.Key {
		for i, c := range s.Columns {
			if c.Name == k {
				out = append(out, driverValue(r.Fields[i], c.Type))
			}
		}
	}
	return out
}

// rowCodec encodes a changelog row as its kind and each field's text.
type rowCodec struct{ cols []types.Field }

func (c rowCodec) Encode(buf []byte, v any) []byte {
	r := v.(event.Row)
	buf = append(buf, byte(r.Kind))
	for i, f := range r.Fields {
		if f == nil {
			buf = append(buf, 0)
			continue
		}
		// Text reads back with ParseScalar: a DATE as yyyy-MM-dd, not as
		// a timestamp that ParseScalar would refuse for a DATE column.
		s := format.Text(f, c.cols[i].Type)
		buf = append(buf, 1)
		buf = binary.AppendUvarint(buf, uint64(len(s)))
		buf = append(buf, s...)
	}
	return buf
}

var errCorrupt = errors.New("sqlite sink: corrupt write-ahead log row")

func (c rowCodec) Decode(b []byte) (any, []byte, error) {
	if len(b) < 1 {
		return nil, nil, errCorrupt
	}
	r := event.Row{Kind: event.RowKind(b[0]), Fields: make([]any, len(c.cols))}
	b = b[1:]
	for i, col := range c.cols {
		if len(b) < 1 {
			return nil, nil, errCorrupt
		}
		null := b[0] == 0
		b = b[1:]
		if null {
			continue
		}
		n, k := binary.Uvarint(b)
		if k <= 0 || uint64(len(b)-k) < n {
			return nil, nil, errCorrupt
		}
		v, err := format.ParseScalar(string(b[k:k+int(n)]), col.Type)
		if err != nil {
			return nil, nil, err
		}
		r.Fields[i], b = v, b[k+int(n):]
	}
	return r, b, nil
}
