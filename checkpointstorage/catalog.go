package checkpointstorage

import (
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/weirstream/weir/event"
)

// Latest returns the newest valid completed checkpoint: it walks the chk-N
// directories newest first and returns the first whose metadata is valid and
// whose state files exist with the recorded sizes. Every newer checkpoint it
// skips (corrupt, or without metadata) is reported in the []error so that the
// caller can log it loudly ("checkpoint 9 … skipped; restoring checkpoint 8").
// When no checkpoint is usable it returns a *NoCheckpointError (matching
// ErrNoCheckpoint) naming the directory, what it holds and why each
// candidate was rejected; an I/O error other than a missing file stops the
// walk and is returned, rather than silently restoring an older checkpoint.
func (s *FS) Latest() (Metadata, []error, error) { return s.LatestBefore(0) }

// LatestBefore is Latest among the checkpoints with an id below before (0:
// no bound): the fallback when the state files of the one Latest returned
// fail their checksums as they are read.
func (s *FS) LatestBefore(before event.CheckpointID) (Metadata, []error, error) {
	ids, err := s.chkDirs()
	if errors.Is(err, fs.ErrNotExist) {
		return Metadata{}, nil, &NoCheckpointError{Dir: s.loc, Missing: true}
	}
	if err != nil {
		return Metadata{}, nil, err
	}
	slices.Sort(ids)
	var skipped []error
	for _, id := range slices.Backward(ids) {
		if before > 0 && id >= before {
			continue
		}
		m, err := s.load(id, false)
		if err == nil {
			return m, skipped, nil
		}
		if !unusable(err) {
			return Metadata{}, skipped, err
		}
		skipped = append(skipped, &SkippedError{ID: id, Err: err})
	}
	return Metadata{}, skipped, s.noCheckpoint(skipped)
}

// Completed returns the ids of the valid completed checkpoints (as Latest
// judges validity), ascending.
func (s *FS) Completed() ([]event.CheckpointID, error) {
	ms, err := s.completed()
	if err != nil {
		return nil, err
	}
	ids := make([]event.CheckpointID, len(ms))
	for i, m := range ms {
		ids[i] = m.ID
	}
	return ids, nil
}

// Cleanup reports what GC or Retain did to the storage.
type Cleanup struct {
	// Deleted lists the checkpoints Retain deleted (their chk-N directories,
	// or all of them but files a kept checkpoint references), ascending.
	Deleted []event.CheckpointID
	// Removed lists the removed paths relative to Dir, sorted; a removed
	// directory is listed once, as "chk-N".
	Removed []string
	// Corrupt lists the corrupt checkpoints found, ascending: moved aside
	// (never deleted), or left in place when a valid checkpoint references
	// files in them.
	Corrupt []MovedAside
}

// Retain keeps the newest n valid completed checkpoints, and the checkpoint
// pin (a restore's source; 0: none) whatever its age, and deletes every
// other chk-N directory older than the oldest of the newest n (Flink's
// execution.checkpointing.num-retained). A corrupt one among them is moved
// aside (MoveAside), not deleted. Directories newer than that (in progress,
// or corrupt) are left to GC. A file in a deleted directory that a retained
// checkpoint still references is kept, but the directory loses its
// _metadata. A shared file (shared/) is deleted once a deleted checkpoint
// named it and no kept one does: reference counting over the retained
// checkpoints' Handles (see dropShared). n must be at least 1.
func (s *FS) Retain(n int, pin event.CheckpointID) (Cleanup, error) {
	var c Cleanup
	if n < 1 {
		return c, fmt.Errorf("checkpointstorage: cannot retain %d checkpoints; retain at least 1", n)
	}
	all, err := s.scan(true)
	valid := validOf(all)
	if err != nil || len(valid) <= n {
		return c, err
	}
	kept := valid[len(valid)-n:]
	if i := slices.IndexFunc(valid, func(m Metadata) bool { return m.ID == pin }); i >= 0 && pin < kept[0].ID {
		kept = append(kept, valid[i])
	}
	refs := references(kept)
	var retired []Metadata
	for _, d := range all {
		if d.id >= kept[0].ID {
			break
		}
		if err := s.retire(&c, d, refs, d.id == pin); err != nil {
			return c, err
		}
		if d.err == nil && d.id != pin {
			retired = append(retired, d.meta)
		}
	}
	r, err := s.dropShared(retired, refs)
	c.Removed = append(c.Removed, r...)
	slices.Sort(c.Removed)
	return c, err
}

// retire deletes checkpoint d for Retain (moving it aside when corrupt);
// keep leaves it alone.
func (s *FS) retire(c *Cleanup, d scanned, refs map[string]bool, keep bool) error {
	if keep {
		return nil
	}
	if isCorrupt(d.err) {
		q, err := s.moveAside(d.id, d.err, refs)
		c.Corrupt = append(c.Corrupt, q)
		return err
	}
	r, err := s.prune(d.id, refs, false)
	c.Removed = append(c.Removed, r...)
	if err == nil {
		c.Deleted = append(c.Deleted, d.id)
	}
	return err
}

// GC lists the storage and deletes what no valid completed checkpoint
// references: every chk-N directory without _metadata (left by a crash
// mid-checkpoint, or aborted), every file in a checkpoint directory or in
// shared/ that no metadata's Handles name (other than the checkpoint's own
// _metadata), and leftover temp files of the id counter. A corrupt checkpoint (its _metadata
// or a state file fails verification) is never deleted: it is moved aside
// (MoveAside) and reported in Cleanup.Corrupt. GC never touches the counter
// file or entries that are not Weir's.
//
// GC must not run while a checkpoint is being written: that checkpoint has
// no metadata yet and would be deleted.
func (s *FS) GC() (Cleanup, error) {
	var c Cleanup
	all, err := s.scan(false)
	if err != nil {
		return c, err
	}
	refs := references(validOf(all))
	for _, d := range all {
		if isCorrupt(d.err) {
			q, err := s.moveAside(d.id, d.err, refs)
			c.Corrupt = append(c.Corrupt, q)
			if err != nil {
				return c, err
			}
			continue
		}
		r, err := s.prune(d.id, refs, d.err == nil)
		c.Removed = append(c.Removed, r...)
		if err != nil {
			return c, err
		}
	}
	r, err := s.pruneShared(refs)
	c.Removed = append(c.Removed, r...)
	if err != nil {
		return c, err
	}
	r, err = s.removeCounterTemps()
	c.Removed = append(c.Removed, r...)
	slices.Sort(c.Removed)
	return c, err
}

// scanned is one chk-N directory as the catalog judges it.
type scanned struct {
	id   event.CheckpointID
	meta Metadata // when err is nil
	// err is nil for a valid completed checkpoint, else why it is
	// unusable: incomplete (no _metadata) or corrupt (isCorrupt).
	err error
}

// scan loads every chk-N directory, ascending by id; memo takes the
// checkpoints this handle knows valid as they were (see known).
func (s *FS) scan(memo bool) ([]scanned, error) {
	ids, err := s.chkDirs()
	if err != nil {
		return nil, err
	}
	slices.Sort(ids)
	out := make([]scanned, 0, len(ids))
	for _, id := range ids {
		m, ok := s.known.checkpoint(id)
		var err error
		if !ok || !memo {
			m, err = s.load(id, memo)
		}
		if err != nil && !unusable(err) {
			return nil, err
		}
		out = append(out, scanned{id: id, meta: m, err: err})
	}
	return out, nil
}

func validOf(all []scanned) []Metadata {
	var ms []Metadata
	for _, d := range all {
		if d.err == nil {
			ms = append(ms, d.meta)
		}
	}
	return ms
}

// isCorrupt tells a checkpoint whose files fail verification from a valid
// one (nil) and from one that never completed (no _metadata).
func isCorrupt(err error) bool { return errors.Is(err, ErrCorrupt) }

// completed loads every valid completed checkpoint, ascending by id.
func (s *FS) completed() ([]Metadata, error) {
	all, err := s.scan(false)
	return validOf(all), err
}

// load reads the metadata of id and checks its state files exist with the
// recorded sizes (a stat each; checksums are verified by ReadState) —
// with memo, only those this handle does not know stored (see known).
// A valid checkpoint becomes known.
func (s *FS) load(id event.CheckpointID, memo bool) (Metadata, error) {
	m, err := s.ReadMetadata(id)
	if err != nil {
		return Metadata{}, err
	}
	if err := s.checkHandles(m.Handles, memo); err != nil {
		return Metadata{}, err
	}
	s.known.valid(m)
	return m, nil
}

func (s *FS) checkHandles(hs []Handle, memo bool) error {
	for _, h := range hs {
		if memo && s.known.has(h) {
			continue
		}
		p := s.Where(h.Path)
		size, err := s.size(h.Path)
		if errors.Is(err, fs.ErrNotExist) {
			return &CorruptError{Path: p, Reason: "state file referenced by the checkpoint is missing", Err: err}
		}
		if err != nil {
			return fmt.Errorf("checkpointstorage: checking state file: %w", err)
		}
		if size != h.Size {
			return corrupt(p, "size %d bytes, want %d", size, h.Size)
		}
	}
	return nil
}

// unusable tells the errors that make a checkpoint unrestorable (and so
// skippable) from I/O trouble that should stop the caller.
func unusable(err error) bool {
	return errors.Is(err, ErrCorrupt) || errors.Is(err, fs.ErrNotExist)
}

// references returns the set of slash-separated relative paths named by the
// Handles of ms.
func references(ms []Metadata) map[string]bool {
	refs := make(map[string]bool)
	for _, m := range ms {
		for _, h := range m.Handles {
			refs[h.Path] = true
		}
	}
	return refs
}

// refUnder reports whether any reference lies under directory rel.
func refUnder(refs map[string]bool, rel string) bool {
	for r := range refs {
		if strings.HasPrefix(r, rel+"/") {
			return true
		}
	}
	return false
}

// prune deletes what refs does not reference in chk-<id> (keeping its
// _metadata when keepMeta): the whole directory when nothing in it is kept,
// else the unreferenced entries one by one. It returns the removed paths.
func (s *FS) prune(id event.CheckpointID, refs map[string]bool, keepMeta bool) ([]string, error) {
	name := chkName(id)
	if !keepMeta && !refUnder(refs, name) {
		if err := s.removeChk(name); err != nil {
			return nil, fmt.Errorf("checkpointstorage: removing %s: %w", name, err)
		}
		return []string{name}, nil
	}
	entries, err := s.list(name)
	if err != nil {
		return nil, fmt.Errorf("checkpointstorage: listing %s: %w", name, err)
	}
	var removed []string
	if !keepMeta && slices.ContainsFunc(entries, func(e entry) bool { return e.name == metadataName }) {
		if err := s.invalidate(name); err != nil {
			return nil, fmt.Errorf("checkpointstorage: removing %s/%s: %w", name, metadataName, err)
		}
		removed = append(removed, name+"/"+metadataName)
	}
	for _, e := range entries {
		rel := name + "/" + e.name
		if e.name == metadataName || refs[rel] || (e.dir && refUnder(refs, rel)) {
			continue
		}
		if err := s.remove(rel, e.dir); err != nil {
			return removed, fmt.Errorf("checkpointstorage: removing %s: %w", rel, err)
		}
		removed = append(removed, rel)
	}
	return removed, nil
}

// removeCounterTemps removes temp files SetNextID left behind in a crash.
func (s *FS) removeCounterTemps() ([]string, error) {
	entries, err := s.list("")
	if err != nil {
		return nil, fmt.Errorf("checkpointstorage: listing %s: %w", s.loc, err)
	}
	var removed []string
	for _, e := range entries {
		if e.dir || !strings.HasPrefix(e.name, counterName+tmpInfix) {
			continue
		}
		if err := s.remove(e.name, false); err != nil {
			return removed, fmt.Errorf("checkpointstorage: removing %s: %w", e.name, err)
		}
		removed = append(removed, e.name)
	}
	return removed, nil
}
