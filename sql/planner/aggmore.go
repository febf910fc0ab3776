package planner

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/weirstream/weir/sql/exec"
	"github.com/weirstream/weir/sql/expr"
	"github.com/weirstream/weir/sql/parser"
	"github.com/weirstream/weir/types"
)

// unplannedAggregates explains the aggregate functions of Flink that Weir
// does not plan.
var unplannedAggregates = map[string]string{
	"ARRAY_AGG":             "use COLLECT(x), a MULTISET, or LISTAGG(x, sep) for strings",
	"JSON_OBJECTAGG":        "build the object with LISTAGG over JSON_OBJECT pieces",
	"JSON_ARRAYAGG":         "build the array with LISTAGG over JSON strings",
	"APPROX_COUNT_DISTINCT": "use COUNT(DISTINCT x)",
	"SINGLE_VALUE":          "SINGLE_VALUE belongs to scalar subqueries",
	"SUM0":                  "use COALESCE(SUM(x), 0)",
}

// unplannedAggregate is the error for an aggregate function Weir knows of
// but does not compute.
func unplannedAggregate(f *parser.FuncCall) error {
	hint := unplannedAggregates[f.Name]
	if hint == "" {
		hint = "the aggregates Weir computes are COUNT, SUM, MIN, MAX, AVG, FIRST_VALUE, LAST_VALUE, LISTAGG, COLLECT, " +
			"VAR_POP, VAR_SAMP, VARIANCE, STDDEV_POP, STDDEV_SAMP, STDDEV"
	}
	return &Error{Pos: f.Pos, Msg: fmt.Sprintf("aggregate function %s is not supported", f.Name), Hint: hint}
}

// lagCall plans LAG(x [, offset [, default]]): the offset is a
// non-negative integer literal and the default a constant of x's type, as
// Flink requires them to be.
func (p *Planner) lagCall(f *parser.FuncCall, column func(parser.Expr) (int, error)) (exec.AggCall, error) {
	if len(f.Args) < 1 || len(f.Args) > 3 || f.Distinct {
		return exec.AggCall{}, &Error{Pos: f.Pos, Msg: fmt.Sprintf("LAG takes one to three arguments, got %d", len(f.Args)),
			Hint: "call it as LAG(x), LAG(x, 2) or LAG(x, 2, default)"}
	}
	call := exec.AggCall{Kind: exec.Lag, LagOffset: 1}
	if len(f.Args) >= 2 {
		n, ok := f.Args[1].(*parser.NumberLit)
		off, err := strconv.Atoi(strings.TrimSpace(textOf(n)))
		if !ok || err != nil || off < 0 {
			return exec.AggCall{}, &Error{Pos: f.Args[1].Position(), Msg: "the offset of LAG must be a non-negative integer literal",
				Hint: "write LAG(x, 2)"}
		}
		call.LagOffset = off
	}
	argT, _ := p.argType(f.Args[0])
	if len(f.Args) == 3 {
		d, err := expr.Compile(f.Args[2], p.scope(nil))
		if err != nil {
			return exec.AggCall{}, &Error{Pos: f.Args[2].Position(), Msg: "the default of LAG must be a constant: " + err.Error()}
		}
		if d.Type.Kind != types.Null && d.Type.Base() != argT.Base() {
			return exec.AggCall{}, &Error{Pos: f.Args[2].Position(), Msg: fmt.Sprintf("the default of LAG is %s, the value %s", d.Type.Base(), argT.Base()),
				Hint: fmt.Sprintf("CAST the default AS %s", argT.Base())}
		}
		if call.LagDefault, err = d.Eval(nil); err != nil {
			return exec.AggCall{}, &Error{Pos: f.Args[2].Position(), Msg: "the default of LAG: " + err.Error()}
		}
	}
	arg, err := column(f.Args[0])
	call.Arg = arg
	return call, err
}

func textOf(n *parser.NumberLit) string {
	if n == nil {
		return ""
	}
	return n.Text
}

// listAggCall plans LISTAGG(x [, separator]): the separator is a string
// literal, as Flink requires it to be a constant.
func (p *Planner) listAggCall(f *parser.FuncCall, column func(parser.Expr) (int, error)) (exec.AggCall, error) {
	if len(f.Args) < 1 || len(f.Args) > 2 {
		return exec.AggCall{}, &Error{Pos: f.Pos, Msg: fmt.Sprintf("LISTAGG takes one or two arguments, got %d", len(f.Args)),
			Hint: "call it as LISTAGG(x) or LISTAGG(x, ', ')"}
	}
	call := exec.AggCall{Kind: exec.ListAgg, Distinct: f.Distinct}
	if len(f.Args) == 2 {
		lit, ok := f.Args[1].(*parser.StringLit)
		if !ok {
			return exec.AggCall{}, &Error{Pos: f.Args[1].Position(), Msg: "the separator of LISTAGG must be a string literal",
				Hint: "write LISTAGG(x, ', ')"}
		}
		sep := lit.Value
		call.Separator = &sep
	}
	if t, ok := p.argType(f.Args[0]); ok && !t.IsString() && t.Kind != types.Null {
		return exec.AggCall{}, &Error{Pos: f.Pos, Msg: fmt.Sprintf("LISTAGG takes a string, got %s", t.Base()),
			Hint: "CAST the argument AS STRING"}
	}
	arg, err := column(f.Args[0])
	call.Arg = arg
	return call, err
}
