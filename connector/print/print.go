// Package print is Flink's print connector: every row is written to
// standard output (or a writer) as "+I[a, b]", prefixed with the
// print-identifier and, with parallelism > 1, the subtask ("id:2> +I[…]").
package print

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/weirstream/weir/connector/format"
	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/types"
)

// Sink prints rows. Its Out is shared by all subtasks (lines never interleave).
type Sink struct {
	Identifier string
	// StandardError prints to stderr (Flink's 'print.standard-error').
	StandardError bool
	// Out overrides the destination (tests).
	Out io.Writer
	// Types are the table's column types, by which values are printed
	// (format.Text: DECIMAL(5, 2) 80.4 as 80.40, DATE as yyyy-MM-dd);
	// without them, by their Go type alone.
	Types []types.Type
	mu    sync.Mutex
}

// FromOptions builds a print sink from Flink's options.
func FromOptions(opts map[string]string) (*Sink, error) {
	s := &Sink{Identifier: opts["print-identifier"]}
	switch strings.ToLower(opts["standard-error"]) {
	case "", "false":
	case "true":
		s.StandardError = true
	default:
		return nil, fmt.Errorf("print: 'standard-error' must be true or false, got %q", opts["standard-error"])
	}
	return s, nil
}

// CreateWriter implements operator.Sink.
func (s *Sink) CreateWriter(ctx operator.WriterContext) (operator.SinkWriter, error) {
	prefix := s.Identifier
	if ctx.Parallelism > 1 {
		if prefix != "" {
			prefix += ":"
		}
		prefix += fmt.Sprint(ctx.Subtask.Index + 1)
	}
	if prefix != "" {
		prefix += "> "
	}
	return &writer{s: s, prefix: prefix}, nil
}

// CreateCommitter implements operator.Sink: printing has no commit phase.
func (s *Sink) CreateCommitter(operator.WriterContext) (operator.Committer, error) { return nil, nil }

func (s *Sink) out() io.Writer {
	if s.Out != nil {
		return s.Out
	}
	if s.StandardError {
		return os.Stderr
	}
	return os.Stdout
}

type writer struct {
	s      *Sink
	prefix string
}

// Format renders a value the way the print connector shows it, each field
// by its Go type alone: a DATE shows as a timestamp, a DECIMAL with the
// scale it happens to have. FormatRow shows fields by their SQL types.
func Format(v any) string { return FormatRow(v, nil) }

// FormatRow renders a row as "+I[a, b]", field i as a value of
// columns[i] (format.Text; ARRAY, MAP and ROW as nested shows them), NULL
// as NULL (as the SQL client shows it; the print connector itself prints
// Java's null); a field without a type in columns by its Go type. Other
// values print with fmt.
func FormatRow(v any, columns []types.Type) string { return formatRow(v, columns, false) }

// JavaField renders one field of type t as Flink shows it in a row it
// prints (Row.toString of the Java object): NULL as null, a TIMESTAMP as a
// LocalDateTime, 2024-03-05T10:00 (see printRow).
func JavaField(v any, t types.Type) string {
	if v == nil {
		return "null"
	}
	return javaValue(v, &t)
}

// NestedText renders a field of type t as a field of a row the print
// connector shows (see nested): an ARRAY as [1, 2, null], a MAP as {a=1},
// a ROW as +I[a, b]; scalars as format.Text.
func NestedText(v any, t types.Type) string { return nested(v, &t) }

// printRow is a row as Flink's print sink prints it: Row.toString of the
// row converted to Java objects, where a NULL field is Java's null
// (+I[1, null]), a TIMESTAMP a java.time.LocalDateTime and a
// TIMESTAMP_LTZ a java.time.Instant (see javaTime).
func printRow(v any, columns []types.Type) string { return formatRow(v, columns, true) }

func formatRow(v any, columns []types.Type, java bool) string {
	null := "NULL"
	if java {
		null = "null"
	}
	r, ok := v.(event.Row)
	if !ok {
		return fmt.Sprint(v)
	}
	parts := make([]string, len(r.Fields))
	for i, f := range r.Fields {
		switch {
		case f == nil:
			parts[i] = null
		case i < len(columns) && java:
			parts[i] = javaValue(f, &columns[i])
		case i < len(columns):
			parts[i] = nested(f, &columns[i])
		default:
			parts[i] = nested(f, nil)
		}
	}
	return r.Kind.String() + "[" + strings.Join(parts, ", ") + "]"
}

// nested renders a field of type t (nil: unknown, by its Go type alone) as
// Flink's print sink does, which prints the row converted to an external
// Row by Row.toString (RowUtils.deepToStringRow): an ARRAY (Object[]) as
// [a, b], a MAP (java.util.Map) as {k=v, k2=v2}, a nested ROW as its own
// Row.toString, +I[a, b], and a NULL inside them as Java's null. Map
// entries are sorted: Flink's order is the HashMap's, ours is made
// deterministic. Scalars print as format.Text (a FLOAT with float digits,
// 0.1 not 0.10000000149011612, as Float.toString).
func nested(v any, t *types.Type) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case []any:
		if t != nil && t.Kind == types.Row && len(t.Fields) == len(x) {
			parts := make([]string, len(x))
			for i, f := range x {
				parts[i] = nested(f, &t.Fields[i].Type)
			}
			return event.Insert.String() + "[" + strings.Join(parts, ", ") + "]"
		}
		var elem *types.Type
		if t != nil && t.Kind == types.Array {
			elem = t.Elem
		}
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = nested(e, elem)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case map[any]any:
		var kt, vt *types.Type
		if t != nil && t.Kind == types.Map {
			kt, vt = t.Key, t.Elem
		}
		parts := make([]string, 0, len(x))
		for k, e := range x {
			parts = append(parts, nested(k, kt)+"="+nested(e, vt))
		}
		sort.Strings(parts)
		return "{" + strings.Join(parts, ", ") + "}"
	case types.MultisetValue:
		return multiset(x, t)
	}
	if t == nil {
		return format.FormatScalar(v)
	}
	return format.Text(v, *t)
}

// javaValue is a top-level field as the print sink shows it: a
// TIMESTAMP or TIMESTAMP_LTZ by javaTime, a TIME as java.time.LocalTime
// (12:12:12, 12:00, 12:00:00.500), anything else as nested.
func javaValue(v any, t *types.Type) string {
	if ts, ok := v.(time.Time); ok && (t.Kind == types.Timestamp || t.Kind == types.TimestampLTZ) {
		return javaTime(ts, t.Kind == types.TimestampLTZ)
	}
	if ts, ok := v.(time.Time); ok && t.Kind == types.Time {
		// A TIME is carried on 1970-01-01: LocalDateTime's time part is
		// LocalTime.toString.
		_, clock, _ := strings.Cut(javaTime(ts, false), "T")
		return clock
	}
	return nested(v, t)
}

// javaTime is ts as Java's toString shows the object Flink converts it
// to: a TIMESTAMP is a LocalDateTime, 2024-03-05T10:11:12.500, whose
// seconds show only when they or the fraction are not zero
// (2024-03-05T10:00); a TIMESTAMP_LTZ an Instant, in UTC with its seconds
// always and a Z (2024-03-05T10:00:00Z). A fraction shows in groups of
// three digits, as many as it needs.
func javaTime(ts time.Time, instant bool) string {
	ts = ts.UTC()
	s := ts.Format("2006-01-02T15:04")
	ns := ts.Nanosecond()
	if instant || ts.Second() != 0 || ns != 0 {
		s += fmt.Sprintf(":%02d", ts.Second())
	}
	switch {
	case ns == 0:
	case ns%1e6 == 0:
		s += fmt.Sprintf(".%03d", ns/1e6)
	case ns%1e3 == 0:
		s += fmt.Sprintf(".%06d", ns/1e3)
	default:
		s += fmt.Sprintf(".%09d", ns)
	}
	if instant {
		s += "Z"
	}
	return s
}

func (w *writer) Write(r event.Record) error {
	w.s.mu.Lock()
	defer w.s.mu.Unlock()
	_, err := fmt.Fprintln(w.s.out(), w.prefix+printRow(r.Value, w.s.Types))
	return err
}

func (w *writer) Flush(bool) error                                   { return nil }
func (w *writer) PrepareCommit(event.CheckpointID) ([][]byte, error) { return nil, nil }
func (w *writer) SnapshotState(event.CheckpointID) ([]byte, error)   { return nil, nil }
func (w *writer) Close() error                                       { return nil }

// multiset prints a MULTISET as Flink prints its Map of element to count:
// {a=2, b=1}, entries in the order of their text (Flink's is a HashMap's).
func multiset(m types.MultisetValue, t *types.Type) string {
	var et *types.Type
	if t != nil && t.Kind == types.Multiset {
		et = t.Elem
	}
	parts := make([]string, len(m))
	for i, e := range m {
		parts[i] = nested(e.Elem, et) + "=" + strconv.FormatInt(e.Count, 10)
	}
	sort.Strings(parts)
	return "{" + strings.Join(parts, ", ") + "}"
}
