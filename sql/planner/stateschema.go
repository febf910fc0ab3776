package planner

import (
	"strings"

	"github.com/weirstream/weir/graph"
	"github.com/weirstream/weir/sql/exec"
	"github.com/weirstream/weir/sql/expr"
)

// stateCols says what a keyed operator keeps: its key columns and its
// values (an aggregation's accumulators), each named as EXPLAIN names it.
type stateCols struct {
	key, values []stateCol
}

type stateCol struct {
	name string
	typ  string // the SQL type without nullability or time attribute
	// arg, when set, is the type of the values a DISTINCT call keeps.
	arg string
}

// aggState is the state of a group aggregation of calls over in, grouped
// by keys, with output columns out (the keys, then one per call): per
// group, an accumulator of each call's result type, and the distinct
// argument values of a DISTINCT call.
func aggState(in *Rel, keys []int, calls []exec.AggCall, out []expr.Column) *stateCols {
	s := &stateCols{}
	for _, k := range keys {
		s.key = append(s.key, stateCol{name: in.Cols[k].Name, typ: in.Cols[k].Type.Base()})
	}
	for i, c := range calls {
		v := stateCol{name: aggText([]exec.AggCall{c}, in.Cols), typ: out[len(keys)+i].Type.Base()}
		if c.Distinct {
			v.arg = in.Cols[c.Arg].Type.Base()
		}
		s.values = append(s.values, v)
	}
	return s
}

// stateSchema describes the state of r's keyed operator for restore's
// compatibility check (graph.StateSchema): the operator kind, and the
// types of its key and of what it keeps — r.state when the planner says,
// else its input rows (a join's, a deduplication's, a window's) and its
// output row.
func stateSchema(r *Rel) *graph.StateSchema {
	op := r.Op
	if r.Detail != "" {
		op += "(" + r.Detail + ")"
	}
	var types, text []string
	add := func(what string, cs []stateCol) {
		ty, tx := colsOf(cs)
		types = append(types, what+" ("+ty+")")
		text = append(text, what+" ("+tx+")")
	}
	if r.state != nil {
		add("key", r.state.key)
		add("state", r.state.values)
	} else {
		for i, in := range r.Inputs {
			what := "input"
			if len(r.Inputs) == 2 {
				what = [2]string{"left input", "right input"}[i]
			}
			add(what, columns(in.Cols))
		}
		add("output", columns(r.Cols))
	}
	return &graph.StateSchema{Operator: op, Types: r.Op + ": " + strings.Join(types, ", "), Text: strings.Join(text, ", ")}
}

func columns(cols []expr.Column) []stateCol {
	cs := make([]stateCol, len(cols))
	for i, c := range cols {
		cs[i] = stateCol{name: c.Name, typ: c.Type.Base()}
	}
	return cs
}

// colsOf prints cs twice: types only (the fingerprint), and "name TYPE".
func colsOf(cs []stateCol) (types, text string) {
	ty := make([]string, len(cs))
	tx := make([]string, len(cs))
	for i, c := range cs {
		ty[i], tx[i] = c.typ, c.name+" "+c.typ
		if c.arg != "" {
			ty[i] += " of " + c.arg
			tx[i] += " of distinct " + c.arg
		}
	}
	return strings.Join(ty, ", "), strings.Join(tx, ", ")
}
