package checkpointstorage

import (
	"fmt"
	"time"
)

// RetryPolicy is exponential back-off without jitter: attempt n (1-based)
// that failed transiently is followed, after Initial·2^(n-1) capped at Max,
// by attempt n+1, up to Attempts attempts in all. It is pure — the caller
// sleeps — so tests check the schedule without waiting. (No jitter: each
// file has one writer, and the subtasks of a checkpoint fail at different
// moments already.)
type RetryPolicy struct {
	// Attempts is the total number of attempts, the first included.
	Attempts int
	// Initial is the delay after the first failed attempt; Max caps it.
	Initial, Max time.Duration
}

// DefaultRetry tries 4 times over about 0.7 s (0.1, 0.2, 0.4 s between).
var DefaultRetry = RetryPolicy{Attempts: 4, Initial: 100 * time.Millisecond, Max: 2 * time.Second}

// Next returns the delay before attempt failed+1, or false when failed
// attempts exhaust the policy.
func (p RetryPolicy) Next(failed int) (time.Duration, bool) {
	if failed >= p.Attempts {
		return 0, false
	}
	d := p.Initial
	for i := 1; i < failed && d < p.Max; i++ {
		d *= 2
	}
	return min(d, p.Max), true
}

func (p RetryPolicy) validate() error {
	if p.Attempts < 1 || p.Initial < 0 || p.Max < p.Initial {
		return fmt.Errorf("checkpointstorage: retry policy %+v: want Attempts ≥ 1 and 0 ≤ Initial ≤ Max", p)
	}
	return nil
}
