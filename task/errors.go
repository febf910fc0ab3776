package task

import (
	"fmt"

	"github.com/weirstream/weir/event"
)

// CloseError is a part of a subtask — an operator of its chain (by UID)
// or its source reader ("source") — that failed while the subtask shut
// down: its Close returned Err, or it panicked with Panic.
type CloseError struct {
	Subtask  event.SubtaskID
	Operator string
	Err      error
	Panic    any
}

// Error implements error.
func (e *CloseError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("task: subtask %s: operator %s panicked while closing: %v (stack in the log)", e.Subtask, e.Operator, e.Panic)
	}
	return fmt.Sprintf("task: subtask %s: operator %s: close: %v", e.Subtask, e.Operator, e.Err)
}

// Unwrap returns what Close returned (nil after a panic).
func (e *CloseError) Unwrap() error { return e.Err }
