package watermark

import (
	"errors"
	"fmt"
	"time"
)

// ErrInvalidStrategy is wrapped by every error Strategy.Validate returns.
var ErrInvalidStrategy = errors.New("watermark: invalid strategy")

// Strategy configures the watermark generator of each split of a source,
// like Flink's WatermarkStrategy. The zero value is valid: ascending
// timestamps, no idleness, no future-skew guard.
type Strategy struct {
	// MaxOutOfOrderness is how much later than a newer record a record may
	// arrive and still be on time (Flink's forBoundedOutOfOrderness).
	// Default 0: timestamps are ascending per split (forMonotonousTimestamps).
	MaxOutOfOrderness time.Duration
	// IdleTimeout marks a split idle after this long without records, so it
	// does not hold back the watermark (Flink's withIdleness, FLIP-27 and
	// FLIP-182). Default 0: a split never turns idle, as in Flink, where a
	// silent partition stalls event time until the user sets this.
	IdleTimeout time.Duration
	// MaxFutureSkew keeps a record whose timestamp is more than this ahead
	// of processing time from advancing the watermark; the record still
	// flows and is counted (see FutureSkewGuard). Flink has no such guard.
	// Default 0: off, so results match Flink's and sources whose event time
	// legitimately runs ahead of the wall clock keep working; set it (e.g.
	// to 1h) for sources stamped by producers' clocks.
	MaxFutureSkew time.Duration
}

// Validate reports a negative duration, naming the field.
func (s Strategy) Validate() error {
	for _, f := range []struct {
		name string
		d    time.Duration
	}{
		{"MaxOutOfOrderness", s.MaxOutOfOrderness},
		{"IdleTimeout", s.IdleTimeout},
		{"MaxFutureSkew", s.MaxFutureSkew},
	} {
		if f.d < 0 {
			return fmt.Errorf("%w: %s is %v; use 0 or a positive duration", ErrInvalidStrategy, f.name, f.d)
		}
	}
	return nil
}

// NewGenerator returns a fresh generator for one split: bounded
// out-of-orderness, inside the future-skew guard if MaxFutureSkew > 0,
// inside idleness detection if IdleTimeout > 0. It does not validate;
// negative durations act as 0.
func (s Strategy) NewGenerator() Generator {
	var g Generator = &BoundedOutOfOrderness{MaxOutOfOrderness: s.MaxOutOfOrderness}
	if s.MaxFutureSkew > 0 {
		g = WithMaxFutureSkew(g, s.MaxFutureSkew)
	}
	return WithIdleness(g, s.IdleTimeout)
}
