package restart

import "time"

// Recurrence spots a failure that restarts cannot get past. A restart
// resumes from the last checkpoint, so the job reads the same input again:
// a record that cannot be parsed, a sink record too large, a sink topic that
// does not exist fails the job at exactly the same place every time, and
// every restart repeats the output since the checkpoint on the way. Flink
// restarts such a job forever. A failure whose error names its position
// (see the caller's PositionedError) is remembered; the same error at the
// same position again means no restart will get past it.
//
// Positions are forgotten after Forget without a failure at them, so an
// error at a place that is fixed meanwhile (a topic created, a directory
// made writable) and breaks again much later restarts once more.
type Recurrence struct {
	// Forget is how long a failure's position is remembered. Default 0:
	// DefaultForget.
	Forget time.Duration
	seen   map[string]time.Time
}

// DefaultForget is how long a position is remembered by default: Flink's
// default reset-backoff-threshold, the time after which it considers a job
// stable again.
const DefaultForget = time.Hour

// Failed records a failure at now with err's message at position ("" when
// the error has none), and reports whether the same error happened at the
// same position before.
func (r *Recurrence) Failed(now time.Time, position, message string) bool {
	if position == "" {
		return false
	}
	forget := r.Forget
	if forget <= 0 {
		forget = DefaultForget
	}
	if r.seen == nil {
		r.seen = map[string]time.Time{}
	}
	for k, at := range r.seen {
		if now.Sub(at) >= forget {
			delete(r.seen, k)
		}
	}
	key := position + "\x00" + message
	_, again := r.seen[key]
	r.seen[key] = now
	return again
}
