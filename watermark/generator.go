package watermark

import (
	"time"

	"github.com/weirstream/weir/event"
)

// Generator derives the watermark of one source split (a Kafka partition, a
// file) from the timestamps of its records, as Flink's WatermarkGenerator
// does in a FLIP-27 source. A generator is pure: now is processing time,
// passed in by the caller.
type Generator interface {
	// OnEvent observes the event time of a record read from the split.
	// event.NoTimestamp is ignored.
	OnEvent(ts event.Timestamp, now time.Time)
	// OnPeriodicEmit returns the split's current watermark, which never
	// decreases, and whether the split is idle. The caller calls it every
	// auto-watermark interval.
	OnPeriodicEmit(now time.Time) (wm event.Timestamp, idle bool)
}

// BoundedOutOfOrderness is Flink's WatermarkStrategy.forBoundedOutOfOrderness:
// records may arrive up to MaxOutOfOrderness later than a record with a
// higher timestamp. The watermark is the highest timestamp seen minus
// MaxOutOfOrderness minus 1 ms (a watermark W promises no more records at or
// below W, and a record exactly MaxOutOfOrderness behind is still on time).
// Before the first record it is MinWatermark. With MaxOutOfOrderness 0 it is
// Flink's forMonotonousTimestamps. The zero value is ready to use.
type BoundedOutOfOrderness struct {
	// MaxOutOfOrderness is the allowed lateness, in whole milliseconds
	// (finer parts are dropped; a negative value counts as 0).
	MaxOutOfOrderness time.Duration

	maxTs event.Timestamp
	seen  bool
}

// OnEvent implements Generator.
func (g *BoundedOutOfOrderness) OnEvent(ts event.Timestamp, _ time.Time) {
	if ts == event.NoTimestamp {
		return
	}
	if !g.seen || ts > g.maxTs {
		g.maxTs, g.seen = ts, true
	}
}

// OnPeriodicEmit implements Generator; the split is never idle by itself
// (wrap the generator with WithIdleness for that).
func (g *BoundedOutOfOrderness) OnPeriodicEmit(time.Time) (event.Timestamp, bool) {
	return g.watermark(), false
}

func (g *BoundedOutOfOrderness) watermark() event.Timestamp {
	if !g.seen {
		return event.MinWatermark
	}
	lag := max(g.MaxOutOfOrderness.Milliseconds(), 0) + 1
	if g.maxTs < event.MinWatermark+lag { // the subtraction would wrap around
		return event.MinWatermark
	}
	return g.maxTs - lag
}

// WithIdleness wraps gen so that it reports the split idle once no record has
// arrived for timeout of processing time (Flink's
// WatermarkStrategy.withIdleness). The clock starts at the first call; the
// next record makes the split active again. A timeout <= 0 returns gen as it
// is. Wrap outside WithMaxFutureSkew, so that a skewed record still counts
// as activity.
func WithIdleness(gen Generator, timeout time.Duration) Generator {
	if timeout <= 0 {
		return gen
	}
	return &idleness{inner: gen, timeout: timeout}
}

type idleness struct {
	inner   Generator
	timeout time.Duration
	last    time.Time // last activity: a record, or the first call
	started bool
}

// OnEvent implements Generator: any record, counted or not by an inner
// guard, is activity.
func (g *idleness) OnEvent(ts event.Timestamp, now time.Time) {
	g.inner.OnEvent(ts, now)
	g.last, g.started = now, true
}

// OnPeriodicEmit implements Generator.
func (g *idleness) OnPeriodicEmit(now time.Time) (event.Timestamp, bool) {
	if !g.started {
		g.last, g.started = now, true
	}
	wm, idle := g.inner.OnPeriodicEmit(now)
	return wm, idle || now.Sub(g.last) >= g.timeout
}

// FutureSkewed forwards to the wrapped generator; see the package function.
func (g *idleness) FutureSkewed() int64 { return FutureSkewed(g.inner) }

// FirstFutureSkewed forwards to the wrapped generator.
func (g *idleness) FirstFutureSkewed() event.Timestamp { return FirstFutureSkewed(g.inner) }

// FutureSkewGuard keeps records stamped too far in the future — by a
// producer's wrong clock or a corrupt field — from moving the watermark. One
// such record would otherwise push event time ahead of every other record
// and make them all late, to be dropped by windows. A record whose timestamp
// is more than the skew past processing time still flows downstream, but
// the wrapped generator does not see it; FutureSkewed counts them.
//
// Flink has no such guard. Ours is off unless configured (see
// Strategy.MaxFutureSkew), because it assumes event time follows the wall
// clock: a job replaying history is unaffected, but one whose timestamps are
// deliberately ahead (schedules, simulations, another time base) would stall.
type FutureSkewGuard struct {
	inner  Generator
	skew   time.Duration
	skewed int64
	first  event.Timestamp // of the first skewed record
}

// WithMaxFutureSkew wraps gen with a FutureSkewGuard. A skew <= 0 turns the
// guard off: every record reaches gen.
func WithMaxFutureSkew(gen Generator, skew time.Duration) *FutureSkewGuard {
	return &FutureSkewGuard{inner: gen, skew: skew}
}

// OnEvent implements Generator.
func (g *FutureSkewGuard) OnEvent(ts event.Timestamp, now time.Time) {
	if TooFarAhead(ts, now, g.skew) {
		if g.skewed == 0 {
			g.first = ts
		}
		g.skewed++
		return
	}
	g.inner.OnEvent(ts, now)
}

// TooFarAhead reports whether a record stamped ts, read at now, is more
// than skew past the wall clock: what a FutureSkewGuard of skew keeps from
// its generator. A skew <= 0 is no limit.
func TooFarAhead(ts event.Timestamp, now time.Time, skew time.Duration) bool {
	return skew > 0 && ts != event.NoTimestamp && ts > now.UnixMilli()+skew.Milliseconds()
}

// OnPeriodicEmit implements Generator.
func (g *FutureSkewGuard) OnPeriodicEmit(now time.Time) (event.Timestamp, bool) {
	return g.inner.OnPeriodicEmit(now)
}

// FutureSkewed returns how many records were too far in the future to
// advance the watermark.
func (g *FutureSkewGuard) FutureSkewed() int64 { return g.skewed }

// FirstFutureSkewed returns the timestamp of the first record that was too
// far in the future, for a warning that names it; meaningless while
// FutureSkewed is 0.
func (g *FutureSkewGuard) FirstFutureSkewed() event.Timestamp { return g.first }

// FirstFutureSkewed returns the timestamp of the first record g kept from
// advancing the watermark (see FutureSkewed), or NoTimestamp if none.
func FirstFutureSkewed(g Generator) event.Timestamp {
	if c, ok := g.(interface{ FirstFutureSkewed() event.Timestamp }); ok && FutureSkewed(g) > 0 {
		return c.FirstFutureSkewed()
	}
	return event.NoTimestamp
}

// FutureSkewed returns how many records g kept from advancing the watermark
// because they were too far in the future: the count of the FutureSkewGuard
// inside g, or 0 if it has none. It works on any Generator, such as the one
// Strategy.NewGenerator returns.
func FutureSkewed(g Generator) int64 {
	if c, ok := g.(interface{ FutureSkewed() int64 }); ok {
		return c.FutureSkewed()
	}
	return 0
}
