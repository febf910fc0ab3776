package metrics

import (
	"math"
	"sync"
	"sync/atomic"
)

// Float is a float64 read and written atomically (a meter's rate, a time
// ratio). The zero value is 0.
type Float struct{ bits atomic.Uint64 }

// Load returns the value.
func (f *Float) Load() float64 { return math.Float64frombits(f.bits.Load()) }

// Store sets the value.
func (f *Float) Store(v float64) { f.bits.Store(math.Float64bits(v)) }

// Gauge is a value a connector publishes under a name of its own, in its
// operator's scope, with labels: Flink's user-variable groups, such as
// KafkaSourceReader.topic.<t>.partition.<p>.currentOffset, which Flink's
// Prometheus reporter exports as
// …_operator_KafkaSourceReader_topic_partition_currentOffset{topic=…,partition=…}.
// Gauges of one name carry the same label names.
type Gauge struct {
	// Name is the metric's name after the operator scope; Labels are
	// name, value pairs.
	Name   string
	Labels []string
	v      atomic.Int64
}

// Load returns the value (0 for a nil gauge).
func (g *Gauge) Load() int64 {
	if g == nil {
		return 0
	}
	return g.v.Load()
}

// Store sets the value; a nil gauge discards it.
func (g *Gauge) Store(v int64) {
	if g != nil {
		g.v.Store(v)
	}
}

// Add adds d to the value (a counter); a nil gauge discards it.
func (g *Gauge) Add(d int64) {
	if g != nil {
		g.v.Add(d)
	}
}

type customs struct {
	mu     sync.Mutex
	gauges []*Gauge
}

// Gauge returns the operator's gauge of that name and labels (name, value
// pairs), made at 0 on first use. A nil operator (a job without metrics)
// returns a gauge nobody reads, so callers need not check. Safe for
// concurrent use; keep the result rather than look it up per record.
func (o *Operator) Gauge(name string, labels ...string) *Gauge {
	if o == nil {
		return &Gauge{Name: name, Labels: labels}
	}
	c := &o.custom
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, g := range c.gauges {
		if g.Name == name && equal(g.Labels, labels) {
			return g
		}
	}
	g := &Gauge{Name: name, Labels: append([]string(nil), labels...)}
	c.gauges = append(c.gauges, g)
	return g
}

// Gauges returns the operator's custom gauges, in the order first used.
func (o *Operator) Gauges() []*Gauge {
	o.custom.mu.Lock()
	defer o.custom.mu.Unlock()
	return append([]*Gauge(nil), o.custom.gauges...)
}

// Find returns the value of the operator's gauge name with those labels,
// and whether it exists.
func (o *Operator) Find(name string, labels ...string) (int64, bool) {
	for _, g := range o.Gauges() {
		if g.Name == name && equal(g.Labels, labels) {
			return g.Load(), true
		}
	}
	return 0, false
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
