package planner

import (
	"fmt"

	"github.com/weirstream/weir/sql/expr"
	"github.com/weirstream/weir/sql/parser"
)

// Join keys beyond `left.col = right.col`, as Flink's planner extracts
// them (JoinInfo / FlinkJoinUtil): an equality between an expression of
// the left input and one of the right (`a.x + 2 = b.y`) is a key, computed
// by a Calc under the join on each side (Flink pushes such expressions
// into the join's inputs the same way) and projected away above it;
// `l IS NOT DISTINCT FROM r` and its expanded form
// `l = r OR (l IS NULL AND r IS NULL)` are keys that match NULL with NULL.

// keyPair recognises a conjunct of ON that equates an expression of each
// side; nullSafe for IS NOT DISTINCT FROM and its expanded form.
func keyPair(l, r *Rel, c parser.Expr) (le, re parser.Expr, nullSafe, ok bool) {
	b, isBin := c.(*parser.Binary)
	if !isBin {
		return nil, nil, false, false
	}
	switch b.Op {
	case parser.Eq, parser.IsNotDistinctFrom:
		le, re, ok = oneSideEach(l, r, b.L, b.R)
		return le, re, b.Op == parser.IsNotDistinctFrom, ok
	case parser.Or:
		for _, pair := range [][2]parser.Expr{{b.L, b.R}, {b.R, b.L}} {
			eq, isEq := pair[0].(*parser.Binary)
			if !isEq || eq.Op != parser.Eq {
				continue
			}
			if le, re, ok = oneSideEach(l, r, eq.L, eq.R); ok && bothNull(pair[1], le, re) {
				return le, re, true, true
			}
		}
	}
	return nil, nil, false, false
}

// oneSideEach orders x and y as (left expression, right expression) when
// one reads only the left input and the other only the right.
func oneSideEach(l, r *Rel, x, y parser.Expr) (parser.Expr, parser.Expr, bool) {
	sx, sy := sideOf(l, r, x), sideOf(l, r, y)
	switch {
	case sx == sideLeft && sy == sideRight:
		return x, y, true
	case sx == sideRight && sy == sideLeft:
		return y, x, true
	}
	return nil, nil, false
}

// bothNull recognises `le IS NULL AND re IS NULL` (either order).
func bothNull(e, le, re parser.Expr) bool {
	b, ok := e.(*parser.Binary)
	if !ok || b.Op != parser.And {
		return false
	}
	x, okx := isNullOf(b.L)
	y, oky := isNullOf(b.R)
	if !okx || !oky {
		return false
	}
	lt, rt := parser.Format(le), parser.Format(re)
	xt, yt := parser.Format(x), parser.Format(y)
	return (xt == lt && yt == rt) || (xt == rt && yt == lt)
}

func isNullOf(e parser.Expr) (parser.Expr, bool) {
	is, ok := e.(*parser.Is)
	if !ok || is.Not || is.What != parser.IsNull {
		return nil, false
	}
	return is.X, true
}

// addKey records a key pair: a plain column of a side is read in place,
// an expression becomes a column appended to that side (see withKeys).
func (parts *joinParts) addKey(l, r *Rel, le, re parser.Expr, nullSafe bool) {
	li := identIndex(l, le)
	if li < 0 {
		li = len(l.Cols) + len(parts.lext)
		parts.lext = append(parts.lext, le)
	}
	ri := identIndex(r, re)
	if ri < 0 {
		ri = len(r.Cols) + len(parts.rext)
		parts.rext = append(parts.rext, re)
	}
	parts.lkeys, parts.rkeys = append(parts.lkeys, li), append(parts.rkeys, ri)
	parts.nullSafe = append(parts.nullSafe, nullSafe)
}

// withKeys appends the computed key columns exts to in, by a Calc that
// keeps in's time attribute.
func (p *Planner) withKeys(in *Rel, exts []parser.Expr, prefix string) (*Rel, error) {
	if len(exts) == 0 {
		return in, nil
	}
	evals := make([]*expr.Compiled, 0, len(in.Cols)+len(exts))
	cols := append([]expr.Column(nil), in.Cols...)
	for i, c := range in.Cols {
		evals = append(evals, fieldRef(i, c.Type))
	}
	for i, e := range exts {
		c, err := expr.Compile(e, p.scope(in.Cols))
		if err != nil {
			return nil, err
		}
		evals = append(evals, c)
		cols = append(cols, expr.Column{Name: fmt.Sprintf("%s%d", prefix, i), Type: c.Type})
	}
	out := p.calcOver(in, evals, cols)
	out.RowTime, out.win = in.RowTime, in.win
	return out, nil
}

// withoutKeys projects the computed key columns of a join's output away:
// the output is l's columns, then r's, as the join's would be.
func (p *Planner) withoutKeys(join, l, r, lx *Rel) *Rel {
	if len(lx.Cols) == len(l.Cols) && len(join.Cols) == len(l.Cols)+len(r.Cols) {
		return join
	}
	var evals []*expr.Compiled
	for i := range l.Cols {
		evals = append(evals, fieldRef(i, join.Cols[i].Type))
	}
	for i := range r.Cols {
		j := len(lx.Cols) + i
		evals = append(evals, fieldRef(j, join.Cols[j].Type))
	}
	cols := append(append([]expr.Column(nil), join.Cols[:len(l.Cols)]...), join.Cols[len(lx.Cols):len(lx.Cols)+len(r.Cols)]...)
	out := p.calcOver(join, evals, cols)
	if join.RowTime < len(l.Cols) {
		out.RowTime = join.RowTime
	}
	return out
}
