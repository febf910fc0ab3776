package mysqlcdc

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/types"
)

// keyList is the key columns as the snapshot queries order and compare
// them: strings as BINARY (byte order, as compareKeys), so the ranges
// the binlog is split by are the ranges the queries read.
func (t *table) keyList() string {
	var out []string
	for _, i := range t.keyCols {
		c := t.cols[i]
		e := quoteIdent(c.name)
		if !c.t.IsInteger() {
			e = "BINARY " + e
		}
		out = append(out, e)
	}
	return "(" + strings.Join(out, ", ") + ")"
}

// placeholders is "(?, ?, …)" for the key.
func (t *table) placeholders() string {
	return "(" + strings.TrimSuffix(strings.Repeat("?, ", len(t.keyCols)), ", ") + ")"
}

// chunkBounds splits the table's keys into ranges of about size rows:
// the first key of every range but the first (Flink CDC's chunk splitter
// for keys that are not evenly distributed).
func (t *table) chunkBounds(ctx context.Context, db *sql.DB, size int, kt []types.Type) ([][]any, error) {
	var bounds [][]any
	var from []any
	for {
		q := "SELECT " + strings.Trim(t.keyList(), "()") + " FROM " + t.qualified()
		var args []any
		if from != nil {
			q += " WHERE " + t.keyList() + " >= " + t.placeholders()
			args = from
		}
		q += fmt.Sprintf(" ORDER BY %s LIMIT 1 OFFSET %d", strings.Trim(t.keyList(), "()"), size)
		raw := make([]sql.NullString, len(kt))
		dest := make([]any, len(raw))
		for i := range raw {
			dest[i] = &raw[i]
		}
		err := db.QueryRowContext(ctx, q, args...).Scan(dest...)
		if err == sql.ErrNoRows {
			return bounds, nil
		}
		if err != nil {
			return nil, fmt.Errorf("mysql-cdc: split %s into chunks: %w", t.qualified(), err)
		}
		vals := make([]any, len(raw))
		for i, r := range raw {
			vals[i] = r.String
		}
		if from, err = keyParser(kt)(vals); err != nil {
			return nil, err
		}
		bounds = append(bounds, from)
	}
}

// snapshotQuery selects the declared columns of the split's keys after
// the last one emitted, in key order.
func (t *table) snapshotQuery(p *Position) (string, []any) {
	var cols []string
	for _, c := range t.cols {
		cols = append(cols, quoteIdent(c.name))
	}
	var where []string
	var args []any
	add := func(op string, key []any) {
		if key != nil {
			where = append(where, t.keyList()+" "+op+" "+t.placeholders())
			args = append(args, key...)
		}
	}
	add(">=", p.Lo)
	add("<", p.Hi)
	add(">", p.LastKey)
	q := "SELECT " + strings.Join(cols, ", ") + " FROM " + t.qualified()
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	return q + " ORDER BY " + strings.Trim(t.keyList(), "()"), args
}

// readSplit reads a split's rows in the snapshot transaction c and hands
// them over, then the split's end.
func (f *fetcher) readSplit(ctx context.Context, c *sql.Conn, s *fsplit) error {
	q, args := f.tbl.snapshotQuery(&s.p)
	rows, err := c.QueryContext(ctx, q, args...)
	if err != nil {
		return fmt.Errorf("mysql-cdc table %q: snapshot of %s: %w", f.o.Name, f.tbl.qualified(), err)
	}
	defer rows.Close()
	raw := make([]sql.RawBytes, len(f.tbl.cols))
	dest := make([]any, len(raw))
	for i := range raw {
		dest[i] = &raw[i]
	}
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return err
		}
		row, err := f.rowOfText(raw)
		if err != nil {
			return err
		}
		it := item{kind: snapRow, split: s.id, rows: []event.Row{{Kind: event.Insert, Fields: row}}, key: f.keyOf(row)}
		if err := f.send(ctx, it); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("mysql-cdc table %q: snapshot of %s: %w", f.o.Name, f.tbl.qualified(), err)
	}
	return f.send(ctx, item{kind: snapDone, split: s.id})
}

// rowOfText makes a row of the declared types from the columns' text.
func (f *fetcher) rowOfText(raw []sql.RawBytes) ([]any, error) {
	row := make([]any, len(raw))
	for i, b := range raw {
		if b == nil {
			continue
		}
		var err error
		if f.tbl.cols[i].t.Kind == types.Bytes {
			row[i] = append([]byte{}, b...)
		} else if row[i], err = f.conv.fromText(i, string(b)); err != nil {
			c := f.tbl.cols[i]
			return nil, fmt.Errorf("mysql-cdc table %q: column %q (%s) in the snapshot of %s: %w", f.o.Name, c.name, c.t, f.tbl.qualified(), err)
		}
	}
	return row, nil
}

// keyOf is a row's primary key.
func (f *fetcher) keyOf(row []any) []any {
	k := make([]any, len(f.tbl.keyCols))
	for i, c := range f.tbl.keyCols {
		k[i] = row[c]
	}
	return k
}
