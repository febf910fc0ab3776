package task

import (
	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
)

// chainOutput is the Output of one operator of a chain: the next chained
// operator is called directly; at the chain's end records go to writers.
type chainOutput struct {
	t       *Subtask
	next    operator.Operator
	writers []*RecordWriter
	side    map[string][]*RecordWriter
	lastWM  event.Timestamp
	metrics *operator.Metrics
	// nextMetrics are the next operator's (nil at the chain's end): its
	// RecordsIn is what this output hands it.
	nextMetrics *operator.Metrics
}

func (o *chainOutput) Collect(r event.Record) {
	o.metrics.RecordsOut++
	if o.next != nil {
		o.nextMetrics.RecordsIn++
		if o.t.err == nil {
			o.t.setErr(o.next.ProcessElement(r))
		}
		return
	}
	for _, w := range o.writers {
		w.Emit(r)
	}
}

func (o *chainOutput) CollectSide(tag string, r event.Record) {
	for _, w := range o.side[tag] {
		w.Emit(r)
	}
}

func (o *chainOutput) EmitWatermark(wm event.Timestamp) {
	if wm <= o.lastWM {
		return
	}
	o.lastWM = wm
	if o.next != nil {
		if o.t.err == nil {
			o.t.setErr(o.next.ProcessWatermark(wm))
		}
		return
	}
	c := event.Control{Kind: event.KindWatermark, Watermark: wm}
	for _, w := range o.writers {
		w.BroadcastControl(c)
	}
	for _, ws := range o.side {
		for _, w := range ws {
			w.BroadcastControl(c)
		}
	}
}
