package planner

import (
	"fmt"
	"slices"
	"strings"

	"github.com/weirstream/weir/graph"
	"github.com/weirstream/weir/sql/exec"
	"github.com/weirstream/weir/sql/expr"
	"github.com/weirstream/weir/sql/parser"
	"github.com/weirstream/weir/types"
)

var aggKinds = map[string]exec.AggKind{"COUNT": exec.Count, "SUM": exec.Sum, "MIN": exec.Min, "MAX": exec.Max,
	"AVG": exec.Avg, "FIRST_VALUE": exec.FirstValue, "LAST_VALUE": exec.LastValue, "LISTAGG": exec.ListAgg,
	"COLLECT": exec.Collect,
	"VAR_POP": exec.VarPop, "VAR_SAMP": exec.VarSamp, "VARIANCE": exec.VarSamp,
	"STDDEV_POP": exec.StddevPop, "STDDEV_SAMP": exec.StddevSamp, "STDDEV": exec.StddevSamp}

// isAggCall reports whether e is a call of an aggregate function, planned
// or not: one Weir does not plan fails in aggCall, naming it and its place.
func isAggCall(e parser.Expr) (*parser.FuncCall, bool) {
	f, ok := e.(*parser.FuncCall)
	if !ok || f.Over != nil {
		return nil, false
	}
	return f, expr.IsAggregate(f.Name)
}

// collectAggregates lists the distinct aggregate calls of the SELECT list
// and HAVING, by their canonical text.
func collectAggregates(s *parser.Select) []*parser.FuncCall {
	var out []*parser.FuncCall
	seen := map[string]bool{}
	visit := func(e parser.Expr) bool {
		if f, ok := isAggCall(e); ok {
			if k := parser.Format(f); !seen[k] {
				seen[k] = true
				out = append(out, f)
			}
			return false
		}
		return true
	}
	for _, it := range s.Items {
		walk(it.Expr, visit)
	}
	walk(s.Having, visit)
	return out
}

// tvfInputAsNamed is the input of window TVF tvf, whose Rel is in, with
// its columns as the query names them: TABLE(TUMBLE(TABLE t, …)) AS a
// names them a.x, so GROUP BY a.x, a.window_start, a.window_end resolves
// (the input itself still names them t.x).
func tvfInputAsNamed(in *Rel, tvf *tvfInfo) *Rel {
	n := len(tvf.input.Cols)
	if n == 0 || len(in.Cols) < n || in.Cols[0].Qualifier == tvf.input.Cols[0].Qualifier {
		return tvf.input
	}
	r := *tvf.input
	r.Cols = in.Cols[:n:n]
	return &r
}

// aggPlan is the shape of an aggregation: which input columns are keys and
// arguments (after an optional pre-projection), and its output columns.
type aggPlan struct {
	pre      []*expr.Compiled // pre-projection (nil: none needed)
	preCols  []expr.Column
	keys     []int
	keyText  []string // canonical text of each key expression
	calls    []exec.AggCall
	callText []string
}

func (p *Planner) planAggregate(s *parser.Select, in *Rel, aggs []*parser.FuncCall) (*Rel, error) {
	tvf, groupBy, err := splitWindowKeys(s.Pos, in, s.GroupBy)
	if err != nil {
		return nil, err
	}
	input := in
	if tvf != nil {
		input = tvfInputAsNamed(in, tvf)
	}
	sess, groupBy, err := sessionKey(input, groupBy)
	if err != nil {
		return nil, err
	}
	legacy := ""
	if tvf == nil {
		var win *tvfInfo
		if win, groupBy, err = p.legacyWindowKey(input, groupBy); err != nil {
			return nil, err
		}
		if win != nil {
			tvf, legacy = win, strings.TrimSuffix(win.call[:strings.IndexByte(win.call, '(')], " ")
		}
	}
	if tvf == nil && sess == nil {
		if win, rest := attachedWindow(in, groupBy); win != nil && !hasGroupingSets(rest) {
			tvf, groupBy = win, rest
		}
	}
	sessionTVF := tvf != nil && tvf.session
	if sessionTVF {
		if sess, err = sessionTVFKey(tvf, groupBy); err != nil {
			return nil, err
		}
		tvf = nil
	}
	grouping := planGroupingSets(groupBy)
	groupBy = grouping.keys
	saved := p.aggInput
	p.aggInput = input.Cols
	defer func() { p.aggInput = saved }()
	ap, err := p.shapeAggregation(input, groupBy, aggs)
	if err != nil {
		return nil, err
	}
	if len(ap.calls) == 0 && (tvf != nil || sess != nil) {
		// A window or session aggregation without aggregates: its operators
		// need a call; a hidden COUNT(*) is never read. A GROUP BY without
		// aggregates stays without calls (as Flink plans it, and as
		// DISTINCT): its row is the keys alone, so a duplicate leaves it
		// unchanged and nothing is emitted (unless a state TTL is set, see
		// groupAgg), where a hidden count would change and emit an
		// identical -U/+U pair.
		ap.calls, ap.callText = []exec.AggCall{{Kind: exec.CountStar}}, []string{""}
	}
	aggIn := input
	if ap.pre != nil {
		input = p.calcOver(input, ap.pre, ap.preCols)
		input.RowTime = -1
	}
	if grouping.expanded {
		input = p.expand(input, ap, grouping)
	}
	var out *Rel
	switch {
	case tvf != nil:
		out, err = p.windowAgg(input, tvf, ap)
		if base := unpruned(tvf.input); err == nil && base.reuseKey != "" {
			out.reuseKey = fmt.Sprintf("window:%s|%s|%s|%s", base.reuseKey, tvf.call,
				strings.Join(ap.keyText, ","), strings.Join(ap.callText, ","))
		}
	case sess != nil:
		out, err = p.sessionAgg(input, sess, ap)
		if err == nil && sessionTVF {
			sessionTVFCols(out, len(ap.keys), p.windowZoneOf(input.Cols[sess.timeField]))
		}
	default:
		out, err = p.groupAgg(input, ap.keys, ap.calls, p.aggOutputCols(input, ap, nil))
	}
	if err != nil {
		return nil, err
	}
	resolve := p.aggResolver(out, ap, tvf != nil || sess != nil)
	if sess != nil && !sessionTVF {
		resolve = sessionResolver(len(ap.keys), out, resolve)
	}
	if legacy != "" {
		resolve = legacyWindowResolver(legacy, len(ap.keys), out, resolve)
	}
	resolve = grouping.resolver(aggIn, len(ap.keys), resolve)
	if s.Having != nil {
		if out, err = p.filter(out, s.Having, resolve); err != nil {
			return nil, err
		}
	}
	return p.project(out, s.Items, resolve)
}

// shapeAggregation finds the key and argument columns, adding a
// pre-projection when some are expressions rather than columns.
func (p *Planner) shapeAggregation(in *Rel, groupBy []parser.Expr, aggs []*parser.FuncCall) (*aggPlan, error) {
	ap := &aggPlan{}
	pre := make([]*expr.Compiled, len(in.Cols))
	preCols := append([]expr.Column(nil), in.Cols...)
	for i, c := range in.Cols {
		pre[i] = fieldRef(i, c.Type)
	}
	needPre := false
	computed := map[string]int{} // an expression's text → its pre-projected column
	column := func(e parser.Expr) (int, error) {
		if i := identIndex(in, e); i >= 0 {
			return i, nil
		}
		text := parser.Format(e)
		if i, ok := computed[text]; ok {
			return i, nil
		}
		c, err := expr.Compile(e, p.scope(in.Cols))
		if err != nil {
			return 0, err
		}
		needPre = true
		pre = append(pre, c)
		preCols = append(preCols, expr.Column{Name: fmt.Sprintf("$e%d", len(preCols)), Type: c.Type})
		computed[text] = len(pre) - 1
		return len(pre) - 1, nil
	}
	for _, g := range groupBy {
		i, err := column(g)
		if err != nil {
			return nil, err
		}
		ap.keys = append(ap.keys, i)
		ap.keyText = append(ap.keyText, parser.Format(g))
	}
	for _, f := range aggs {
		call, err := p.aggCall(f, column, preCols)
		if err != nil {
			return nil, err
		}
		ap.calls = append(ap.calls, call)
		ap.callText = append(ap.callText, parser.Format(f))
	}
	if needPre {
		ap.pre, ap.preCols = pre, preCols
	}
	for i := range ap.calls {
		if !ap.calls[i].Distinct && ap.calls[i].Kind != exec.CountStar {
			t := colType(preCols, ap.calls[i].Arg)
			ap.calls[i].ArgType = &t
		}
	}
	return ap, nil
}

func colType(cols []expr.Column, i int) types.Type { return cols[i].Type }

func (p *Planner) aggCall(f *parser.FuncCall, column func(parser.Expr) (int, error), _ []expr.Column) (exec.AggCall, error) {
	call, err := p.aggCallNoFilter(f, column)
	if err != nil || f.Filter == nil {
		return call, err
	}
	if call.FilterField, err = column(f.Filter); err != nil {
		return exec.AggCall{}, err
	}
	call.HasFilter = true
	return call, nil
}

func (p *Planner) aggCallNoFilter(f *parser.FuncCall, column func(parser.Expr) (int, error)) (exec.AggCall, error) {
	if f.Name == "LAG" { // only OVER calls reach here (collectAggregates skips it)
		return p.lagCall(f, column)
	}
	kind, known := aggKinds[f.Name]
	if !known {
		return exec.AggCall{}, unplannedAggregate(f)
	}
	if f.Name == "COUNT" && (len(f.Args) == 0 || isStar(f.Args[0])) {
		return exec.AggCall{Kind: exec.CountStar}, nil
	}
	if kind == exec.ListAgg {
		return p.listAggCall(f, column)
	}
	if len(f.Args) != 1 {
		return exec.AggCall{}, errAt(f.Pos, "%s takes one argument, got %d", f.Name, len(f.Args))
	}
	arg, err := column(f.Args[0])
	if err != nil {
		return exec.AggCall{}, err
	}
	if kind == exec.Sum || kind == exec.Avg || (kind >= exec.VarPop && kind <= exec.StddevSamp) {
		if t, ok := p.argType(f.Args[0]); ok && !t.IsNumeric() && t.Kind != types.Null {
			return exec.AggCall{}, &Error{Pos: f.Pos, Msg: fmt.Sprintf("%s takes a number, got %s", f.Name, t.Base()),
				Hint: "CAST the argument to a numeric type"}
		}
	}
	return exec.AggCall{Kind: kind, Arg: arg, Distinct: f.Distinct}, nil
}

// argType infers an aggregate argument's type over the aggregation's input
// (set by shapeAggregation while it runs).
func (p *Planner) argType(e parser.Expr) (types.Type, bool) {
	if p.aggInput == nil {
		return types.Type{}, false
	}
	t, err := expr.InferType(e, p.scope(p.aggInput))
	return t, err == nil
}

func isStar(e parser.Expr) bool {
	_, ok := e.(*parser.Star)
	return ok
}

// aggOutputCols names the output of an aggregation: group keys keep the
// names (and qualifiers) of the columns they read; aggregates get $a<i>.
func (p *Planner) aggOutputCols(in *Rel, ap *aggPlan, windowCols []expr.Column) []expr.Column {
	var cols []expr.Column
	for _, k := range ap.keys {
		c := in.Cols[k]
		c.Type.TimeAttr = ""
		cols = append(cols, c)
	}
	cols = append(cols, windowCols...)
	for i, c := range ap.calls {
		cols = append(cols, expr.Column{Name: fmt.Sprintf("$a%d", i), Type: aggResultType(c, in.Cols)})
	}
	return cols
}

func aggResultType(c exec.AggCall, cols []expr.Column) types.Type {
	if c.Kind == exec.CountStar || c.Kind == exec.Count {
		return types.Type{Kind: types.BigInt}
	}
	t := cols[c.Arg].Type
	t.TimeAttr, t.Nullable = "", true
	switch c.Kind {
	case exec.ListAgg:
		return types.Type{Kind: types.String, Nullable: true}
	case exec.Collect:
		return types.Type{Kind: types.Multiset, Elem: &t}
	case exec.Sum:
		switch {
		case t.IsInteger():
			return types.Type{Kind: types.BigInt, Nullable: true}
		case t.Kind == types.Decimal:
			return types.Type{Kind: types.Decimal, Precision: 38, Scale: t.Scale, Nullable: true}
		}
	case exec.Avg:
		if t.Kind == types.Decimal {
			return types.Type{Kind: types.Decimal, Precision: 38, Scale: max(6, t.Scale), Nullable: true}
		}
		if t.IsInteger() {
			return types.Type{Kind: types.BigInt, Nullable: true}
		}
	}
	return t
}

// aggResolver lets the SELECT list and HAVING read aggregate results and
// grouping expressions from the aggregation's output row.
func (p *Planner) aggResolver(out *Rel, ap *aggPlan, window bool) func(parser.Expr) (*expr.Compiled, error) {
	nk := len(ap.keys)
	aggBase := nk
	if window {
		aggBase += 3
	}
	return func(e parser.Expr) (*expr.Compiled, error) {
		text := parser.Format(e)
		for i, t := range ap.callText {
			if t == text {
				return fieldRef(aggBase+i, out.Cols[aggBase+i].Type), nil
			}
		}
		if id, isIdent := e.(*parser.Ident); isIdent {
			if identIndex(out, e) < 0 && p.aggInput != nil && identIndex(&Rel{Cols: p.aggInput}, e) >= 0 {
				name := id.Parts[len(id.Parts)-1]
				return nil, &Error{Pos: id.Pos, Msg: fmt.Sprintf("column `%s` is neither grouped nor aggregated", name),
					Hint: fmt.Sprintf("add it to GROUP BY or aggregate it, e.g. MAX(%s)", name)}
			}
			return nil, nil // resolved by name
		}
		for i, t := range ap.keyText {
			if t == text {
				return fieldRef(i, out.Cols[i].Type), nil
			}
		}
		if f, ok := isAggCall(e); ok {
			return nil, errAt(f.Pos, "aggregate %s is not allowed here", text)
		}
		return nil, nil
	}
}

// groupAgg is a GROUP BY aggregation: hash exchange by the keys, then
// exec.GroupAggregate — or, when twoPhase allows, a LocalGroupAggregate
// before the exchange and a GlobalGroupAggregate after it. Its output
// updates (retract mode).
//
// With a state TTL a group whose result did not change still emits -U/+U
// of the same row, as Flink's GroupAggFunction (and its mini-batch and
// global variants) skip an unchanged result only when stateRetentionTime
// <= 0: the update refreshes the TTL of the row in downstream state (a
// join's, a sink's upsert materializer), which would otherwise expire
// while the group is still alive.
func (p *Planner) groupAgg(in *Rel, keys []int, calls []exec.AggCall, cols []expr.Column) (*Rel, error) {
	opts := exec.GroupAggOptions{GroupKeys: keys, Aggs: calls, InputInsertOnly: in.InsertOnly, StateTTL: p.Config.StateTTL,
		EmitUnchanged: p.Config.StateTTL > 0, MiniBatchSize: p.Config.MiniBatchSize, MiniBatchLatency: p.Config.MiniBatchLatency,
		Types: colTypes(in.Cols)}
	format := "binary rows"
	if _, ok := opts.AccTypes(); !ok {
		opts.Types, format = nil, ""
	}
	if slices.ContainsFunc(calls, func(c exec.AggCall) bool { return c.Distinct }) {
		f := sharedDistinctFormat
		if in.InsertOnly {
			f = distinctBitsFormat
		}
		format = strings.TrimPrefix(format+", "+f, ", ")
	}
	if _, err := exec.NewGroupAggregate(opts); err != nil {
		return nil, err
	}
	var names []string
	for _, k := range keys {
		names = append(names, in.Cols[k].Name)
	}
	groupBy := "groupBy=[" + strings.Join(names, ", ") + "]"
	selected := aggText(calls, in.Cols)
	if len(calls) == 0 {
		selected = strings.Join(names, ", ") // Flink's GroupAggregate(groupBy=[k], select=[k])
	}
	detail := fmt.Sprintf("%s, select=[%s]", groupBy, selected)
	if p.twoPhase(opts) {
		return p.twoPhaseAgg(in, opts, groupBy, detail, cols, format), nil
	}
	r := &Rel{Op: "GroupAggregate", Detail: detail, Inputs: []*Rel{in}, Cols: cols, RowTime: -1,
		upsertKey: upTo(len(keys)), hashedBy: upTo(len(keys)), stateFormat: format}
	r.updating("GroupAggregate(" + groupBy + ")")
	r.NoDeletes = in.InsertOnly
	r.state = aggState(in, keys, calls, cols)
	key := exec.FieldKeyOf(keys...)
	r.build = func(b *builder, ins []*graph.Node) (*graph.Node, error) {
		return b.checkedKeyed("GroupAggregate", ins[0], key, opOf(exec.NewGroupAggregate, opts))
	}
	return r, nil
}

func aggText(calls []exec.AggCall, cols []expr.Column) string {
	var parts []string
	for _, c := range calls {
		if c.Kind == exec.CountStar && !c.HasFilter {
			parts = append(parts, "COUNT(*)")
			continue
		}
		if c.Kind == exec.CountStar {
			parts = append(parts, "COUNT(*) FILTER "+cols[c.FilterField].Name)
			continue
		}
		d := ""
		if c.Distinct {
			d = "DISTINCT "
		}
		f := ""
		if c.HasFilter {
			f = " FILTER " + cols[c.FilterField].Name
		}
		parts = append(parts, fmt.Sprintf("%s(%s%s)%s", c.Kind, d, cols[c.Arg].Name, f))
	}
	return strings.Join(parts, ", ")
}
