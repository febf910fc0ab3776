package main

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/sql/catalog"
	"github.com/weirstream/weir/sql/exec"
	"github.com/weirstream/weir/sql/planner"
	"github.com/weirstream/weir/types"
)

// The canonical changelog text, written by both engines' 'changelog-file'
// sinks (this one, and bench/flink's ChangelogFileSink) so that their
// results compare as text. One line per row:
//
//	KIND \t field1 \t field2 …
//
// KIND is +I, -U, +U or -D. A field is \N for NULL; integers in decimal;
// DECIMAL(p, s) in plain notation with exactly s digits after the point;
// TIMESTAMP 'yyyy-MM-dd HH:mm:ss.SSS'; BOOLEAN true/false; strings with
// backslash, tab and newline escaped as \\, \t and \n. DOUBLE and FLOAT
// are written shortest-round-trip in each language (Go's 'g' -1, Java's
// Double.toString), which differ in notation: the comparison parses them
// and allows a relative difference of 1e-12 (sameField). No Nexmark sink
// table has a floating-point column.

// canonical formats one value of SQL type t.
func canonical(v any, t types.Type) string {
	switch x := v.(type) {
	case nil:
		return `\N`
	case string:
		return escapeText(x)
	case bool:
		return strconv.FormatBool(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case int32:
		return strconv.FormatInt(int64(x), 10)
	case int:
		return strconv.Itoa(x)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case float32:
		return strconv.FormatFloat(float64(x), 'g', -1, 32)
	case decimal.Decimal:
		if t.Kind == types.Decimal {
			return x.StringFixed(int32(t.Scale))
		}
		return x.String()
	case time.Time:
		if t.Kind == types.Date {
			return x.UTC().Format("2006-01-02")
		}
		return x.UTC().Format("2006-01-02 15:04:05.000")
	}
	return escapeText(fmt.Sprint(v))
}

var textEscaper = strings.NewReplacer(`\`, `\\`, "\t", `\t`, "\n", `\n`)

func escapeText(s string) string { return textEscaper.Replace(s) }

// changelogLine is one row in canonical text.
func changelogLine(r event.Row, fields []types.Field) string {
	var b strings.Builder
	b.WriteString(r.Kind.String())
	for i, v := range r.Fields {
		b.WriteByte('\t')
		var t types.Type
		if i < len(fields) {
			t = fields[i].Type
		}
		b.WriteString(canonical(v, t))
	}
	return b.String()
}

// changelogSink writes each subtask's rows, in order, to Path.<subtask>.
// It is for differential checks: it writes as rows arrive and commits
// nothing, so a failover would duplicate rows (the checks run without
// failures).
type changelogSink struct {
	Path   string
	Fields []types.Field
}

func changelogSinkFactory(t *catalog.Table) (planner.SinkSpec, error) {
	path := strings.TrimPrefix(t.Options["path"], "file://")
	if path == "" {
		return planner.SinkSpec{}, fmt.Errorf("table %q: 'changelog-file' needs a 'path'", t.Name)
	}
	return planner.SinkSpec{Sink: &changelogSink{Path: path, Fields: t.Physical()}, AcceptsUpdates: true}, nil
}

func (s *changelogSink) CreateWriter(ctx operator.WriterContext) (operator.SinkWriter, error) {
	if err := os.MkdirAll(filepath.Dir(s.Path), 0o755); err != nil {
		return nil, err
	}
	f, err := os.Create(fmt.Sprintf("%s.%d", s.Path, ctx.Subtask.Index))
	if err != nil {
		return nil, err
	}
	return &changelogWriter{s: s, f: f, w: bufio.NewWriter(f)}, nil
}

func (s *changelogSink) CreateCommitter(operator.WriterContext) (operator.Committer, error) {
	return nil, nil
}

type changelogWriter struct {
	s *changelogSink
	f *os.File
	w *bufio.Writer
}

func (w *changelogWriter) Write(r event.Record) error {
	row, ok := r.Value.(event.Row)
	if !ok {
		return fmt.Errorf("changelog-file sink: want rows, got %T", r.Value)
	}
	w.w.WriteString(changelogLine(row, w.s.Fields))
	return w.w.WriteByte('\n')
}

func (w *changelogWriter) Flush(bool) error { return w.w.Flush() }
func (w *changelogWriter) PrepareCommit(event.CheckpointID) ([][]byte, error) {
	return nil, w.w.Flush()
}
func (w *changelogWriter) SnapshotState(event.CheckpointID) ([]byte, error) { return nil, nil }
func (w *changelogWriter) Close() error {
	if err := w.w.Flush(); err != nil {
		return err
	}
	return w.f.Close()
}

// Result is a query's final result read back from changelog files: the
// multiset of rows left after applying every file's changelog, as sorted
// lines of canonical text (without the kind). Appended is true when every
// row was an insert.
type Result struct {
	Rows     []string
	Appended bool
	// Changes is the number of changelog rows read.
	Changes int
}

// ReadResult applies the changelog files path.* (one per sink subtask)
// and returns the final table. Each file is applied on its own (the rows
// of one key all pass through one subtask, in order) and the tables are
// unioned. An inconsistent changelog (a retraction of a row that is not
// there) is an error.
func ReadResult(path string) (*Result, error) {
	files, err := filepath.Glob(path + ".*")
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no changelog files %s.*", path)
	}
	res := &Result{Appended: true}
	for _, f := range files {
		rows, err := readChangelog(f)
		if err != nil {
			return nil, err
		}
		res.Changes += len(rows)
		table, err := exec.Materialize(rows, nil)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		for _, r := range rows {
			res.Appended = res.Appended && r.Kind == event.Insert
		}
		for _, fields := range table {
			res.Rows = append(res.Rows, joinFields(fields))
		}
	}
	sort.Strings(res.Rows)
	return res, nil
}

func joinFields(fields []any) string {
	parts := make([]string, len(fields))
	for i, f := range fields {
		parts[i] = f.(string)
	}
	return strings.Join(parts, "\t")
}

// readChangelog reads a file of canonical lines as rows of string fields.
func readChangelog(path string) ([]event.Row, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var rows []event.Row
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	kinds := map[string]event.RowKind{"+I": event.Insert, "-U": event.UpdateBefore, "+U": event.UpdateAfter, "-D": event.Delete}
	for n := 1; sc.Scan(); n++ {
		parts := strings.Split(sc.Text(), "\t")
		k, ok := kinds[parts[0]]
		if !ok {
			return nil, fmt.Errorf("%s:%d: bad row kind %q", path, n, parts[0])
		}
		fields := make([]any, len(parts)-1)
		for i, p := range parts[1:] {
			fields[i] = p
		}
		rows = append(rows, event.Row{Kind: k, Fields: fields})
	}
	return rows, sc.Err()
}

// sameField compares two canonical fields: equal text, or two numbers
// that are not integers or plain decimals (floating-point notation) within
// a relative 1e-12.
func sameField(a, b string) bool {
	if a == b {
		return true
	}
	if !strings.ContainsAny(a, "eE") && !strings.ContainsAny(b, "eE") && !strings.Contains(a+b, "Infinity") {
		return false
	}
	x, err1 := strconv.ParseFloat(a, 64)
	y, err2 := strconv.ParseFloat(b, 64)
	if err1 != nil || err2 != nil {
		return false
	}
	return x == y || math.Abs(x-y) <= 1e-12*math.Max(math.Abs(x), math.Abs(y))
}

// Diff compares two results and describes up to max differences ("" when
// equal): rows only in a, rows only in b.
func Diff(a, b *Result, aName, bName string, max int) string {
	var out []string
	i, j := 0, 0
	for i < len(a.Rows) || j < len(b.Rows) {
		switch {
		case i < len(a.Rows) && j < len(b.Rows) && sameRow(a.Rows[i], b.Rows[j]):
			i++
			j++
		case j >= len(b.Rows) || (i < len(a.Rows) && a.Rows[i] < b.Rows[j]):
			out = append(out, fmt.Sprintf("only in %s: %s", aName, a.Rows[i]))
			i++
		default:
			out = append(out, fmt.Sprintf("only in %s: %s", bName, b.Rows[j]))
			j++
		}
	}
	if len(out) == 0 {
		return ""
	}
	n := len(out)
	if len(out) > max {
		out = out[:max]
	}
	return fmt.Sprintf("%d rows differ (%s has %d rows, %s %d):\n  %s", n, aName, len(a.Rows), bName, len(b.Rows), strings.Join(out, "\n  "))
}

func sameRow(a, b string) bool {
	if a == b {
		return true
	}
	fa, fb := strings.Split(a, "\t"), strings.Split(b, "\t")
	if len(fa) != len(fb) {
		return false
	}
	for i := range fa {
		if !sameField(fa[i], fb[i]) {
			return false
		}
	}
	return true
}
