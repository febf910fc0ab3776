// Package duration reads Flink's duration syntax — a number, optional
// spaces, and an optional unit ("10 s", "500ms", "1 min", "2 h", "1 d"; a
// bare number is milliseconds), as Flink's TimeUtils.parseDuration does — for
// every option that takes one: SQL SET keys, table hints, connector options.
// It imports nothing of Weir's.
package duration

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// units maps Flink's unit labels (and their plurals) to durations.
var units = map[string]time.Duration{
	"ns": time.Nanosecond, "nano": time.Nanosecond, "nanos": time.Nanosecond,
	"nanosecond": time.Nanosecond, "nanoseconds": time.Nanosecond,
	"us": time.Microsecond, "µs": time.Microsecond, "micro": time.Microsecond, "micros": time.Microsecond,
	"microsecond": time.Microsecond, "microseconds": time.Microsecond,
	"ms": time.Millisecond, "milli": time.Millisecond, "millis": time.Millisecond,
	"millisecond": time.Millisecond, "milliseconds": time.Millisecond,
	"s": time.Second, "sec": time.Second, "secs": time.Second, "second": time.Second, "seconds": time.Second,
	"m": time.Minute, "min": time.Minute, "mins": time.Minute, "minute": time.Minute, "minutes": time.Minute,
	"h": time.Hour, "hour": time.Hour, "hours": time.Hour,
	"d": 24 * time.Hour, "day": 24 * time.Hour, "days": 24 * time.Hour,
}

// Parse reads s in Flink's duration syntax. The number may have a fraction
// ("1.5 s"); the unit is case-insensitive. A Go duration with several parts
// ("1m30s") is accepted too. The error quotes s and gives examples.
func Parse(s string) (time.Duration, error) {
	t := strings.TrimSpace(strings.ToLower(s))
	i := strings.IndexFunc(t, func(r rune) bool { return !unicode.IsDigit(r) && r != '.' })
	num, unit := t, "ms"
	if i >= 0 {
		num, unit = strings.TrimSpace(t[:i]), strings.TrimSpace(t[i:])
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || num == "" {
		return 0, fmt.Errorf("%q is not a duration (e.g. '10 s', '500 ms', '1 min')", t)
	}
	u, ok := units[unit]
	if !ok {
		if d, err := time.ParseDuration(t); err == nil {
			return d, nil
		}
		return 0, fmt.Errorf("%q has an unknown time unit %q (use ms, s, min, h or d)", t, unit)
	}
	return time.Duration(v * float64(u)), nil
}
