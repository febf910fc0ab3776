package planner

import (
	"github.com/weirstream/weir/graph"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/sql/exec"
)

// calcNode is a Calc node of the graph under construction: the stages it
// runs, and whether another node already reads it.
type calcNode struct {
	stages []*exec.Calc
	read   bool
}

// calc adds a Calc (filter and/or projection) after in. When in is itself
// a Calc that nothing reads yet, the two fuse into one node (Flink's
// FlinkCalcMergeRule): a row then crosses one operator instead of a
// chain of them, and is boxed and allocated once.
func (b *builder) calc(name string, in *graph.Node, stage *exec.Calc) *graph.Node {
	if prev, ok := b.calcs[in]; ok && !prev.read {
		prev.stages = append(prev.stages, stage)
		stages := append([]*exec.Calc(nil), prev.stages...)
		in.NewOperator = func() operator.Operator { return exec.FuseCalcs(stages...) }
		return in
	}
	n := b.op(name, func() operator.Operator { return exec.FuseCalcs(stage) })
	b.forward(in, n, 0)
	if b.calcs == nil {
		b.calcs = map[*graph.Node]*calcNode{}
	}
	b.calcs[n] = &calcNode{stages: []*exec.Calc{stage}}
	return n
}

// markRead records that an edge leaves n, so no Calc fuses into it any more.
func (b *builder) markRead(n *graph.Node) {
	if c, ok := b.calcs[n]; ok {
		c.read = true
	}
}
