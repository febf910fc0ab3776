package client

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/sql/parser"
	"github.com/weirstream/weir/types"
)

// TestResultModes renders changelogs in each result mode. Commands:
//
//	tableau cols=(name TYPE, …)    the printed lines (end: finished)
//	table cols=(…) [height=N]      table mode's last frame
//	changelog cols=(…) [height=N]  changelog mode's last frame
//
// The input has one changelog row a line, as Flink prints them:
// +I[Bob, 1]. A field is parsed by its column's type; NULL is null.
// "cancel" on a line of its own ends the result as Ctrl-C does.
func TestResultModes(t *testing.T) {
	datadriven.Walk(t, "testdata/modes", func(t *testing.T, path string) {
		datadriven.RunTest(t, path, func(t *testing.T, td *datadriven.TestData) string {
			var cols []types.Field
			for _, a := range td.CmdArgs {
				if a.Key == "cols" {
					cols = parseCols(t, a.Vals)
				}
			}
			loc := time.UTC
			if td.HasArg("zone") {
				var zone string
				td.ScanArgs(t, "zone", &zone)
				var err error
				if loc, err = time.LoadLocation(zone); err != nil {
					t.Fatal(err)
				}
			}
			height := 0
			if td.HasArg("height") {
				td.ScanArgs(t, "height", &height)
			}
			rows, st := parseRows(t, td.Input, cols)
			switch td.Cmd {
			case "tableau":
				tb := newTableau(cols, loc)
				var b strings.Builder
				b.WriteString(tb.start())
				for _, r := range rows {
					b.WriteString(tb.add(r))
				}
				return b.String() + tb.end(st)
			case "table", "changelog":
				v := newFrameView(td.Cmd, cols, loc)
				for _, r := range rows {
					v.add(r)
				}
				return strings.Join(v.frame(st, height), "\n") + "\n"
			}
			t.Fatalf("unknown command %q", td.Cmd)
			return ""
		})
	})
}

func parseCols(t *testing.T, vals []string) []types.Field {
	var out []types.Field
	for _, c := range vals {
		name, typ, _ := strings.Cut(strings.TrimSpace(c), " ")
		ty, err := parser.ParseType(typ)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, types.Field{Name: name, Type: ty})
	}
	return out
}

func parseRows(t *testing.T, input string, cols []types.Field) ([]event.Row, status) {
	kinds := map[string]event.RowKind{"+I": event.Insert, "-U": event.UpdateBefore, "+U": event.UpdateAfter, "-D": event.Delete}
	var rows []event.Row
	for _, line := range strings.Split(strings.TrimSpace(input), "\n") {
		if line == "cancel" {
			return rows, cancelled
		}
		if line == "" {
			continue
		}
		kind, ok := kinds[line[:2]]
		if !ok || line[2] != '[' || !strings.HasSuffix(line, "]") {
			t.Fatalf("bad row %q", line)
		}
		fields := strings.Split(line[3:len(line)-1], ", ")
		r := event.Row{Kind: kind, Fields: make([]any, len(fields))}
		for i, f := range fields {
			r.Fields[i] = parseField(t, f, cols[i].Type)
		}
		rows = append(rows, r)
	}
	return rows, finished
}

func parseField(t *testing.T, f string, ty types.Type) any {
	switch {
	case f == "NULL":
		return nil
	case ty.IsInteger():
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		return n
	case ty.Kind == types.Boolean:
		return f == "true"
	case ty.IsString():
		return f
	case ty.Kind == types.Timestamp || ty.Kind == types.TimestampLTZ:
		// Both read as UTC: the wall clock of a TIMESTAMP, the instant of
		// a TIMESTAMP_LTZ.
		ts, err := time.Parse("2006-01-02 15:04:05.000", f)
		if err != nil {
			t.Fatal(err)
		}
		return ts
	case ty.Kind == types.Time:
		tm, err := time.Parse("15:04:05.999", f)
		if err != nil {
			t.Fatal(err)
		}
		return types.TimeOfDay(tm)
	}
	panic(fmt.Sprintf("parseField: type %s", ty))
}

// TestNestedCells: ARRAY, MAP and ROW cells show as the print connector
// shows them, not as Go prints them ([1 2 <nil>], map[a:1]; found by a
// fresh user).
func TestNestedCells(t *testing.T) {
	intT := types.Type{Kind: types.Int, Nullable: true}
	cols := []types.Field{
		{Name: "a", Type: types.Type{Kind: types.Array, Elem: &intT}},
		{Name: "m", Type: types.Type{Kind: types.Map, Key: &types.Type{Kind: types.String}, Elem: &intT}},
		{Name: "r", Type: types.Type{Kind: types.Row, Fields: []types.Field{{Name: "x", Type: intT}, {Name: "y", Type: types.Type{Kind: types.String}}}}},
	}
	row := event.Row{Kind: event.Insert, Fields: []any{[]any{int64(1), int64(2), nil}, map[any]any{"a": int64(1)}, []any{int64(5), "five"}}}
	got := strings.Join(cells(row, cols, false, time.UTC), " | ")
	if want := "[1, 2, null] | {a=1} | +I[5, five]"; got != want {
		t.Fatalf("cells: %q, want %q", got, want)
	}
}
