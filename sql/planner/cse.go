package planner

import (
	"fmt"
	"sort"
	"strings"

	"github.com/weirstream/weir/sql/expr"
	"github.com/weirstream/weir/sql/parser"
)

// Common sub-expressions of a SELECT's WHERE and SELECT list are computed
// once per row (as Flink's code generator reuses equal expressions of a
// Calc): `REGEXP_EXTRACT(url, …)` in both the WHERE and a CASE (Nexmark
// q21). Not `0.908 * price` (three times in q14): comparisons compute it
// as integers (worthSharing).
//
// An expression is computed ahead only where that cannot raise an error
// the query would not raise: before the filter, when the WHERE evaluates
// it for every row (not under the right operand of AND/OR, a later CASE
// branch, or a lazy function's later argument); after the filter, when
// every SELECT item evaluates it for every row that passes. Functions
// whose value changes between calls (RAND, NOW, PROCTIME, …) are never
// shared.

// hoisted maps the text of each computed-ahead expression to its column.
type hoisted map[string]int

func (h hoisted) resolver(cols []expr.Column) func(parser.Expr) (*expr.Compiled, error) {
	return func(e parser.Expr) (*expr.Compiled, error) {
		if i, ok := h[parser.Format(e)]; ok {
			c := fieldRef(i, cols[i].Type)
			c.Src = e // a CASE that coerces it names its position
			return c, nil
		}
		return nil, nil
	}
}

// planHoisted plans FROM t WHERE … with the WHERE's and SELECT list's
// common sub-expressions computed once. It returns nil when there are
// none, or FROM is not a plain table or subquery.
func (p *Planner) planHoisted(s *parser.Select) (*Rel, error) {
	switch s.From.(type) {
	case *parser.TableName, *parser.DerivedTable:
	default:
		return nil, nil
	}
	var items []parser.Expr
	for _, it := range s.Items {
		if _, star := it.Expr.(*parser.Star); !star {
			items = append(items, it.Expr)
		}
	}
	all := append(append([]parser.Expr(nil), items...), s.Where)
	before := pickCommon(all, []parser.Expr{s.Where}, nil)
	after := pickCommon(items, items, before)
	if len(before) == 0 && len(after) == 0 {
		return nil, nil
	}
	in, err := p.planFrom(s.From)
	if err != nil || in.tvf != nil {
		return nil, err // a window TVF's filter goes below it: plan as usual
	}
	before, after = p.worthSharing(before, in.Cols), p.worthSharing(after, in.Cols)
	if len(before) == 0 && len(after) == 0 {
		return nil, nil
	}
	h := hoisted{}
	if in, err = p.hoist(in, before, h); err != nil {
		return nil, err
	}
	if s.Where != nil {
		if in, err = p.filter(in, s.Where, h.resolver(in.Cols)); err != nil {
			return nil, err
		}
	}
	if in, err = p.hoist(in, after, h); err != nil {
		return nil, err
	}
	in.common = h.resolver(in.Cols)
	return in, nil
}

// hoist appends a column per expression of es (smallest first, so larger
// ones read the smaller ones' columns) and records them in h.
func (p *Planner) hoist(in *Rel, es []parser.Expr, h hoisted) (*Rel, error) {
	if len(es) == 0 {
		return in, nil
	}
	cols := append([]expr.Column(nil), in.Cols...)
	evals := make([]*expr.Compiled, len(in.Cols))
	for i, c := range in.Cols {
		evals[i] = fieldRef(i, c.Type)
	}
	for _, e := range es {
		sc := p.scope(cols)
		sc.Resolve = h.resolver(cols)
		c, err := expr.Compile(e, sc)
		if err != nil {
			return nil, err
		}
		c.Type.TimeAttr = ""
		h[parser.Format(e)] = len(cols)
		evals = append(evals, c)
		cols = append(cols, expr.Column{Name: fmt.Sprintf("$common%d", len(h)), Type: c.Type})
	}
	out := p.calcOver(in, evals, cols)
	out.Op, out.Detail = "Calc", "common=["+colNames(cols[len(in.Cols):])+"]"
	out.RowTime = in.RowTime
	return out, nil
}

// worthSharing returns es without the ones cheaper to compute where they
// are used: a DECIMAL constant times an integer column (q14's 0.908 *
// price), which comparisons with constants compute as integers
// (expr.Compiled.ScaledProduct); shared, it would be a DECIMAL built for
// every row, most of which the filter drops.
func (p *Planner) worthSharing(es []parser.Expr, cols []expr.Column) []parser.Expr {
	var out []parser.Expr
	for _, e := range es {
		if c, err := expr.Compile(e, p.scope(cols)); err == nil && c.ScaledProduct() {
			continue
		}
		out = append(out, e)
	}
	return out
}

// pickCommon returns the candidate sub-expressions of exprs that occur at
// least twice in them and at a position every row evaluates in one of
// roots, not already in done; smallest first.
func pickCommon(exprs, roots []parser.Expr, done []parser.Expr) []parser.Expr {
	count := map[string]int{}
	first := map[string]parser.Expr{}
	for _, e := range exprs {
		walk(e, func(x parser.Expr) bool {
			if shareable(x) {
				k := parser.Format(x)
				count[k]++
				if first[k] == nil {
					first[k] = x
				}
			}
			return true
		})
	}
	always := map[string]bool{}
	for _, r := range roots {
		everyRow(r, func(x parser.Expr) { always[parser.Format(x)] = true })
	}
	skip := map[string]bool{}
	for _, d := range done {
		skip[parser.Format(d)] = true
	}
	var out []parser.Expr
	for k, n := range count {
		if n >= 2 && always[k] && !skip[k] {
			out = append(out, first[k])
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := parser.Format(out[i]), parser.Format(out[j])
		return len(a) < len(b) || len(a) == len(b) && a < b
	})
	return out
}

// volatile are functions whose value may differ between two calls.
var volatile = map[string]bool{"RAND": true, "RAND_INTEGER": true, "UUID": true, "NOW": true, "PROCTIME": true,
	"CURRENT_TIMESTAMP": true, "LOCALTIMESTAMP": true, "CURRENT_DATE": true, "CURRENT_TIME": true,
	"CURRENT_ROW_TIMESTAMP": true, "UNIX_TIMESTAMP": true, "LOCALTIME": true}

// shareable: a function call, arithmetic or cast that reads a column and
// calls nothing volatile, no aggregate and no window function.
func shareable(e parser.Expr) bool {
	switch x := e.(type) {
	case *parser.FuncCall:
		if x.Over != nil || x.Filter != nil || x.Distinct {
			return false
		}
	case *parser.Binary:
		if x.Op < parser.Add {
			return false
		}
	case *parser.Cast:
	default:
		return false
	}
	ok, col := true, false
	walk(e, func(x parser.Expr) bool {
		switch y := x.(type) {
		case *parser.Ident:
			col = true
		case *parser.FuncCall:
			if _, agg := aggKinds[y.Name]; agg || volatile[y.Name] || y.Over != nil || strings.HasPrefix(y.Name, "SESSION_") {
				ok = false
			}
		case *parser.Cast:
			if y.Try {
				ok = false // its operand's errors are swallowed, not raised
			}
		}
		return ok
	})
	return ok && col
}

// lazyFuncs evaluate their arguments after the first only when needed.
var lazyFuncs = map[string]bool{"COALESCE": true, "IF": true, "IFNULL": true, "NVL": true, "NULLIF": false}

// everyRow calls f on e and each sub-expression that evaluating e always
// evaluates.
func everyRow(e parser.Expr, f func(parser.Expr)) {
	if e == nil {
		return
	}
	f(e)
	switch x := e.(type) {
	case *parser.Binary:
		everyRow(x.L, f)
		if x.Op != parser.And && x.Op != parser.Or {
			everyRow(x.R, f)
		}
	case *parser.Case:
		everyRow(x.Operand, f)
		if len(x.Whens) > 0 {
			everyRow(x.Whens[0].Cond, f)
		}
	case *parser.FuncCall:
		for i, a := range x.Args {
			if i > 0 && lazyFuncs[x.Name] {
				break
			}
			everyRow(a, f)
		}
	case *parser.Unary:
		everyRow(x.X, f)
	case *parser.Is:
		everyRow(x.X, f)
	case *parser.Between:
		everyRow(x.X, f)
		everyRow(x.Lo, f)
		everyRow(x.Hi, f)
	case *parser.Like:
		everyRow(x.X, f)
		everyRow(x.Pattern, f)
	case *parser.InList:
		everyRow(x.X, f)
	case *parser.Cast:
		if !x.Try {
			everyRow(x.X, f)
		}
	case *parser.FieldAccess:
		everyRow(x.X, f)
	}
}
