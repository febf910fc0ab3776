package exec

import "errors"

var (
	// ErrInvalidOptions reports operator options that cannot work; the
	// message names the field and the fix.
	ErrInvalidOptions = errors.New("sql/exec: invalid options")
	// ErrNotRow reports a record whose value is not an event.Row.
	ErrNotRow = errors.New("sql/exec: record value is not an event.Row")
	// ErrType reports a field value of a type the operation cannot take,
	// e.g. SUM over a string or a time attribute that is NULL.
	ErrType = errors.New("sql/exec: value of the wrong type")
	// ErrUpdatesUnsupported reports an update or delete row (-U, +U, -D)
	// given to an operator configured for insert-only input: the planner
	// chose the wrong operator for the input's changelog mode.
	ErrUpdatesUnsupported = errors.New("sql/exec: operator accepts insert-only input")
)
