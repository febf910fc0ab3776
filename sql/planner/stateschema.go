package planner

import (
	"fmt"
	"slices"
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
	// fn, for an aggregation's accumulator, is its function without
	// column names ("SUM", "MAX DISTINCT", "COUNT(*) FILTER"): a SUM's
	// state does not restore into a MAX of the same type.
	fn string
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
		v := stateCol{name: aggText([]exec.AggCall{c}, in.Cols), typ: out[len(keys)+i].Type.Base(), fn: aggFunction(c)}
		if c.Distinct {
			v.arg = in.Cols[c.Arg].Type.Base()
		}
		s.values = append(s.values, v)
	}
	return s
}

// aggFunction is c's function for the state fingerprint: its kind, and
// whether it is DISTINCT or filtered, without column names.
func aggFunction(c exec.AggCall) string {
	f := fmt.Sprint(c.Kind)
	if c.Kind == exec.CountStar {
		f = "COUNT(*)"
	}
	if c.Distinct {
		f += " DISTINCT"
	}
	if c.HasFilter {
		f += " FILTER"
	}
	return f
}

// sharedDistinctFormat is the part of a group aggregation's stateFormat
// saying that its DISTINCT calls over one field share a map (see
// sql/exec/distinct.go): a checkpoint of one map per call, recorded without
// it, is refused, as the operator cannot read it.
const sharedDistinctFormat = "shared distinct maps"

// distinctBitsFormat is sharedDistinctFormat over an insert-only input,
// whose maps keep only which calls hold each value, a bit each (see
// sql/exec/distinct.go). Its Legacy is the fingerprint with
// sharedDistinctFormat, whose maps of counts it reads; a query over a
// retracting input refuses it, before any operator opens, as it would
// need the values. (A checkpoint of counts from before this format does
// not say whether its input was insert-only: it restores either way.)
const distinctBitsFormat = sharedDistinctFormat + " of presence bits"

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
	var types, legacy, text []string
	add := func(what string, cs []stateCol) {
		ty, old, tx := colsOf(cs)
		types = append(types, what+" ("+ty+")")
		legacy = append(legacy, what+" ("+old+")")
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
	before := r.Op + ": " + strings.Join(types, ", ") // the fingerprint before binary rows
	if r.stateFormat != "" {
		// Not in the older fingerprints: the operator reads the format
		// before it.
		types = append(types, "format ("+r.stateFormat+")")
		text = append(text, "kept as "+r.stateFormat)
	}
	sc := &graph.StateSchema{Operator: op, Types: r.Op + ": " + strings.Join(types, ", "), Text: strings.Join(text, ", ")}
	if strings.Contains(r.stateFormat, distinctBitsFormat) {
		sc.Legacy = []string{strings.Replace(sc.Types, distinctBitsFormat, sharedDistinctFormat, 1)}
	}
	if strings.Contains(r.stateFormat, sharedDistinctFormat) {
		return sc // no older Weir wrote this state in a format it reads
	}
	olds := []string{before, r.Op + ": " + strings.Join(legacy, ", ")}
	if u := unprunedInputs(r); u != nil {
		us := stateSchema(u)
		olds = append(append(olds, us.Types), us.Legacy...)
	}
	for _, l := range olds {
		if l != sc.Types && !slices.Contains(sc.Legacy, l) {
			sc.Legacy = append(sc.Legacy, l)
		}
	}
	return sc
}

// unprunedInputs is r with its inputs as they were before a pruning
// projection under a window TVF narrowed them (prunedTVFInput), when r is
// an aggregation that describes its state by its input rows but keeps
// accumulators (a one-phase window aggregation, a session window's): its
// state does not depend on the input's width, and a checkpoint taken
// before the pruning, described by the wider input, restores. Nil when
// nothing was pruned, or r keeps rows.
func unprunedInputs(r *Rel) *Rel {
	if r.state != nil || (r.Op != "WindowAggregate" && r.Op != "GroupWindowAggregate") {
		return nil
	}
	u := *r
	u.Inputs = make([]*Rel, len(r.Inputs))
	pruned := false
	for i, in := range r.Inputs {
		u.Inputs[i] = unpruned(in)
		pruned = pruned || in.prunedFrom != nil
	}
	if !pruned {
		return nil
	}
	return &u
}

func columns(cols []expr.Column) []stateCol {
	cs := make([]stateCol, len(cols))
	for i, c := range cols {
		cs[i] = stateCol{name: c.Name, typ: c.Type.Base()}
	}
	return cs
}

// colsOf prints cs three times: types and functions (the fingerprint),
// types only (the fingerprint before functions were in it), and
// "name TYPE".
func colsOf(cs []stateCol) (types, legacy, text string) {
	ty := make([]string, len(cs))
	old := make([]string, len(cs))
	tx := make([]string, len(cs))
	for i, c := range cs {
		ty[i], old[i], tx[i] = c.typ, c.typ, c.name+" "+c.typ
		if c.arg != "" {
			ty[i] += " of " + c.arg
			old[i] += " of " + c.arg
			tx[i] += " of distinct " + c.arg
		}
		if c.fn != "" {
			ty[i] = c.fn + " " + ty[i]
		}
	}
	return strings.Join(ty, ", "), strings.Join(old, ", "), strings.Join(tx, ", ")
}
