package planner

import (
	"fmt"
	"slices"

	"github.com/weirstream/weir/graph"
	"github.com/weirstream/weir/sql/exec"
	"github.com/weirstream/weir/sql/expr"
	"github.com/weirstream/weir/types"
)

// Two-phase (local/global) group aggregation, Flink's answer to hot keys:
// a LocalGroupAggregate in the chain of the aggregation's input folds each
// mini-batch into one partial accumulator per group, so the hash exchange
// carries one row per group and batch instead of one per input row; a
// GlobalGroupAggregate behind the exchange merges the partials and emits
// what a one-phase GroupAggregate would.

const (
	localAggOp  = "LocalGroupAggregate"
	globalAggOp = "GlobalGroupAggregate"
)

// twoPhase decides as Flink's TwoStageOptimizedAggregateRule: mini-batches
// are on (the local phase flushes per mini-batch), the strategy is not
// ONE_PHASE, and every call can merge partial accumulators.
//
// Which calls merge is sql/exec's to say (LocalAggOptions.Validate: no
// DISTINCT, MIN and MAX only over an insert-only input), except FIRST_VALUE
// and LAST_VALUE: Flink's have no merge method, so Flink keeps them in one
// phase, and so does Weir, for the same plans.
//
// Flink also keeps one phase when the input is already distributed by the
// group keys (no exchange needed). Weir's planner tracks no distribution
// and puts an exchange before every keyed operator, so it has no such
// case to tell apart.
func (p *Planner) twoPhase(opts exec.GroupAggOptions) bool {
	if p.Config.MiniBatchSize <= 0 || p.Config.AggPhase == AggPhaseOne || hasFirstOrLastValue(opts.Aggs) {
		return false
	}
	_, err := exec.NewLocalAggregate(p.localOptions(opts))
	return err == nil
}

// hasFirstOrLastValue reports whether calls hold FIRST_VALUE or
// LAST_VALUE, which Flink keeps in one phase (see twoPhase).
func hasFirstOrLastValue(calls []exec.AggCall) bool {
	for _, c := range calls {
		if c.Kind == exec.FirstValue || c.Kind == exec.LastValue {
			return true
		}
	}
	return false
}

func (p *Planner) localOptions(opts exec.GroupAggOptions) exec.LocalAggOptions {
	return exec.LocalAggOptions{Agg: opts, BatchSize: p.Config.MiniBatchSize, Latency: p.Config.MiniBatchLatency}
}

// twoPhaseAgg plans opts over in as LocalGroupAggregate → exchange by the
// group keys → GlobalGroupAggregate. The local phase emits only +I partial
// rows ([keys…, accumulator…]), so it is insert-only whatever its input;
// the global phase has the changelog mode of a one-phase aggregate.
func (p *Planner) twoPhaseAgg(in *Rel, opts exec.GroupAggOptions, groupBy, detail string, cols []expr.Column, format string) *Rel {
	local := p.localOptions(opts)
	lr := &Rel{Op: localAggOp, Detail: detail, Inputs: []*Rel{in}, Cols: partialCols(in, opts), InsertOnly: true, RowTime: -1}
	lr.build = func(b *builder, ins []*graph.Node) (*graph.Node, error) {
		return b.checkedChained(localAggOp, ins[0], opOf(exec.NewLocalAggregate, local))
	}
	gr := &Rel{Op: globalAggOp, Detail: detail, Inputs: []*Rel{lr}, Cols: cols, RowTime: -1,
		upsertKey: upTo(len(opts.GroupKeys)), hashedBy: upTo(len(opts.GroupKeys)), stateFormat: format}
	gr.updating(globalAggOp + "(" + groupBy + ")")
	gr.NoDeletes = in.InsertOnly
	gr.state = aggState(in, opts.GroupKeys, opts.Aggs, cols)
	key := exec.GlobalKey(opts).Of()
	gr.build = func(b *builder, ins []*graph.Node) (*graph.Node, error) {
		return b.checkedKeyed(globalAggOp, ins[0], key, opOf(exec.NewGlobalAggregate, opts))
	}
	return gr
}

// partialCols are the columns of a LocalAggregate's output: the group keys,
// then the accumulator [rows, n0, v0, n1, v1, …] (see exec's aggregator),
// where ni counts the values call i folded and vi is its running value.
func partialCols(in *Rel, opts exec.GroupAggOptions) []expr.Column {
	var cols []expr.Column
	for _, k := range opts.GroupKeys {
		c := in.Cols[k]
		c.Type.TimeAttr = ""
		cols = append(cols, c)
	}
	count := types.Type{Kind: types.BigInt}
	cols = append(cols, expr.Column{Name: "$rows", Type: count})
	for i, c := range opts.Aggs {
		v := types.Type{Kind: types.Null, Nullable: true} // counts keep no value
		if c.Kind != exec.CountStar && c.Kind != exec.Count {
			sum := c
			if c.Kind == exec.Avg {
				sum.Kind = exec.Sum // AVG accumulates a sum and divides by ni at the end
			}
			v = aggResultType(sum, in.Cols)
		}
		cols = append(cols, expr.Column{Name: fmt.Sprintf("$n%d", i), Type: count},
			expr.Column{Name: fmt.Sprintf("$v%d", i), Type: v})
	}
	return cols
}

const (
	localWindowAggOp  = "LocalWindowAggregate"
	globalWindowAggOp = "GlobalWindowAggregate"
)

// twoPhaseWindow decides whether a window aggregation runs in two phases,
// as Flink's TwoStageOptimizedWindowAggregateRule decides: the strategy is
// not ONE_PHASE and every call merges (as for group aggregation), and, over
// a window TVF, the windows follow event time. Window aggregation needs no
// mini-batches for it: the local phase flushes before each watermark,
// which is what fires windows. Over a window TVF the local phase combines
// rows per key and slice before the exchange (Nexmark q5: 9.2 M bids
// crossed it one by one).
func (p *Planner) twoPhaseWindow(opts exec.WindowAggOptions) bool {
	if p.Config.AggPhase == AggPhaseOne || hasFirstOrLastValue(opts.Aggs) || opts.ProcTime {
		return false
	}
	_, err := exec.NewLocalAggregate(localWindowOptions(opts))
	return err == nil
}

// localWindowOptions are the local phase's: the group keys and the two
// window columns are its keys.
func localWindowOptions(opts exec.WindowAggOptions) exec.LocalAggOptions {
	if opts.Attached == nil {
		return exec.LocalAggOptions{Agg: exec.GroupAggOptions{GroupKeys: opts.GroupKeys, Aggs: opts.Aggs, InputInsertOnly: true},
			BatchSize: localSliceGroups, Slice: &exec.SliceOptions{Window: opts.Window, TimeField: opts.TimeField, Zone: opts.Zone}}
	}
	keys := append(append([]int(nil), opts.GroupKeys...), opts.Attached.Start, opts.Attached.End)
	return exec.LocalAggOptions{Agg: exec.GroupAggOptions{GroupKeys: keys, Aggs: opts.Aggs, InputInsertOnly: true}}
}

// localSliceGroups bounds a window TVF's local phase's buffer (key ×
// slice entries), as Flink's table.exec.window-agg.buffer-size-limit
// (100,000) does.
const localSliceGroups = 100_000

// twoPhaseWindowAgg turns the one-phase plan r of opts over in into
// LocalWindowAggregate (chained to the input: [keys…, window_start,
// window_end, accumulator…] per key and window, flushed before every
// watermark and checkpoint barrier) → exchange by the keys →
// GlobalWindowAggregate (merges the partials; r's output).
func (p *Planner) twoPhaseWindowAgg(in *Rel, r *Rel, opts exec.WindowAggOptions) *Rel {
	local := localWindowOptions(opts)
	cols := partialCols(in, local.Agg)
	n := len(opts.GroupKeys)
	global := opts
	global.GroupKeys = upTo(n)
	if opts.Attached == nil { // [keys…, slice start, accumulator…]
		cols = slices.Insert(cols, n, expr.Column{Name: "$slice", Type: types.Type{Kind: types.BigInt}})
		global.Slices, global.TimeField = true, n
	} else {
		global.Attached, global.Partial = &exec.WindowColumns{Start: n, End: n + 1}, true
	}
	lr := &Rel{Op: localWindowAggOp, Detail: r.Detail, Inputs: []*Rel{in}, Cols: cols, InsertOnly: true, RowTime: -1}
	lr.build = func(b *builder, ins []*graph.Node) (*graph.Node, error) {
		return b.checkedChained(localWindowAggOp, ins[0], opOf(exec.NewLocalAggregate, local))
	}
	r.Op, r.Inputs = globalWindowAggOp, []*Rel{lr}
	key := exec.FieldKeyOf(upTo(n)...)
	r.build = func(b *builder, ins []*graph.Node) (*graph.Node, error) {
		return b.checkedKeyed(globalWindowAggOp, ins[0], key, opOf(exec.NewWindowAggregate, global))
	}
	return r
}
