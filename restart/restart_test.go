package restart

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
)

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// The scripts under testdata drive one Backoff and one Recurrence:
//
//	exponential-delay|fixed-delay|failure-rate|none [option=value…]   starts a run
//	fail t=<offset> [jitter=<0..1>] [at=<position> err=<message>]    a failure
func TestRestart(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		var b Backoff
		var rec Recurrence
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			switch d.Cmd {
			case "fail":
				return fail(t, d, b, &rec)
			}
			s, err := strategy(d)
			if err != nil {
				return err.Error()
			}
			if err := s.Validate(); err != nil {
				return err.Error()
			}
			b, rec = s.NewBackoff(), Recurrence{}
			return s.String()
		})
	})
}

func fail(t *testing.T, d *datadriven.TestData, b Backoff, rec *Recurrence) string {
	now := epoch.Add(dur(t, arg(d, "t", "0s")))
	jitter, err := strconv.ParseFloat(arg(d, "jitter", "0.5"), 64)
	if err != nil {
		t.Fatal(err)
	}
	out := ""
	if rec.Failed(now, arg(d, "at", ""), arg(d, "err", "")) {
		out = "recurred; "
	}
	dec := b.Failed(now, jitter)
	if !dec.Restart {
		return out + "fail: " + dec.Reason
	}
	return out + "restart after " + dec.Delay.String()
}

func strategy(d *datadriven.TestData) (Strategy, error) {
	o := map[string]string{}
	for _, a := range d.CmdArgs {
		o[a.Key] = strings.Join(a.Vals, ",")
	}
	switch d.Cmd {
	case "exponential-delay":
		e := DefaultExponentialDelay()
		set(o, "initial-backoff", &e.InitialBackoff)
		set(o, "max-backoff", &e.MaxBackoff)
		set(o, "reset-backoff-threshold", &e.ResetBackoffThreshold)
		setf(o, "backoff-multiplier", &e.BackoffMultiplier)
		setf(o, "jitter-factor", &e.JitterFactor)
		seti(o, "attempts-before-reset-backoff", &e.AttemptsBeforeResetBackoff)
		return e, nil
	case "fixed-delay":
		f := FixedDelay{Attempts: 1, Delay: time.Second}
		seti(o, "attempts", &f.Attempts)
		set(o, "delay", &f.Delay)
		return f, nil
	case "failure-rate":
		f := FailureRate{MaxFailuresPerInterval: 1, Interval: time.Minute, Delay: time.Second}
		seti(o, "max-failures-per-interval", &f.MaxFailuresPerInterval)
		set(o, "failure-rate-interval", &f.Interval)
		set(o, "delay", &f.Delay)
		return f, nil
	case "none":
		return None{}, nil
	}
	return nil, fmt.Errorf("unknown command %q", d.Cmd)
}

func arg(d *datadriven.TestData, key, def string) string {
	for _, a := range d.CmdArgs {
		if a.Key == key {
			return strings.Join(a.Vals, ",")
		}
	}
	return def
}

func dur(t *testing.T, s string) time.Duration {
	v, err := time.ParseDuration(s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func set(o map[string]string, k string, p *time.Duration) {
	if v, ok := o[k]; ok {
		*p, _ = time.ParseDuration(v)
	}
}

func setf(o map[string]string, k string, p *float64) {
	if v, ok := o[k]; ok {
		*p, _ = strconv.ParseFloat(v, 64)
	}
}

func seti(o map[string]string, k string, p *int) {
	if v, ok := o[k]; ok {
		*p, _ = strconv.Atoi(v)
	}
}
