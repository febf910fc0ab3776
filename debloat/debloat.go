// Package debloat sizes the batches in flight on a subtask's input
// channels to the subtask's measured throughput, so that the data queued
// in front of it drains in about a target time (Flink's buffer debloating,
// FLIP-183). It is a pure state machine: the subtask tells it what it
// processed and when, and carries out the batch size it returns.
package debloat

import (
	"fmt"
	"math"
	"time"
)

// Options configure a Debloater; every field documents its default, filled
// by EnsureDefaults.
type Options struct {
	// Enabled turns debloating on
	// (taskmanager.network.memory.buffer-debloat.enabled, default false).
	Enabled bool
	// Target is how long the data in flight in front of a subtask should
	// take it to process (...buffer-debloat.target, default 1 s).
	Target time.Duration
	// Period is how often the batch size is recalculated
	// (...buffer-debloat.period, default 200 ms).
	Period time.Duration
	// Samples is the number of periods the throughput is averaged over: an
	// exponential moving average with weight 2/(Samples+1)
	// (...buffer-debloat.samples, default 20).
	Samples int
	// ThresholdPercent is the least change, in percent of the current
	// size, worth announcing (...buffer-debloat.threshold-percentages,
	// default 25): smaller changes would only make senders cut batches
	// differently for nothing. A change to MinBatch or MaxBatch is
	// announced whatever its size.
	ThresholdPercent int
	// MinBatch and MaxBatch bound the batch size in records (default 1
	// and 256, the runtime's batch size: debloating only shrinks batches
	// below it, as Flink's only shrinks buffers below the segment size).
	MinBatch, MaxBatch int
}

// EnsureDefaults fills unset fields with their defaults.
func (o *Options) EnsureDefaults() {
	if o.Target == 0 {
		o.Target = time.Second
	}
	if o.Period == 0 {
		o.Period = 200 * time.Millisecond
	}
	if o.Samples == 0 {
		o.Samples = 20
	}
	if o.ThresholdPercent == 0 {
		o.ThresholdPercent = 25
	}
	if o.MinBatch == 0 {
		o.MinBatch = 1
	}
	if o.MaxBatch == 0 {
		o.MaxBatch = 256
	}
}

// Validate reports an unusable configuration, by Flink's option names.
func (o *Options) Validate() error {
	const p = "taskmanager.network.memory.buffer-debloat."
	switch {
	case o.Target <= 0:
		return fmt.Errorf("debloat: '%starget' must be positive, got %v", p, o.Target)
	case o.Period <= 0:
		return fmt.Errorf("debloat: '%speriod' must be positive, got %v", p, o.Period)
	case o.Samples < 1:
		return fmt.Errorf("debloat: '%ssamples' must be at least 1, got %d", p, o.Samples)
	case o.ThresholdPercent < 0 || o.ThresholdPercent > 100:
		return fmt.Errorf("debloat: '%sthreshold-percentages' must be 0 to 100, got %d", p, o.ThresholdPercent)
	case o.MinBatch < 1 || o.MaxBatch < o.MinBatch:
		return fmt.Errorf("debloat: batch sizes must satisfy 1 <= min (%d) <= max (%d)", o.MinBatch, o.MaxBatch)
	}
	return nil
}

// Sample is what the subtask measured up to the moment of a Tick.
type Sample struct {
	// Now is the current time; Idle the total time the subtask has waited
	// for input so far (it only grows). Idle time is left out of the
	// throughput, as Flink's ThroughputCalculator pauses while its task
	// is idle: a subtask with nothing to do is not slow. Time spent
	// back-pressured counts: it slows the draining of the input.
	Now  time.Time
	Idle time.Duration
	// Buffered is the number of records in flight towards the subtask
	// now: sent on its input channels and not yet processed.
	Buffered int64
	// Batches is the number of batches that can be in flight towards the
	// subtask: its channels times their credits.
	Batches int
}

// Decision is the result of a Tick that closed a period.
type Decision struct {
	// BatchSize is the batch size senders should cut, in records;
	// Announce is set when it differs from the last one announced.
	BatchSize int
	Announce  bool
	// Throughput is the averaged throughput, records per second of
	// non-idle time.
	Throughput float64
	// TimeToConsume is how long the buffered records would take at that
	// throughput (Flink's estimatedTimeToConsumeBuffersMs).
	TimeToConsume time.Duration
}

// Debloater recalculates one subtask's batch size. Not safe for
// concurrent use: the subtask's goroutine owns it.
type Debloater struct {
	o Options
	// start and idle are where the current period began.
	start   time.Time
	idle    time.Duration
	records int64
	// throughput is the moving average (records/s); measured is false
	// until the first period with non-idle time.
	throughput float64
	measured   bool
	size       int
}

// New returns a Debloater with o (defaults filled) whose batch size is
// MaxBatch until it has measured.
func New(o Options) *Debloater {
	o.EnsureDefaults()
	return &Debloater{o: o, size: o.MaxBatch}
}

// BatchSize is the batch size last announced.
func (d *Debloater) BatchSize() int { return d.size }

// Processed counts n records the subtask took from its input channels.
func (d *Debloater) Processed(n int) { d.records += int64(n) }

// Tick closes the current period if Period has passed since it began
// (the first Tick only starts one) and returns the new decision; ok is
// false while the period runs.
func (d *Debloater) Tick(s Sample) (dec Decision, ok bool) {
	if d.start.IsZero() {
		d.start, d.idle, d.records = s.Now, s.Idle, 0
		return Decision{}, false
	}
	elapsed := s.Now.Sub(d.start)
	if elapsed < d.o.Period {
		return Decision{}, false
	}
	d.measure(elapsed - (s.Idle - d.idle))
	d.start, d.idle, d.records = s.Now, s.Idle, 0
	dec = Decision{BatchSize: d.size, Throughput: d.throughput, TimeToConsume: d.timeToConsume(s.Buffered)}
	if !d.measured {
		return dec, true
	}
	if n := d.desired(s.Batches); d.worthAnnouncing(n) {
		d.size = n
		dec.BatchSize, dec.Announce = n, true
	}
	return dec, true
}

// measure folds the period's throughput over busy (its non-idle time)
// into the moving average. A period spent all idle tells nothing about
// the subtask's speed and keeps the average as it is.
func (d *Debloater) measure(busy time.Duration) {
	if busy <= 0 {
		return
	}
	tp := float64(d.records) / busy.Seconds()
	if !d.measured {
		d.throughput, d.measured = tp, true
		return
	}
	alpha := 2 / float64(d.o.Samples+1)
	d.throughput += alpha * (tp - d.throughput)
}

// desired is the batch size at which `batches` full batches in flight hold
// Target's worth of records at the measured throughput, within bounds.
func (d *Debloater) desired(batches int) int {
	want := d.throughput * d.o.Target.Seconds() / float64(max(1, batches))
	return int(min(float64(d.o.MaxBatch), max(float64(d.o.MinBatch), math.Round(want))))
}

// worthAnnouncing reports whether n differs from the current size by at
// least the threshold, or is a bound the current size is not at.
func (d *Debloater) worthAnnouncing(n int) bool {
	if n == d.size {
		return false
	}
	if n == d.o.MinBatch || n == d.o.MaxBatch {
		return true
	}
	diff := math.Abs(float64(n - d.size))
	return diff*100 >= float64(d.o.ThresholdPercent*d.size)
}

// timeToConsume is how long buffered records take at the measured
// throughput (0 before it is measured or with nothing buffered).
func (d *Debloater) timeToConsume(buffered int64) time.Duration {
	if !d.measured || buffered <= 0 || d.throughput <= 0 {
		return 0
	}
	return time.Duration(float64(buffered) / d.throughput * float64(time.Second))
}
