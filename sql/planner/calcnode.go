package planner

import (
	"github.com/weirstream/weir/graph"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/sql/exec"
	"github.com/weirstream/weir/sql/expr"
	"github.com/weirstream/weir/types"
)

// calcNode is a Calc node of the graph under construction: the stages it
// runs, and whether another node already reads it.
type calcNode struct {
	stages []*exec.Calc
	read   bool
	// evals are the expressions of the last stage when it is a projection
	// (project), else nil.
	evals []*expr.Compiled
	// inWidth, when not 0, is the width of the rows the node takes: a
	// projection of its only stage that picks exactly them passes them
	// through (see withRowNumber).
	inWidth int
}

// calc adds a Calc (filter and/or projection) after in. When in is itself
// a Calc that nothing reads yet, the two fuse into one node (Flink's
// FlinkCalcMergeRule): a row then crosses one operator instead of a
// chain of them, and is boxed and allocated once.
func (b *builder) calc(name string, in *graph.Node, stage *exec.Calc) *graph.Node {
	return b.addCalc(name, in, stage, nil)
}

// project adds a Calc projecting through evals after in. When in is a
// Calc that nothing reads yet whose last stage projects too, and evals
// only pick columns of that stage's output (SELECT a, c FROM a view, a
// sink taking the query's columns as they are), the two projections
// become one that evaluates only the picked expressions.
func (b *builder) project(name string, in *graph.Node, evals []*expr.Compiled) *graph.Node {
	if p, ok := b.picks[in]; ok && !p.read {
		if idx := p.compose(evals); idx != nil && p.set(idx) {
			p.idx = idx
			// The Calc stays, passing the node's rows on as they are: the
			// graph keeps its nodes, and so every operator its uid, by
			// which checkpoints and savepoints restore.
			refs := make([]*expr.Compiled, len(evals))
			for k, e := range evals {
				refs[k] = fieldRef(k, e.Type)
			}
			n := b.addCalc(name, in, &exec.Calc{}, refs)
			b.calcs[n].inWidth = len(refs)
			return n
		}
	}
	if prev, ok := b.calcs[in]; ok && !prev.read && prev.evals != nil {
		if picked := pickColumns(prev.evals, evals); picked != nil {
			prev.stages = prev.stages[:len(prev.stages)-1]
			stage := projectStage(picked)
			if len(prev.stages) == 0 && isIdentity(picked, prev.inWidth) {
				stage = &exec.Calc{} // the node's input rows as they are
			}
			return b.addCalc(name, in, stage, picked)
		}
	}
	return b.addCalc(name, in, projectStage(evals), evals)
}

// withRowNumber adds after n, whose rows have the columns cols, the Calc
// that appends a deduplication's row number, always 1. When a projection
// after it picks only n's columns, in order (the query does not select the
// row number: Nexmark q18), the Calc passes n's rows on as they are,
// instead of copying each row twice (appending, then dropping the number).
func (b *builder) withRowNumber(n *graph.Node, cols []expr.Column) *graph.Node {
	evals := make([]*expr.Compiled, len(cols)+1)
	for i, c := range cols {
		evals[i] = fieldRef(i, c.Type)
	}
	evals[len(cols)] = &expr.Compiled{Type: types.Type{Kind: types.BigInt}, Const: true,
		Eval: func([]any) (any, error) { return int64(1), nil }}
	out := b.project("Calc", n, evals)
	b.calcs[out].inWidth = len(cols)
	return out
}

// isIdentity reports whether evals read columns 0 to width-1 of a row of
// width columns, in order: the row itself.
func isIdentity(evals []*expr.Compiled, width int) bool {
	if width == 0 || len(evals) != width {
		return false
	}
	for i, e := range evals {
		if j, ok := e.Column(); !ok || j != i {
			return false
		}
	}
	return true
}

// pickColumns returns, when every expression of evals reads a column as is, the
// expressions of from that they read, else nil.
func pickColumns(from, evals []*expr.Compiled) []*expr.Compiled {
	out := make([]*expr.Compiled, len(evals))
	for i, e := range evals {
		j, ok := e.Column()
		if !ok || j >= len(from) {
			return nil
		}
		out[i] = from[j]
	}
	return out
}

// addCalc adds stage (whose projection's expressions are evals, or nil)
// after in, fused into in when in is a Calc that nothing reads yet.
func (b *builder) addCalc(name string, in *graph.Node, stage *exec.Calc, evals []*expr.Compiled) *graph.Node {
	if prev, ok := b.calcs[in]; ok && !prev.read {
		prev.stages = append(prev.stages, stage)
		prev.evals = evals
		stages := append([]*exec.Calc(nil), prev.stages...)
		in.NewOperator = func() operator.Operator { return exec.FuseCalcs(stages...) }
		return in
	}
	n := b.op(name, func() operator.Operator { return exec.FuseCalcs(stage) })
	b.forward(in, n, 0)
	if b.calcs == nil {
		b.calcs = map[*graph.Node]*calcNode{}
	}
	b.calcs[n] = &calcNode{stages: []*exec.Calc{stage}, evals: evals}
	return n
}

// markRead records that an edge leaves n, so no Calc fuses into it any more.
func (b *builder) markRead(n *graph.Node) {
	if c, ok := b.calcs[n]; ok {
		c.read = true
	}
	if p, ok := b.picks[n]; ok {
		p.read = true
	}
}

// pickNode is an operator node that can emit only some of the columns of
// its rows, in any order (a lookup join's Output): a projection of columns
// right after it, that nothing else reads, is folded into it (as Flink's
// code generator projects a join's output), so that a row is built once,
// not built and then picked from. The projection's Calc stays, as a
// pass-through: the operators' uids do not change.
type pickNode struct {
	width int   // the operator's columns
	idx   []int // the columns it emits; nil: all of them
	// set remakes the operator to emit the columns idx; false when it
	// cannot.
	set  func(idx []int) bool
	read bool
}

// pickable records that n, whose rows have width columns, can emit only
// some of them (see pickNode).
func (b *builder) pickable(n *graph.Node, width int, set func(idx []int) bool) {
	if b.picks == nil {
		b.picks = map[*graph.Node]*pickNode{}
	}
	b.picks[n] = &pickNode{width: width, set: set}
}

// compose returns the operator's columns that evals pick from what it
// emits now, or nil when an expression of evals is not a column.
func (p *pickNode) compose(evals []*expr.Compiled) []int {
	out := make([]int, len(evals))
	for k, e := range evals {
		j, ok := e.Column()
		switch {
		case !ok || j < 0:
			return nil
		case p.idx == nil && j < p.width:
			out[k] = j
		case p.idx != nil && j < len(p.idx):
			out[k] = p.idx[j]
		default:
			return nil
		}
	}
	return out
}
