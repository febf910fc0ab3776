package jdbc

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/weirstream/weir/event"
)

// ErrBadRow matches (errors.Is) every *BadRowError.
var ErrBadRow = errors.New("jdbc: bad row")

// BadRowError is a row the database refused for its data: a value too long
// or of the wrong type, a NULL in a NOT NULL column, a duplicate key, a
// violated constraint. It is never retried and never skipped: the job fails
// with it, naming the table, the row's key and the column.
type BadRowError struct {
	Table string
	// Key is the row's primary key ("id=5", "k=1, seq=2"); "" when the
	// table has none or the row could not be told (then Row may be set).
	Key string
	// Column is the column the database blamed; "" when it did not say.
	Column string
	// Row is the offending row, nil when it could not be told.
	Row *event.Row
	// Reason says what is wrong, in words ("value too long for the column").
	Reason string
	// Err is the driver's error.
	Err error
	// batch is the number of rows of the failed statement.
	batch int
}

var badRowHints = map[string]string{
	"value too long for the column":                  "shorten the value or widen the column",
	"incorrect value for the column's type":          "fix the value or the column's type",
	"value cannot be converted to the column's type": "fix the value or the column's type",
	"value out of range for the column":              "fix the value or widen the column's type",
	"value truncated for the column":                 "fix the value or the column's type",
	"NULL in a NOT NULL column":                      "give the column a value or allow NULL",
	"no value for a column without a default":        "add the column to the sink's columns or give it a default",
	"duplicate key":                                  "the key exists already: declare the primary key (upsert) or deduplicate the input",
}

// Error implements error.
func (e *BadRowError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "jdbc: table %q: bad row", e.Table)
	switch {
	case e.Key != "":
		fmt.Fprintf(&b, " (key %s)", e.Key)
	case e.Row != nil:
		fmt.Fprintf(&b, " (row %s)", e.Row)
	default:
		fmt.Fprintf(&b, " (key unknown: one of %d rows of the statement)", e.batch)
	}
	if e.Column != "" {
		fmt.Fprintf(&b, ", column %q", e.Column)
	}
	fmt.Fprintf(&b, ": %s", e.Reason)
	if h := badRowHints[e.Reason]; h != "" {
		fmt.Fprintf(&b, " (%s)", h)
	}
	fmt.Fprintf(&b, ": %v", e.Err)
	return b.String()
}

// Unwrap returns the underlying error, for errors.Is and errors.As.
func (e *BadRowError) Unwrap() error { return e.Err }

// Position implements operator.PositionedError: a restart writes the same
// row again, so the same error on it twice fails the job instead of
// restarting it forever. "" (no position) when the row is not known: the
// rows of a statement depend on when the buffer flushed.
func (e *BadRowError) Position() string {
	switch {
	case e.Key != "":
		return fmt.Sprintf("JDBC sink table %s, key %s", e.Table, e.Key)
	case e.Row != nil:
		return fmt.Sprintf("JDBC sink table %s, row %s", e.Table, e.Row)
	}
	return ""
}

// Is makes errors.Is(err, ErrBadRow) true.
func (e *BadRowError) Is(target error) bool { return target == ErrBadRow }

// stmtRows describes the rows one failed statement bound, so an error can
// be pinned on one of them.
type stmtRows struct {
	t    *tableInfo
	rows []event.Row
	cols []int // field positions bound per row, in order
}

func (st *stmtRows) newBadRow(reason string, err error) *BadRowError {
	return &BadRowError{Table: st.t.name, Reason: reason, Err: err, batch: len(st.rows)}
}

// locate blames row i of the statement.
func (st *stmtRows) locate(e *BadRowError, i int) {
	if i < 0 || i >= len(st.rows) {
		return
	}
	r := st.rows[i]
	e.Row = &r
	e.Key = st.t.keyText(r)
}

// locateArg blames bind parameter i (0-based).
func (st *stmtRows) locateArg(e *BadRowError, i int) {
	if len(st.cols) == 0 {
		return
	}
	st.locate(e, i/len(st.cols))
	e.Column = st.t.columns[st.cols[i%len(st.cols)]]
}

// locateNull blames the first row with NULL in e.Column.
func (st *stmtRows) locateNull(e *BadRowError) {
	c := st.t.index(e.Column)
	for i, r := range st.rows {
		if c >= 0 && c < len(r.Fields) && r.Fields[c] == nil {
			st.locate(e, i)
			return
		}
	}
}

// duplicate reads MySQL's "Duplicate entry 'entry' for key 'name'": the
// entry is the key's values joined by '-'.
func (st *stmtRows) duplicate(e *BadRowError, entry, keyName string) {
	if strings.HasSuffix(keyName, "PRIMARY") && len(st.t.ident) > 0 {
		e.Column = strings.Join(st.t.ident, ", ")
		for i, r := range st.rows {
			if joinFields(r, st.t.identIdx, "-") == entry {
				st.locate(e, i)
				return
			}
		}
		e.Key = e.Column + "=" + entry
		return
	}
	e.Column = ""
	e.Key = "'" + entry + "' of unique key " + keyName
}

// locateKey reads PostgreSQL's "Key (a, b)=(1, x)" detail.
func (st *stmtRows) locateKey(e *BadRowError, colsText, valsText string) {
	cols := strings.Split(colsText, ", ")
	idx := make([]int, len(cols))
	for i, c := range cols {
		if idx[i] = st.t.index(strings.Trim(c, `"`)); idx[i] < 0 {
			idx = nil
			break
		}
	}
	e.Column = colsText
	for i, r := range st.rows {
		if idx != nil && joinFields(r, idx, ", ") == valsText {
			st.locate(e, i)
			if colsText != strings.Join(st.t.ident, ", ") {
				e.Key = pairs(cols, strings.Split(valsText, ", "))
			}
			return
		}
	}
	e.Key = pairs(cols, strings.Split(valsText, ", "))
}

// locateTooLong finds a string longer than n in a column of type typ.
func (st *stmtRows) locateTooLong(e *BadRowError, typ string, n int) {
	for i, r := range st.rows {
		for _, c := range st.cols {
			s, ok := r.Fields[c].(string)
			if ok && st.t.types[st.t.columns[c]] == typ && n >= 0 && utf8.RuneCountInString(s) > n {
				e.Column = st.t.columns[c]
				st.locate(e, i)
				return
			}
		}
	}
}

// locateValue finds the field whose text is val, preferring a column of
// type typ.
func (st *stmtRows) locateValue(e *BadRowError, typ, val string) {
	found := false
	for i, r := range st.rows {
		for _, c := range st.cols {
			if fieldText(r.Fields[c]) != val {
				continue
			}
			if !found || strings.HasPrefix(st.t.types[st.t.columns[c]], typ) {
				e.Column = st.t.columns[c]
				st.locate(e, i)
				found = true
			}
			if strings.HasPrefix(st.t.types[st.t.columns[c]], typ) {
				return
			}
		}
	}
}

func fieldText(v any) string {
	switch v := v.(type) {
	case []byte:
		return string(v)
	case time.Time:
		return v.Format(time.RFC3339Nano)
	case nil:
		return "NULL"
	}
	return fmt.Sprint(v)
}

func joinFields(r event.Row, idx []int, sep string) string {
	parts := make([]string, len(idx))
	for i, c := range idx {
		if c < len(r.Fields) {
			parts[i] = fieldText(r.Fields[c])
		}
	}
	return strings.Join(parts, sep)
}

func pairs(cols, vals []string) string {
	if len(cols) != len(vals) {
		return strings.Join(cols, ", ") + "=" + strings.Join(vals, ", ")
	}
	parts := make([]string, len(cols))
	for i := range cols {
		parts[i] = strings.Trim(cols[i], `"`) + "=" + vals[i]
	}
	return strings.Join(parts, ", ")
}

// retry runs op up to 1+max times while it fails with a transient error,
// backing off 50 ms, 100 ms, … up to 2 s between attempts.
func retry(ctx context.Context, d dialect, max int, what string, log func(string, ...any), op func() error) error {
	delay := 50 * time.Millisecond
	for attempt := 0; ; attempt++ {
		err := op()
		if err == nil || attempt >= max || !d.transient(err) || ctx.Err() != nil {
			if err != nil && attempt > 0 {
				return fmt.Errorf("%w (after %d retries)", err, attempt)
			}
			return err
		}
		log("jdbc: transient error; retrying", "what", what, "attempt", attempt+1, "max", max, "err", err)
		select {
		case <-time.After(delay):
		case <-ctx.Done():
			return ctx.Err()
		}
		delay = min(2*delay, 2*time.Second)
	}
}
