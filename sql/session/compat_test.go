package session

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	"github.com/weirstream/weir/connector/format"
	"github.com/weirstream/weir/connector/print"
	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/sql/exec"
	"github.com/weirstream/weir/sql/parser"
	"github.com/weirstream/weir/types"
)

// compatDir holds the Flink compatibility suite: one file per category of
// cases taken from Apache Flink's own tests (planner ITCases, SQL client
// .q files, documentation examples), and compatSummary, what Weir does
// with each of them.
const (
	compatDir     = "testdata/compat"
	compatSummary = "summary"
)

// TestFlinkCompat runs the Flink compatibility suite. Each case is a
// query from one of Flink's tests, its text unchanged, over the input that
// test gives (translated to 'values' tables: the only part that is ours),
// with the final result Flink expects. A case passes when Weir's final
// table equals Flink's, is refused when Weir rejects the query (the error
// is recorded in the summary), and fails the test when Weir returns
// another result or fails at run time. The summary (testdata/compat/
// summary, rewritten with -rewrite) counts the outcomes per category and
// lists every refusal, so a case that stops passing fails the test too.
//
// A category file is a datadriven script of the commands of
// TestSQLScripts (exec, input, clear) and:
//
//	case name=NAME from=FLINK_TEST [error] [unordered] [legacyrow] [sqlclient] [key=N]
//	SELECT …            (Flink's query, unchanged)
//	----
//	1,Hi,null           (Flink's expected rows)
//
// The harness gives the query a 'values' sink of its result's columns
// (INSERT INTO a table it creates, the query text appended unchanged),
// runs it, applies the changelog and prints the final table as Flink's
// tests print rows: fields comma-separated as Row.toString shows them,
// null for NULL, a TIMESTAMP as LocalDateTime. Rows compare as a multiset
// (Flink's tests sort both sides). With error, Flink fails the query (at
// planning or at run time), and so must Weir; the expected text is
// Flink's message, for the reader. -rewrite never changes a category
// file: expected rows are Flink's, never Weir's. With legacyrow, a ROW
// inside a field prints as Flink's tests with LegacyRowExtension print it:
// its fields joined by "," (an ARRAY of them [1,a, 2,b]). With key=N,
// the sink has PRIMARY KEY (cN), as the sink of Flink's test does, and
// the changelog applies by that key (an upsert sink's table). With
// sqlclient (a documentation example run in Flink's SQL client), fields
// print as the client shows them: a TIMESTAMP_LTZ in the session zone
// ('table.local-time-zone'), a TIMESTAMP as 1970-01-01 00:00:04.001.
func TestFlinkCompat(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(compatDir, "*"))
	if err != nil {
		t.Fatal(err)
	}
	var cats []*compatCategory
	for _, path := range files {
		if filepath.Base(path) == compatSummary {
			continue
		}
		c := &compatCategory{name: filepath.Base(path)}
		cats = append(cats, c)
		t.Run(c.name, func(t *testing.T) {
			r := &compatScript{sqlScript: newSQLScript(), cat: c}
			datadriven.RunTest(t, path, r.cmd)
			t.Logf("%s", c.line())
		})
	}
	summary := renderCompatSummary(cats)
	for _, c := range cats {
		fmt.Println("flink compat:", c.line())
	}
	checkCompatSummary(t, summary)
}

// compatCategory is the outcome of one category file.
type compatCategory struct {
	name            string
	cases           int
	pass            int
	refused, failed []string // "case: error"
}

func (c *compatCategory) line() string {
	return fmt.Sprintf("%-14s %3d cases: %3d pass, %3d refused, %d wrong", c.name, c.cases, c.pass, len(c.refused), len(c.failed))
}

func renderCompatSummary(cats []*compatCategory) string {
	var b strings.Builder
	total := &compatCategory{name: "total"}
	for _, c := range cats {
		total.cases += c.cases
		total.pass += c.pass
		total.refused = append(total.refused, c.refused...)
		total.failed = append(total.failed, c.failed...)
	}
	b.WriteString("# Flink compatibility suite: what Weir does with each case (TestFlinkCompat -rewrite).\n")
	for _, c := range append(cats, total) {
		fmt.Fprintln(&b, c.line())
	}
	for _, c := range cats {
		if len(c.refused) > 0 {
			b.WriteString("\n")
		}
		for _, r := range c.refused {
			fmt.Fprintf(&b, "refused %s/%s\n", c.name, r)
		}
	}
	return b.String()
}

// checkCompatSummary compares the summary with the recorded one, or
// records it under -rewrite.
func checkCompatSummary(t *testing.T, summary string) {
	path := filepath.Join(compatDir, compatSummary)
	if f := flag.Lookup("rewrite"); f != nil && f.Value.String() == "true" {
		if err := os.WriteFile(path, []byte(summary), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(want) != summary {
		t.Errorf("%s is not what the suite gives now (if the change is right, rerun with -rewrite):\n--- recorded\n%s\n--- now\n%s", path, want, summary)
	}
}

// compatScript is one category file: a sqlScript with the case command.
type compatScript struct {
	*sqlScript
	cat *compatCategory
	n   int // sinks created so far
}

func (r *compatScript) cmd(t *testing.T, td *datadriven.TestData) string {
	if td.Cmd != "case" {
		return r.sqlScript.cmd(t, td)
	}
	var name, from string
	td.ScanArgs(t, "name", &name)
	td.ScanArgs(t, "from", &from)
	r.cat.cases++
	key := -1
	if td.HasArg("key") {
		td.ScanArgs(t, "key", &key)
	}
	show := print.JavaField
	switch {
	case td.HasArg("legacyrow"):
		show = legacyField
	case td.HasArg("sqlclient"):
		loc, err := r.session.Location()
		if err != nil {
			td.Fatalf(t, "%v", err)
		}
		show = func(v any, t types.Type) string { return clientField(v, t, loc) }
	}
	rows, refusal, err := r.query(td.Input, show, key)
	label := name + " (" + from + ")"
	switch {
	case td.HasArg("error"):
		switch {
		case err == nil && refusal == nil:
			r.fail(t, td, label, "Flink fails this query; Weir returned rows:\n"+strings.Join(rows, "\n"))
		case refusal != nil && checkRefusal(refusal.Error()) != nil:
			r.fail(t, td, label, checkRefusal(refusal.Error()).Error())
		case err != nil && goTypeName.MatchString(err.Error()):
			r.fail(t, td, label, "the run-time error shows a Go name: "+err.Error())
		default:
			r.cat.pass++
		}
	case refusal != nil:
		if cerr := checkRefusal(refusal.Error()); cerr != nil {
			r.fail(t, td, label, cerr.Error())
		}
		r.cat.refused = append(r.cat.refused, label+": "+oneLine(refusal.Error()))
	case err != nil:
		r.fail(t, td, label, "failed at run time: "+err.Error())
	default:
		want := expectedRows(td.Expected)
		if !slices.Equal(sorted(rows), sorted(want)) {
			r.fail(t, td, label, fmt.Sprintf("wrong result\n--- Flink\n%s\n--- Weir\n%s", strings.Join(want, "\n"), strings.Join(rows, "\n")))
		} else {
			r.cat.pass++
		}
	}
	return td.Expected // the file keeps Flink's rows, whatever Weir does
}

func (r *compatScript) fail(t *testing.T, td *datadriven.TestData, label, msg string) {
	r.cat.failed = append(r.cat.failed, label)
	t.Errorf("%s: case %s: %s\n%s", td.Pos, label, msg, td.Input)
}

// query plans query with a fresh 'values' sink of its columns (with
// PRIMARY KEY (c<key>) unless key is -1) and runs it. A planning error is
// a refusal; a run-time error is err.
func (r *compatScript) query(query string, show func(any, types.Type) string, key int) (rows []string, refusal, err error) {
	stmts, perr := parser.ParseScript(query)
	if perr != nil {
		return nil, perr, nil
	}
	if len(stmts) != 1 {
		return nil, fmt.Errorf("compat case: want one query, got %d statements", len(stmts)), nil
	}
	q, ok := stmts[0].(*parser.Query)
	if !ok {
		return nil, fmt.Errorf("compat case: want a query, got %s", strings.Fields(query)[0]), nil
	}
	p, perr := r.session.planner()
	if perr != nil {
		return nil, perr, nil
	}
	rel, perr := p.Plan(q)
	if perr != nil {
		return nil, perr, nil
	}
	r.n++
	sink := fmt.Sprintf("compat_sink_%d", r.n)
	cols := make([]string, len(rel.Cols))
	colTypes := make([]types.Type, len(rel.Cols))
	for i, c := range rel.Cols {
		ct := c.Type
		ct.TimeAttr, ct.Nullable = "", true
		cols[i], colTypes[i] = fmt.Sprintf("c%d %s", i, ct), ct
	}
	if key >= 0 {
		cols = append(cols, fmt.Sprintf("PRIMARY KEY (c%d) NOT ENFORCED", key))
	}
	ddl := fmt.Sprintf("CREATE TABLE %s (%s) WITH ('connector' = 'values', 'sink-insert-only' = 'false')", sink, strings.Join(cols, ", "))
	if err := r.session.Execute(ddl); err != nil {
		return nil, nil, fmt.Errorf("compat harness: %s: %w", ddl, err)
	}
	if perr := r.plan("INSERT INTO " + sink + " " + query); perr != nil {
		return nil, perr, nil
	}
	if _, err := r.run("INSERT INTO "+sink+" "+query, false); err != nil {
		return nil, nil, err
	}
	k := r.sinks[sink]
	k.mu.Lock()
	defer k.mu.Unlock()
	rows, err = flinkRows(k.rows, colTypes, show, k.key)
	return rows, nil, err
}

// plan plans the statements without running them: an error here is a
// refusal, not a failure.
func (r *compatScript) plan(sql string) error {
	s := r.session
	s.inserts = nil
	if err := s.Execute(sql); err != nil {
		return err
	}
	_, _, err := r.job()
	s.inserts = nil
	return err
}

// flinkRows applies a changelog (by key, when there is one) and prints the
// final table's rows as Flink's tests do (TestingRetractSink: Row fields
// joined by ",").
func flinkRows(changelog []event.Row, columns []types.Type, show func(any, types.Type) string, key []int) ([]string, error) {
	tab, err := exec.Materialize(changelog, key)
	if err != nil {
		return nil, fmt.Errorf("the changelog does not apply: %w", err)
	}
	var out []string
	for _, fields := range tab {
		parts := make([]string, len(fields))
		for i, f := range fields {
			parts[i] = show(f, columns[i])
		}
		out = append(out, strings.Join(parts, ","))
	}
	return out, nil
}

func expectedRows(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" && l != "(empty)" {
			out = append(out, l)
		}
	}
	return out
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// legacyField prints f as Flink's legacy Row.toString does: a ROW's
// fields joined by ",", an ARRAY's elements by ", " in brackets.
func legacyField(f any, t types.Type) string {
	switch x := f.(type) {
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			switch {
			case e == nil:
				parts[i] = "null"
			case t.Kind == types.Row && i < len(t.Fields):
				parts[i] = legacyField(e, t.Fields[i].Type)
			case t.Kind == types.Array:
				parts[i] = legacyField(e, *t.Elem)
			default:
				parts[i] = print.JavaField(e, types.Type{Kind: types.String})
			}
		}
		if t.Kind == types.Row {
			return strings.Join(parts, ",")
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	return print.JavaField(f, t)
}

// clientField is a field as Flink's SQL client shows it: a TIMESTAMP_LTZ
// in the session zone, NULL as NULL, others as the csv format writes them.
func clientField(v any, t types.Type, loc *time.Location) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case time.Time:
		if t.Kind == types.TimestampLTZ {
			return types.FormatTimestamp(x.In(loc), t.Precision)
		}
	}
	return format.Text(v, t)
}
