package client

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/weirstream/weir/connector/format"
	"github.com/weirstream/weir/connector/print"
	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/types"
)

// nullText is how a result shows NULL, as Flink's SQL client.
const nullText = "<NULL>"

// maxColumnWidth caps a column's width, as Flink's
// sql-client.display.max-column-width (default 30); longer values end in
// "...".
const maxColumnWidth = 30

// box draws a bordered table, Flink's tableau style: every cell right
// aligned, widths fixed up front.
type box struct {
	headers []string
	widths  []int
}

// streamBox is the box of a streaming result, as Flink's tableau mode:
// widths come from the column types (a BIGINT is 20 wide, a STRING the
// maximum), since rows are printed as they arrive. op adds Flink's op
// column with each row's RowKind.
func streamBox(cols []types.Field, op bool) box {
	var b box
	if op {
		b.headers, b.widths = append(b.headers, "op"), append(b.widths, 2)
	}
	for _, c := range cols {
		w := max(typeWidth(c.Type), utf8.RuneCountInString(c.Name))
		if c.Type.Nullable {
			w = max(w, len(nullText))
		}
		b.headers, b.widths = append(b.headers, c.Name), append(b.widths, w)
	}
	return b
}

// dataBox is the box of rows known up front (SET;, SHOW, DESCRIBE): each
// column as wide as its widest cell.
func dataBox(headers []string, rows [][]string) box {
	b := box{headers: headers, widths: make([]int, len(headers))}
	for i, h := range headers {
		b.widths[i] = utf8.RuneCountInString(h)
	}
	for _, r := range rows {
		for i, c := range r {
			b.widths[i] = max(b.widths[i], utf8.RuneCountInString(c))
		}
	}
	return b
}

// typeWidth is how wide Flink's tableau mode makes a column of type t.
func typeWidth(t types.Type) int {
	switch t.Kind {
	case types.Boolean:
		return 5 // FALSE
	case types.TinyInt:
		return 4
	case types.SmallInt:
		return 6
	case types.Int:
		return 11
	case types.BigInt:
		return 20
	case types.Decimal:
		return min(t.Precision+2, maxColumnWidth) // sign and point
	case types.Char, types.Varchar:
		return min(t.Precision, maxColumnWidth)
	case types.Date:
		return 10
	case types.Time:
		if t.Precision > 0 {
			return 9 + t.Precision
		}
		return 8
	case types.Timestamp, types.TimestampLTZ:
		if t.Precision > 0 {
			return 20 + t.Precision
		}
		return 19
	}
	return maxColumnWidth
}

func (b box) border() string {
	var s strings.Builder
	for _, w := range b.widths {
		s.WriteString("+" + strings.Repeat("-", w+2))
	}
	return s.String() + "+"
}

func (b box) line(cells []string) string {
	var s strings.Builder
	for i, w := range b.widths {
		c := fit(cells[i], w)
		s.WriteString("| " + strings.Repeat(" ", w-utf8.RuneCountInString(c)) + c + " ")
	}
	return s.String() + "|"
}

// header is the top border, the column names and the border below them.
func (b box) header() []string {
	return []string{b.border(), b.line(b.headers), b.border()}
}

// fit cuts s to w characters, ending a cut value in "...".
func fit(s string, w int) string {
	if utf8.RuneCountInString(s) <= w {
		return s
	}
	r := []rune(s)
	if w <= 3 {
		return string(r[:w])
	}
	return string(r[:w-3]) + "..."
}

// table renders rows known up front with a dataBox, and Flink's count
// line below ("3 rows in set"; "Empty set").
func table(headers []string, rows [][]string) string {
	if len(rows) == 0 {
		return "Empty set\n"
	}
	b := dataBox(headers, rows)
	lines := b.header()
	for _, r := range rows {
		lines = append(lines, b.line(r))
	}
	lines = append(lines, b.border(), fmt.Sprintf("%s in set", plural(len(rows), "row")))
	return strings.Join(lines, "\n") + "\n"
}

// cells are a row's fields as text, by the column types, after its op
// when op is set; a TIMESTAMP_LTZ shows in the session zone loc, as
// Flink's SQL client shows it.
func cells(r event.Row, cols []types.Field, op bool, loc *time.Location) []string {
	var out []string
	if op {
		out = append(out, r.Kind.String())
	}
	for i, f := range r.Fields {
		switch {
		case f == nil:
			out = append(out, nullText)
		case i < len(cols) && cols[i].Type.Kind == types.TimestampLTZ:
			out = append(out, ltzText(f, cols[i].Type, loc))
		case i < len(cols) && isNested(cols[i].Type):
			out = append(out, print.NestedText(f, cols[i].Type))
		case i < len(cols):
			out = append(out, format.Text(f, cols[i].Type))
		default:
			out = append(out, fmt.Sprint(f))
		}
	}
	return out
}

// isNested reports an ARRAY, MAP, MULTISET or ROW column: shown as the
// print connector shows them ([1, 2, null], {a=1}), not as Go prints them.
func isNested(t types.Type) bool {
	switch t.Kind {
	case types.Array, types.Map, types.Multiset, types.Row:
		return true
	}
	return false
}

// plural is "1 row", "2 rows".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func ltzText(v any, t types.Type, loc *time.Location) string {
	tm, ok := v.(time.Time)
	if !ok || loc == nil {
		return format.Text(v, t)
	}
	return types.FormatTimestamp(tm.In(loc), t.Precision)
}
