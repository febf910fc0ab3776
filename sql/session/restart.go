package session

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/weirstream/weir/restart"
	"github.com/weirstream/weir/runtime"
)

// restartStrategy reads Flink's restart-strategy.* keys. Unset type: the
// runtime's default, exponential-delay, when checkpointing is on (the
// caller has set none when it is off), as in Flink 2.x.
func (st Settings) restartStrategy(o *runtime.Options) error {
	var (
		s   restart.Strategy
		err error
	)
	switch v := strings.ToLower(strings.TrimSpace(st["restart-strategy.type"])); v {
	case "":
		return nil
	case "none", "off", "disable":
		s = restart.None{}
	case "fixed-delay", "fixeddelay":
		s, err = st.fixedDelay()
	case "failure-rate", "failurerate":
		s, err = st.failureRate()
	case "exponential-delay", "exponentialdelay":
		s, err = st.exponentialDelay()
	default:
		return fmt.Errorf("SET 'restart-strategy.type' = '%s': want exponential-delay, fixed-delay, failure-rate or none", st["restart-strategy.type"])
	}
	if err == nil {
		err = s.Validate()
	}
	o.Restart = s
	return err
}

func (st Settings) fixedDelay() (restart.Strategy, error) {
	f := restart.FixedDelay{Attempts: 1, Delay: time.Second} // Flink's defaults
	r := settingsReader{st: st, prefix: "restart-strategy.fixed-delay."}
	r.int("attempts", &f.Attempts)
	r.duration("delay", &f.Delay)
	return f, r.err
}

func (st Settings) failureRate() (restart.Strategy, error) {
	f := restart.FailureRate{MaxFailuresPerInterval: 1, Interval: time.Minute, Delay: time.Second} // Flink's defaults
	r := settingsReader{st: st, prefix: "restart-strategy.failure-rate."}
	r.int("max-failures-per-interval", &f.MaxFailuresPerInterval)
	r.duration("failure-rate-interval", &f.Interval)
	r.duration("delay", &f.Delay)
	return f, r.err
}

func (st Settings) exponentialDelay() (restart.Strategy, error) {
	e := restart.DefaultExponentialDelay()
	r := settingsReader{st: st, prefix: "restart-strategy.exponential-delay."}
	r.duration("initial-backoff", &e.InitialBackoff)
	r.duration("max-backoff", &e.MaxBackoff)
	r.float("backoff-multiplier", &e.BackoffMultiplier)
	r.duration("reset-backoff-threshold", &e.ResetBackoffThreshold)
	r.float("jitter-factor", &e.JitterFactor)
	if v := strings.ToLower(strings.TrimSpace(st[r.prefix+"attempts-before-reset-backoff"])); v != "infinite" {
		r.int("attempts-before-reset-backoff", &e.AttemptsBeforeResetBackoff)
	}
	return e, r.err
}

// settingsReader reads the keys under prefix that are set, keeping the
// first error.
type settingsReader struct {
	st     Settings
	prefix string
	err    error
}

func (r *settingsReader) duration(key string, p *time.Duration) {
	if d, ok, err := r.st.duration(r.prefix + key); err != nil {
		r.fail(err)
	} else if ok {
		*p = d
	}
}

func (r *settingsReader) int(key string, p *int) {
	if n, ok, err := r.st.int(r.prefix + key); err != nil {
		r.fail(err)
	} else if ok {
		*p = n
	}
}

func (r *settingsReader) float(key string, p *float64) {
	v, ok := r.st[r.prefix+key]
	if !ok {
		return
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil {
		r.fail(fmt.Errorf("SET '%s' = '%s': not a number", r.prefix+key, v))
		return
	}
	*p = f
}

func (r *settingsReader) fail(err error) {
	if r.err == nil {
		r.err = err
	}
}
