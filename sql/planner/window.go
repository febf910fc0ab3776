package planner

import (
	"fmt"
	"strings"
	"time"

	"github.com/weirstream/weir/graph"
	"github.com/weirstream/weir/sql/exec"
	"github.com/weirstream/weir/sql/expr"
	"github.com/weirstream/weir/sql/parser"
	"github.com/weirstream/weir/types"
)

// tvfInfo is a window table-valued function over an input.
type tvfInfo struct {
	input     *Rel
	spec      exec.WindowSpec
	timeField int
	call      string
	// procTime: the DESCRIPTOR names a PROCTIME() attribute.
	procTime bool
	// session: a SESSION TVF (spec.Size is its gap), with its PARTITION BY
	// keys; a window aggregation over it is a session aggregation.
	session     bool
	partitionBy []parser.Expr
	pos         parser.Pos
	// zone is the session zone when the time attribute is a TIMESTAMP_LTZ
	// and the zone is not UTC: windows align to its wall clock; nil
	// otherwise.
	zone *time.Location
	// attached: the rows carry their windows in these columns (a
	// cascaded window aggregation, see attachedWindow); there is no TVF.
	attached *windowCols
}

var windowColType = types.Type{Kind: types.Timestamp, Precision: 3}

// planWindowTVF plans TABLE(TUMBLE|HOP|CUMULATE(TABLE t, DESCRIPTOR(ts), …)).
func (p *Planner) planWindowTVF(tf *parser.TableFunc) (*Rel, error) {
	call := tf.Call
	args, err := tvfArgs(call)
	if err != nil {
		return nil, err
	}
	in, err := p.planTableName(&parser.TableName{Pos: args.table.Pos, Name: args.table.Name})
	if err != nil {
		return nil, err
	}
	in = p.prunedTVFInput(in, args.table.Name, tf.Alias)
	tf2 := &tvfInfo{input: in, call: parser.Format(call), session: call.Name == "SESSION", partitionBy: args.table.PartitionBy, pos: call.Pos}
	if len(tf2.partitionBy) > 0 && !tf2.session {
		return nil, errAt(args.table.Pos, "%s takes no PARTITION BY (only SESSION does)", call.Name)
	}
	if tf2.timeField = in.colIndex(args.timecol); tf2.timeField < 0 {
		return nil, errAt(call.Pos, "%s: DESCRIPTOR(%s) names no column of %s", call.Name, args.timecol, formatName(args.table.Name))
	}
	tf2.procTime = in.Cols[tf2.timeField].Type.TimeAttr == "proctime"
	if tf2.timeField != in.RowTime && !tf2.procTime {
		return nil, &Error{Pos: call.Pos, Msg: fmt.Sprintf("%s: column %s is not a time attribute", call.Name, args.timecol),
			Hint: "declare it with WATERMARK FOR " + args.timecol + " AS … in the table"}
	}
	tf2.zone = p.windowZoneOf(in.Cols[tf2.timeField])
	if tf2.spec, err = windowSpec(call, args); err != nil {
		return nil, err
	}
	return p.tvfRel(tf2, tf.Alias), nil
}

// windowZoneOf is the zone windows over time attribute c align to: the
// session zone when c is a TIMESTAMP_LTZ (a rowtime, or PROCTIME()) and
// the zone is not UTC, as Flink aligns such windows to the zone's wall
// clock (a day window starts at local midnight); nil otherwise.
func (p *Planner) windowZoneOf(c expr.Column) *time.Location {
	if c.Type.Kind != types.TimestampLTZ || isUTC(p.Config.Location) {
		return nil
	}
	return p.Config.Location
}

// isUTC reports whether loc is UTC or a zone always at offset 0 (checked
// at a winter and a summer instant of a few years).
func isUTC(loc *time.Location) bool {
	if loc == nil || loc == time.UTC {
		return true
	}
	for _, y := range []int{1970, 2000, 2025} {
		for _, m := range []time.Month{time.January, time.July} {
			if _, off := time.Date(y, m, 1, 0, 0, 0, 0, loc).Zone(); off != 0 {
				return false
			}
		}
	}
	return true
}

func formatName(n parser.Name) string { return strings.Join(n, ".") }

func (p *Planner) tvfRel(t *tvfInfo, alias string) *Rel {
	cols := append([]expr.Column(nil), t.input.Cols...)
	q := alias
	if alias != "" {
		// TABLE(TUMBLE(TABLE t, …)) AS a names every column a.x, the
		// input's too.
		cols = requalify(t.input.Cols, alias)
	}
	for _, n := range []string{"window_start", "window_end", "window_time"} {
		ty := windowColType
		if n == "window_time" {
			ty.TimeAttr = "rowtime"
		}
		cols = append(cols, expr.Column{Qualifier: q, Name: n, Type: ty})
	}
	if t.zone != nil {
		cols[len(cols)-1].Type.Kind = types.TimestampLTZ // an instant; window_start and window_end are the zone's wall clock
	}
	r := &Rel{Op: "WindowTableFunction", Detail: t.call, Inputs: []*Rel{t.input}, Cols: cols,
		RowTime: len(cols) - 1, InsertOnly: true, tvf: t}
	if t.procTime { // window_time is a processing-time attribute, as the DESCRIPTOR's column
		r.RowTime = -1
		cols[len(cols)-1].Type.Kind, cols[len(cols)-1].Type.TimeAttr = types.TimestampLTZ, "proctime"
	} else {
		r.win = &windowCols{start: len(cols) - 3, end: len(cols) - 2, zone: t.zone}
		if !t.session {
			r.win.spec = &t.spec
		}
	}
	r.build = func(b *builder, ins []*graph.Node) (*graph.Node, error) {
		if t.session {
			return nil, &Error{Pos: t.pos, Msg: "the SESSION window TVF without a window aggregation is not supported yet",
				Hint: "aggregate it: GROUP BY window_start, window_end (and the PARTITION BY keys)"}
		}
		opts := exec.WindowTableFunctionOptions{Window: t.spec, TimeField: t.timeField, ProcTime: t.procTime, Zone: t.zone}
		return b.checkedChained("WindowTableFunction", ins[0], opOf(exec.NewWindowTableFunction, opts))
	}
	return r
}

type tvfArguments struct {
	table     *parser.TableArg
	timecol   string
	durations []time.Duration
	named     map[string]time.Duration
}

func tvfArgs(call *parser.FuncCall) (*tvfArguments, error) {
	a := &tvfArguments{named: map[string]time.Duration{}}
	for _, arg := range call.Args {
		name := ""
		if na, ok := arg.(*parser.NamedArg); ok {
			name, arg = na.Name, na.Value
		}
		if err := a.add(call, name, arg); err != nil {
			return nil, err
		}
	}
	if a.table == nil || a.timecol == "" {
		return nil, errAt(call.Pos, "%s needs TABLE t and DESCRIPTOR(time column)", call.Name)
	}
	return a, nil
}

func (a *tvfArguments) add(call *parser.FuncCall, name string, arg parser.Expr) error {
	switch v := arg.(type) {
	case *parser.TableArg:
		a.table = v
	case *parser.Descriptor:
		if len(v.Columns) != 1 {
			return errAt(v.Pos, "DESCRIPTOR takes one time column")
		}
		a.timecol = v.Columns[0]
	case *parser.IntervalLit:
		ms, _, err := expr.IntervalValue(v)
		if err != nil {
			return err
		}
		d := time.Duration(ms) * time.Millisecond
		if name != "" {
			a.named[name] = d
		} else {
			a.durations = append(a.durations, d)
		}
	default:
		return errAt(arg.Position(), "%s: unexpected argument %s", call.Name, parser.Format(arg))
	}
	return nil
}

// windowSpec reads the TVF's durations: TUMBLE(size[, offset]),
// HOP(slide, size[, offset]), CUMULATE(step, size[, offset]).
func windowSpec(call *parser.FuncCall, a *tvfArguments) (exec.WindowSpec, error) {
	var s exec.WindowSpec
	get := func(name string, pos int) (time.Duration, bool) {
		if v, ok := a.named[name]; ok {
			return v, true
		}
		if pos < len(a.durations) {
			return a.durations[pos], true
		}
		return 0, false
	}
	var ok bool
	switch call.Name {
	case "TUMBLE":
		s.Kind = exec.Tumble
		s.Size, ok = get("SIZE", 0)
		s.Offset, _ = get("OFFSET", 1)
	case "HOP":
		s.Kind = exec.Hop
		s.Slide, _ = get("SLIDE", 0)
		s.Size, ok = get("SIZE", 1)
		s.Offset, _ = get("OFFSET", 2)
	case "CUMULATE":
		s.Kind = exec.Cumulate
		s.Step, _ = get("STEP", 0)
		s.Size, ok = get("SIZE", 1)
		s.Offset, _ = get("OFFSET", 2)
	case "SESSION":
		s.Size, ok = get("GAP", 0) // the gap; the TVF is planned as a session aggregation
	default:
		return s, errAt(call.Pos, "unknown window function %s (supported: TUMBLE, HOP, CUMULATE, SESSION)", call.Name)
	}
	if !ok || s.Size <= 0 {
		return s, errAt(call.Pos, "%s needs a positive window size INTERVAL", call.Name)
	}
	return s, checkWindowStep(call, s)
}

// checkWindowStep refuses, at the call, a HOP slide or CUMULATE step that
// does not divide the window size (Flink refuses it too; exec's Validate
// would say it without the place).
func checkWindowStep(call *parser.FuncCall, s exec.WindowSpec) error {
	name, step := "slide", s.Slide
	switch call.Name {
	case "HOP":
	case "CUMULATE":
		name, step = "step", s.Step
	default:
		return nil
	}
	if step > 0 && s.Size%step == 0 {
		return nil
	}
	return &Error{Pos: call.Pos, Msg: fmt.Sprintf("%s window: the %s %v does not divide the size %v", call.Name, name, step, s.Size),
		Hint: fmt.Sprintf("make the size a whole multiple of the %s", name)}
}

// splitWindowKeys recognises GROUP BY window_start, window_end[, …] over a
// window TVF: a window aggregation, with the other keys left over.
func splitWindowKeys(pos parser.Pos, in *Rel, groupBy []parser.Expr) (*tvfInfo, []parser.Expr, error) {
	if in.tvf == nil {
		return nil, groupBy, nil
	}
	var rest []parser.Expr
	found := map[string]bool{}
	for _, g := range groupBy {
		if id, ok := g.(*parser.Ident); ok {
			switch n := id.Parts[len(id.Parts)-1]; n {
			case "window_start", "window_end", "window_time":
				found[n] = true
				continue
			}
		}
		rest = append(rest, g)
	}
	if !found["window_start"] || !found["window_end"] {
		return nil, nil, &Error{Pos: pos, Msg: "an aggregation over " + in.tvf.call + " must group by window_start and window_end",
			Hint: "add GROUP BY window_start, window_end"}
	}
	return in.tvf, rest, nil
}

// attachedWindow recognises GROUP BY over rows that carry the windows of
// a window TVF (the output of a window aggregation, rank or join, its
// window columns passed through projections, renamed or not) when the
// keys name both window columns: a window aggregation over those windows
// (Flink's cascaded window aggregation), with the other keys left over.
// Nil when it is not one: the aggregation stays a GROUP BY.
func attachedWindow(in *Rel, groupBy []parser.Expr) (*tvfInfo, []parser.Expr) {
	w := in.win
	if w == nil || w.spec == nil || !in.InsertOnly {
		return nil, groupBy
	}
	var rest []parser.Expr
	var start, end bool
	for _, g := range groupBy {
		switch identIndex(in, g) {
		case w.start:
			start = true
		case w.end:
			end = true
		default:
			rest = append(rest, g)
		}
	}
	if !start || !end {
		return nil, groupBy
	}
	return &tvfInfo{input: in, spec: *w.spec, zone: w.zone, call: joinWindowText(in), attached: w}, rest
}

// keepWindowTime makes a grouped window_time of a cascaded window
// aggregation r the output's rowtime, as in Flink: the input's rowtime,
// over rows that carry windows, is their window_time (window_end - 1 ms),
// so grouping by it keeps one value per window, and a window TVF can
// follow over it.
func keepWindowTime(r, in *Rel, keys []int) {
	if in.RowTime < 0 {
		return
	}
	for j, k := range keys {
		if k == in.RowTime {
			r.Cols[j].Type.TimeAttr, r.RowTime = "rowtime", j
			return
		}
	}
}

// hasGroupingSets reports whether GROUP BY keys hold GROUPING SETS, ROLLUP
// or CUBE.
func hasGroupingSets(groupBy []parser.Expr) bool {
	return planGroupingSets(groupBy).expanded
}

// windowAgg is exec.WindowAggregate: insert-only output, one row per
// window and key once the watermark passes the window's end.
func (p *Planner) windowAgg(in *Rel, t *tvfInfo, ap *aggPlan) (*Rel, error) {
	opts := exec.WindowAggOptions{Window: t.spec, TimeField: t.timeField, GroupKeys: ap.keys, Aggs: ap.calls, WindowTime: true,
		ProcTime: t.procTime, Zone: t.zone}
	wtime := types.Type{Kind: types.Timestamp, Precision: 3, TimeAttr: "rowtime"}
	if t.zone != nil {
		wtime.Kind = types.TimestampLTZ // an instant; window_start and window_end are the zone's wall clock
	}
	wcols := []expr.Column{{Name: "window_start", Type: windowColType}, {Name: "window_end", Type: windowColType},
		{Name: "window_time", Type: wtime}}
	if a := t.attached; a != nil {
		// The window columns keep their names (the select list reads
		// them as grouped columns); window_time, not grouped, is hidden.
		opts.Attached = &exec.WindowColumns{Start: a.start, End: a.end}
		wcols[0], wcols[1] = in.Cols[a.start], in.Cols[a.end]
		wcols[0].Type.TimeAttr, wcols[1].Type.TimeAttr = "", ""
		wcols[2].Name = "$window_time"
	}
	if _, err := exec.NewWindowAggregate(opts); err != nil {
		return nil, err
	}
	cols := p.aggOutputCols(in, ap, wcols)
	detail := fmt.Sprintf("window=[%s], select=[%s]", t.call, aggText(ap.calls, in.Cols))
	r := &Rel{Op: "WindowAggregate", Detail: detail, Inputs: []*Rel{in}, Cols: cols, InsertOnly: true, RowTime: len(ap.keys) + 2}
	if t.procTime {
		r.RowTime = -1
		r.Cols[len(ap.keys)+2].Type.TimeAttr = "proctime"
	} else {
		r.win = &windowCols{start: len(ap.keys), end: len(ap.keys) + 1, zone: t.zone, spec: &t.spec}
	}
	if t.attached != nil {
		keepWindowTime(r, t.input, ap.keys)
	}
	if p.twoPhaseWindow(opts) {
		return p.twoPhaseWindowAgg(in, r, opts), nil
	}
	key := exec.FieldKeyOf(ap.keys...)
	r.build = func(b *builder, ins []*graph.Node) (*graph.Node, error) {
		return b.checkedKeyed("WindowAggregate", ins[0], key, opOf(exec.NewWindowAggregate, opts))
	}
	return r, nil
}

// checkNoTVF is a no-op hook: a window TVF read without aggregation is
// planned as a per-row window assignment (TUMBLE only).
func (p *Planner) checkNoTVF(*Rel, *parser.Select) error { return nil }
