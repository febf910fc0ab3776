package state

import "errors"

var (
	// ErrCorrupt is wrapped by every error from decoding bytes that are not
	// a valid encoding: a codec's Decode, or a backend's Restore.
	ErrCorrupt = errors.New("state: corrupt encoding")
	// ErrIncompatible reports a state registered twice under one name with
	// different kinds, or a restored state whose kind differs from its
	// registration.
	ErrIncompatible = errors.New("state: incompatible state registration")
	// ErrInvalidDescriptor reports a descriptor with an empty name, a
	// non-positive TTL, or a missing function.
	ErrInvalidDescriptor = errors.New("state: invalid state descriptor")
	// ErrRestoreAfterUse reports Restore called on a backend that already
	// has registered state or was already restored.
	ErrRestoreAfterUse = errors.New("state: restore must come before any state is used")
)
