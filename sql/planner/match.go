package planner

import (
	"fmt"
	"strings"

	"github.com/weirstream/weir/graph"
	"github.com/weirstream/weir/sql/cep"
	"github.com/weirstream/weir/sql/exec"
	"github.com/weirstream/weir/sql/expr"
	"github.com/weirstream/weir/sql/parser"
	"github.com/weirstream/weir/types"
)

// planMatch plans MATCH_RECOGNIZE: a hash exchange by the PARTITION BY
// columns (every row to one subtask without them), then exec.Match. The
// output is the partition columns and the measures, insert-only.
func (p *Planner) planMatch(m *parser.MatchRecognize) (*Rel, error) {
	in, err := p.planFrom(m.Input)
	if err != nil {
		return nil, err
	}
	if err := checkMatchInput(m, in); err != nil {
		return nil, err
	}
	mc := &matchCompiler{p: p, in: in, vars: map[string]int{}}
	opts := exec.MatchOptions{TimeField: -1}
	if opts.Pattern, err = mc.pattern(m); err != nil {
		return nil, err
	}
	if err = matchOrder(m, in, &opts); err != nil {
		return nil, err
	}
	mc.rowtime = opts.TimeField
	var cols []expr.Column
	for _, e := range m.PartitionBy {
		i := identIndex(in, e)
		if i < 0 {
			return nil, errAt(e.Position(), "PARTITION BY %s: partition keys of MATCH_RECOGNIZE must be columns", parser.Format(e))
		}
		opts.PartitionKeys = append(opts.PartitionKeys, i)
		c := in.Cols[i]
		c.Type.TimeAttr = ""
		cols = append(cols, expr.Column{Qualifier: m.Alias, Name: c.Name, Type: c.Type})
	}
	if opts.Defines, err = mc.defines(m); err != nil {
		return nil, err
	}
	rowtime := -1
	for _, it := range m.Measures {
		me, t, err := mc.compile(it.Expr, false)
		if err != nil {
			return nil, err
		}
		switch {
		case isMatchCall(it.Expr, "MATCH_ROWTIME"):
			rowtime = len(cols)
		case !isMatchCall(it.Expr, "MATCH_PROCTIME"):
			t.TimeAttr = ""
		}
		opts.Measures = append(opts.Measures, me)
		cols = append(cols, expr.Column{Qualifier: m.Alias, Name: it.Alias, Type: t})
	}
	if err := checkAmbiguous(m, cols); err != nil {
		return nil, err
	}
	if _, err := exec.NewMatch(opts); err != nil {
		return nil, err
	}
	if len(m.Columns) > 0 {
		if len(m.Columns) != len(cols) {
			return nil, errAt(m.Pos, "alias %s lists %d column names for %d columns", m.Alias, len(m.Columns), len(cols))
		}
		for i := range cols {
			cols[i].Name = m.Columns[i]
		}
	}
	return matchRel(m, in, opts, cols, rowtime), nil
}

func matchRel(m *parser.MatchRecognize, in *Rel, opts exec.MatchOptions, cols []expr.Column, rowtime int) *Rel {
	detail := fmt.Sprintf("partitionBy=[%s], orderBy=[%s], measures=[%s], rowsPerMatch=[ONE ROW PER MATCH], after=[SKIP %s], pattern=[%s], define=[%s]",
		keyNames(in, opts.PartitionKeys), formatOrder(m.OrderBy), formatMeasures(m.Measures), skipText(m), patternText(m), defineText(m))
	r := &Rel{Op: "Match", Detail: detail, Inputs: []*Rel{in}, Cols: cols, RowTime: rowtime, InsertOnly: true}
	key := exec.FieldKeyOf(opts.PartitionKeys...)
	r.build = func(b *builder, ins []*graph.Node) (*graph.Node, error) {
		return b.checkedKeyed("Match", ins[0], key, opOf(exec.NewMatch, opts))
	}
	return r
}

func skipText(m *parser.MatchRecognize) string {
	switch m.Skip {
	case parser.SkipToNextRow:
		return "TO NEXT ROW"
	case parser.SkipToFirst:
		return "TO FIRST " + m.SkipVar
	case parser.SkipToLast:
		return "TO LAST " + m.SkipVar
	}
	return "PAST LAST ROW"
}

func formatOrder(items []*parser.OrderItem) string {
	var s []string
	for _, o := range items {
		d := ""
		if o.Desc {
			d = " DESC"
		}
		s = append(s, parser.Format(o.Expr)+d)
	}
	return strings.Join(s, ", ")
}

func formatMeasures(items []*parser.SelectItem) string {
	var s []string
	for _, it := range items {
		s = append(s, parser.Format(it.Expr)+" AS "+it.Alias)
	}
	return strings.Join(s, ", ")
}

func patternText(m *parser.MatchRecognize) string {
	var s []string
	for _, t := range m.Pattern {
		s = append(s, t.Var+t.Quantifier)
	}
	return strings.Join(s, " ")
}

func defineText(m *parser.MatchRecognize) string {
	var s []string
	for _, d := range m.Defines {
		s = append(s, d.Var+" AS "+parser.Format(d.Cond))
	}
	return strings.Join(s, ", ")
}

// checkMatchInput refuses what Flink refuses before looking at the
// pattern: ALL ROWS PER MATCH and an updating input.
func checkMatchInput(m *parser.MatchRecognize, in *Rel) error {
	if m.AllRows {
		return &Error{Pos: m.AllRowsPos, Msg: "All rows per match mode is not supported yet.",
			Hint: "use ONE ROW PER MATCH with MEASURES"}
	}
	if !in.InsertOnly {
		return errAt(m.Pos, "Match Recognize doesn't support consuming update changes which is produced by node %s", in.UpdatesFrom)
	}
	return nil
}

// matchOrder reads ORDER BY: a time attribute first, ascending, then
// (on event time) keys that order the rows of one timestamp.
func matchOrder(m *parser.MatchRecognize, in *Rel, opts *exec.MatchOptions) error {
	if len(m.OrderBy) == 0 {
		return &Error{Pos: m.Pos, Msg: "You must specify either rowtime or proctime for order by.",
			Hint: "add ORDER BY and the table's event-time column (its WATERMARK) or a PROCTIME() column"}
	}
	o := m.OrderBy[0]
	i := identIndex(in, o.Expr)
	var attr string
	if i >= 0 {
		attr = in.Cols[i].Type.TimeAttr
	}
	switch {
	case attr == "":
		return &Error{Pos: o.Expr.Position(), Msg: "You must specify either rowtime or proctime for order by as the first one.",
			Hint: fmt.Sprintf("%s is not a time attribute", parser.Format(o.Expr))}
	case o.Desc:
		return errAt(o.Expr.Position(), "Primary sort order of a streaming table must be ascending on time.")
	case len(m.OrderBy) > 1 && attr != "rowtime":
		return &Error{Pos: m.OrderBy[1].Expr.Position(), Msg: "ORDER BY keys after a processing-time attribute in MATCH_RECOGNIZE are not supported yet",
			Hint: "order by the processing-time attribute alone: rows are matched as they arrive"}
	}
	if attr != "rowtime" {
		return nil
	}
	opts.RowTime, opts.TimeField = true, i
	for _, o := range m.OrderBy[1:] {
		k := identIndex(in, o.Expr)
		if k < 0 {
			return errAt(o.Expr.Position(), "ORDER BY %s: the keys of MATCH_RECOGNIZE's ORDER BY must be columns", parser.Format(o.Expr))
		}
		nulls := map[parser.NullsOrder]exec.NullOrder{parser.NullsFirst: exec.NullsFirst, parser.NullsLast: exec.NullsLast}[o.Nulls]
		opts.OrderBy = append(opts.OrderBy, exec.SortKey{Field: k, Desc: o.Desc, Nulls: nulls})
	}
	return nil
}

func checkAmbiguous(m *parser.MatchRecognize, cols []expr.Column) error {
	seen := map[string]bool{}
	var dup []string
	for _, c := range cols {
		if seen[c.Name] {
			dup = append(dup, c.Name)
		}
		seen[c.Name] = true
	}
	if dup != nil {
		return errAt(m.Pos, "Columns ambiguously defined: {%s}", strings.Join(dup, ", "))
	}
	return nil
}

// matchCompiler compiles the PATTERN and the DEFINE and MEASURES
// expressions of one MATCH_RECOGNIZE.
type matchCompiler struct {
	p       *Planner
	in      *Rel
	vars    map[string]int // pattern variable → index
	rowtime int            // input rowtime field, or -1
	slots   []exec.MatchSlot
}

// pattern compiles PATTERN, AFTER MATCH SKIP and WITHIN, refusing the
// quantifier positions Flink refuses.
func (mc *matchCompiler) pattern(m *parser.MatchRecognize) (cep.Pattern, error) {
	var pat cep.Pattern
	empty := true
	for _, t := range m.Pattern {
		if _, dup := mc.vars[t.Var]; dup {
			return pat, &Error{Pos: t.Pos, Msg: fmt.Sprintf("pattern variable %s appears twice in PATTERN; this is not supported yet", t.Var),
				Hint: "give each occurrence its own variable with the same DEFINE"}
		}
		if t.Min == 0 && t.Max == 1 && t.Reluctant {
			return pat, &Error{Pos: t.Pos, Msg: "Reluctant optional variables are not supported yet.", Hint: "write " + t.Var + "? (greedy)"}
		}
		mc.vars[t.Var] = len(mc.vars)
		pat.Elements = append(pat.Elements, cep.Element{Var: mc.vars[t.Var], Min: t.Min, Max: t.Max,
			Greedy: !t.Reluctant && t.Min != t.Max})
		empty = empty && t.Min == 0
	}
	last := m.Pattern[len(m.Pattern)-1]
	switch {
	case empty:
		return pat, errAt(m.PatternPos, "Patterns that can produce empty matches are not supported. There must be at least one non-optional state.")
	case !last.Reluctant && last.Min != last.Max:
		return pat, &Error{Pos: last.Pos, Msg: "Greedy quantifiers are not allowed as the last element of a Pattern yet. " +
			"Finish your pattern with either a simple variable or reluctant quantifier."}
	case last.Min == 0:
		return pat, &Error{Pos: last.Pos, Msg: fmt.Sprintf("a pattern ending with %s%s, which may take no row, is not supported yet", last.Var, last.Quantifier),
			Hint: "end the pattern with a variable that takes at least one row"}
	}
	if err := mc.skip(m, &pat); err != nil {
		return pat, err
	}
	if m.Within != nil {
		ms, kind, err := expr.IntervalValue(m.Within)
		if err != nil {
			return pat, err
		}
		if kind != expr.DayTimeInterval || ms <= 0 {
			return pat, errAt(m.Within.Pos, "WITHIN %s: the interval must be a positive day-time interval", parser.Format(m.Within))
		}
		pat.Within = ms
	}
	return pat, nil
}

func (mc *matchCompiler) skip(m *parser.MatchRecognize, pat *cep.Pattern) error {
	pat.Skip = map[parser.MatchSkip]cep.Skip{parser.SkipPastLastRow: cep.SkipPastLastRow, parser.SkipToNextRow: cep.SkipToNextRow,
		parser.SkipToFirst: cep.SkipToFirst, parser.SkipToLast: cep.SkipToLast}[m.Skip]
	if m.Skip != parser.SkipToFirst && m.Skip != parser.SkipToLast {
		return nil
	}
	v, ok := mc.vars[m.SkipVar]
	if !ok {
		return errAt(m.Pos, "AFTER MATCH SKIP TO %s: %s is not a variable of PATTERN", m.SkipVar, m.SkipVar)
	}
	pat.SkipVar = v
	return nil
}

func (mc *matchCompiler) defines(m *parser.MatchRecognize) ([]*exec.MatchExpr, error) {
	out := make([]*exec.MatchExpr, len(mc.vars))
	for _, d := range m.Defines {
		v, ok := mc.vars[d.Var]
		if !ok {
			return nil, errAt(d.Pos, "DEFINE %s: %s is not a variable of PATTERN", d.Var, d.Var)
		}
		me, t, err := mc.compile(d.Cond, true)
		if err != nil {
			return nil, err
		}
		if t.Kind != types.Boolean {
			return nil, errAt(d.Cond.Position(), "DEFINE %s: the condition must be BOOLEAN, not %s", d.Var, t)
		}
		out[v] = me
	}
	return out, nil
}

// compile compiles a DEFINE condition or a measure: every navigation (a
// variable's column, FIRST, LAST, an aggregate, MATCH_ROWTIME()) becomes
// a slot the operator fills from the rows of the match.
func (mc *matchCompiler) compile(e parser.Expr, define bool) (*exec.MatchExpr, types.Type, error) {
	mc.slots = nil
	sc := mc.p.scope(nil)
	var cols []expr.Column
	sc.Resolve = func(x parser.Expr) (*expr.Compiled, error) {
		if f, ok := x.(*parser.FuncCall); ok && f.Name == "MATCH_PROCTIME" {
			return mc.matchProctime(f, define)
		}
		s, t, ok, err := mc.navigation(x, define)
		if err != nil || !ok {
			return nil, err
		}
		mc.slots = append(mc.slots, s)
		cols = append(cols, expr.Column{Type: t})
		return fieldRef(len(mc.slots)-1, t), nil
	}
	out, err := expr.Compile(e, sc)
	if err != nil {
		return nil, types.Type{}, err
	}
	return &exec.MatchExpr{Eval: out.Eval, Slots: mc.slots}, out.Type, nil
}

// navigation reads x as a navigation over the rows of the match, or
// reports !ok to let the expression compiler take it.
func (mc *matchCompiler) navigation(x parser.Expr, define bool) (exec.MatchSlot, types.Type, bool, error) {
	switch x := x.(type) {
	case *parser.Ident:
		v, col, ok, err := mc.column(x)
		if err != nil || !ok {
			return exec.MatchSlot{}, types.Type{}, false, err
		}
		t := mc.in.Cols[col].Type
		t.Nullable = true
		return exec.MatchSlot{Kind: exec.SlotLast, Var: v, Arg: fieldEval(col)}, t, true, nil
	case *parser.FuncCall:
		return mc.call(x, define)
	}
	return exec.MatchSlot{}, types.Type{}, false, nil
}

func (mc *matchCompiler) call(f *parser.FuncCall, define bool) (exec.MatchSlot, types.Type, bool, error) {
	switch f.Name {
	case "FIRST", "LAST":
		return mc.offsetCall(f)
	case "PREV", "NEXT":
		return exec.MatchSlot{}, types.Type{}, false, &Error{Pos: f.Pos,
			Msg:  fmt.Sprintf("physical offsets (%s) in MATCH_RECOGNIZE are not supported (as in Flink)", f.Name),
			Hint: "use the logical offsets LAST(var.col, n) and FIRST(var.col, n)"}
	case "CLASSIFIER", "MATCH_NUMBER", "RUNNING", "FINAL":
		return exec.MatchSlot{}, types.Type{}, false, errAt(f.Pos, "%s in MATCH_RECOGNIZE is not supported yet", f.Name)
	case "MATCH_ROWTIME":
		if define || mc.rowtime < 0 || len(f.Args) > 1 || (len(f.Args) == 1 && identIndex(mc.in, f.Args[0]) != mc.rowtime) {
			return exec.MatchSlot{}, types.Type{}, false, &Error{Pos: f.Pos, Msg: "MATCH_ROWTIME() is allowed only in MEASURES of a MATCH_RECOGNIZE ordered by event time",
				Hint: "order by the table's rowtime column; MATCH_ROWTIME takes no argument or that column"}
		}
		return exec.MatchSlot{Kind: exec.SlotMatchRowtime, Var: exec.AllVars}, mc.in.Cols[mc.rowtime].Type, true, nil
	}
	if _, ok := aggKinds[f.Name]; ok && f.Over == nil {
		return mc.aggCall(f)
	}
	return exec.MatchSlot{}, types.Type{}, false, nil
}

// offsetCall is FIRST(v.expr[, n]) or LAST(v.expr[, n]).
func (mc *matchCompiler) offsetCall(f *parser.FuncCall) (exec.MatchSlot, types.Type, bool, error) {
	if len(f.Args) < 1 || len(f.Args) > 2 {
		return exec.MatchSlot{}, types.Type{}, false, errAt(f.Pos, "%s takes a column of a pattern variable and an optional offset", f.Name)
	}
	s := exec.MatchSlot{Kind: exec.SlotLast}
	if f.Name == "FIRST" {
		s.Kind = exec.SlotFirst
	}
	if len(f.Args) == 2 {
		n, ok := rowCount(f.Args[1])
		if !ok {
			return s, types.Type{}, false, errAt(f.Args[1].Position(), "the offset of %s must be a non-negative integer literal", f.Name)
		}
		s.Offset = int(n)
	}
	c, v, err := mc.rowExpr(f.Args[0], "The "+f.Name+" function")
	if err != nil {
		return s, types.Type{}, false, err
	}
	s.Var, s.Arg = v, c.Eval
	t := c.Type
	t.Nullable = true
	return s, t, true, nil
}

func (mc *matchCompiler) aggCall(f *parser.FuncCall) (exec.MatchSlot, types.Type, bool, error) {
	kind := aggKinds[f.Name]
	switch {
	case f.Distinct:
		return exec.MatchSlot{}, types.Type{}, false, errAt(f.Pos, "DISTINCT aggregations in MATCH_RECOGNIZE are not supported (as in Flink)")
	case f.Filter != nil:
		return exec.MatchSlot{}, types.Type{}, false, errAt(f.Pos, "FILTER on an aggregate in MATCH_RECOGNIZE is not supported yet")
	case kind != exec.Count && kind != exec.Sum && kind != exec.Min && kind != exec.Max && kind != exec.Avg:
		return exec.MatchSlot{}, types.Type{}, false, errAt(f.Pos, "aggregate function %s in MATCH_RECOGNIZE is not supported yet; COUNT, SUM, AVG, MIN and MAX are", f.Name)
	}
	s := exec.MatchSlot{Kind: exec.SlotAgg, Var: exec.AllVars}
	if f.Name == "COUNT" && (len(f.Args) == 0 || isStar(f.Args[0])) {
		s.Agg = exec.AggCall{Kind: exec.CountStar}
		return s, types.Type{Kind: types.BigInt}, true, nil
	}
	if len(f.Args) != 1 {
		return s, types.Type{}, false, errAt(f.Pos, "%s takes one argument, got %d", f.Name, len(f.Args))
	}
	c, v, err := mc.rowExpr(f.Args[0], "Aggregation")
	if err != nil {
		return s, types.Type{}, false, err
	}
	at := c.Type
	s.Var, s.Arg, s.Agg = v, c.Eval, exec.AggCall{Kind: kind, Arg: 0, ArgType: &at}
	return s, aggResultType(s.Agg, []expr.Column{{Type: at}}), true, nil
}

// rowExpr compiles the argument of FIRST, LAST or an aggregate over one
// input row, and returns the one variable it reads (AllVars for none).
func (mc *matchCompiler) rowExpr(e parser.Expr, what string) (*expr.Compiled, int, error) {
	v, seen := exec.AllVars, false
	sc := mc.p.scope(nil)
	sc.Resolve = func(x parser.Expr) (*expr.Compiled, error) {
		id, ok := x.(*parser.Ident)
		if !ok {
			return nil, nil
		}
		vi, col, ok, err := mc.column(id)
		if err != nil || !ok {
			return nil, err
		}
		if seen && vi != v {
			return nil, errAt(e.Position(), "%s must be applied to a single pattern variable: %s", what, parser.Format(e))
		}
		v, seen = vi, true
		return fieldRef(col, mc.in.Cols[col].Type), nil
	}
	c, err := expr.Compile(e, sc)
	return c, v, err
}

// column resolves var.col or col (of every variable) to an input column.
func (mc *matchCompiler) column(id *parser.Ident) (v, col int, ok bool, err error) {
	switch len(id.Parts) {
	case 1:
		col = mc.in.colIndex(id.Parts[0])
		return exec.AllVars, col, col >= 0, nil
	case 2:
		vi, isVar := mc.vars[id.Parts[0]]
		if !isVar {
			return 0, 0, false, nil
		}
		col = mc.in.colIndex(id.Parts[1])
		if col < 0 {
			return 0, 0, false, errAt(id.Pos, "column %s of pattern variable %s not found in the input of MATCH_RECOGNIZE", id.Parts[1], id.Parts[0])
		}
		return vi, col, true, nil
	}
	return 0, 0, false, nil
}

func fieldEval(i int) func([]any) (any, error) {
	return func(row []any) (any, error) { return row[i], nil }
}

func isMatchCall(e parser.Expr, name string) bool {
	f, ok := e.(*parser.FuncCall)
	return ok && f.Name == name
}

// matchProctime is MATCH_PROCTIME(): the processing time a match is
// emitted at, a processing-time attribute (PROCTIME() read then).
func (mc *matchCompiler) matchProctime(f *parser.FuncCall, define bool) (*expr.Compiled, error) {
	if define || len(f.Args) > 0 {
		return nil, &Error{Pos: f.Pos, Msg: "MATCH_PROCTIME() takes no argument and is allowed only in MEASURES",
			Hint: "compare with PROCTIME() or the input's processing-time column in DEFINE"}
	}
	return expr.Compile(&parser.FuncCall{Pos: f.Pos, Name: "PROCTIME"}, mc.p.scope(nil))
}
