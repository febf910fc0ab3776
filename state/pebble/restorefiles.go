package pebble

import (
	"errors"
	"fmt"
	"os"
	"time"

	pebbledb "github.com/cockroachdb/pebble/v2"
	"github.com/weirstream/weir/keygroup"
	"github.com/weirstream/weir/state"
)

// restoreFiles restores the manifests of an incremental checkpoint, one
// per old subtask (Flink's RocksDBIncrementalRestoreOperation). The source
// whose key groups overlap this backend's most becomes the database
// itself: its files are fetched (SSTs hard-linked from a local storage)
// into the backend's directory and the key groups outside this backend's
// range deleted, one range deletion each (keys start with the key group),
// so no state is copied and its shared files are reused by the next
// checkpoint. Every other overlapping source (a rescale merging subtasks)
// is opened read-only in a scratch directory and its entries in this
// backend's range copied in, their state ids mapped by state name.
func (b *Backend) restoreFiles(ms []*manifest) error {
	own := b.opts.KeyGroupRange
	base := -1
	for i, m := range ms {
		if m.MaxParallelism != b.opts.MaxParallelism {
			return fmt.Errorf("%w: pebble: the checkpoint has %d key groups (max parallelism), this job %d",
				state.ErrIncompatible, m.MaxParallelism, b.opts.MaxParallelism)
		}
		if overlap(m, own) > 0 && (base < 0 || overlap(m, own) > overlap(ms[base], own)) {
			base = i
		}
	}
	if base >= 0 && b.opts.RestoreFiles == nil {
		return errors.New("pebble: restoring an incremental checkpoint needs the checkpoint's storage (Options.RestoreFiles)")
	}
	st := &restoreStats{keyGroups: own.String(), sources: len(ms)}
	b.restoreStats = st
	start := time.Now()
	if base >= 0 {
		if err := b.openBase(ms[base], st); err != nil {
			return err
		}
	}
	for i, m := range ms {
		var err error
		if i != base && overlap(m, own) > 0 {
			st.copied++
			err = b.copyFrom(m, st)
		} else {
			_, err = b.manifestStates(m)
		}
		if err != nil {
			return err
		}
	}
	st.total = time.Since(start)
	st.log(b.life.dir)
	return nil
}

// overlap is how many of own's key groups m holds.
func overlap(m *manifest, own keygroup.Range) int {
	r := m.keyGroups()
	lo, hi := max(r.Start, own.Start), min(r.End, own.End)
	return max(0, hi-lo+1)
}

// manifestStates registers m's states (ids assigned by this backend) and
// returns, for each id of m, this backend's id of the same state.
func (b *Backend) manifestStates(m *manifest) (map[uint16]uint16, error) {
	ids := map[uint16]uint16{}
	for _, ms := range m.States {
		si, err := b.pendingState(ms.Name, ms.Kind, ms.HasTS)
		if err != nil {
			return nil, err
		}
		si.stored = true
		ids[ms.ID] = si.id
	}
	return ids, nil
}

// openBase replaces the backend's empty database by the one m's files
// hold, keeping only this backend's key groups, and adopts m's states
// with their ids.
func (b *Backend) openBase(m *manifest, st *restoreStats) error {
	err := b.db.Close()
	b.life.db = nil // until the restored one is open: Close must not close it again
	if err != nil {
		return fmt.Errorf("pebble: restoring: %w", err)
	}
	dir := b.life.dir
	if err := errors.Join(os.RemoveAll(dir), os.Mkdir(dir, 0o755), writeOwner(dir)); err != nil {
		return fmt.Errorf("pebble: restoring into %s: %w", dir, err)
	}
	shared, err := b.fetch(m, dir, st)
	if err != nil {
		return err
	}
	if err := b.adoptRemote(m, dir); err != nil {
		return err
	}
	db, err := openDB(&b.opts, dir, false, &st.open)
	if err != nil {
		return fmt.Errorf("%w (restoring an incremental checkpoint)", err)
	}
	st.open.sched.resume() // see pausedScheduler
	b.db, b.life.db = db, db
	if err := b.protectRemote(); err != nil {
		return fmt.Errorf("pebble: restoring: %w", err)
	}
	for _, ms := range m.States {
		b.states[ms.Name] = &stateInfo{name: ms.Name, id: ms.ID, kind: ms.Kind, hasTS: ms.HasTS, stored: true}
	}
	if len(b.states) != len(m.States) || !denseIDs(m) {
		return corrupt("incremental snapshot manifest: state ids %v are not 0..%d, one per name", m.States, len(m.States)-1)
	}
	b.up.restored(b.opts.RestoreFiles.Location(), shared)
	clip := time.Now()
	if err := b.clip(m.keyGroups()); err != nil {
		return err
	}
	st.clip = time.Since(clip)
	if m.Queues == nil {
		return b.dropTimers()
	}
	return b.keepTimers(m)
}

// keepTimers adopts the timer queues of m with their ids, so that the
// timers the restored files hold stay where they are. The timer service
// checkpoints its timers apart (operator.PartTimers) and adds them back on
// restore; each is found there already (timerQueue.Add reads before it
// writes), so a restore at the same parallelism writes nothing. Deleting
// them and writing them again (dropTimers) put one L0 SST spanning every
// key group into the restored database, and the L0 compaction that took
// it rewrote every SST below: the first checkpoint after a restore
// uploaded the whole state again.
func (b *Backend) keepTimers(m *manifest) error {
	b.queues = map[string]*timerQueue{}
	for _, mq := range m.Queues {
		if int(mq.ID) != 0xffff-len(b.queues) || b.queues[mq.Name] != nil {
			return corrupt("incremental snapshot manifest: timer queue ids %v are not 0xffff downwards, one per name", m.Queues)
		}
		b.queues[mq.Name] = &timerQueue{b: b, name: mq.Name, id: mq.ID}
	}
	return nil
}

// dropTimers deletes the timer queues' keys the restored files hold, for
// a manifest that does not list its queues: a queue's id depends on the
// order the queues were first used, which the new instance need not
// repeat. One range deletion per key group (queue ids are the top of the
// id space).
func (b *Backend) dropTimers() error {
	own := b.opts.KeyGroupRange
	for kg := own.Start; kg <= own.End && own.Len() > 0; kg++ {
		if err := b.db.DeleteRange(appendGroupState(nil, kg, maxStates), groupKey(kg+1), pebbledb.NoSync); err != nil {
			return fmt.Errorf("pebble: restoring: deleting the timers of key group %d: %w", kg, err)
		}
	}
	return nil
}

// denseIDs reports whether m's state ids are 0..n-1, as a backend gives
// them.
func denseIDs(m *manifest) bool {
	seen := make([]bool, len(m.States))
	for _, s := range m.States {
		if int(s.ID) >= len(seen) || seen[s.ID] {
			return false
		}
		seen[s.ID] = true
	}
	return true
}

// groupKey is the first Pebble key of key group kg.
func groupKey(kg int) []byte { return []byte{byte(kg >> 8), byte(kg)} }

// clip deletes the key groups of had outside this backend's range.
func (b *Backend) clip(had keygroup.Range) error {
	own := b.opts.KeyGroupRange
	var spans [][2]int // [from, to) key groups
	if had.Start < own.Start {
		spans = append(spans, [2]int{had.Start, own.Start})
	}
	if had.End > own.End {
		spans = append(spans, [2]int{max(own.End+1, had.Start), had.End + 1})
	}
	for _, s := range spans {
		if err := b.db.DeleteRange(groupKey(s[0]), groupKey(s[1]), pebbledb.NoSync); err != nil {
			return fmt.Errorf("pebble: restoring: deleting key groups %d..%d: %w", s[0], s[1]-1, err)
		}
	}
	return nil
}

// copyFrom copies the entries of m in this backend's key groups into the
// database, mapping m's state ids to this backend's.
func (b *Backend) copyFrom(m *manifest, st *restoreStats) (err error) {
	ids, err := b.manifestStates(m)
	if err != nil {
		return err
	}
	// Inside the backend's directory, so that it goes with it (a crash's
	// leftovers too: see sweepStale); Pebble ignores what it did not write.
	dir, err := os.MkdirTemp(b.life.dir, "restore-")
	if err != nil {
		return fmt.Errorf("pebble: restoring: scratch directory in %s: %w", b.life.dir, err)
	}
	defer os.RemoveAll(dir)
	if _, err := b.fetch(m, dir, st); err != nil {
		return err
	}
	scratch := Options{BlockCacheSize: 1 << 20, WriteBufferSize: 1 << 20, WriteBufferCount: 2, ExperimentalRemote: b.opts.ExperimentalRemote}
	b.adoptObjects(m)
	src, err := openDB(&scratch, dir, true, nil)
	if err != nil {
		return fmt.Errorf("%w (restoring an incremental checkpoint)", err)
	}
	defer func() { err = errors.Join(err, src.Close()) }()
	own, had := b.opts.KeyGroupRange, m.keyGroups()
	lo, hi := max(own.Start, had.Start), min(own.End, had.End)
	w := newBatchWriter(b.db)
	var ferr error
	start := time.Now()
	defer func() {
		if r := recover(); r != nil { // scan panics on an I/O failure
			err = fmt.Errorf("pebble: restoring: %v", r)
		}
		st.copy += time.Since(start)
	}()
	scan(src, groupKey(lo), groupKey(hi+1), func(k, v []byte) bool {
		if len(k) < groupStateLen {
			ferr = corrupt("restoring: malformed key %x", k)
			return false
		}
		sid := uint16(k[2])<<8 | uint16(k[3])
		if sid >= maxStates {
			return true // a timer: see dropTimers
		}
		id, ok := ids[sid]
		if !ok {
			ferr = corrupt("restoring: key %x names no state of the snapshot", k)
			return false
		}
		nk := appendGroupState(nil, int(k[0])<<8|int(k[1]), id)
		st.copiedBytes += int64(len(k) + len(v))
		ferr = w.set(append(nk, k[groupStateLen:]...), v)
		return ferr == nil
	})
	return errors.Join(ferr, w.flush())
}
