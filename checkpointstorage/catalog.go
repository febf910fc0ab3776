package checkpointstorage

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/weirstream/weir/event"
)

// Latest returns the newest valid completed checkpoint: it walks the chk-N
// directories newest first and returns the first whose metadata is valid and
// whose state files exist with the recorded sizes. Every newer checkpoint it
// skips (corrupt, or without metadata) is reported in the []error so that the
// caller can log it loudly ("checkpoint 9 … skipped; restoring checkpoint 8").
// It returns ErrNoCheckpoint when no checkpoint is usable; an I/O error other
// than a missing file stops the walk and is returned, rather than silently
// restoring an older checkpoint.
func (s *FS) Latest() (Metadata, []error, error) {
	ids, err := s.chkDirs()
	if errors.Is(err, fs.ErrNotExist) {
		return Metadata{}, nil, fmt.Errorf("%w: directory %s does not exist", ErrNoCheckpoint, s.dir)
	}
	if err != nil {
		return Metadata{}, nil, err
	}
	slices.Sort(ids)
	var skipped []error
	for _, id := range slices.Backward(ids) {
		m, err := s.load(id)
		if err == nil {
			return m, skipped, nil
		}
		if !unusable(err) {
			return Metadata{}, skipped, err
		}
		skipped = append(skipped, &SkippedError{ID: id, Err: err})
	}
	return Metadata{}, skipped, fmt.Errorf("%w in %s", ErrNoCheckpoint, s.dir)
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

// Retain keeps the newest n valid completed checkpoints and deletes every
// chk-N directory older than the oldest of them (Flink's
// state.checkpoints.num-retained), returning the deleted ids ascending.
// Directories newer than that (in progress, or corrupt) are left to GC. A
// file in a deleted directory that a retained checkpoint still references is
// kept, but the directory loses its _metadata. n must be at least 1.
func (s *FS) Retain(n int) ([]event.CheckpointID, error) {
	if n < 1 {
		return nil, fmt.Errorf("checkpointstorage: cannot retain %d checkpoints; retain at least 1", n)
	}
	valid, err := s.completed()
	if err != nil || len(valid) <= n {
		return nil, err
	}
	kept := valid[len(valid)-n:]
	ids, err := s.chkDirs()
	if err != nil {
		return nil, err
	}
	slices.Sort(ids)
	refs := references(kept)
	var deleted []event.CheckpointID
	for _, id := range ids {
		if id >= kept[0].ID {
			break
		}
		if _, err := s.prune(id, refs, false); err != nil {
			return deleted, err
		}
		deleted = append(deleted, id)
	}
	return deleted, nil
}

// GC lists the storage and deletes what no valid completed checkpoint
// references: every chk-N directory without valid metadata (left by a crash
// mid-checkpoint, or aborted), every file in a checkpoint directory that no
// metadata's Handles name (other than the checkpoint's own _metadata), and
// leftover temp files of the id counter. It never touches the counter file
// or entries that are not Weir's. It returns the removed paths relative to
// Dir, sorted; a removed directory is listed once, as "chk-N".
//
// GC must not run while a checkpoint is being written: that checkpoint has
// no metadata yet and would be deleted.
func (s *FS) GC() (removed []string, err error) {
	valid, err := s.completed()
	if err != nil {
		return nil, err
	}
	ids, err := s.chkDirs()
	if err != nil {
		return nil, err
	}
	slices.Sort(ids)
	refs := references(valid)
	for _, id := range ids {
		keepMeta := slices.ContainsFunc(valid, func(m Metadata) bool { return m.ID == id })
		r, err := s.prune(id, refs, keepMeta)
		removed = append(removed, r...)
		if err != nil {
			return removed, err
		}
	}
	r, err := s.removeCounterTemps()
	removed = append(removed, r...)
	slices.Sort(removed)
	return removed, err
}

// completed loads every valid completed checkpoint, ascending by id.
func (s *FS) completed() ([]Metadata, error) {
	ids, err := s.chkDirs()
	if err != nil {
		return nil, err
	}
	slices.Sort(ids)
	var ms []Metadata
	for _, id := range ids {
		m, err := s.load(id)
		if err != nil && !unusable(err) {
			return nil, err
		}
		if err == nil {
			ms = append(ms, m)
		}
	}
	return ms, nil
}

// load reads the metadata of id and checks its state files exist with the
// recorded sizes (a stat each; checksums are verified by ReadState).
func (s *FS) load(id event.CheckpointID) (Metadata, error) {
	m, err := s.ReadMetadata(id)
	if err != nil {
		return Metadata{}, err
	}
	return m, s.checkHandles(m.Handles)
}

func (s *FS) checkHandles(hs []Handle) error {
	for _, h := range hs {
		p := s.abs(h.Path)
		fi, err := os.Stat(p)
		if errors.Is(err, fs.ErrNotExist) {
			return &CorruptError{Path: p, Reason: "state file referenced by the checkpoint is missing", Err: err}
		}
		if err != nil {
			return fmt.Errorf("checkpointstorage: checking state file: %w", err)
		}
		if fi.Size() != h.Size {
			return corrupt(p, "size %d bytes, want %d", fi.Size(), h.Size)
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
		if err := os.RemoveAll(s.abs(name)); err != nil {
			return nil, fmt.Errorf("checkpointstorage: removing %s: %w", name, err)
		}
		return []string{name}, syncDir(s.dir)
	}
	entries, err := os.ReadDir(s.abs(name))
	if err != nil {
		return nil, fmt.Errorf("checkpointstorage: listing %s: %w", name, err)
	}
	var removed []string
	for _, e := range entries {
		rel := name + "/" + e.Name()
		if (keepMeta && e.Name() == metadataName) || refs[rel] || (e.IsDir() && refUnder(refs, rel)) {
			continue
		}
		if err := os.RemoveAll(s.abs(rel)); err != nil {
			return removed, fmt.Errorf("checkpointstorage: removing %s: %w", rel, err)
		}
		removed = append(removed, rel)
	}
	if len(removed) == 0 {
		return nil, nil
	}
	return removed, syncDir(s.abs(name))
}

// removeCounterTemps removes temp files SetNextID left behind in a crash.
func (s *FS) removeCounterTemps() ([]string, error) {
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return nil, fmt.Errorf("checkpointstorage: listing %s: %w", s.dir, err)
	}
	var removed []string
	for _, e := range entries {
		if !e.Type().IsRegular() || !strings.HasPrefix(e.Name(), counterName+tmpInfix) {
			continue
		}
		if err := os.Remove(s.abs(e.Name())); err != nil {
			return removed, fmt.Errorf("checkpointstorage: removing %s: %w", e.Name(), err)
		}
		removed = append(removed, e.Name())
	}
	return removed, nil
}
