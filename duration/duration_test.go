package duration

import (
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"500": 500 * time.Millisecond, "500 ms": 500 * time.Millisecond, "10s": 10 * time.Second,
		"10 S": 10 * time.Second, "1 min": time.Minute, "2 minutes": 2 * time.Minute, "3m": 3 * time.Minute,
		"12 h": 12 * time.Hour, "1 d": 24 * time.Hour, "7 days": 7 * 24 * time.Hour, "1.5 s": 1500 * time.Millisecond,
		"250 us": 250 * time.Microsecond, "1m30s": 90 * time.Second, " 5 sec ": 5 * time.Second,
	} {
		if got, err := Parse(in); err != nil || got != want {
			t.Errorf("Parse(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for in, want := range map[string]string{
		"soon":         `"soon" is not a duration (e.g. '10 s', '500 ms', '1 min')`,
		"":             `"" is not a duration (e.g. '10 s', '500 ms', '1 min')`,
		"3 fortnights": `"3 fortnights" has an unknown time unit "fortnights" (use ms, s, min, h or d)`,
	} {
		if _, err := Parse(in); err == nil || err.Error() != want {
			t.Errorf("Parse(%q) error = %v; want %s", in, err, want)
		}
	}
}
