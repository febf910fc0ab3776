package task

import (
	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/metrics"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/state"
)

// publishMetrics copies the subtask's counts — kept in plain fields by
// this goroutine, the only one that writes them — into its metrics group's
// atomics, for a reporter to read at scrape time. It runs at every
// processing-time tick and once more when the subtask has exited (final),
// so the last published values are the final ones. It reports whether a
// rate window closed.
func (t *Subtask) publishMetrics(final bool) bool {
	g := t.spec.Metrics
	if g == nil || t.head == nil {
		return false
	}
	var cur totals
	ops := g.Operators
	if t.src != nil && len(ops) > 0 {
		// A source has no input watermark; its output is the chain's input.
		m := t.src.spec.Metrics
		publishOperator(ops[0], m, event.MinWatermark, t.head.lastWM)
		cur.recordsIn, cur.bytesIn = m.RecordsIn, m.BytesIn
		ops = ops[1:]
	}
	in := t.head.lastWM
	for i, c := range t.spec.Chain {
		cur.bytesOut += c.Ctx.Metrics.BytesOut
		if i >= len(ops) {
			continue
		}
		out := t.outs[i].lastWM
		publishOperator(ops[i], c.Ctx.Metrics, in, out)
		in = out
	}
	if c := t.spec.Counters; c != nil && t.src == nil {
		cur.recordsIn = c.In.Load()
	}
	cur.recordsOut = t.head.metrics.RecordsOut // a source-only chain
	if n := len(t.spec.Chain); n > 0 {
		cur.recordsOut = t.spec.Chain[n-1].Ctx.Metrics.RecordsOut
	}
	g.RecordsIn.Store(cur.recordsIn)
	g.RecordsOut.Store(cur.recordsOut)
	g.BytesIn.Store(cur.bytesIn)
	g.BytesOut.Store(cur.bytesOut)
	closed := t.acct != nil && t.acct.publish(g, cur, final)
	if closed || final {
		t.publishStateSizes(ops)
	}
	return closed
}

// publishStateSizes stores the keyed backends' size estimates into the
// chain's operator groups (ops[i] is Chain[i]'s). It runs when a rate
// window closes, not at every tick: an estimate walks the key groups.
func (t *Subtask) publishStateSizes(ops []*metrics.Operator) {
	for i, c := range t.spec.Chain {
		if se, ok := c.Ctx.Keyed.(state.SizeEstimator); ok && i < len(ops) {
			ops[i].StateSize.Store(se.EstimatedSize())
		}
	}
}

func publishOperator(g *metrics.Operator, m *operator.Metrics, in, out event.Timestamp) {
	g.RecordsIn.Store(m.RecordsIn)
	g.RecordsOut.Store(m.RecordsOut)
	g.LateRecordsDropped.Store(m.LateDropped)
	g.InputWatermark.Store(in)
	g.OutputWatermark.Store(out)
	g.BytesIn.Store(m.BytesIn)
	g.BytesOut.Store(m.BytesOut)
	g.Commits.Store(m.Commits)
	g.LastCommitMs.Store(m.LastCommitDuration.Milliseconds())
}
