package planner

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/weirstream/weir/graph"
	"github.com/weirstream/weir/sql/exec"
	"github.com/weirstream/weir/sql/expr"
	"github.com/weirstream/weir/sql/parser"
)

// OVER aggregation (Flink's StreamExecOverAggregate): every aggregate
// call with an OVER clause of a SELECT list, computed per row over a
// frame of its partition ordered by a time attribute, and appended to the
// row. Flink's rules, which its messages state: one window for every call
// of a SELECT, ordered by a single time attribute ascending, and a frame
// ending at CURRENT ROW.

// overCall is one OVER call of a SELECT list.
type overCall struct {
	call *parser.FuncCall
	spec *parser.WindowSpec // resolved: a WINDOW clause's for OVER w
	text string             // the call as written, to resolve it in the SELECT list
}

// overWindow is the one window the OVER calls of a SELECT share.
type overWindow struct {
	spec      *parser.WindowSpec
	keys      []int
	rowtime   bool
	timeField int
	rows      bool
	preceding int64  // rows or ms; -1 for UNBOUNDED PRECEDING
	text      string // the window, with its frame
	frame     string // the frame, as EXPLAIN prints it
}

// rankFuncs are the ranking functions Flink computes as OVER aggregates
// when no rank filter follows (ROW_NUMBER: a ROWS frame, the others RANGE,
// as Calcite frames them).
var rankFuncs = map[string]bool{"ROW_NUMBER": true, "RANK": true, "DENSE_RANK": true}

// collectOverCalls lists the OVER calls of the SELECT list, once each.
func collectOverCalls(s *parser.Select) ([]*overCall, error) {
	var out []*overCall
	seen := map[string]bool{}
	var err error
	visit := func(e parser.Expr) bool {
		f, ok := e.(*parser.FuncCall)
		if !ok || f.Over == nil || err != nil {
			return err == nil
		}
		text := parser.Format(f)
		if seen[text] {
			return false
		}
		seen[text] = true
		spec := f.Over
		if spec.Ref != "" {
			if spec = namedWindow(s, spec.Ref); spec == nil {
				err = errAt(f.Over.Pos, "Window '%s' not found", f.Over.Ref)
				return false
			}
		}
		out = append(out, &overCall{call: f, spec: spec, text: text})
		return false
	}
	for _, it := range s.Items {
		walk(it.Expr, visit)
	}
	return out, err
}

func namedWindow(s *parser.Select, name string) *parser.WindowSpec {
	for _, w := range s.Windows {
		if strings.EqualFold(w.Name, name) {
			return w.Spec
		}
	}
	return nil
}

// windowText is a call's window with the frame Calcite gives it when the
// query has none: ROWS for ROW_NUMBER, else RANGE, from UNBOUNDED
// PRECEDING to CURRENT ROW.
func windowText(c *overCall) (text, frame string, err error) {
	spec := *c.spec
	if rankFuncs[c.call.Name] || c.call.Name == "LAG" {
		if spec.Frame != nil && c.call.Name == "LAG" {
			return "", "", errAt(spec.Frame.Pos, "ROW/RANGE not allowed with LAG: it reads the rows before the current one")
		}
		if spec.Frame != nil {
			return "", "", errAt(spec.Frame.Pos, "ROW/RANGE not allowed with RANK, DENSE_RANK or ROW_NUMBER functions")
		}
		unit := parser.Range
		if c.call.Name == "ROW_NUMBER" {
			unit = parser.Rows
		}
		spec.Frame = &parser.Frame{Unit: unit, Start: parser.FrameBound{Kind: parser.UnboundedPreceding},
			End: parser.FrameBound{Kind: parser.CurrentRow}}
	}
	if spec.Frame == nil {
		spec.Frame = &parser.Frame{Unit: parser.Range, Start: parser.FrameBound{Kind: parser.UnboundedPreceding},
			End: parser.FrameBound{Kind: parser.CurrentRow}}
	}
	frame = strings.TrimSuffix(strings.TrimPrefix(parser.Format(&parser.WindowSpec{Frame: spec.Frame}), "("), ")")
	return parser.Format(&spec), frame, nil
}

// planOver plans the SELECT list s over in, whose items call aggregates
// OVER one window.
func (p *Planner) planOver(s *parser.Select, in *Rel, calls []*overCall) (*Rel, error) {
	if len(s.GroupBy) > 0 || len(collectAggregates(s)) > 0 {
		return nil, &Error{Pos: calls[0].call.Pos, Msg: "OVER aggregation in a query with GROUP BY or aggregates is not supported yet",
			Hint: "aggregate in a subquery and apply OVER in the outer query"}
	}
	w, err := p.overWindowOf(in, calls)
	if err != nil {
		return nil, err
	}
	if !in.InsertOnly {
		return nil, errAt(calls[0].call.Pos, "The OVER aggregation doesn't support consuming update and delete changes "+
			"which is produced by node %s", in.UpdatesFrom)
	}
	saved := p.aggInput
	p.aggInput = in.Cols
	defer func() { p.aggInput = saved }()
	aggs := make([]*parser.FuncCall, len(calls))
	for i, c := range calls {
		if aggs[i], err = overAggCall(c, w); err != nil {
			return nil, err
		}
	}
	ap, err := p.shapeAggregation(in, nil, aggs)
	if err != nil {
		return nil, err
	}
	input := in
	if ap.pre != nil {
		input = p.calcOver(in, ap.pre, ap.preCols)
		input.RowTime = in.RowTime // the pre-projection keeps the input's columns in place
	}
	out, err := p.overAgg(input, w, ap)
	if err != nil {
		return nil, err
	}
	base := len(input.Cols)
	resolve := func(e parser.Expr) (*expr.Compiled, error) {
		f, ok := e.(*parser.FuncCall)
		if !ok || f.Over == nil {
			return nil, nil
		}
		text := parser.Format(f)
		for i, c := range calls {
			if c.text == text {
				return fieldRef(base+i, out.Cols[base+i].Type), nil
			}
		}
		return nil, nil
	}
	proj, err := p.project(out, s.Items, resolve)
	if err != nil || !s.Distinct {
		return proj, err
	}
	return p.distinct(proj)
}

// overAggCall is the aggregate a call computes: a ranking function counts
// the rows (on processing time every row is a peer of none, so RANK and
// DENSE_RANK are its row number too).
func overAggCall(c *overCall, w *overWindow) (*parser.FuncCall, error) {
	f := c.call
	switch {
	case rankFuncs[f.Name] && f.Name != "ROW_NUMBER" && w.rowtime:
		return nil, &Error{Pos: f.Pos, Msg: fmt.Sprintf("%s() OVER a window ordered by event time is not supported yet", f.Name),
			Hint: "use ROW_NUMBER(), or order by a processing-time attribute"}
	case rankFuncs[f.Name]:
		if len(f.Args) > 0 {
			return nil, errAt(f.Pos, "%s takes no arguments", f.Name)
		}
		return &parser.FuncCall{Pos: f.Pos, Name: "COUNT"}, nil
	case f.Name == "LEAD":
		return nil, errAt(f.Pos, "LEAD Function is not supported in stream mode")
	case f.Name == "LAG":
		return f, nil
	case f.Name == "NTILE" || f.Name == "CUME_DIST" || f.Name == "PERCENT_RANK":
		return nil, &Error{Pos: f.Pos, Msg: fmt.Sprintf("%s() OVER is not supported yet", f.Name),
			Hint: "the OVER aggregates Weir computes are COUNT, SUM, MIN, MAX, AVG, FIRST_VALUE, LAST_VALUE, LISTAGG, " +
				"the variance family, LAG, ROW_NUMBER, and RANK and DENSE_RANK on processing time"}
	}
	if _, known := aggKinds[f.Name]; !known {
		return nil, unplannedAggregate(f)
	}
	return f, nil
}

// overWindowOf checks the calls share one window Flink can compute and
// reads it.
func (p *Planner) overWindowOf(in *Rel, calls []*overCall) (*overWindow, error) {
	var w *overWindow
	for _, c := range calls {
		text, frame, err := windowText(c)
		if err != nil {
			return nil, err
		}
		if w != nil && text != w.text {
			return nil, &Error{Pos: c.call.Pos, Msg: "All aggregates must be computed on the same window.",
				Hint: "give every OVER call of the SELECT the same window, e.g. one WINDOW w AS (…) and OVER w"}
		}
		if w == nil {
			if w, err = p.readOverWindow(in, c); err != nil {
				return nil, err
			}
			w.text, w.frame = text, frame
		}
	}
	return w, nil
}

func (p *Planner) readOverWindow(in *Rel, c *overCall) (*overWindow, error) {
	spec := c.spec
	w := &overWindow{spec: spec, preceding: -1, rows: c.call.Name == "ROW_NUMBER", timeField: -1}
	for _, e := range spec.PartitionBy {
		i := identIndex(in, e)
		if i < 0 {
			return nil, errAt(e.Position(), "PARTITION BY %s: partition keys of an OVER window must be columns", parser.Format(e))
		}
		w.keys = append(w.keys, i)
	}
	if len(spec.OrderBy) != 1 {
		return nil, &Error{Pos: spec.Pos, Msg: "The window can only be ordered by a single time column.",
			Hint: "write ORDER BY and one time attribute: the event-time column of a WATERMARK, or a PROCTIME() column"}
	}
	o := spec.OrderBy[0]
	if o.Desc {
		return nil, &Error{Pos: o.Expr.Position(), Msg: "The window can only be ordered in ASCENDING mode.",
			Hint: "drop DESC: an OVER frame holds the rows up to the current one in time"}
	}
	switch i := identIndex(in, o.Expr); {
	case i >= 0 && i == in.RowTime:
		w.rowtime, w.timeField = true, i
	case i >= 0 && in.Cols[i].Type.TimeAttr == "proctime":
	case isProctimeCall(o.Expr):
	default:
		return nil, &Error{Pos: o.Expr.Position(), Msg: "OVER windows' ordering in stream mode must be defined on a time attribute.",
			Hint: fmt.Sprintf("%s is not one: order by the column of the table's WATERMARK FOR clause, or by a column AS PROCTIME()",
				parser.Format(o.Expr))}
	}
	if spec.Frame == nil {
		return w, nil
	}
	return w, readFrame(spec.Frame, w)
}

func isProctimeCall(e parser.Expr) bool {
	f, ok := e.(*parser.FuncCall)
	return ok && f.Name == "PROCTIME" && len(f.Args) == 0 && f.Over == nil
}

// readFrame reads ROWS|RANGE BETWEEN … AND CURRENT ROW.
func readFrame(fr *parser.Frame, w *overWindow) error {
	w.rows = fr.Unit == parser.Rows
	if fr.End.Kind != parser.CurrentRow || (fr.Start.Kind != parser.Preceding && fr.Start.Kind != parser.UnboundedPreceding) {
		return &Error{Pos: fr.Pos, Msg: "OVER RANGE FOLLOWING windows are not supported yet.",
			Hint: "end the frame at CURRENT ROW: ROWS|RANGE BETWEEN … PRECEDING AND CURRENT ROW"}
	}
	if fr.Start.Kind == parser.UnboundedPreceding {
		return nil
	}
	off := fr.Start.Offset
	if w.rows {
		v, ok := rowCount(off)
		if !ok {
			return errAt(off.Position(), "ROWS value must be a non-negative integral constant")
		}
		w.preceding = v
		return nil
	}
	lit, ok := off.(*parser.IntervalLit)
	if !ok {
		return errAt(off.Position(), "Data Type mismatch between ORDER BY and RANGE clause")
	}
	ms, kind, err := expr.IntervalValue(lit)
	if err != nil {
		return err
	}
	if kind == expr.YearMonthInterval || ms < 0 {
		return errAt(off.Position(), "RANGE %s PRECEDING: the offset of a time-ordered window must be a non-negative "+
			"day-time interval (SECOND, MINUTE, HOUR, DAY)", parser.Format(lit))
	}
	w.preceding = ms
	return nil
}

// rowCount reads a ROWS frame's offset: a non-negative integer literal.
func rowCount(e parser.Expr) (int64, bool) {
	n, ok := e.(*parser.NumberLit)
	if !ok {
		return 0, false
	}
	v, err := strconv.ParseInt(n.Text, 10, 64)
	return v, err == nil && v >= 0
}

// overAgg is the OverAggregate node: hash exchange by the partition keys
// (all rows to one subtask without them), then exec.OverAggregate.
func (p *Planner) overAgg(in *Rel, w *overWindow, ap *aggPlan) (*Rel, error) {
	opts := exec.OverAggOptions{PartitionKeys: w.keys, RowTime: w.rowtime, TimeField: w.timeField,
		Rows: w.rows, Preceding: w.preceding, Aggs: ap.calls}
	if _, err := exec.NewOverAggregate(opts); err != nil {
		return nil, err
	}
	cols := append([]expr.Column(nil), in.Cols...)
	var sel []string
	for i, c := range ap.calls {
		name := fmt.Sprintf("w0$o%d", i)
		cols = append(cols, expr.Column{Name: "$" + name, Type: aggResultType(c, in.Cols)})
		sel = append(sel, fmt.Sprintf("%s AS %s", aggText([]exec.AggCall{c}, in.Cols), name))
	}
	order := "PROCTIME()"
	if w.timeField >= 0 {
		order = in.Cols[w.timeField].Name
	} else if i := identIndex(in, w.spec.OrderBy[0].Expr); i >= 0 {
		order = in.Cols[i].Name
	}
	detail := fmt.Sprintf("partitionBy=[%s], orderBy=[%s ASC], window=[%s], select=[%s, %s]",
		keyNames(in, w.keys), order, w.frame, colNames(in.Cols), strings.Join(sel, ", "))
	r := &Rel{Op: "OverAggregate", Detail: detail, Inputs: []*Rel{in}, Cols: cols, RowTime: in.RowTime,
		InsertOnly: true, hashedBy: w.keys}
	key := exec.FieldKeyOf(w.keys...)
	r.build = func(b *builder, ins []*graph.Node) (*graph.Node, error) {
		return b.checkedKeyed("OverAggregate", ins[0], key, opOf(exec.NewOverAggregate, opts))
	}
	return r, nil
}
