package runtime_bench

import (
	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/state"
)

// reduceOp sums int64 values per key in keyed ValueState and emits the sum.
type reduceOp struct {
	operator.Base
	sum state.ValueState[int64]
}

func newReduce() *reduceOp { return &reduceOp{} }

func (r *reduceOp) Open(ctx *operator.Context) error {
	if err := r.Base.Open(ctx); err != nil {
		return err
	}
	r.sum = state.Value(ctx.Keyed, state.ValueDescriptor[int64]{Name: "sum"})
	return nil
}

func (r *reduceOp) ProcessElement(rec event.Record) error {
	r.Ctx.SetCurrentKeyOf(rec.Value)
	s, _ := r.sum.Value()
	s += rec.Value.(int64)
	r.sum.Update(s)
	r.Ctx.Output.Collect(event.Record{Value: s, Timestamp: rec.Timestamp})
	return nil
}
