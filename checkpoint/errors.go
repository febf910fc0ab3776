package checkpoint

import (
	"errors"
	"fmt"

	"github.com/weirstream/weir/event"
)

// Causes of a failed checkpoint, found in FailedError.Cause and matched with
// errors.Is.
var (
	// ErrExpired: not every task acknowledged within Options.Timeout.
	ErrExpired = errors.New("checkpoint: expired")
	// ErrDeclined: a task declined the checkpoint.
	ErrDeclined = errors.New("checkpoint: declined")
	// ErrPersistFailed: the driver could not write the checkpoint metadata.
	ErrPersistFailed = errors.New("checkpoint: metadata not persisted")
	// ErrAborted: AbortAll aborted the checkpoint, e.g. on job failover.
	ErrAborted = errors.New("checkpoint: aborted")
	// ErrSubsumed: a newer checkpoint completed first.
	ErrSubsumed = errors.New("checkpoint: subsumed")
)

// ErrTooManyFailures is wrapped by FailJob.Err when more checkpoints failed in
// a row than Options.TolerableFailures allows.
var ErrTooManyFailures = errors.New("checkpoint: tolerable failed checkpoints exceeded")

// FailedError tells why checkpoint ID did not complete. It is the Reason of
// every AbortCheckpoint action and the Failure of a failed CheckpointStats.
type FailedError struct {
	// ID is the checkpoint that failed.
	ID event.CheckpointID
	// Cause is one of ErrExpired, ErrDeclined, ErrPersistFailed, ErrAborted
	// or ErrSubsumed.
	Cause error
	// Message is the whole human-readable text, naming the subtasks and
	// phases involved.
	Message string
	// Err is the error a task, the driver or AbortAll handed in (decline
	// reason, persist error, abort reason); nil for expiry and subsumption.
	Err error
}

// Error returns Message.
func (e *FailedError) Error() string { return e.Message }

// Unwrap returns Cause and, when set, Err, so errors.Is matches both.
func (e *FailedError) Unwrap() []error {
	if e.Err == nil {
		return []error{e.Cause}
	}
	return []error{e.Cause, e.Err}
}

// countsAsFailure reports whether the failure counts towards
// Options.TolerableFailures: aborts on failover and subsumption do not.
func (e *FailedError) countsAsFailure() bool {
	return e.Cause != ErrAborted && e.Cause != ErrSubsumed
}

func declinedError(id event.CheckpointID, task event.SubtaskID, p Phase, reason error) *FailedError {
	msg := fmt.Sprintf("checkpoint %d declined by %s (%s): %s", id, task, p, errText(reason))
	return &FailedError{ID: id, Cause: ErrDeclined, Message: msg, Err: reason}
}

func persistFailedError(id event.CheckpointID, err error) *FailedError {
	msg := fmt.Sprintf("checkpoint %d metadata could not be persisted: %s", id, errText(err))
	return &FailedError{ID: id, Cause: ErrPersistFailed, Message: msg, Err: err}
}

func abortedError(id event.CheckpointID, reason error) *FailedError {
	msg := fmt.Sprintf("checkpoint %d aborted: %s", id, errText(reason))
	return &FailedError{ID: id, Cause: ErrAborted, Message: msg, Err: reason}
}

func subsumedError(id, by event.CheckpointID) *FailedError {
	msg := fmt.Sprintf("checkpoint %d subsumed by completed checkpoint %d", id, by)
	return &FailedError{ID: id, Cause: ErrSubsumed, Message: msg}
}

func tooManyFailures(n, tolerated int, last error) error {
	return fmt.Errorf("%w: %d consecutive checkpoints failed, %d tolerated "+
		"(raise execution.checkpointing.tolerable-failed-checkpoints to tolerate more); last: %w",
		ErrTooManyFailures, n, tolerated, last)
}

func errText(err error) string {
	if err == nil {
		return "no reason given"
	}
	return err.Error()
}
