package main

import (
	"errors"

	"github.com/weirstream/weir/state"
)

// setIncremental turns incremental checkpoints of the Pebble factory on or
// off. Until they are on main, every checkpoint is a full canonical
// snapshot and asking for incremental ones is an error.
func setIncremental(_ state.BackendFactory, on bool) error {
	if on {
		return errors.New("largestate: -incremental: this build has no incremental checkpoints yet; run with -incremental=false")
	}
	return nil
}
