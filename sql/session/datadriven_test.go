package session

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/csv"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/weirstream/weir/connector/format"
	"github.com/weirstream/weir/connector/print"
	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/graph"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/runtime"
	"github.com/weirstream/weir/sql/catalog"
	"github.com/weirstream/weir/sql/exec"
	"github.com/weirstream/weir/sql/planner"
	"github.com/weirstream/weir/task"
	"github.com/weirstream/weir/types"
	"github.com/weirstream/weir/watermark"
)

const knownBugsFile = "regressions"

// TestSQLScripts runs the SQL scripts in testdata: statements, input rows
// and the changelog each sink receives. Regenerate with -rewrite, then read
// every changed expectation against Flink's semantics before keeping it.
//
// Each file is one session (its catalog and SET keys carry over from
// command to command). Commands:
//
//	exec                  statements without INSERT (DDL, SET); prints "ok"
//	input table=T         rows of the 'values' table T, one a line, its
//	                      physical columns comma-separated as in CSV
//	                      (leading spaces are dropped; quote to keep
//	                      them); a field NULL is SQL NULL;
//	                      appended to the file's timeline (see below).
//	                      A table WITH ('changelog-mode' = 'I,UA,UB,D')
//	                      (Flink's option; any value but 'I') is a
//	                      changelog: each row starts with its kind,
//	                      +I, -U, +U or -D.
//	                      A line CHECKPOINT or CRASH is a mark instead of
//	                      a row (see "Checkpoints and crashes")
//	clear                 forget every input row
//	run [materialize] [same]
//	                      statements ending in INSERTs, run as one job
//	                      (a statement set); prints every sink's changelog
//	                      in arrival order, or with materialize its final
//	                      table, sorted. The job must succeed. With same,
//	                      every sink's final table must be equal (queries
//	                      computing one result in different ways).
//	error                 statements that must fail, at planning or at run
//	                      time; prints the error. Succeeding fails the test.
//	show                  statements that print (EXPLAIN, DESCRIBE, SHOW
//	                      TABLES); prints what they print
//
// Connector 'values' (as Flink's test values connector): as a source it
// reads the table's input rows; as a sink it records what it receives and
// takes only inserts unless 'sink-insert-only' = 'false'.
//
// Determinism: parallelism is 1 unless a script SETs it. The input rows of
// all tables form one timeline, in file order: a source emits its next row
// only when every earlier row of the timeline has been sent downstream, so
// a join sees its two inputs interleaved exactly as written. Each source
// emits the watermark right after each row (the bounded-out-of-orderness
// watermark of its WATERMARK clause: max ts − delay − 1 ms), as a periodic
// generator firing between every two rows would; at the end of the
// timeline the sources end, in order of first input, each with the
// maximum watermark. Operators that sit between a two-input operator and
// its sources (an aggregate feeding a join) run on their own goroutines,
// so there the arrival order is not fixed: use run materialize.
//
// Checkpoints and crashes: when the timeline has marks, run checkpoints
// (exactly-once, every 10 ms) and allows one restart; the job must have
// a single source. At CHECKPOINT the source waits until a checkpoint taken
// there completes (so every row before the mark is in that checkpoint's
// state); at CRASH it fails, the first time only. The restarted job
// restores the latest completed checkpoint, and the source goes on from
// the position in it. The 'values' sink then keeps a checkpoint's rows
// until the checkpoint completes (exactly-once), and run prints, after
// the sinks, how the job restarted. Where periodic checkpoints fall
// varies, and mini-batches end at checkpoints, so use run materialize.
func TestSQLScripts(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		if isCompat(path) {
			t.Skip("the Flink compatibility suite runs in TestFlinkCompat")
		}
		if filepath.Dir(path) == filepath.FromSlash(recordedDir) {
			t.Skip("recorded Debezium output, read by TestRecordedDebeziumGroupByIntoMariaDB")
		}
		if filepath.Base(path) == knownBugsFile {
			runKnownBugs(t, path)
			return
		}
		datadriven.RunTest(t, path, newSQLScript().cmd)
	})
}

// TestSQLScriptsPebble runs every script again with state.backend.type
// 'pebble': group aggregations with retraction, joins, Top-N, windows,
// deduplication, TTL and the crash-and-restore scripts must print exactly
// what they print on the heap backend.
func TestSQLScriptsPebble(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		if isCompat(path) {
			t.Skip("the Flink compatibility suite runs in TestFlinkCompat")
		}
		if filepath.Dir(path) == filepath.FromSlash(recordedDir) {
			t.Skip("recorded Debezium output, read by TestRecordedDebeziumGroupByIntoMariaDB")
		}
		if filepath.Base(path) == knownBugsFile {
			return
		}
		if f := flag.Lookup("rewrite"); f != nil && f.Value.String() == "true" {
			t.Skip("expectations are rewritten by TestSQLScripts (heap) only")
		}
		r := newSQLScript()
		r.session.Settings["state.backend.type"] = "pebble"
		r.session.Settings["state.backend.local-dir"] = t.TempDir()
		datadriven.RunTest(t, path, r.cmd)
	})
}

// isCompat reports whether path is a file of the Flink compatibility
// suite (TestFlinkCompat), which has its own commands.
func isCompat(path string) bool {
	return filepath.Base(filepath.Dir(path)) == filepath.Base(compatDir)
}

func newSQLScript() *sqlScript {
	r := &sqlScript{session: New()}
	r.sources, r.sinks = map[string][]*valuesSource{}, map[string]*valuesSink{} // EXPLAIN INSERT plans sinks too
	r.session.Out = &bytes.Buffer{}
	r.register()
	return r
}

// runKnownBugs runs each subtest of the regressions file (bugs found
// against Flink's semantics, now fixed) in a fresh
// session after the file's common part (what precedes the first
// subtest), so that one failing case does not hide the others; a
// datadriven file stops at its first failure. The expectations are
// hand-written and never rewritten.
func runKnownBugs(t *testing.T, path string) {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	common, cases := splitSubtests(string(data))
	for _, c := range cases {
		t.Run(c[0], func(t *testing.T) {
			datadriven.RunTestFromString(t, common+c[1], newSQLScript().cmd)
		})
	}
}

// splitSubtests returns the text before the first "subtest NAME" line and
// each subtest's name and body.
func splitSubtests(text string) (string, [][2]string) {
	var common strings.Builder
	var cases [][2]string
	in := false
	for _, line := range strings.SplitAfter(text, "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) == 2 && f[0] == "subtest" && f[1] == "end":
			in = false
		case len(f) == 2 && f[0] == "subtest":
			cases, in = append(cases, [2]string{f[1], ""}), true
		case in:
			cases[len(cases)-1][1] += line
		case len(cases) == 0:
			common.WriteString(line)
		}
	}
	return common.String(), cases
}

// sqlScript is the state of one testdata file.
type sqlScript struct {
	session *Session
	// timeline is every input row in file order.
	timeline []timelineRow
	// sources and sinks are the connector instances the job being
	// planned created, by table name.
	sources map[string][]*valuesSource
	sinks   map[string]*valuesSink
	// sinkOrder is the sink tables in order of first INSERT.
	sinkOrder []string
}

type timelineRow struct {
	table string
	kind  event.RowKind
	row   []any
	mark  string // markCheckpoint or markCrash instead of a row
}

// Marks in an input (see TestSQLScripts).
const (
	markCheckpoint = "CHECKPOINT"
	markCrash      = "CRASH"
)

// marks reports whether the timeline has marks, and whether a crash.
func (r *sqlScript) marks() (marked, crash bool) {
	for _, row := range r.timeline {
		marked = marked || row.mark != ""
		crash = crash || row.mark == markCrash
	}
	return marked, crash
}

func (r *sqlScript) cmd(t *testing.T, td *datadriven.TestData) string {
	switch td.Cmd {
	case "exec":
		r.exec(t, td)
		return "ok\n"
	case "input":
		r.input(t, td)
		return ""
	case "clear":
		r.timeline = nil
		return ""
	case "run":
		out, err := r.run(td.Input, td.HasArg("materialize"))
		if err != nil {
			td.Fatalf(t, "run failed: %v", err)
		}
		if td.HasArg("same") {
			if err := r.sameTables(); err != nil {
				td.Fatalf(t, "run same: %v\n%s", err, out)
			}
			out += "(every sink has the same table)\n"
		}
		return out
	case "error":
		out, err := r.run(td.Input, false)
		if err == nil {
			td.Fatalf(t, "expected an error, the statements succeeded with:\n%s", out)
		}
		if cerr := checkRefusal(err.Error()); cerr != nil {
			td.Fatalf(t, "%v", cerr)
		}
		return "error: " + err.Error() + "\n"
	case "show":
		buf := r.session.Out.(*bytes.Buffer)
		buf.Reset()
		if err := r.session.Execute(td.Input); err != nil {
			td.Fatalf(t, "show: %v", err)
		}
		return buf.String()
	}
	td.Fatalf(t, "unknown command %q", td.Cmd)
	return ""
}

func (r *sqlScript) exec(t *testing.T, td *datadriven.TestData) {
	r.session.inserts = nil
	if err := r.session.Execute(td.Input); err != nil {
		td.Fatalf(t, "exec: %v", err)
	}
	if len(r.session.inserts) > 0 {
		td.Fatalf(t, "exec: INSERT belongs in run or error")
	}
}

// input parses rows with the table's physical column types.
func (r *sqlScript) input(t *testing.T, td *datadriven.TestData) {
	var name string
	td.ScanArgs(t, "table", &name)
	tab, ok := r.session.Catalog.Table([]string{name})
	if !ok || tab.Connector() != "values" {
		td.Fatalf(t, "input: table %q must be created first WITH ('connector' = 'values')", name)
	}
	fields := tab.Physical()
	for i, line := range strings.Split(strings.TrimSpace(td.Input), "\n") {
		if m := strings.TrimSpace(line); m == markCheckpoint || m == markCrash {
			r.timeline = append(r.timeline, timelineRow{table: tab.Name, mark: m})
			continue
		}
		cr := csv.NewReader(strings.NewReader(line))
		cr.TrimLeadingSpace = true
		rec, err := cr.Read()
		kind := event.Insert
		if changelogTable(tab) && err == nil {
			if kind, err = parseKind(rec[0]); err != nil {
				td.Fatalf(t, "input row %d %q: %v", i+1, line, err)
			}
			rec = rec[1:]
		}
		if err != nil || len(rec) != len(fields) {
			td.Fatalf(t, "input row %d %q: want %d comma-separated fields (%v)", i+1, line, len(fields), err)
		}
		row := make([]any, len(fields))
		for j, s := range rec {
			if s == "NULL" {
				continue
			}
			if row[j], err = parseInputField(s, fields[j].Type); err != nil {
				td.Fatalf(t, "input row %d, column %s: %v", i+1, fields[j].Name, err)
			}
		}
		r.timeline = append(r.timeline, timelineRow{table: tab.Name, kind: kind, row: row})
	}
}

// changelogTable reports whether a 'values' table gives a changelog:
// Flink's 'changelog-mode' option with more than inserts.
func changelogTable(t *catalog.Table) bool {
	m := strings.ReplaceAll(strings.ToUpper(t.Options["changelog-mode"]), " ", "")
	return m != "" && m != "I"
}

// parseKind reads a row kind as Flink's tests write it.
func parseKind(s string) (event.RowKind, error) {
	for _, k := range []event.RowKind{event.Insert, event.UpdateBefore, event.UpdateAfter, event.Delete} {
		if k.String() == s {
			return k, nil
		}
	}
	return 0, fmt.Errorf("a changelog row starts with its kind (+I, -U, +U or -D), not %q", s)
}

// parseInputField reads one input field: a scalar as its text, an ARRAY,
// MAP or ROW as JSON (a csv-quoted "[1, 2]", "{""k"": 1}").
func parseInputField(s string, t types.Type) (any, error) {
	switch t.Kind {
	case types.Array, types.Map, types.Row:
		j := &format.JSON{Fields: []types.Field{{Name: "v", Type: t}}}
		v, err := j.Decode([]byte(`{"v": ` + s + `}`))
		if err != nil {
			return nil, err
		}
		return v[0], nil
	}
	return format.ParseScalar(s, t)
}

// register adds the 'values' connector to the session.
func (r *sqlScript) register() {
	c := r.session.Connectors
	c.UpdatingWhen = map[string]func(*catalog.Table) bool{"values": changelogTable}
	c.Sources["values"] = func(t *catalog.Table) (operator.Source, error) {
		s := &valuesSource{}
		r.sources[t.Name] = append(r.sources[t.Name], s)
		return s, nil
	}
	// As a lookup source (FOR SYSTEM_TIME AS OF) a 'values' table is the
	// rows the script gives it, as Flink's test values connector's lookup
	// function reads its data.
	c.Lookups["values"] = func(t *catalog.Table) (func() ([][]any, error), error) {
		return func() ([][]any, error) {
			var rows [][]any
			for _, tr := range r.timeline {
				if tr.table == t.Name && tr.mark == "" {
					rows = append(rows, tr.row)
				}
			}
			return rows, nil
		}, nil
	}
	c.Sinks["values"] = func(t *catalog.Table) (planner.SinkSpec, error) {
		updates := false
		switch v := strings.ToLower(t.Options["sink-insert-only"]); v {
		case "", "true":
		case "false":
			updates = true
		default:
			return planner.SinkSpec{}, fmt.Errorf("table %q: 'sink-insert-only' must be true or false, got %q", t.Name, v)
		}
		// One sink per table: two INSERTs into it share one changelog.
		k := r.sinks[t.Name]
		if k == nil {
			k = &valuesSink{table: t.Name, acceptsUpdates: updates, types: types.FieldTypes(t.Physical()), key: keyIndexes(t)}
			r.sinks[t.Name] = k
			r.sinkOrder = append(r.sinkOrder, t.Name)
		}
		return planner.SinkSpec{Sink: k, AcceptsUpdates: updates}, nil
	}
}

// keyIndexes are the positions of t's PRIMARY KEY columns among its
// physical columns.
func keyIndexes(t *catalog.Table) []int {
	var out []int
	for _, k := range t.PrimaryKey {
		out = append(out, slices.IndexFunc(t.Physical(), func(f types.Field) bool { return f.Name == k }))
	}
	return out
}

// run executes statements and, if they INSERT, plans and runs the job.
func (r *sqlScript) run(sql string, materialize bool) (string, error) {
	s := r.session
	s.inserts = nil
	r.sources, r.sinks, r.sinkOrder = map[string][]*valuesSource{}, map[string]*valuesSink{}, nil
	if err := s.Execute(sql); err != nil {
		return "", err
	}
	if len(s.inserts) == 0 {
		return "", fmt.Errorf("no INSERT INTO: nothing to run")
	}
	jg, opts, err := r.job()
	if err != nil {
		return "", err
	}
	marked, crash := r.marks()
	if marked {
		dir, err := os.MkdirTemp("", "weir-sql-test-")
		if err != nil {
			return "", err
		}
		defer os.RemoveAll(dir)
		if err := r.checkpointed(&opts, dir, crash); err != nil {
			return "", err
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := runtime.Run(ctx, jg, opts)
	if err != nil {
		return "", err
	}
	out := r.output(materialize)
	if marked {
		out += restarts(res)
	}
	return out, nil
}

// job is Session.Job with the sources' watermarks made deterministic and
// the timeline handed to the sources.
func (r *sqlScript) job() (*graph.JobGraph, runtime.Options, error) {
	s := r.session
	p, err := s.planner()
	if err != nil {
		return nil, runtime.Options{}, err
	}
	var sinks []*planner.Rel
	for _, ins := range s.inserts {
		rel, err := p.PlanInsert(ins)
		if err != nil {
			return nil, runtime.Options{}, err
		}
		sinks = append(sinks, rel)
	}
	sg, err := p.Build("sql-test", sinks)
	if err != nil {
		return nil, runtime.Options{}, err
	}
	watermarkPerRow(sg)
	r.schedule()
	jg, err := sg.JobGraph()
	if err != nil {
		return nil, runtime.Options{}, err
	}
	opts, err := s.Settings.RuntimeOptions("sql-test")
	return jg, opts, err
}

// schedule numbers the steps of the timeline: one per row and source
// instance of its table (a table scanned twice has two), then one end
// step per source.
func (r *sqlScript) schedule() {
	tl := &turnstile{changed: make(chan struct{})}
	var order []string
	seen := map[string]bool{}
	for _, row := range r.timeline {
		if !seen[row.table] {
			seen[row.table] = true
			order = append(order, row.table)
		}
		for _, src := range r.sources[row.table] {
			if row.mark != "" {
				src.rows = append(src.rows, sourceRow{mark: row.mark})
				continue
			}
			src.rows = append(src.rows, sourceRow{seq: tl.steps, kind: row.kind, fields: row.row})
			tl.steps++
		}
	}
	for name := range r.sources {
		if !seen[name] {
			order = append(order, name)
		}
	}
	sort.Strings(order[len(seen):]) // tables without rows: any fixed order
	for _, name := range order {
		for _, src := range r.sources[name] {
			src.tl, src.end = tl, tl.steps
			tl.steps++
		}
	}
}

// output prints what each sink received, sinks in order of first INSERT.
func (r *sqlScript) output(materialize bool) string {
	var b strings.Builder
	for _, name := range r.sinkOrder {
		k := r.sinks[name]
		k.mu.Lock()
		rows := k.rows
		k.mu.Unlock()
		fmt.Fprintf(&b, "%s:\n", name)
		if materialize {
			writeTable(&b, rows, k.types, k.key)
			continue
		}
		for _, row := range rows {
			fmt.Fprintln(&b, print.FormatRow(row, k.types))
		}
		if len(rows) == 0 {
			fmt.Fprintln(&b, "(no rows)")
		}
	}
	return b.String()
}

// writeTable applies a changelog and prints the resulting table, sorted;
// a retraction of a row that is not there is reported.
func writeTable(b *strings.Builder, rows []event.Row, columns []types.Type, key []int) {
	lines, err := tableLines(rows, columns, key)
	for _, l := range lines {
		fmt.Fprintln(b, l)
	}
	if len(lines) == 0 {
		fmt.Fprintln(b, "(empty)")
	}
	if err != nil {
		fmt.Fprintf(b, "error: %v\n", err)
	}
}

// tableLines applies a changelog and returns the resulting table, sorted;
// fields print as values of columns. With a key the table is keyed by it
// (exec.Materialize), as a sink with a PRIMARY KEY writes it.
func tableLines(rows []event.Row, columns []types.Type, key []int) ([]string, error) {
	tab, err := exec.Materialize(rows, key)
	var lines []string
	for _, fields := range tab {
		s := print.FormatRow(event.Row{Kind: event.Insert, Fields: fields}, columns)
		lines = append(lines, strings.TrimPrefix(s, event.Insert.String()))
	}
	sort.Strings(lines)
	return lines, err
}

// sameTables checks that every sink's final table is the first sink's.
func (r *sqlScript) sameTables() error {
	var first []string
	for i, name := range r.sinkOrder {
		k := r.sinks[name]
		k.mu.Lock()
		lines, err := tableLines(k.rows, k.types, k.key)
		k.mu.Unlock()
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if i == 0 {
			first = lines
		} else if !slices.Equal(lines, first) {
			return fmt.Errorf("the tables of %s and %s differ", r.sinkOrder[0], name)
		}
	}
	return nil
}

// watermarkPerRow replaces the periodic watermarks of every 'values'
// source by an operator chained right after it that emits the watermark
// after each row: the same generator, fired at fixed points.
func watermarkPerRow(sg *graph.StreamGraph) {
	for _, n := range append([]*graph.Node(nil), sg.Nodes...) {
		if _, ok := n.Source.(*valuesSource); !ok || n.Watermarks == nil {
			continue
		}
		strategy := *n.Watermarks
		n.Watermarks = nil
		wm := sg.AddNode(&graph.Node{Name: "RowWatermarks", UID: n.UID + "-watermarks", Parallelism: n.Parallelism,
			NewOperator: func() operator.Operator { return &rowWatermarks{gen: strategy.NewGenerator()} }})
		for _, e := range sg.Edges {
			if e.From == n.ID {
				e.From = wm.ID
			}
		}
		sg.Connect(&graph.Edge{From: n.ID, To: wm.ID, Partitioning: graph.Forward})
	}
}

// rowWatermarks forwards each row, then the watermark it allows.
type rowWatermarks struct {
	operator.Base
	gen watermark.Generator
}

func (o *rowWatermarks) ProcessElement(r event.Record) error {
	o.Ctx.Output.Collect(r)
	now := time.Now()
	o.gen.OnEvent(r.Timestamp, now)
	wm, _ := o.gen.OnPeriodicEmit(now)
	o.Ctx.Output.EmitWatermark(wm) // ignored unless it advances
	return nil
}

// turnstile orders the steps of all sources: step i may happen once steps
// 0..i-1 have.
type turnstile struct {
	mu      sync.Mutex
	steps   int
	next    int
	changed chan struct{} // closed and replaced when next advances
}

func (tl *turnstile) advance() {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	tl.next++
	close(tl.changed)
	tl.changed = make(chan struct{})
}

// rewind makes step the next one: a restored source goes on from its
// checkpointed position (one source only: see sqlScript.checkpointed).
func (tl *turnstile) rewind(step int) {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	tl.next = step
	close(tl.changed)
	tl.changed = make(chan struct{})
}

func (tl *turnstile) turn(step int) bool {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	return tl.next == step
}

// wait returns a channel that is ready when step may be its turn.
func (tl *turnstile) wait(step int) <-chan struct{} {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	if tl.next >= step {
		return closed
	}
	return tl.changed
}

var closed = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

type sourceRow struct {
	seq    int
	kind   event.RowKind
	fields []any
	mark   string // a mark has no step and no fields
}

// valuesSource is a bounded source of the rows a script gives its table:
// one split, read by one reader, one row a poll, each at its turn.
type valuesSource struct {
	rows    []sourceRow
	tl      *turnstile
	end     int         // the step at which it ends
	crashed atomic.Bool // the CRASH mark failed an attempt already
}

// stepAt is the step of the first row at or after index i, or the end.
func (s *valuesSource) stepAt(i int) int {
	for ; i < len(s.rows); i++ {
		if s.rows[i].mark == "" {
			return s.rows[i].seq
		}
	}
	return s.end
}

func (s *valuesSource) Bounded() bool { return true }

func (s *valuesSource) Enumerate(context.Context) ([]operator.SplitState, error) {
	return []operator.SplitState{{ID: "values"}}, nil
}

func (s *valuesSource) CreateReader(operator.ReaderContext) (operator.SourceReader, error) {
	return &valuesReader{s: s}, nil
}

// valuesReader emits a row and returns NothingAvailable: the source
// subtask then flushes its output (the row and its watermark are sent),
// and polls again, which is when the row's step is complete. Its end step
// completes in Close, after the subtask sent its final watermark and
// end of input.
type valuesReader struct {
	s        *valuesSource
	assigned bool
	next     int  // index of the next row (or mark); the split's position
	sent     bool // a row was emitted and its step is not yet complete
	ending   bool
	// At a CHECKPOINT mark: the first checkpoint taken there, and a
	// channel closed when it completed (markDone).
	markID   event.CheckpointID
	markDone bool
	passed   chan struct{}
}

func (r *valuesReader) AddSplits(ss []operator.SplitState) error {
	r.assigned = r.assigned || len(ss) > 0
	for _, s := range ss {
		if len(s.Position) == 0 {
			continue
		}
		pos, n := binary.Uvarint(s.Position)
		if n <= 0 || pos > uint64(len(r.s.rows)) {
			return fmt.Errorf("values source: bad position %x", s.Position)
		}
		r.next = int(pos)
		r.s.tl.rewind(r.s.stepAt(r.next))
	}
	return nil
}

var errInjectedCrash = errors.New("values source: injected crash at the CRASH mark")

// atMark handles the marks at the reader's position: it passes a CRASH
// mark that failed an attempt before and a CHECKPOINT mark whose
// checkpoint completed. It returns whether the reader must wait, or the
// injected crash.
func (r *valuesReader) atMark() (bool, error) {
	for r.next < len(r.s.rows) {
		switch r.s.rows[r.next].mark {
		case "":
			return false, nil
		case markCrash:
			if !r.s.crashed.Swap(true) {
				return false, errInjectedCrash
			}
		case markCheckpoint:
			if r.passed == nil {
				r.passed = make(chan struct{})
			}
			select {
			case <-r.passed:
				r.markID, r.markDone, r.passed = 0, false, nil
			default:
				return true, nil
			}
		}
		r.next++
	}
	return false, nil
}

func (r *valuesReader) Poll(out operator.ReaderOutput) (operator.ReaderStatus, error) {
	if !r.assigned {
		return operator.EndOfInput, nil
	}
	if r.sent {
		r.sent = false
		r.s.tl.advance()
	}
	if wait, err := r.atMark(); wait || err != nil {
		return operator.NothingAvailable, err
	}
	if r.next == len(r.s.rows) {
		if !r.s.tl.turn(r.s.end) {
			return operator.NothingAvailable, nil
		}
		r.ending = true
		return operator.EndOfInput, nil
	}
	row := r.s.rows[r.next]
	if !r.s.tl.turn(row.seq) {
		return operator.NothingAvailable, nil
	}
	fields := append([]any(nil), row.fields...) // a self-join reads a row twice
	out.Collect("values", event.Record{Value: event.Row{Kind: row.kind, Fields: fields}, Timestamp: event.NoTimestamp})
	r.next++
	r.sent = true
	return operator.NothingAvailable, nil
}

func (r *valuesReader) Available() <-chan struct{} {
	switch {
	case r.sent:
		return closed
	case r.passed != nil:
		return r.passed
	case r.next == len(r.s.rows):
		return r.s.tl.wait(r.s.end)
	}
	return r.s.tl.wait(r.s.rows[r.next].seq)
}

func (r *valuesReader) SnapshotState(id event.CheckpointID) ([]operator.SplitState, error) {
	if r.passed != nil && r.markID == 0 {
		r.markID = id // waiting at a CHECKPOINT mark: this checkpoint has every row before it
	}
	return []operator.SplitState{{ID: "values", Position: binary.AppendUvarint(nil, uint64(r.next))}}, nil
}

func (r *valuesReader) NotifyCheckpointComplete(id event.CheckpointID) error {
	if r.passed != nil && r.markID != 0 && !r.markDone && id >= r.markID {
		r.markDone = true
		close(r.passed)
	}
	return nil
}

func (r *valuesReader) Close() error {
	if r.ending {
		r.ending = false
		r.s.tl.advance()
	}
	return nil
}

// valuesSink records the rows it receives; an insert-only one fails on
// any other kind (the planner should have refused the query). An
// exactly-once one (scripts with marks) records a checkpoint's rows when
// the checkpoint completes: rows a failed attempt wrote after its last
// completed checkpoint are dropped, as a transactional sink aborts them.
type valuesSink struct {
	table          string
	types          []types.Type // the table's column types, to print by
	key            []int        // the PRIMARY KEY's fields: a table materialises by it, as a database's would
	acceptsUpdates bool
	exactlyOnce    bool
	mu             sync.Mutex
	rows           []event.Row
	staged         map[string][]event.Row // pre-committed, by committable
	seq            int
}

func (k *valuesSink) CreateWriter(operator.WriterContext) (operator.SinkWriter, error) {
	return &valuesWriter{k: k}, nil
}

func (k *valuesSink) CreateCommitter(operator.WriterContext) (operator.Committer, error) {
	if !k.exactlyOnce {
		return nil, nil
	}
	return valuesCommitter{k}, nil
}

// stage keeps rows until the committable it returns is committed.
func (k *valuesSink) stage(rows []event.Row) []byte {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.seq++
	name := strconv.Itoa(k.seq)
	if k.staged == nil {
		k.staged = map[string][]event.Row{}
	}
	k.staged[name] = rows
	return []byte(name)
}

type valuesWriter struct {
	k       *valuesSink
	pending []event.Row // exactly-once: written since the last pre-commit
}

func (w *valuesWriter) Write(r event.Record) error {
	row, ok := r.Value.(event.Row)
	if !ok {
		return fmt.Errorf("values sink %q: got %T, want event.Row", w.k.table, r.Value)
	}
	if row.Kind != event.Insert && !w.k.acceptsUpdates {
		return fmt.Errorf("values sink %q is insert-only but received %s", w.k.table, print.Format(row))
	}
	if w.k.exactlyOnce {
		w.pending = append(w.pending, row)
		return nil
	}
	w.k.mu.Lock()
	defer w.k.mu.Unlock()
	w.k.rows = append(w.k.rows, row)
	return nil
}

func (w *valuesWriter) PrepareCommit(event.CheckpointID) ([][]byte, error) {
	if !w.k.exactlyOnce || len(w.pending) == 0 {
		return nil, nil
	}
	c := w.k.stage(w.pending)
	w.pending = nil
	return [][]byte{c}, nil
}

func (*valuesWriter) Flush(bool) error                                 { return nil }
func (*valuesWriter) SnapshotState(event.CheckpointID) ([]byte, error) { return nil, nil }
func (*valuesWriter) Close() error                                     { return nil }

// valuesCommitter records staged rows. Committing again (after a restore)
// finds nothing staged under the name: already committed.
type valuesCommitter struct{ k *valuesSink }

func (c valuesCommitter) Commit(_ context.Context, _ event.CheckpointID, committables [][]byte) error {
	c.k.mu.Lock()
	defer c.k.mu.Unlock()
	for _, name := range committables {
		c.k.rows = append(c.k.rows, c.k.staged[string(name)]...)
		delete(c.k.staged, string(name))
	}
	return nil
}

func (valuesCommitter) Close() error { return nil }

// checkpointed sets up a run with marks: exactly-once checkpoints every
// 10 ms into dir, exactly-once sinks, and one restart when the timeline
// crashes. The sources' turnstile can rewind for one source only.
func (r *sqlScript) checkpointed(opts *runtime.Options, dir string, crash bool) error {
	n := 0
	for _, srcs := range r.sources {
		n += len(srcs)
	}
	if n != 1 {
		return fmt.Errorf("CHECKPOINT and CRASH marks need a job with one source, this one has %d", n)
	}
	opts.Mode, opts.CheckpointDir = task.ExactlyOnce, dir
	opts.Checkpoint.Interval = 10 * time.Millisecond
	opts.Checkpoint.TolerableFailures = -1
	opts.Restart = runtime.NoRestart{}
	opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil)) // the injected crash is expected
	if crash {
		opts.Restart = runtime.FixedDelay{Attempts: 1, Delay: 0}
	}
	for _, k := range r.sinks {
		k.exactlyOnce = true
	}
	return nil
}

// restarts describes how a run with marks restarted.
func restarts(res *runtime.Result) string {
	switch {
	case res.Restarts == 0:
		return "(no restart)\n"
	case res.RestoredFrom == 0:
		return fmt.Sprintf("(%d restart, from the beginning)\n", res.Restarts)
	}
	return fmt.Sprintf("(%d restart, from a checkpoint)\n", res.Restarts)
}
