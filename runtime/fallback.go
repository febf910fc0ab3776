package runtime

import (
	"errors"
	"fmt"
	"slices"

	"github.com/weirstream/weir/checkpointstorage"
	"github.com/weirstream/weir/event"
)

// A checkpoint can pass every check the catalog makes (its _metadata
// frame, each file's presence and size) and still hold a file whose bytes
// changed: a shared SST or WAL chunk that a subtask's state backend fetches
// only as the attempt starts, which then fails with a *RestoreError
// around a *CorruptError. Restoring the same checkpoint again would fail
// the same way, so the job marks it corrupt for the rest of its life,
// together with every other checkpoint in its storage naming the same file,
// moves them aside, and restores the newest checkpoint it may still
// restore (failoverPoint), at once: no restart strategy is asked, since
// the next attempt starts from other state. When there is none the job
// fails with a *checkpointstorage.NoCheckpointError listing each checkpoint
// and why, unless it was told to start empty (RestoreLatestOrEmpty).

// corruption is a checkpoint a restore found corrupt.
type corruption struct {
	loc string
	id  event.CheckpointID
	ce  *checkpointstorage.CorruptError
}

// corruptRestore reports whether err is a corrupt file of the checkpoint
// being restored: of the attempt's restored state r, or, when r is nil,
// of the checkpoint at the location which whose resolve failed.
func corruptRestore(err error, which string, r *restoredState) (corruption, bool) {
	var re *checkpointstorage.RestoreError
	var ce *checkpointstorage.CorruptError
	if err == nil || !errors.As(err, &re) || !errors.As(re.Err, &ce) {
		return corruption{}, false
	}
	if r == nil {
		return corruption{loc: which, id: re.ID, ce: ce}, which != ""
	}
	return corruption{loc: r.loc, id: r.id, ce: ce}, re.ID == r.id
}

// fallBack marks bad corrupt, and with it every checkpoint of the job's
// storage that names the same file, reports them loudly, moves those of the
// job's storage aside and returns the location a failover restores now
// ("" to start empty). When there is none, it touches nothing.
func (j *job) fallBack(bad corruption) (string, error) {
	if j.corrupt == nil {
		j.corrupt = map[string]error{}
	}
	first := &checkpointstorage.SkippedError{ID: bad.id, Err: bad.ce}
	j.corrupt[bad.loc] = first
	found := append([]*checkpointstorage.SkippedError{first}, j.sharingFile(bad)...)
	next, err := j.failoverPoint()
	if err != nil {
		return "", err
	}
	var report []error
	var aside []checkpointstorage.MovedAside
	for _, se := range found {
		report = append(report, se)
		if se != first || bad.loc == j.fs.Location(bad.id) {
			aside = append(aside, checkpointstorage.MovedAside{ID: se.ID, Err: se.Err})
		}
	}
	j.reportSkipped(report, j.idOf(next))
	j.moveAside(aside)
	return next, nil
}

// sharingFile marks corrupt the completed checkpoints of the job's storage,
// other than bad, that name bad's corrupt file (a shared file is named by
// every checkpoint since the one that uploaded it), and returns them.
func (j *job) sharingFile(bad corruption) []*checkpointstorage.SkippedError {
	ids, err := j.fs.Completed()
	if err != nil {
		return nil // each is then found as it is restored
	}
	var out []*checkpointstorage.SkippedError
	for _, id := range slices.Backward(ids) {
		loc := j.fs.Location(id)
		if j.corrupt[loc] != nil {
			continue
		}
		m, err := j.fs.ReadMetadata(id)
		if err != nil || !slices.ContainsFunc(m.Handles, func(h checkpointstorage.Handle) bool {
			return j.fs.Where(h.Path) == bad.ce.Path
		}) {
			continue
		}
		se := &checkpointstorage.SkippedError{ID: id, Err: bad.ce}
		j.corrupt[loc] = se
		out = append(out, se)
	}
	return out
}

// failoverPoint is what a failover restores: the newest checkpoint not
// found corrupt among, newest first, the savepoint of a completed
// stop-with-savepoint (a failover while the job finishes restores it, not
// an older checkpoint whose replay its sinks already committed), this
// run's completed checkpoints still retained, what the run started from,
// and — when a "latest" restore chose that — the older valid checkpoints
// of the job's storage, as a new process would. Never a newer checkpoint
// of another run in the same directory. "" is an empty start: for a run
// that started empty and has no checkpoint of its own yet, or, when every
// candidate is corrupt, if the run was told to start empty; otherwise the
// error lists each corrupt checkpoint.
func (j *job) failoverPoint() (string, error) {
	for _, loc := range j.failoverCandidates() {
		if j.corrupt[loc] == nil {
			return loc, nil
		}
	}
	if len(j.corrupt) == 0 {
		return "", nil
	}
	return "", j.noneValid()
}

// failoverCandidates lists what failoverPoint may restore, newest first.
func (j *job) failoverCandidates() []string {
	var out []string
	if j.stoppedAt != "" {
		out = append(out, j.stoppedAt)
	}
	if j.fs == nil {
		return append(out, j.startedFrom)
	}
	valid, err := j.fs.Completed()
	for _, id := range slices.Backward(j.own) {
		// Without the catalog (err), the newest is taken as before.
		if err == nil && slices.Contains(valid, id) || err != nil && id == j.lastOwn {
			out = append(out, j.fs.Location(id))
		}
	}
	if j.startedFrom != "" {
		out = append(out, j.startedFrom)
	}
	if j.startedLatest && err == nil {
		for _, id := range slices.Backward(valid) {
			if j.startedID == 0 || id < j.startedID {
				out = append(out, j.fs.Location(id))
			}
		}
	}
	return out
}

// noneValid fails a failover that found every checkpoint it may restore
// corrupt, naming each, unless the run was told to start empty then.
func (j *job) noneValid() error {
	var rejected []error
	for _, loc := range j.failoverCandidates() {
		if e := j.corrupt[loc]; e != nil && !slices.Contains(rejected, e) {
			rejected = append(rejected, e)
		}
	}
	ne := &checkpointstorage.NoCheckpointError{Dir: j.fs.Dir(), Rejected: rejected}
	if j.opts.Restore == RestoreLatestOrEmpty {
		j.opts.Logger.Warn("no usable checkpoint; starting empty as restore \"latest-or-empty\" allows", "err", ne)
		return nil
	}
	return fmt.Errorf("%w: %w", ErrJobFailed, noCheckpointError(RestoreLatest, ne))
}

// idOf is the id of the checkpoint at loc in the job's storage (0: none).
func (j *job) idOf(loc string) event.CheckpointID {
	for _, id := range j.own {
		if j.fs.Location(id) == loc {
			return id
		}
	}
	if ids, err := j.fs.Completed(); err == nil {
		for _, id := range ids {
			if j.fs.Location(id) == loc {
				return id
			}
		}
	}
	return 0
}
