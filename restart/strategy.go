package restart

import (
	"fmt"
	"math"
	"time"
)

// Strategy is a restart strategy's configuration (Flink's
// restart-strategy.type and its options).
type Strategy interface {
	// NewBackoff starts the strategy's state for one run of a job.
	NewBackoff() Backoff
	// Validate reports an unusable configuration, naming the option.
	Validate() error
	// String is Flink's name of the strategy and its settings.
	String() string
}

// Backoff is the restart state of one run of a job.
type Backoff interface {
	// Failed records a failure at now and decides. jitter is a random draw
	// in [0, 1), used by strategies with jitter.
	Failed(now time.Time, jitter float64) Decision
}

// Decision is what a strategy decided about one failure.
type Decision struct {
	// Restart is true when the job restarts after Delay.
	Restart bool
	Delay   time.Duration
	// Reason says, when Restart is false, which limit was reached and the
	// option that sets it.
	Reason string
}

func restartAfter(d time.Duration) Decision { return Decision{Restart: true, Delay: d} }

func giveUp(format string, args ...any) Decision {
	return Decision{Reason: fmt.Sprintf(format, args...)}
}

// ExponentialDelay is Flink's exponential-delay strategy, its default when
// checkpointing is on (Flink 1.19 and 2.x): the first restart waits
// InitialBackoff, each further one BackoffMultiplier times longer, up to
// MaxBackoff, each ± JitterFactor of it at random; once the job has run
// ResetBackoffThreshold since its last restart without failing, the next
// failure starts over from InitialBackoff. Use DefaultExponentialDelay for
// Flink's defaults.
type ExponentialDelay struct {
	// InitialBackoff: restart-strategy.exponential-delay.initial-backoff, 1 s.
	InitialBackoff time.Duration
	// MaxBackoff: restart-strategy.exponential-delay.max-backoff, 1 min.
	MaxBackoff time.Duration
	// BackoffMultiplier: restart-strategy.exponential-delay.backoff-multiplier, 1.5.
	BackoffMultiplier float64
	// ResetBackoffThreshold: restart-strategy.exponential-delay.reset-backoff-threshold, 1 h.
	ResetBackoffThreshold time.Duration
	// JitterFactor: restart-strategy.exponential-delay.jitter-factor, 0.1.
	JitterFactor float64
	// AttemptsBeforeResetBackoff: restart-strategy.exponential-delay.attempts-before-reset-backoff,
	// the most restarts between two resets of the backoff; -1 (Flink's
	// default, infinite): no limit.
	AttemptsBeforeResetBackoff int
}

// DefaultExponentialDelay is ExponentialDelay with Flink 2.x's defaults.
func DefaultExponentialDelay() ExponentialDelay {
	return ExponentialDelay{InitialBackoff: time.Second, MaxBackoff: time.Minute, BackoffMultiplier: 1.5,
		ResetBackoffThreshold: time.Hour, JitterFactor: 0.1, AttemptsBeforeResetBackoff: -1}
}

// Validate implements Strategy.
func (e ExponentialDelay) Validate() error {
	const p = "restart-strategy.exponential-delay."
	switch {
	case e.InitialBackoff <= 0:
		return fmt.Errorf("restart: '%sinitial-backoff' is %v; want a positive duration", p, e.InitialBackoff)
	case e.MaxBackoff < e.InitialBackoff:
		return fmt.Errorf("restart: '%smax-backoff' (%v) is below 'initial-backoff' (%v)", p, e.MaxBackoff, e.InitialBackoff)
	case !(e.BackoffMultiplier >= 1):
		return fmt.Errorf("restart: '%sbackoff-multiplier' is %v; want 1 or more", p, e.BackoffMultiplier)
	case e.ResetBackoffThreshold <= 0:
		return fmt.Errorf("restart: '%sreset-backoff-threshold' is %v; want a positive duration", p, e.ResetBackoffThreshold)
	case !(e.JitterFactor >= 0 && e.JitterFactor <= 1):
		return fmt.Errorf("restart: '%sjitter-factor' is %v; want 0 to 1", p, e.JitterFactor)
	case e.AttemptsBeforeResetBackoff == 0 || e.AttemptsBeforeResetBackoff < -1:
		return fmt.Errorf("restart: '%sattempts-before-reset-backoff' is %d; want 1 or more, or -1 for no limit", p, e.AttemptsBeforeResetBackoff)
	}
	return nil
}

// String implements fmt.Stringer.
func (e ExponentialDelay) String() string {
	return fmt.Sprintf("exponential-delay (initial-backoff %v, max-backoff %v, backoff-multiplier %g, "+
		"reset-backoff-threshold %v, jitter-factor %g, attempts-before-reset-backoff %s)", e.InitialBackoff,
		e.MaxBackoff, e.BackoffMultiplier, e.ResetBackoffThreshold, e.JitterFactor, limit(e.AttemptsBeforeResetBackoff))
}

// NewBackoff implements Strategy.
func (e ExponentialDelay) NewBackoff() Backoff { return &exponential{cfg: e} }

type exponential struct {
	cfg      ExponentialDelay
	backoff  time.Duration // of the last restart, before jitter
	attempts int           // restarts since the backoff was last reset
	restart  time.Time     // when the last restart happened; zero: none yet
}

func (x *exponential) Failed(now time.Time, jitter float64) Decision {
	if x.restart.IsZero() || now.Sub(x.restart) >= x.cfg.ResetBackoffThreshold {
		x.backoff, x.attempts = x.cfg.InitialBackoff, 0
	} else {
		x.backoff = min(roundMs(float64(x.backoff)*x.cfg.BackoffMultiplier), x.cfg.MaxBackoff)
	}
	x.attempts++
	if n := x.cfg.AttemptsBeforeResetBackoff; n >= 0 && x.attempts > n {
		return giveUp("exponential-delay: %d restarts since the job last ran %v without failing "+
			"('restart-strategy.exponential-delay.attempts-before-reset-backoff' = '%d')", n, x.cfg.ResetBackoffThreshold, n)
	}
	d := max(0, roundMs(float64(x.backoff)*(1+x.cfg.JitterFactor*(2*jitter-1))))
	x.restart = now.Add(d)
	return restartAfter(d)
}

func roundMs(ns float64) time.Duration {
	return time.Duration(math.Round(ns/float64(time.Millisecond))) * time.Millisecond
}

// FixedDelay is Flink's fixed-delay strategy: at most Attempts restarts
// (restart-strategy.fixed-delay.attempts; -1: no limit), each after Delay
// (restart-strategy.fixed-delay.delay).
type FixedDelay struct {
	Attempts int
	Delay    time.Duration
}

// Validate implements Strategy.
func (f FixedDelay) Validate() error {
	if f.Attempts < -1 || f.Delay < 0 {
		return fmt.Errorf("restart: fixed-delay with attempts %d and delay %v; want attempts of 0 or more (-1: no limit) and a delay of 0 or more", f.Attempts, f.Delay)
	}
	return nil
}

// String implements fmt.Stringer.
func (f FixedDelay) String() string {
	return fmt.Sprintf("fixed-delay (attempts %s, delay %v)", limit(f.Attempts), f.Delay)
}

// NewBackoff implements Strategy.
func (f FixedDelay) NewBackoff() Backoff { return &fixed{cfg: f} }

type fixed struct {
	cfg      FixedDelay
	restarts int
}

func (x *fixed) Failed(time.Time, float64) Decision {
	x.restarts++
	if x.cfg.Attempts >= 0 && x.restarts > x.cfg.Attempts {
		return giveUp("fixed-delay: %d restarts ('restart-strategy.fixed-delay.attempts' = '%d')", x.cfg.Attempts, x.cfg.Attempts)
	}
	return restartAfter(x.cfg.Delay)
}

// FailureRate is Flink's failure-rate strategy: restarts after Delay
// (restart-strategy.failure-rate.delay, 1 s) as long as no more than
// MaxFailuresPerInterval failures (restart-strategy.failure-rate.max-failures-per-interval,
// 1) fall within Interval (restart-strategy.failure-rate.failure-rate-interval, 1 min).
type FailureRate struct {
	MaxFailuresPerInterval int
	Interval, Delay        time.Duration
}

// Validate implements Strategy.
func (f FailureRate) Validate() error {
	if f.MaxFailuresPerInterval < 1 || f.Interval <= 0 || f.Delay < 0 {
		return fmt.Errorf("restart: failure-rate with max-failures-per-interval %d, failure-rate-interval %v and delay %v; "+
			"want at least 1, a positive interval and a delay of 0 or more", f.MaxFailuresPerInterval, f.Interval, f.Delay)
	}
	return nil
}

// String implements fmt.Stringer.
func (f FailureRate) String() string {
	return fmt.Sprintf("failure-rate (max-failures-per-interval %d, failure-rate-interval %v, delay %v)",
		f.MaxFailuresPerInterval, f.Interval, f.Delay)
}

// NewBackoff implements Strategy.
func (f FailureRate) NewBackoff() Backoff { return &rate{cfg: f} }

type rate struct {
	cfg      FailureRate
	failures []time.Time // within the interval before the last failure, oldest first
}

func (x *rate) Failed(now time.Time, _ float64) Decision {
	i := 0
	for i < len(x.failures) && now.Sub(x.failures[i]) >= x.cfg.Interval {
		i++
	}
	x.failures = append(x.failures[i:], now)
	if len(x.failures) > x.cfg.MaxFailuresPerInterval {
		return giveUp("failure-rate: %d failures within %v ('restart-strategy.failure-rate.max-failures-per-interval' = '%d')",
			len(x.failures), x.cfg.Interval, x.cfg.MaxFailuresPerInterval)
	}
	return restartAfter(x.cfg.Delay)
}

// None never restarts: Flink's none, its default when checkpointing is off
// (a restart could only start over).
type None struct{}

// Validate implements Strategy.
func (None) Validate() error { return nil }

// String implements fmt.Stringer.
func (None) String() string { return "none" }

// NewBackoff implements Strategy.
func (None) NewBackoff() Backoff { return none{} }

type none struct{}

func (none) Failed(time.Time, float64) Decision {
	return giveUp("restart strategy none ('restart-strategy.type' = 'none', the default without checkpointing)")
}

func limit(n int) string {
	if n < 0 {
		return "unlimited"
	}
	return fmt.Sprint(n)
}
