package runtime

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/weirstream/weir/state"
)

// UnclaimedStateError is a restore whose checkpoint holds state of
// operators the job no longer has (removed, or given another uid). As in
// Flink, the restore fails rather than drop that state silently, unless
// Options.IgnoreUnclaimedState says to (Flink's
// execution.savepoint.ignore-unclaimed-state, --allowNonRestoredState).
type UnclaimedStateError struct {
	Checkpoint string   // the checkpoint or savepoint restored
	UIDs       []string // operator uids in it that no operator of the job has
}

// Error implements error.
func (e *UnclaimedStateError) Error() string {
	return fmt.Sprintf("runtime: %s holds state of operators this job does not have (uid %s): "+
		"if they were renamed, give them their old uid again; to drop their state on purpose, set "+
		"'execution.savepoint.ignore-unclaimed-state' = 'true' (weir run --allow-non-restored-state)",
		e.Checkpoint, strings.Join(e.UIDs, ", "))
}

// checkUnclaimed fails a restore that would drop some operator's state,
// unless told to; dropped state is logged either way.
func (j *job) checkUnclaimed(r *restoredState) error {
	if r == nil || !r.complete {
		return nil
	}
	have := map[string]bool{}
	for _, v := range j.jg.Vertices {
		for _, n := range v.Nodes {
			have[n.UID] = true
		}
	}
	var left []string
	for uid := range r.parts {
		if !have[uid] {
			left = append(left, uid)
		}
	}
	if len(left) == 0 {
		return nil
	}
	slices.Sort(left)
	e := &UnclaimedStateError{Checkpoint: j.startedFrom, UIDs: left}
	if e.Checkpoint == "" {
		e.Checkpoint = fmt.Sprintf("checkpoint %d", r.id)
	}
	if !j.opts.IgnoreUnclaimedState {
		return e
	}
	j.opts.Logger.Warn("restore drops the state of operators this job does not have, as told",
		"checkpoint", e.Checkpoint, "uids", left)
	return nil
}

// BackendMismatchError is a restore of an incremental checkpoint into
// another state backend than the one that wrote it, which only that one
// restores (Flink refuses the same switch without a savepoint).
type BackendMismatchError struct {
	Checkpoint string // the checkpoint restored
	UID        string // an operator whose state it is
	Written    string // the state.backend.type that wrote it
	Job        string // the job's state.backend.type
}

// Error implements error.
func (e *BackendMismatchError) Error() string {
	return fmt.Sprintf("runtime: %s is an incremental checkpoint of state.backend.type '%s' (state of operator uid %s); "+
		"this job runs '%s', which cannot read it: restore it with '%s', and take a savepoint there "+
		"(savepoints restore on any backend), or checkpoint with 'execution.checkpointing.incremental' = 'false'",
		e.Checkpoint, e.Written, e.UID, e.Job, e.Written)
}

// checkBackend fails, before any task runs, a restore its keyed state
// backends would refuse at every attempt: an incremental checkpoint of
// another backend.
func (j *job) checkBackend(r *restoredState) error {
	if r == nil {
		return nil
	}
	have := j.opts.StateBackend.Type()
	uids := slices.Sorted(maps.Keys(r.parts))
	for _, uid := range uids {
		for _, blobs := range r.parts[uid] {
			for _, b := range blobs {
				if w := state.IncrementalBackend(b); w != "" && w != have {
					e := &BackendMismatchError{Checkpoint: j.startedFrom, UID: uid, Written: w, Job: have}
					if e.Checkpoint == "" {
						e.Checkpoint = fmt.Sprintf("checkpoint %d", r.id)
					}
					return e
				}
			}
		}
	}
	return nil
}
