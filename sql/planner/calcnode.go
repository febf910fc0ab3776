package planner

import (
	"github.com/weirstream/weir/graph"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/sql/exec"
	"github.com/weirstream/weir/sql/expr"
)

// calcNode is a Calc node of the graph under construction: the stages it
// runs, and whether another node already reads it.
type calcNode struct {
	stages []*exec.Calc
	read   bool
	// evals are the expressions of the last stage when it is a projection
	// (project), else nil.
	evals []*expr.Compiled
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
	if prev, ok := b.calcs[in]; ok && !prev.read && prev.evals != nil {
		if picked := pickColumns(prev.evals, evals); picked != nil {
			prev.stages = prev.stages[:len(prev.stages)-1]
			return b.addCalc(name, in, projectStage(picked), picked)
		}
	}
	return b.addCalc(name, in, projectStage(evals), evals)
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
}
