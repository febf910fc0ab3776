package window

import "errors"

var (
	// ErrInvalidOptions is wrapped by every error Options.Validate and the
	// assigners' Validate return.
	ErrInvalidOptions = errors.New("window: invalid options")
	// ErrNoTimestamp is returned for a record without event time: windows
	// need one.
	ErrNoTimestamp = errors.New("window: record has no timestamp")
	// ErrCorruptNamespace marks a timer or state namespace that does not
	// name a window.
	ErrCorruptNamespace = errors.New("window: corrupt window namespace")
)
