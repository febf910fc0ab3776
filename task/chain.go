package task

import (
	"fmt"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/metrics"
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
	// tail, set on the one output of the chain that a tail samples, is
	// the subtask's (see metrics.Subtask.Tail).
	tail *metrics.Tail
}

func (o *chainOutput) Collect(r event.Record) {
	o.metrics.RecordsOut++
	if o.tail != nil {
		o.offerTail(r)
	}
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

// offerTail offers r to the readers tailing the subtask: each that takes
// it gets it printed; none waits (metrics.Tail).
func (o *chainOutput) offerTail(r event.Record) {
	for _, rd := range o.tail.Readers() {
		if rd.Take() {
			rd.Put(sampleOf(o.t.spec.ID.Index, r))
		}
	}
}

// sampleOf prints record r of subtask i as a tail shows it: a row's kind
// and fields, any other value as one insert of one field.
func sampleOf(i int, r event.Record) metrics.Sample {
	s := metrics.Sample{Subtask: i, Kind: event.Insert.String(), Timestamp: int64(r.Timestamp)}
	row, ok := r.Value.(event.Row)
	if !ok {
		s.Fields = []string{fmt.Sprint(r.Value)}
		return s
	}
	s.Kind = row.Kind.String()
	s.Fields = make([]string, len(row.Fields))
	for k, f := range row.Fields {
		if f == nil {
			s.Fields[k] = "NULL"
			continue
		}
		s.Fields[k] = fmt.Sprint(f)
	}
	return s
}
