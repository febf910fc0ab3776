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

// groupingPlan is GROUP BY with GROUPING SETS, ROLLUP or CUBE, as Flink
// plans it: an Expand copies each row once per grouping set, with the
// grouping columns outside the set NULL and the set's index in $e, and the
// aggregation groups by those columns and $e. keys are the distinct
// grouping expressions, in order of first appearance; sets[i][k] tells
// whether set i groups by keys[k].
type groupingPlan struct {
	keys []parser.Expr
	sets [][]bool
	// expanded is false for a plain GROUP BY (GROUPING() is then 0).
	expanded bool
}

// planGroupingSets reads the GROUP BY items. Without GROUPING SETS, ROLLUP
// or CUBE the plan has one set of all items and is not expanded. The sets
// of several items multiply: GROUP BY a, ROLLUP(b, c) is the sets (a, b,
// c), (a, b) and (a).
func planGroupingSets(groupBy []parser.Expr) *groupingPlan {
	g := &groupingPlan{}
	sets := [][]parser.Expr{{}}
	for _, item := range groupBy {
		gs, ok := item.(*parser.GroupingSets)
		if !ok {
			sets = crossSets(sets, [][]parser.Expr{{item}})
			continue
		}
		g.expanded = true
		sets = crossSets(sets, expandGrouping(gs))
	}
	for _, set := range sets {
		for _, e := range set {
			if g.keyIndex(e) < 0 {
				g.keys = append(g.keys, e)
			}
		}
	}
	for _, set := range sets {
		in := make([]bool, len(g.keys))
		for _, e := range set {
			in[g.keyIndex(e)] = true
		}
		g.sets = append(g.sets, in)
	}
	return g
}

func (g *groupingPlan) keyIndex(e parser.Expr) int {
	text := parser.Format(e)
	return slices.IndexFunc(g.keys, func(k parser.Expr) bool { return parser.Format(k) == text })
}

// crossSets is every union of a set of a with a set of b.
func crossSets(a, b [][]parser.Expr) [][]parser.Expr {
	var out [][]parser.Expr
	for _, x := range a {
		for _, y := range b {
			out = append(out, append(slices.Clone(x), y...))
		}
	}
	return out
}

// expandGrouping lists the sets of one GROUPING SETS, ROLLUP or CUBE.
func expandGrouping(gs *parser.GroupingSets) [][]parser.Expr {
	var out [][]parser.Expr
	switch gs.Kind {
	case parser.GroupingSetsKind:
		for i, e := range gs.Elems {
			if gs.Nested[i] != nil {
				out = append(out, expandGrouping(gs.Nested[i])...)
			} else {
				out = append(out, e)
			}
		}
	case parser.RollupKind:
		for n := len(gs.Elems); n >= 0; n-- {
			out = append(out, slices.Concat(gs.Elems[:n]...))
		}
	case parser.CubeKind:
		// Calcite's order: the full set first, then ever fewer columns.
		n := len(gs.Elems)
		for mask := (1 << n) - 1; mask >= 0; mask-- {
			var set []parser.Expr
			for i := range n {
				if mask&(1<<(n-1-i)) != 0 {
					set = append(set, gs.Elems[i]...)
				}
			}
			out = append(out, set)
		}
	}
	return out
}

// expand adds the Expand after in (the aggregation's input, pre-projected)
// and points ap's keys at its copies of the grouping columns and $e.
func (p *Planner) expand(in *Rel, ap *aggPlan, g *groupingPlan) *Rel {
	n := len(in.Cols)
	cols := slices.Clone(in.Cols)
	keys := make([]int, 0, len(ap.keys)+1)
	for i, k := range ap.keys {
		c := in.Cols[k]
		c.Type.Nullable, c.Type.TimeAttr = true, ""
		cols = append(cols, c)
		keys = append(keys, n+i)
	}
	cols = append(cols, expr.Column{Name: "$e", Type: types.Type{Kind: types.BigInt}})
	keys = append(keys, n+len(ap.keys))
	opts := exec.ExpandOptions{Keys: ap.keys, Sets: g.sets}
	var sets []string
	for _, s := range g.sets {
		var names []string
		for k, on := range s {
			if on {
				names = append(names, parser.Format(g.keys[k]))
			}
		}
		sets = append(sets, "("+strings.Join(names, ", ")+")")
	}
	r := &Rel{Op: "Expand", Detail: "sets=[" + strings.Join(sets, ", ") + "]", Inputs: []*Rel{in}, Cols: cols, RowTime: in.RowTime}
	r.withMode(in)
	r.build = func(b *builder, ins []*graph.Node) (*graph.Node, error) {
		n, err := b.checkedOp("Expand", opOf(exec.NewExpand, opts))
		if err != nil {
			return nil, err
		}
		b.forward(ins[0], n, 0)
		return n, nil
	}
	ap.keys = keys
	ap.keyText = append(ap.keyText, "$e")
	return r
}

// resolver reads GROUPING(e, …) and GROUPING_ID(e, …) (one bit per
// argument, the first the most significant: 1 where the row's grouping
// set leaves e out) from the set index $e, the last key, before next.
func (g *groupingPlan) resolver(in *Rel, nk int, next func(parser.Expr) (*expr.Compiled, error)) func(parser.Expr) (*expr.Compiled, error) {
	return func(e parser.Expr) (*expr.Compiled, error) {
		f, ok := e.(*parser.FuncCall)
		if !ok || (f.Name != "GROUPING" && f.Name != "GROUPING_ID" && f.Name != "GROUP_ID") || f.Over != nil {
			return next(e)
		}
		var values []int64
		switch {
		case f.Name == "GROUP_ID" && len(f.Args) > 0:
			return nil, errAt(f.Pos, "GROUP_ID() takes no arguments")
		case f.Name == "GROUP_ID":
			values = g.groupIDs()
		case len(f.Args) == 0:
			return nil, errAt(f.Pos, "%s needs at least one grouping expression", f.Name)
		default:
			var err error
			if values, err = g.groupingValues(in, f); err != nil {
				return nil, err
			}
		}
		t := types.Type{Kind: types.BigInt}
		if !g.expanded {
			return &expr.Compiled{Type: t, Const: true, Eval: func([]any) (any, error) { return values[0], nil }}, nil
		}
		at := nk - 1
		return &expr.Compiled{Type: t, Eval: func(row []any) (any, error) { return values[row[at].(int64)], nil }}, nil
	}
}

// groupIDs numbers each set among the equal sets before it (GROUP_ID():
// 0 for a set's first occurrence, 1 for its second, …).
func (g *groupingPlan) groupIDs() []int64 {
	out := make([]int64, len(g.sets))
	for i, s := range g.sets {
		for _, earlier := range g.sets[:i] {
			if slices.Equal(s, earlier) {
				out[i]++
			}
		}
	}
	return out
}

// groupingValues is GROUPING(args) for each set.
func (g *groupingPlan) groupingValues(in *Rel, f *parser.FuncCall) ([]int64, error) {
	values := make([]int64, len(g.sets))
	for _, a := range f.Args {
		k := g.argKey(in, a)
		if k < 0 {
			return nil, &Error{Pos: a.Position(), Msg: fmt.Sprintf("%s(…): %s is not a grouping expression", f.Name, parser.Format(a)),
				Hint: "pass the columns or expressions of GROUP BY"}
		}
		for i, set := range g.sets {
			values[i] <<= 1
			if !set[k] {
				values[i] |= 1
			}
		}
	}
	return values, nil
}

// argKey finds the grouping key an argument of GROUPING names: the same
// text, or the same column of the input.
func (g *groupingPlan) argKey(in *Rel, a parser.Expr) int {
	if k := g.keyIndex(a); k >= 0 {
		return k
	}
	ai := identIndex(in, a)
	if ai < 0 {
		return -1
	}
	return slices.IndexFunc(g.keys, func(k parser.Expr) bool { return identIndex(in, k) == ai })
}
