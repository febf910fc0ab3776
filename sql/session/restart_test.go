package session

import (
	"testing"
)

// Flink's restart-strategy keys: exponential-delay by default with
// checkpointing on, none with it off; each strategy by its Flink names.
func TestRestartStrategySettings(t *testing.T) {
	on := "execution.checkpointing.interval"
	for _, c := range []struct {
		set  Settings
		want string
	}{
		{Settings{}, "none"},
		{Settings{on: "10 s"}, "exponential-delay (initial-backoff 1s, max-backoff 1m0s, backoff-multiplier 1.5, " +
			"reset-backoff-threshold 1h0m0s, jitter-factor 0.1, attempts-before-reset-backoff unlimited)"},
		{Settings{on: "10 s", "restart-strategy.type": "exponential-delay", "restart-strategy.exponential-delay.initial-backoff": "200 ms",
			"restart-strategy.exponential-delay.max-backoff": "10 s", "restart-strategy.exponential-delay.backoff-multiplier": "2",
			"restart-strategy.exponential-delay.reset-backoff-threshold": "5 min", "restart-strategy.exponential-delay.jitter-factor": "0",
			"restart-strategy.exponential-delay.attempts-before-reset-backoff": "7"},
			"exponential-delay (initial-backoff 200ms, max-backoff 10s, backoff-multiplier 2, reset-backoff-threshold 5m0s, " +
				"jitter-factor 0, attempts-before-reset-backoff 7)"},
		{Settings{on: "10 s", "restart-strategy.type": "exponentialdelay", "restart-strategy.exponential-delay.attempts-before-reset-backoff": "infinite"},
			"exponential-delay (initial-backoff 1s, max-backoff 1m0s, backoff-multiplier 1.5, " +
				"reset-backoff-threshold 1h0m0s, jitter-factor 0.1, attempts-before-reset-backoff unlimited)"},
		{Settings{on: "10 s", "restart-strategy.type": "fixed-delay"}, "fixed-delay (attempts 1, delay 1s)"},
		{Settings{on: "10 s", "restart-strategy.type": "fixeddelay", "restart-strategy.fixed-delay.attempts": "3",
			"restart-strategy.fixed-delay.delay": "5 s"}, "fixed-delay (attempts 3, delay 5s)"},
		{Settings{on: "10 s", "restart-strategy.type": "failure-rate"},
			"failure-rate (max-failures-per-interval 1, failure-rate-interval 1m0s, delay 1s)"},
		{Settings{on: "10 s", "restart-strategy.type": "failurerate", "restart-strategy.failure-rate.max-failures-per-interval": "3",
			"restart-strategy.failure-rate.failure-rate-interval": "5 min", "restart-strategy.failure-rate.delay": "10 s"},
			"failure-rate (max-failures-per-interval 3, failure-rate-interval 5m0s, delay 10s)"},
		{Settings{on: "10 s", "restart-strategy.type": "none"}, "none"},
		{Settings{on: "10 s", "restart-strategy.type": "off"}, "none"},
		{Settings{on: "10 s", "restart-strategy.type": "sometimes"},
			"SET 'restart-strategy.type' = 'sometimes': want exponential-delay, fixed-delay, failure-rate or none"},
		{Settings{on: "10 s", "restart-strategy.type": "exponential-delay", "restart-strategy.exponential-delay.backoff-multiplier": "x"},
			"SET 'restart-strategy.exponential-delay.backoff-multiplier' = 'x': not a number"},
		{Settings{on: "10 s", "restart-strategy.type": "exponential-delay", "restart-strategy.exponential-delay.jitter-factor": "1.5"},
			"restart: 'restart-strategy.exponential-delay.jitter-factor' is 1.5; want 0 to 1"},
	} {
		o, err := c.set.RuntimeOptions("job")
		got := ""
		if err != nil {
			got = err.Error()
		} else {
			o.EnsureDefaults("job")
			got = o.Restart.String()
		}
		if got != c.want {
			t.Errorf("%v:\n got %s\nwant %s", c.set, got, c.want)
		}
	}
}
