package planner

import (
	"fmt"
	"sync"
	"time"

	"github.com/weirstream/weir/graph"
	"github.com/weirstream/weir/sql/exec"
	"github.com/weirstream/weir/sql/expr"
	"github.com/weirstream/weir/sql/parser"
)

func (p *Planner) planFrom(t parser.TableExpr) (*Rel, error) {
	switch t := t.(type) {
	case *parser.TableName:
		return p.planTableName(t)
	case *parser.DerivedTable:
		r, err := p.Plan(t.Query)
		if err != nil {
			return nil, err
		}
		return renamed(r, t.Alias, t.Columns)
	case *parser.TableFunc:
		return p.planWindowTVF(t)
	case *parser.Join:
		return p.planJoin(t)
	case *parser.Unnest:
		return p.planUnnestAlone(t)
	case *parser.MatchRecognize:
		return p.planMatch(t)
	}
	return nil, errAt(t.Position(), "this kind of FROM item is not supported")
}

var joinTypes = map[parser.JoinKind]exec.JoinType{parser.InnerJoin: exec.InnerJoin, parser.LeftJoin: exec.LeftJoin,
	parser.RightJoin: exec.RightJoin, parser.FullJoin: exec.FullJoin, parser.CommaJoin: exec.InnerJoin, parser.CrossJoin: exec.InnerJoin}

// joinParts is the ON clause split into equi keys, time bounds and the rest.
type joinParts struct {
	lkeys, rkeys []int
	nullSafe     []bool         // per key pair: IS NOT DISTINCT FROM
	lext, rext   []parser.Expr  // computed keys appended to each side (joinkeys.go)
	lower, upper *time.Duration // bounds of right.rowtime - left.rowtime
	boundsAt     parser.Pos     // the first conjunct that bounds the times
	rest         []parser.Expr
}

func (p *Planner) planJoin(j *parser.Join) (*Rel, error) {
	r, rest, err := p.planJoinWhere(j, nil)
	if err != nil || len(rest) == 0 {
		return r, err
	}
	return p.filter(r, andAll(rest), nil)
}

// planSourceWhere plans FROM with its WHERE. Over an inner join the WHERE's
// conjuncts are placed as Flink's optimizer places them: one that reads
// only one side filters that side before the join (less join state), one
// that reads both joins with the ON clause (so `FROM a, b WHERE a.id =
// b.id` is an equi-join); the rest filter the join's output.
func (p *Planner) planSourceWhere(from parser.TableExpr, where parser.Expr) (*Rel, error) {
	j, ok := from.(*parser.Join)
	if !ok {
		in, err := p.planFrom(from)
		if err != nil || where == nil {
			return in, err
		}
		return p.filter(in, where, nil)
	}
	var conds []parser.Expr
	if where != nil {
		conds = conjuncts(where)
	}
	r, rest, err := p.planJoinWhere(j, conds)
	if err != nil || len(rest) == 0 {
		return r, err
	}
	return p.filter(r, andAll(rest), nil)
}

// planJoinWhere plans j with where, the conjuncts of a WHERE right above
// it, and returns those it could not place in or below the join.
func (p *Planner) planJoinWhere(j *parser.Join, where []parser.Expr) (*Rel, []parser.Expr, error) {
	l, err := p.planFrom(j.Left)
	if err != nil {
		return nil, nil, err
	}
	if tn, ok := j.Right.(*parser.TableName); ok && tn.ForSystemTime != nil {
		if i := identIndex(l, tn.ForSystemTime); i >= 0 && l.Cols[i].Type.TimeAttr == "rowtime" {
			return p.temporalJoin(j, l, tn, where)
		}
		return p.lookupJoin(j, l, tn, where)
	}
	if u, ok := j.Right.(*parser.Unnest); ok {
		return p.unnestJoin(j, l, u, where)
	}
	if u, ok := p.tableFunction(j.Right); ok {
		return p.unnestJoin(j, l, u, where)
	}
	r, err := p.planFrom(j.Right)
	if err != nil {
		return nil, nil, err
	}
	var on []parser.Expr
	if j.On != nil {
		on = conjuncts(j.On)
	}
	if len(j.Using) > 0 {
		if on, err = usingConds(j, l, r); err != nil {
			return nil, nil, err
		}
	}
	inner := j.Kind == parser.InnerJoin || j.Kind == parser.CommaJoin || j.Kind == parser.CrossJoin
	cond, rest := on, where
	if inner {
		var lf, rf []parser.Expr
		cond, rest = nil, nil
		for i, c := range append(append([]parser.Expr(nil), on...), where...) {
			switch sideOf(l, r, c) {
			case sideLeft:
				lf = append(lf, c)
			case sideRight:
				rf = append(rf, c)
			case sideLeft | sideRight:
				cond = append(cond, c)
			default:
				if i < len(on) {
					cond = append(cond, c) // let the join report what it cannot read
				} else {
					rest = append(rest, c)
				}
			}
		}
		if l, err = p.filterAll(l, lf); err != nil {
			return nil, nil, err
		}
		if r, err = p.filterAll(r, rf); err != nil {
			return nil, nil, err
		}
	}
	if len(cond) == 0 {
		return nil, nil, &Error{Pos: j.Pos, Msg: fmt.Sprintf("%s without a join condition is not supported on streams", j.Kind),
			Hint: "use JOIN … ON left.key = right.key"}
	}
	l, r = p.pruned(l), p.pruned(r)
	out, err := p.joinRels(j, l, r, andAll(cond))
	if err != nil || len(j.Using) == 0 {
		return out, rest, err
	}
	return shadowUsing(j, out, l), rest, nil
}

// usingConds turns JOIN … USING (c, …) into l.c = r.c, …: each name must
// be one column of each side, reachable by its table's name or alias.
// Unqualified, a USING column then reads the left's copy (shadowUsing),
// which is the joined value for INNER and LEFT joins; RIGHT and FULL
// joins would need COALESCE(l.c, r.c) and are refused.
func usingConds(j *parser.Join, l, r *Rel) ([]parser.Expr, error) {
	if j.Kind != parser.InnerJoin && j.Kind != parser.LeftJoin {
		return nil, &Error{Pos: j.Pos, Msg: fmt.Sprintf("%s … USING is not supported yet", j.Kind),
			Hint: "write the condition with ON l.c = r.c and COALESCE(l.c, r.c) where the column is selected"}
	}
	var out []parser.Expr
	for _, name := range j.Using {
		lc, err := usingColumn(j, l, name, "left")
		if err != nil {
			return nil, err
		}
		rc, err := usingColumn(j, r, name, "right")
		if err != nil {
			return nil, err
		}
		out = append(out, &parser.Binary{Pos: j.Pos, Op: parser.Eq,
			L: &parser.Ident{Pos: j.Pos, Parts: []string{lc.Qualifier, name}},
			R: &parser.Ident{Pos: j.Pos, Parts: []string{rc.Qualifier, name}}})
	}
	return out, nil
}

func usingColumn(j *parser.Join, in *Rel, name, side string) (expr.Column, error) {
	var found []expr.Column
	for _, c := range in.Cols {
		if c.Name == name && !c.Shadowed {
			found = append(found, c)
		}
	}
	switch {
	case len(found) == 0:
		return expr.Column{}, errAt(j.Pos, "USING (%s): the %s side of the join has no column %s", name, side, name)
	case len(found) > 1 || found[0].Qualifier == "":
		return expr.Column{}, &Error{Pos: j.Pos, Msg: fmt.Sprintf("USING (%s): column %s of the %s side is ambiguous or has no table name", name, name, side),
			Hint: "give the joined tables aliases, or write the condition with ON"}
	}
	return found[0], nil
}

// shadowUsing hides the right side's USING columns from unqualified
// references.
// (out is the join's own new Rel; its Cols slice is copied, not shared.)
func shadowUsing(j *parser.Join, out, l *Rel) *Rel {
	out.Cols = append([]expr.Column(nil), out.Cols...)
	for _, name := range j.Using {
		for i := len(l.Cols); i < len(out.Cols); i++ {
			if out.Cols[i].Name == name {
				out.Cols[i].Shadowed = true
			}
		}
	}
	return out
}

// joinRels plans l JOIN r ON on: an interval join when on bounds both
// rowtimes, else a regular join. Without any equality between the sides
// the join has no key, and one subtask joins every row (as Flink plans a
// non-equi join, with a singleton exchange).
func (p *Planner) joinRels(j *parser.Join, l, r *Rel, on parser.Expr) (*Rel, error) {
	parts := p.splitJoin(l, r, on)
	lx, err := p.withKeys(l, parts.lext, "$lk")
	if err != nil {
		return nil, err
	}
	rx, err := p.withKeys(r, parts.rext, "$rk")
	if err != nil {
		return nil, err
	}
	cols := append(append([]expr.Column(nil), lx.Cols...), rx.Cols...)
	cond, err := p.joinCondition(parts.rest, cols, len(lx.Cols))
	if err != nil {
		return nil, err
	}
	var out *Rel
	wk, window := windowJoinKeys(l, r, parts.lkeys, parts.rkeys, parts.nullSafe)
	window = window && parts.lower == nil && parts.upper == nil
	switch {
	case window:
		out, err = p.windowJoin(j, on, lx, rx, wk, cols, cond)
	case parts.lower != nil && parts.upper != nil && l.InsertOnly && r.InsertOnly && l.RowTime >= 0 && r.RowTime >= 0:
		out, err = p.intervalJoin(j, on, lx, rx, parts, cols, cond)
	default:
		out, err = p.regularJoin(j, on, lx, rx, parts, cols, cond)
	}
	if err != nil {
		return nil, err
	}
	out = p.withoutKeys(out, l, r, lx)
	if window {
		out.win = joinedWindow(j.Kind, l, r)
	}
	return out, nil
}

// filterAll filters in by the conjunction of conds (none: in itself).
func (p *Planner) filterAll(in *Rel, conds []parser.Expr) (*Rel, error) {
	if len(conds) == 0 {
		return in, nil
	}
	return p.filter(in, andAll(conds), nil)
}

func andAll(es []parser.Expr) parser.Expr {
	out := es[0]
	for _, e := range es[1:] {
		out = &parser.Binary{Pos: out.Position(), Op: parser.And, L: out, R: e}
	}
	return out
}

// The sides an expression reads, as bits.
const (
	sideLeft    = 1
	sideRight   = 2
	sideUnknown = 4
)

// sideOf tells which join inputs e reads: sideLeft, sideRight, both, 0
// (no column: a constant) or with sideUnknown when a name resolves on
// neither side or, unqualified, on both.
func sideOf(l, r *Rel, e parser.Expr) int {
	side := 0
	walk(e, func(x parser.Expr) bool {
		id, ok := x.(*parser.Ident)
		if !ok {
			return true
		}
		inL, inR := identIndex(l, id) >= 0, identIndex(r, id) >= 0
		switch {
		case inL && inR, !inL && !inR:
			side |= sideUnknown
		case inL:
			side |= sideLeft
		default:
			side |= sideRight
		}
		return false
	})
	if side&sideUnknown != 0 {
		return sideUnknown
	}
	return side
}

// splitJoin sorts the conjuncts of on.
func (p *Planner) splitJoin(l, r *Rel, on parser.Expr) *joinParts {
	parts := &joinParts{}
	for _, c := range conjuncts(on) {
		if li, ri, ok := equiPair(l, r, c); ok {
			parts.lkeys, parts.rkeys = append(parts.lkeys, li), append(parts.rkeys, ri)
			parts.nullSafe = append(parts.nullSafe, false)
			continue
		}
		if le, re, nullSafe, ok := keyPair(l, r, c); ok {
			parts.addKey(l, r, le, re, nullSafe)
			continue
		}
		if lo, hi, ok := timeBounds(l, r, c); ok {
			if parts.lower == nil && parts.upper == nil {
				parts.boundsAt = c.Position()
			}
			parts.lower, parts.upper = tighter(parts.lower, lo, true), tighter(parts.upper, hi, false)
			continue
		}
		parts.rest = append(parts.rest, c)
	}
	return parts
}

func conjuncts(e parser.Expr) []parser.Expr {
	if b, ok := e.(*parser.Binary); ok && b.Op == parser.And {
		return append(conjuncts(b.L), conjuncts(b.R)...)
	}
	return []parser.Expr{e}
}

// equiPair recognises left.col = right.col (either order).
func equiPair(l, r *Rel, e parser.Expr) (int, int, bool) {
	b, ok := e.(*parser.Binary)
	if !ok || b.Op != parser.Eq {
		return 0, 0, false
	}
	if li, ri := identIndex(l, b.L), identIndex(r, b.R); li >= 0 && ri >= 0 && !ambiguous(l, r, b.L, b.R) {
		return li, ri, true
	}
	if li, ri := identIndex(l, b.R), identIndex(r, b.L); li >= 0 && ri >= 0 && !ambiguous(l, r, b.R, b.L) {
		return li, ri, true
	}
	return 0, 0, false
}

// ambiguous: an unqualified name found on both sides cannot be placed.
func ambiguous(l, r *Rel, le, re parser.Expr) bool {
	return identIndex(r, le) >= 0 && identIndex(l, re) >= 0 && len(le.(*parser.Ident).Parts) == 1
}

// joinCondition compiles the non-equi rest of ON over left ++ right.
func (p *Planner) joinCondition(rest []parser.Expr, cols []expr.Column, nl int) (func(l, r []any) (bool, error), error) {
	if len(rest) == 0 {
		return nil, nil
	}
	var cs []*expr.Compiled
	for _, e := range rest {
		c, err := expr.Compile(e, p.scope(cols))
		if err != nil {
			return nil, err
		}
		cs = append(cs, c)
	}
	// The joined row only lives while the condition runs: a scratch row
	// from a pool (the function runs on every subtask's goroutine) saves
	// allocating one per candidate pair.
	scratch := sync.Pool{New: func() any { return new([]any) }}
	return func(l, r []any) (bool, error) {
		buf := scratch.Get().(*[]any)
		row := append(append((*buf)[:0], l...), r...)
		ok, err := true, error(nil)
		for _, c := range cs {
			v, e := c.Eval(row)
			if e != nil || !expr.IsTrue(v) {
				ok, err = false, e
				break
			}
		}
		clear(row)
		*buf = row
		scratch.Put(buf)
		return ok, err
	}, nil
}

func (p *Planner) regularJoin(j *parser.Join, on parser.Expr, l, r *Rel, parts *joinParts, cols []expr.Column, cond func(l, r []any) (bool, error)) (*Rel, error) {
	jt := joinTypes[j.Kind]
	opts := exec.JoinOptions{Type: jt, LeftKeys: parts.lkeys, RightKeys: parts.rkeys, NullSafe: parts.nullSafe, LeftArity: len(l.Cols),
		RightArity: len(r.Cols), Condition: cond, StateTTL: p.Config.StateTTL,
		LeftInsertOnly: l.InsertOnly, RightInsertOnly: r.InsertOnly, LeftTypes: colTypes(l.Cols), RightTypes: colTypes(r.Cols)}
	format := "binary rows"
	if !opts.KeepsBinaryRows() {
		opts.LeftTypes, opts.RightTypes, format = nil, nil, ""
	}
	if _, err := exec.NewJoin(opts); err != nil {
		return nil, err
	}
	out := &Rel{Op: "Join", Detail: fmt.Sprintf("joinType=[%s], where=[%s]", joinTypeName(j.Kind), parser.Format(on)),
		Inputs: []*Rel{l, r}, Cols: cols, RowTime: -1, InsertOnly: l.InsertOnly && r.InsertOnly && jt == exec.InnerJoin,
		stateFormat: format}
	if !out.InsertOnly {
		out.UpdatesFrom = firstNonEmpty(l.UpdatesFrom, r.UpdatesFrom, "Join(joinType=["+j.Kind.String()+"])")
	}
	lk, rk := exec.FieldKeyOf(parts.lkeys...), exec.FieldKeyOf(parts.rkeys...)
	out.build = func(b *builder, ins []*graph.Node) (*graph.Node, error) {
		return b.keyedTwoInput("Join", opOf(exec.NewJoin, opts), lk, rk, ins)
	}
	return out, nil
}

func (p *Planner) intervalJoin(j *parser.Join, on parser.Expr, l, r *Rel, parts *joinParts, cols []expr.Column, cond func(l, r []any) (bool, error)) (*Rel, error) {
	if err := checkBounds(l, r, parts); err != nil {
		return nil, err
	}
	opts := exec.IntervalJoinOptions{Type: joinTypes[j.Kind], LeftKeys: parts.lkeys, RightKeys: parts.rkeys, NullSafe: parts.nullSafe,
		LeftTime: l.RowTime, RightTime: r.RowTime, Lower: *parts.lower, Upper: *parts.upper,
		LeftArity: len(l.Cols), RightArity: len(r.Cols), Condition: cond}
	if _, err := exec.NewIntervalJoin(opts); err != nil {
		return nil, errAt(parts.boundsAt, "interval join: %v", err)
	}
	out := &Rel{Op: "IntervalJoin", Detail: fmt.Sprintf("joinType=[%s], bounds=[%v, %v], where=[%s]", joinTypeName(j.Kind), *parts.lower, *parts.upper, parser.Format(on)),
		Inputs: []*Rel{l, r}, Cols: cols, RowTime: l.RowTime, InsertOnly: true}
	lk, rk := exec.FieldKeyOf(parts.lkeys...), exec.FieldKeyOf(parts.rkeys...)
	out.build = func(b *builder, ins []*graph.Node) (*graph.Node, error) {
		return b.keyedTwoInput("IntervalJoin", opOf(exec.NewIntervalJoin, opts), lk, rk, ins)
	}
	return out, nil
}

// checkBounds refuses time bounds that no pair of rows can meet (a BETWEEN
// whose lower bound lies above its upper bound). Flink plans such a join
// as one that never matches; a query that can never join is far more
// likely a mistake, so it is an error at the condition.
func checkBounds(l, r *Rel, parts *joinParts) error {
	if *parts.lower <= *parts.upper {
		return nil
	}
	lt, rt := l.Cols[l.RowTime].Name, r.Cols[r.RowTime].Name
	return &Error{Pos: parts.boundsAt,
		Msg: fmt.Sprintf("interval join bounds are inverted: the condition needs %s - %s between %v and %v, which no pair of rows meets",
			rt, lt, *parts.lower, *parts.upper),
		Hint: "put the earlier time first: x BETWEEN lower AND upper needs lower <= upper"}
}

// joinTypeName prints a comma or cross join (turned inner by its
// condition) as JOIN.
func joinTypeName(k parser.JoinKind) string {
	if k == parser.CommaJoin || k == parser.CrossJoin {
		return parser.InnerJoin.String()
	}
	return k.String()
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

// timeTerm reads `col`, `col + INTERVAL` or `col - INTERVAL` as a column
// of side rel and an offset in ms.
func timeTerm(rel *Rel, e parser.Expr) (int, int64, bool) {
	if i := identIndex(rel, e); i >= 0 {
		return i, 0, true
	}
	b, ok := e.(*parser.Binary)
	if !ok || (b.Op != parser.Add && b.Op != parser.Sub) {
		return 0, 0, false
	}
	iv, ok := b.R.(*parser.IntervalLit)
	i := identIndex(rel, b.L)
	if !ok || i < 0 {
		return 0, 0, false
	}
	ms, _, err := expr.IntervalValue(iv)
	if err != nil {
		return 0, 0, false
	}
	if b.Op == parser.Sub {
		ms = -ms
	}
	return i, ms, true
}

// timeBounds reads a bound on right.rowtime - left.rowtime from one
// conjunct: BETWEEN, <, <=, >, >= or = between the two rowtimes (± an
// interval). lo/hi are nil where the conjunct sets no bound.
func timeBounds(l, r *Rel, e parser.Expr) (lo, hi *time.Duration, ok bool) {
	if bt, isB := e.(*parser.Between); isB && !bt.Not {
		lo1, hi1, ok1 := compareBound(l, r, bt.X, parser.Ge, bt.Lo)
		lo2, hi2, ok2 := compareBound(l, r, bt.X, parser.Le, bt.Hi)
		if ok1 && ok2 {
			return firstDur(lo1, lo2), firstDur(hi1, hi2), true
		}
		return nil, nil, false
	}
	b, isBin := e.(*parser.Binary)
	if !isBin {
		return nil, nil, false
	}
	return compareBound(l, r, b.L, b.Op, b.R)
}

func firstDur(a, b *time.Duration) *time.Duration {
	if a != nil {
		return a
	}
	return b
}

// compareBound turns `x op y` over the two rowtimes into a bound on
// right - left.
func compareBound(l, r *Rel, x parser.Expr, op parser.BinaryOp, y parser.Expr) (lo, hi *time.Duration, ok bool) {
	xi, xo, xok := timeTerm(r, x)
	yi, yo, yok := timeTerm(l, y)
	sign := int64(1) // x is the right side
	if !xok || !yok || xi != r.RowTime || yi != l.RowTime {
		xi, xo, xok = timeTerm(l, x)
		yi, yo, yok = timeTerm(r, y)
		if !xok || !yok || xi != l.RowTime || yi != r.RowTime {
			return nil, nil, false
		}
		sign = -1
	}
	// x + xo op y + yo  ⇔  x - y op yo - xo; with sign, (right-left) op' c.
	c := time.Duration(sign*(yo-xo)) * time.Millisecond
	if sign < 0 {
		op = op.Swapped()
	}
	switch op {
	case parser.Ge:
		return &c, nil, true
	case parser.Gt:
		c += time.Millisecond
		return &c, nil, true
	case parser.Le:
		return nil, &c, true
	case parser.Lt:
		c -= time.Millisecond
		return nil, &c, true
	case parser.Eq:
		return &c, &c, true
	}
	return nil, nil, false
}

func tighter(cur, next *time.Duration, lower bool) *time.Duration {
	if next == nil {
		return cur
	}
	if cur == nil || (lower && *next > *cur) || (!lower && *next < *cur) {
		return next
	}
	return cur
}
