package print

import (
	"bytes"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/types"
)

func TestPrintsLikeFlink(t *testing.T) {
	var out bytes.Buffer
	s, err := FromOptions(map[string]string{"print-identifier": "totals"})
	if err != nil {
		t.Fatal(err)
	}
	s.Out = &out
	w, _ := s.CreateWriter(operator.WriterContext{Parallelism: 2, Subtask: event.SubtaskID{Index: 1}})
	rows := []event.Row{
		{Kind: event.Insert, Fields: []any{"acc-1", decimal.RequireFromString("10.50"), int64(1)}},
		{Kind: event.UpdateBefore, Fields: []any{"acc-1", decimal.RequireFromString("10.50"), int64(1)}},
		{Kind: event.UpdateAfter, Fields: []any{"acc-1", nil, time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}},
	}
	for _, r := range rows {
		if err := w.Write(event.Record{Value: r}); err != nil {
			t.Fatal(err)
		}
	}
	want := "totals:2> +I[acc-1, 10.50, 1]\ntotals:2> -U[acc-1, 10.50, 1]\ntotals:2> +U[acc-1, null, 2026-01-02 03:04:05.000]\n"
	if out.String() != want {
		t.Fatalf("printed\n%s\nwant\n%s", out.String(), want)
	}
	if _, err := FromOptions(map[string]string{"standard-error": "yes"}); err == nil {
		t.Fatal("bad standard-error accepted")
	}
}

// TestPrintsByColumnType: with the table's column types, a DECIMAL(p, s)
// prints with s fractional digits whatever scale the value carries (Flink
// prints a BigDecimal of the column's scale), a DATE as yyyy-MM-dd
// (java.time.LocalDate), a TIMESTAMP(p) as java.time.LocalDateTime's
// toString (seconds only when not zero, the fraction in groups of three
// digits, whatever p) and a TIMESTAMP_LTZ as java.time.Instant's (UTC,
// seconds always, Z).
func TestPrintsByColumnType(t *testing.T) {
	var out bytes.Buffer
	s := &Sink{Out: &out, Types: []types.Type{
		{Kind: types.Decimal, Precision: 5, Scale: 2}, {Kind: types.Date}, {Kind: types.Timestamp, Precision: 0},
		{Kind: types.Timestamp, Precision: 3}, {Kind: types.Timestamp, Precision: 6}, {Kind: types.TimestampLTZ, Precision: 3},
	}}
	w, _ := s.CreateWriter(operator.WriterContext{Parallelism: 1})
	day := time.Date(2024, 3, 5, 0, 0, 0, 0, time.UTC)
	row := event.Row{Kind: event.Insert, Fields: []any{decimal.NewFromInt(7), day, day.Add(10 * time.Hour),
		day.Add(10*time.Hour + 11*time.Minute + 12500*time.Millisecond), day.Add(1234 * time.Microsecond), day.Add(10 * time.Hour)}}
	if err := w.Write(event.Record{Value: row}); err != nil {
		t.Fatal(err)
	}
	if want := "+I[7.00, 2024-03-05, 2024-03-05T10:00, 2024-03-05T10:11:12.500, 2024-03-05T00:00:00.001234, 2024-03-05T10:00:00Z]\n"; out.String() != want {
		t.Fatalf("printed %q, want %q", out.String(), want)
	}
}

// TestPrintsNestedLikeFlink: Flink's print sink writes the external Row's
// toString (RowUtils.deepToStringRow): an ARRAY as [a, b], a MAP as
// {k=v, k2=v2}, a nested ROW as +I[a, b] (a Row's toString, with its kind),
// a NULL inside them as Java's null; a FLOAT with a float's digits
// (Float.toString: 0.1, not the double 0.10000000149011612).
func TestPrintsNestedLikeFlink(t *testing.T) {
	str := types.Type{Kind: types.String, Nullable: true}
	integer := types.Type{Kind: types.Int, Nullable: true}
	float := types.Type{Kind: types.Float, Nullable: true}
	dec := types.Type{Kind: types.Decimal, Precision: 5, Scale: 2, Nullable: true}
	var out bytes.Buffer
	s := &Sink{Out: &out, Types: []types.Type{
		{Kind: types.Array, Elem: &str},
		{Kind: types.Map, Key: &str, Elem: &integer},
		{Kind: types.Row, Fields: []types.Field{{Name: "a", Type: integer}, {Name: "b", Type: types.Type{Kind: types.Array, Elem: &dec}}}},
		float,
		{Kind: types.Array, Elem: &float},
	}}
	w, _ := s.CreateWriter(operator.WriterContext{Parallelism: 1})
	row := event.Row{Kind: event.Insert, Fields: []any{
		[]any{"a", nil, "b"},
		map[any]any{"y": int64(2), "x": nil},
		[]any{int64(1), []any{decimal.NewFromInt(3), decimal.RequireFromString("0.5")}},
		float64(float32(0.1)),
		[]any{float64(float32(1.1)), float64(float32(1e10))},
	}}
	if err := w.Write(event.Record{Value: row}); err != nil {
		t.Fatal(err)
	}
	want := "+I[[a, null, b], {x=null, y=2}, +I[1, [3.00, 0.50]], 0.1, [1.1, 1.0E10]]\n"
	if out.String() != want {
		t.Fatalf("printed %q, want %q", out.String(), want)
	}
	// Without types, by the Go types: still Flink's brackets and commas.
	if got, want := Format(event.Row{Kind: event.Insert, Fields: []any{[]any{int64(1), "x"}}}), "+I[[1, x]]"; got != want {
		t.Fatalf("untyped: %q, want %q", got, want)
	}
}

// A MULTISET prints as Flink prints its map of element to count.
func TestPrintsMultisetLikeFlink(t *testing.T) {
	integer := types.Type{Kind: types.Int, Nullable: true}
	mt := types.Type{Kind: types.Multiset, Elem: &integer}
	m := types.MultisetValue{{Elem: int64(2), Count: 1}, {Elem: int64(1), Count: 3}}
	if got, want := JavaField(m, mt), "{1=3, 2=1}"; got != want {
		t.Fatalf("printed %q, want %q", got, want)
	}
	if got, want := JavaField(types.MultisetValue{}, mt), "{}"; got != want {
		t.Fatalf("printed %q, want %q", got, want)
	}
}

// TestPrintsTimeAsLocalTime: a TIME prints as java.time.LocalTime's
// toString, the object Flink's print sink converts it to: seconds only when
// they or the fraction are not zero, the fraction in groups of three.
func TestPrintsTimeAsLocalTime(t *testing.T) {
	tm := types.Type{Kind: types.Time, Precision: 3, Nullable: true}
	for _, c := range []struct {
		v    time.Time
		want string
	}{
		{time.Date(1970, 1, 1, 12, 12, 12, 0, time.UTC), "12:12:12"},
		{time.Date(1970, 1, 1, 12, 0, 0, 0, time.UTC), "12:00"},
		{time.Date(1970, 1, 1, 0, 0, 0, 500e6, time.UTC), "00:00:00.500"},
	} {
		if got := JavaField(c.v, tm); got != c.want {
			t.Errorf("JavaField(%v) = %q, want %q", c.v, got, c.want)
		}
	}
}
