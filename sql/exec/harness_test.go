package exec

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/keygroup"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/state"
	"github.com/weirstream/weir/state/heap"
	"github.com/weirstream/weir/state/pebble"
	"github.com/weirstream/weir/types"
)

const maxPar = keygroup.DefaultMaxParallelism

// stage is one operator of a test chain and what it runs with.
type stage struct {
	op    operator.Operator
	keyed bool
	ctx   *operator.Context
}

// chain drives a chain of operators directly, as one subtask would: the
// output of each feeds the next, the last one's goes to out. Keyed stages
// get a heap backend of all key groups and a timer service.
type chain struct {
	stages []*stage
	out    *recorder
	clock  *int64 // processing time, ms
	// pts is the chain's processing-time service, shared by its stages
	// as a subtask's is; advance runs it.
	pts *operator.ProcessingTimeService
	// groups are the key groups of the keyed stages; all by default.
	groups keygroup.Range
	// pebbleDir, when set, gives keyed stages a Pebble backend there
	// (full canonical snapshots, which any backend restores) instead of a
	// heap one.
	pebbleDir string
}

// newStage pairs an operator with whether it is keyed.
type newStage func() (operator.Operator, bool)

// openChain makes the operators of mk and opens them, restoring parts[i]
// into stage i when parts is set.
func openChain(t testing.TB, mk []newStage, clock *int64, parts []map[string][][]byte) *chain {
	t.Helper()
	return openSubtask(t, mk, clock, parts, keygroup.Range{Start: 0, End: maxPar - 1})
}

// openSubtask is openChain for a subtask that owns the key groups groups.
func openSubtask(t testing.TB, mk []newStage, clock *int64, parts []map[string][][]byte, groups keygroup.Range) *chain {
	t.Helper()
	return openSubtaskOn(t, "", mk, clock, parts, groups)
}

// openSubtaskOn is openSubtask on a Pebble backend in pebbleDir (heap
// when it is "").
func openSubtaskOn(t testing.TB, pebbleDir string, mk []newStage, clock *int64, parts []map[string][][]byte, groups keygroup.Range) *chain {
	t.Helper()
	c := &chain{out: &recorder{}, clock: clock, groups: groups, pts: operator.NewProcessingTimeService(), pebbleDir: pebbleDir}
	for _, f := range mk {
		op, keyed := f()
		c.stages = append(c.stages, &stage{op: op, keyed: keyed})
	}
	for i := len(c.stages) - 1; i >= 0; i-- {
		var out operator.Output = c.out
		if i+1 < len(c.stages) {
			out = stageOutput{next: c.stages[i+1], rec: c.out}
		}
		c.stages[i].ctx = c.newContext(t, c.stages[i], out)
	}
	for i, s := range c.stages {
		if parts != nil {
			if err := s.op.InitializeState(parts[i]); err != nil {
				t.Fatal(err)
			}
			s.ctx.Restored = true
		}
		if err := s.op.Open(s.ctx); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

func (c *chain) newContext(t testing.TB, s *stage, out operator.Output) *operator.Context {
	ctx := &operator.Context{
		Subtask: event.SubtaskID{Vertex: "test", Index: 0}, UID: "op", Parallelism: 1,
		MaxParallelism: maxPar, Output: out, Metrics: &operator.Metrics{},
		Now:            func() int64 { return *c.clock },
		OperatorState:  heap.NewOperatorBackend(),
		ProcessingTime: c.pts,
	}
	if s.keyed {
		be, err := c.keyedBackend(t, ctx.Now)
		if err != nil {
			t.Fatal(err)
		}
		ctx.Keyed = be
		ctx.Timers = operator.NewTimerService(be, state.AnyCodec{}, maxPar)
		ctx.Timers.UseProcessingTime(c.pts)
	}
	return ctx
}

func (c *chain) keyedBackend(t testing.TB, now func() int64) (state.KeyedBackend, error) {
	if c.pebbleDir == "" {
		return heap.New(heap.Options{KeyGroupRange: c.groups, MaxParallelism: maxPar, Clock: now})
	}
	be, err := pebble.New(pebble.Options{KeyGroupRange: c.groups, MaxParallelism: maxPar, Clock: now,
		LocalDir: c.pebbleDir, DisableIncremental: true, WriteBufferSize: 256 << 10, BlockCacheSize: 1 << 20})
	if err == nil {
		t.Cleanup(func() { _ = be.Close() })
	}
	return be, err
}

// stageOutput feeds a stage's output into the next stage.
type stageOutput struct {
	next *stage
	rec  *recorder
}

func (o stageOutput) Collect(r event.Record) {
	if err := o.next.op.ProcessElement(r); err != nil {
		o.rec.err = err
	}
}
func (o stageOutput) CollectSide(string, event.Record) {}
func (o stageOutput) EmitWatermark(wm event.Timestamp) {
	if err := o.next.op.ProcessWatermark(wm); err != nil {
		o.rec.err = err
	}
}

// recorder is the operator.Output at the end of a chain.
type recorder struct {
	records    []event.Record
	watermarks []event.Timestamp
	lines      []string // what arrived since the last take, printed
	err        error    // an error of a stage fed by stageOutput
}

func (r *recorder) Collect(rec event.Record) {
	r.records = append(r.records, rec)
	line := formatRow(rec.Value.(event.Row))
	if rec.Timestamp != event.NoTimestamp {
		line += fmt.Sprintf(" @%d", rec.Timestamp)
	}
	r.lines = append(r.lines, line)
}
func (r *recorder) CollectSide(string, event.Record) {}
func (r *recorder) EmitWatermark(wm event.Timestamp) {
	r.watermarks = append(r.watermarks, wm)
	r.lines = append(r.lines, "watermark "+formatTS(wm))
}

func (r *recorder) take() []string {
	l := r.lines
	r.lines = nil
	return l
}

// rows returns every row emitted so far.
func (r *recorder) rows() []event.Row {
	out := make([]event.Row, len(r.records))
	for i, rec := range r.records {
		out[i] = rec.Value.(event.Row)
	}
	return out
}

func formatTS(ts int64) string {
	switch ts {
	case event.MaxWatermark:
		return "max"
	case event.MinWatermark:
		return "min"
	}
	return strconv.FormatInt(ts, 10)
}

func (c *chain) head() *stage { return c.stages[0] }

// process feeds a record to input 1 (or 2) of the chain's head.
func (c *chain) process(t testing.TB, input int, r event.Record) error {
	t.Helper()
	var err error
	if input == 2 {
		err = c.head().op.(operator.TwoInput).ProcessElement2(r)
	} else {
		err = c.head().op.ProcessElement(r)
	}
	if err == nil {
		err, c.out.err = c.out.err, nil
	}
	return err
}

func (c *chain) watermark(t testing.TB, wm event.Timestamp) {
	t.Helper()
	if err := c.head().op.ProcessWatermark(wm); err != nil {
		t.Fatal(err)
	}
	if c.out.err != nil {
		t.Fatal(c.out.err)
	}
}

// snapshot takes a checkpoint of every stage, as a task would: first
// PrepareSnapshotPreBarrier along the chain, then the synchronous
// snapshots; the parts are then written, as checkpoint storage would.
func (c *chain) snapshot(t testing.TB, id event.CheckpointID) []map[string][][]byte {
	t.Helper()
	for _, s := range c.stages {
		if err := s.op.PrepareSnapshotPreBarrier(id); err != nil {
			t.Fatal(err)
		}
	}
	out := make([]map[string][][]byte, len(c.stages))
	for i, s := range c.stages {
		parts, err := s.op.SnapshotState(id)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = map[string][][]byte{}
		for _, p := range parts {
			blob, err := p.Snap.Write()
			if err != nil {
				t.Fatal(err)
			}
			out[i][p.Name] = [][]byte{blob}
		}
	}
	return out
}

// advance sets the clock and runs the processing-time callbacks due, as
// a subtask's wake-up does.
func (c *chain) advance(t testing.TB, now int64) {
	t.Helper()
	*c.clock = now
	if err := c.pts.Advance(now); err != nil {
		t.Fatal(err)
	}
	if c.out.err != nil {
		t.Fatal(c.out.err)
	}
}

func (c *chain) finish(t testing.TB) {
	t.Helper()
	for _, s := range c.stages {
		if err := s.op.Finish(); err != nil {
			t.Fatal(err)
		}
	}
}

// Rows in scripts and messages look like Flink's print connector:
// "+I[a, 1, 2.50, 1.5f, NULL, ts:1000]". Values:
//
//	NULL                    nil
//	123, -4                 int64
//	2.50                    decimal.Decimal, with its scale
//	1.5f                    float64
//	ts:1000                 time.Time, ms since the epoch, UTC
//	true, false             bool
//	'a b', abc              string (quotes for spaces, commas, brackets)

var (
	intRE   = regexp.MustCompile(`^-?\d+$`)
	decRE   = regexp.MustCompile(`^-?\d+\.\d+$`)
	floatRE = regexp.MustCompile(`^-?\d+(\.\d+)?(e-?\d+)?f$`)
)

func parseValue(s string) (any, error) {
	switch {
	case s == "NULL":
		return nil, nil
	case s == "true" || s == "false":
		return s == "true", nil
	case intRE.MatchString(s):
		return strconv.ParseInt(s, 10, 64)
	case decRE.MatchString(s):
		return decimal.NewFromString(s)
	case floatRE.MatchString(s):
		return strconv.ParseFloat(strings.TrimSuffix(s, "f"), 64)
	case strings.HasPrefix(s, "ts:"):
		ms, err := strconv.ParseInt(s[3:], 10, 64)
		return millisTime(ms), err
	case strings.HasPrefix(s, "'") && strings.HasSuffix(s, "'") && len(s) >= 2:
		return s[1 : len(s)-1], nil
	}
	return s, nil
}

// parseRow parses "+I[a, 1]" (an optional " @ts" after it is the caller's).
func parseRow(s string) (event.Row, error) {
	s = strings.TrimSpace(s)
	kinds := map[string]event.RowKind{"+I": event.Insert, "-U": event.UpdateBefore, "+U": event.UpdateAfter, "-D": event.Delete}
	if len(s) < 4 || s[2] != '[' || s[len(s)-1] != ']' {
		return event.Row{}, fmt.Errorf("row %q: want +I[v, …]", s)
	}
	kind, ok := kinds[s[:2]]
	if !ok {
		return event.Row{}, fmt.Errorf("row %q: unknown kind %q", s, s[:2])
	}
	body := s[3 : len(s)-1]
	var fields []any
	if strings.TrimSpace(body) != "" {
		for _, tok := range splitFields(body) {
			v, err := parseValue(strings.TrimSpace(tok))
			if err != nil {
				return event.Row{}, fmt.Errorf("row %q: %v", s, err)
			}
			fields = append(fields, v)
		}
	}
	return event.Row{Kind: kind, Fields: fields}, nil
}

// splitFields splits on commas outside quotes.
func splitFields(s string) []string {
	var out []string
	quoted, start := false, 0
	for i, c := range s {
		switch {
		case c == '\'':
			quoted = !quoted
		case c == ',' && !quoted:
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}

func formatValue(v any) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case decimal.Decimal:
		return x.StringFixed(max(0, -x.Exponent()))
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64) + "f"
	case time.Time:
		return fmt.Sprintf("ts:%d", x.UnixMilli())
	case string:
		if x == "" || x == "NULL" || strings.ContainsAny(x, " ,[]'") || intRE.MatchString(x) || decRE.MatchString(x) {
			return "'" + x + "'"
		}
		return x
	case types.MultisetValue:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = fmt.Sprintf("%s=%d", formatValue(e.Elem), e.Count)
		}
		slices.Sort(parts)
		return "{" + strings.Join(parts, ", ") + "}"
	}
	return fmt.Sprint(v)
}

func formatFields(fields []any) string {
	parts := make([]string, len(fields))
	for i, f := range fields {
		parts[i] = formatValue(f)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func formatRow(r event.Row) string { return r.Kind.String() + formatFields(r.Fields) }

// mustRows parses rows, one a line.
func mustRows(t testing.TB, lines ...string) []event.Row {
	t.Helper()
	var out []event.Row
	for _, l := range lines {
		r, err := parseRow(l)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}
