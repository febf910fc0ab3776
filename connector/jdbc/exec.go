package jdbc

import (
	"context"
	"fmt"

	"github.com/weirstream/weir/event"
)

// maxRowsPerStatement bounds one multi-row INSERT or DELETE.
const maxRowsPerStatement = 1000

// apply writes rows through s, inside whatever transaction s is in. On a
// table with a key the rows are first reduced to the last change per key
// (Flink's buffer reduction), then written as one DELETE per chunk of
// retracted keys (-U, -D) and one upsert per chunk of the rest (+I, +U):
// after reduction the keys are distinct, so the two commute. On a table
// without a key the rows are appended in order.
func (t *tableInfo) apply(ctx context.Context, s session, rows []event.Row) error {
	if t.isAppend() {
		return t.insertRows(ctx, s, rows)
	}
	ups, dels := t.reduce(rows)
	if err := t.deleteRows(ctx, s, dels); err != nil {
		return err
	}
	return t.insertRows(ctx, s, ups)
}

// reduce keeps the last change of each key, in first-seen key order.
func (t *tableInfo) reduce(rows []event.Row) (ups, dels []event.Row) {
	last := make(map[string]int, len(rows))
	var order []event.Row
	for _, r := range rows {
		k := t.keyOf(r)
		if i, ok := last[k]; ok {
			order[i] = r
			continue
		}
		last[k] = len(order)
		order = append(order, r)
	}
	for _, r := range order {
		if r.Kind.IsAccumulate() {
			ups = append(ups, r)
		} else {
			dels = append(dels, r)
		}
	}
	return ups, dels
}

func (t *tableInfo) chunk(width int) int {
	return max(1, min(maxRowsPerStatement, t.d.maxParams()/width))
}

func (t *tableInfo) insertRows(ctx context.Context, s session, rows []event.Row) error {
	all := make([]int, len(t.columns))
	for i := range all {
		all[i] = i
	}
	n := t.chunk(len(t.columns))
	for len(rows) > 0 {
		part := rows[:min(n, len(rows))]
		rows = rows[len(part):]
		if err := t.execRows(ctx, s, t.insertSQL(len(part)), part, all, "writing"); err != nil {
			return err
		}
	}
	return nil
}

func (t *tableInfo) deleteRows(ctx context.Context, s session, rows []event.Row) error {
	n := t.chunk(len(t.keys))
	for len(rows) > 0 {
		part := rows[:min(n, len(rows))]
		rows = rows[len(part):]
		if err := t.execRows(ctx, s, t.deleteSQL(len(part)), part, t.keyIdx, "deleting"); err != nil {
			return err
		}
	}
	return nil
}

// execRows runs q with the fields cols of every row as arguments and turns
// a data error into a *BadRowError that names the row.
func (t *tableInfo) execRows(ctx context.Context, s session, q string, rows []event.Row, cols []int, verb string) error {
	args := make([]any, 0, len(rows)*len(cols))
	for _, r := range rows {
		for _, c := range cols {
			args = append(args, r.Fields[c])
		}
	}
	if _, err := s.exec(ctx, q, args...); err != nil {
		if bad, ok := t.d.badRow(err, &stmtRows{t: t, rows: rows, cols: cols}); ok {
			return bad
		}
		return fmt.Errorf("jdbc: table %q: %s %d rows: %w", t.name, verb, len(rows), err)
	}
	return nil
}
