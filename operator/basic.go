package operator

import "github.com/weirstream/weir/event"

// Map applies Fn to every record's value and keeps its timestamp.
type Map struct {
	Base
	Fn func(v any) (any, error)
}

// ProcessElement emits Fn(r.Value).
func (m *Map) ProcessElement(r event.Record) error {
	v, err := m.Fn(r.Value)
	if err != nil {
		return err
	}
	m.Ctx.Output.Collect(event.Record{Value: v, Timestamp: r.Timestamp})
	return nil
}

// Filter keeps the records for which Fn is true.
type Filter struct {
	Base
	Fn func(v any) (bool, error)
}

// ProcessElement emits r when Fn(r.Value) holds.
func (f *Filter) ProcessElement(r event.Record) error {
	ok, err := f.Fn(r.Value)
	if err != nil {
		return err
	}
	if ok {
		f.Ctx.Output.Collect(r)
	} else {
		f.Ctx.Metrics.Filtered++
	}
	return nil
}

// Collector is what user functions emit into: values on the main output
// (with the input's timestamp) or on a side output.
type Collector struct {
	out Output
	ts  event.Timestamp
}

// NewCollector returns a collector emitting into out with timestamp ts.
func NewCollector(out Output, ts event.Timestamp) Collector { return Collector{out: out, ts: ts} }

// Collect emits v on the main output.
func (c *Collector) Collect(v any) { c.out.Collect(event.Record{Value: v, Timestamp: c.ts}) }

// CollectWithTimestamp emits v with event time ts.
func (c *Collector) CollectWithTimestamp(v any, ts event.Timestamp) {
	c.out.Collect(event.Record{Value: v, Timestamp: ts})
}

// Side emits v on the side output tag.
func (c *Collector) Side(tag string, v any) {
	c.out.CollectSide(tag, event.Record{Value: v, Timestamp: c.ts})
}

// Timestamp is the event time of the element being processed.
func (c *Collector) Timestamp() event.Timestamp { return c.ts }

// FlatMap calls Fn for every record; Fn emits zero or more values.
type FlatMap struct {
	Base
	Fn  func(v any, out *Collector) error
	col Collector
}

// ProcessElement calls Fn.
func (f *FlatMap) ProcessElement(r event.Record) error {
	f.col = Collector{out: f.Ctx.Output, ts: r.Timestamp}
	return f.Fn(r.Value, &f.col)
}

// KeyedProcessFunction is the user's logic of a KeyedProcess operator.
type KeyedProcessFunction interface {
	// Open is called once with the operator's context (register state here).
	Open(ctx *Context) error
	ProcessElement(v any, kc *KeyedContext, out *Collector) error
	OnTimer(t Timer, kc *KeyedContext, out *Collector) error
}

// KeyedContext gives a keyed function its key, time and timers.
type KeyedContext struct {
	ctx *Context
	// Key is the current key.
	Key any
}

// NewKeyedContext returns a keyed context over an operator's context.
func NewKeyedContext(ctx *Context) KeyedContext { return KeyedContext{ctx: ctx} }

// CurrentWatermark is the operator's event-time clock.
func (k *KeyedContext) CurrentWatermark() event.Timestamp { return k.ctx.Timers.CurrentWatermark() }

// CurrentProcessingTime is the wall clock in ms.
func (k *KeyedContext) CurrentProcessingTime() event.Timestamp { return k.ctx.Now() }

// RegisterEventTimeTimer makes OnTimer fire for the current key when the
// watermark passes ts.
func (k *KeyedContext) RegisterEventTimeTimer(ts event.Timestamp) {
	k.ctx.Timers.Register(EventTime, ts, "")
}

// RegisterProcessingTimeTimer makes OnTimer fire at wall-clock time ts.
func (k *KeyedContext) RegisterProcessingTimeTimer(ts event.Timestamp) {
	k.ctx.Timers.Register(ProcessingTime, ts, "")
}

// DeleteEventTimeTimer removes a timer registered for the current key.
func (k *KeyedContext) DeleteEventTimeTimer(ts event.Timestamp) {
	k.ctx.Timers.Delete(EventTime, ts, "")
}

// KeyedProcess runs a KeyedProcessFunction (Flink's KeyedProcessOperator).
type KeyedProcess struct {
	Base
	Fn  KeyedProcessFunction
	kc  KeyedContext
	col Collector
}

// Open opens the function and makes this operator the timers' target.
func (p *KeyedProcess) Open(ctx *Context) error {
	if err := p.Base.Open(ctx); err != nil {
		return err
	}
	p.kc.ctx = ctx
	ctx.Timers.SetTriggerable(p)
	return p.Fn.Open(ctx)
}

// ProcessElement sets the key and calls the function.
func (p *KeyedProcess) ProcessElement(r event.Record) error {
	p.kc.Key = p.Ctx.SetCurrentKeyOf(r.Value)
	p.col = Collector{out: p.Ctx.Output, ts: r.Timestamp}
	return p.Fn.ProcessElement(r.Value, &p.kc, &p.col)
}

// OnTimer calls the function's OnTimer with the timer's key set.
func (p *KeyedProcess) OnTimer(t Timer) error {
	p.kc.Key = t.Key
	ts := t.Timestamp
	if t.Domain == ProcessingTime {
		ts = event.NoTimestamp
	}
	p.col = Collector{out: p.Ctx.Output, ts: ts}
	return p.Fn.OnTimer(t, &p.kc, &p.col)
}
