package checkpoint

import (
	"errors"
	"fmt"
	"time"
)

// DefaultTimeout is the default for Options.Timeout.
const DefaultTimeout = 10 * time.Minute

// UnlimitedFailures is the Options.TolerableFailures value that never fails
// the job however many checkpoints fail in a row.
const UnlimitedFailures = -1

// Options configures a Coordinator. Call EnsureDefaults, then Validate.
// The names in parentheses are the Flink configuration keys that Weir's
// configuration layer maps onto each field.
type Options struct {
	// Interval is the time between two periodic triggers, measured from the
	// previous trigger, periodic or not (execution.checkpointing.interval).
	// Default 0, which disables periodic checkpoints: only TriggerNow starts
	// one. Must be >= 0.
	Interval time.Duration

	// Timeout is how long after its trigger a checkpoint may stay pending;
	// the first Tick at or after that expires it
	// (execution.checkpointing.timeout). Default 10 minutes. Must be > 0.
	Timeout time.Duration

	// MinPause is the minimum time between the end (completion or abort) of
	// one checkpoint and the next periodic trigger
	// (execution.checkpointing.min-pause). TriggerNow ignores it. Default 0.
	// Must be >= 0.
	MinPause time.Duration

	// MaxConcurrent is how many checkpoints may be pending at once, counting
	// those whose metadata the driver is still persisting
	// (execution.checkpointing.max-concurrent-checkpoints). Default 1.
	// Must be >= 1.
	MaxConcurrent int

	// TolerableFailures is how many checkpoints in a row may fail (expire,
	// be declined, or fail to persist) before the coordinator asks the driver
	// to fail the job; one more returns a FailJob action
	// (execution.checkpointing.tolerable-failed-checkpoints). Aborts on
	// failover and subsumed checkpoints do not count, and a completed
	// checkpoint resets the count. Default 0: the first failure fails the
	// job. UnlimitedFailures (-1) never fails it. Must be >= -1.
	TolerableFailures int

	// Unaligned turns on unaligned checkpoints
	// (execution.checkpointing.unaligned.enabled): a task snapshots at a
	// checkpoint's first barrier without blocking its other inputs, and the
	// data in flight before their barriers is persisted with the checkpoint
	// and replayed on restore (see package barrier). Exactly-once only;
	// savepoints stay aligned. Needs MaxConcurrent 1, as in Flink. Default
	// false.
	Unaligned bool

	// AlignedTimeout, with Unaligned, starts each checkpoint aligned and
	// switches it to unaligned in a task whose alignment lasts this long
	// (execution.checkpointing.aligned-checkpoint-timeout). Default 0:
	// unaligned from the first barrier. Must be >= 0.
	AlignedTimeout time.Duration
}

// EnsureDefaults fills every zero field that has a non-zero default:
// Timeout and MaxConcurrent. A zero Interval stays zero (periodic
// checkpoints disabled).
func (o *Options) EnsureDefaults() {
	if o.Timeout == 0 {
		o.Timeout = DefaultTimeout
	}
	if o.MaxConcurrent == 0 {
		o.MaxConcurrent = 1
	}
}

// Validate reports every field that is out of range, joined into one error
// that names the field and its allowed range, or nil. It expects
// EnsureDefaults to have run: a zero Timeout or MaxConcurrent is an error.
func (o Options) Validate() error {
	var errs []error
	check := func(bad bool, format string, args ...any) {
		if bad {
			errs = append(errs, fmt.Errorf("checkpoint: "+format, args...))
		}
	}
	check(o.Interval < 0, "Options.Interval is %v; want >= 0 (0 disables periodic checkpoints)", o.Interval)
	check(o.Timeout <= 0, "Options.Timeout is %v; want > 0 (EnsureDefaults sets %v)", o.Timeout, DefaultTimeout)
	check(o.MinPause < 0, "Options.MinPause is %v; want >= 0", o.MinPause)
	check(o.MaxConcurrent < 1, "Options.MaxConcurrent is %d; want >= 1 (EnsureDefaults sets 1)", o.MaxConcurrent)
	check(o.AlignedTimeout < 0, "Options.AlignedTimeout is %v; want >= 0 (0: unaligned from the first barrier)", o.AlignedTimeout)
	check(o.Unaligned && o.MaxConcurrent > 1,
		"Options.Unaligned needs MaxConcurrent 1, got %d (execution.checkpointing.max-concurrent-checkpoints)", o.MaxConcurrent)
	check(o.TolerableFailures < UnlimitedFailures,
		"Options.TolerableFailures is %d; want >= 0, or -1 for unlimited", o.TolerableFailures)
	return errors.Join(errs...)
}
