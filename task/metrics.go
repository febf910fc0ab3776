package task

import (
	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/metrics"
	"github.com/weirstream/weir/operator"
)

// publishMetrics copies the subtask's counts — kept in plain fields by
// this goroutine, the only one that writes them — into its metrics group's
// atomics, for a reporter to read at scrape time. It runs at every
// processing-time tick and once more when the subtask has exited, so the
// last published values are the final ones.
func (t *Subtask) publishMetrics() {
	g := t.spec.Metrics
	if g == nil || t.head == nil {
		return
	}
	ops := g.Operators
	if t.src != nil && len(ops) > 0 {
		// A source has no input watermark; its output is the chain's input.
		publishOperator(ops[0], t.src.spec.Metrics, event.MinWatermark, t.head.lastWM)
		ops = ops[1:]
	}
	in := t.head.lastWM
	for i, c := range t.spec.Chain {
		if i >= len(ops) {
			break
		}
		out := t.outs[i].lastWM
		publishOperator(ops[i], c.Ctx.Metrics, in, out)
		in = out
	}
	if c := t.spec.Counters; c != nil {
		g.RecordsIn.Store(c.In.Load())
	}
	out := t.head.metrics.RecordsOut // a source-only chain
	if n := len(t.spec.Chain); n > 0 {
		out = t.spec.Chain[n-1].Ctx.Metrics.RecordsOut
	}
	g.RecordsOut.Store(out)
}

func publishOperator(g *metrics.Operator, m *operator.Metrics, in, out event.Timestamp) {
	g.RecordsIn.Store(m.RecordsIn)
	g.RecordsOut.Store(m.RecordsOut)
	g.LateRecordsDropped.Store(m.LateDropped)
	g.InputWatermark.Store(in)
	g.OutputWatermark.Store(out)
}
