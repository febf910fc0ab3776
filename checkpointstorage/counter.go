package checkpointstorage

import (
	"errors"
	"fmt"
	"io/fs"
	"strconv"

	"github.com/weirstream/weir/event"
)

// NextID returns the id the next checkpoint should take: the larger of the
// persisted counter and the highest chk-N directory (or chk-N.corrupt) seen plus one, or 1 when
// there is neither. It does not persist anything; SetNextID does.
func (s *FS) NextID() (event.CheckpointID, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.nextIDLocked()
}

// SetNextID persists id as the next checkpoint id, atomically (locally:
// temp file, fsync, rename, fsync of the directory; in a bucket a PUT,
// which replaces an object atomically). Before triggering checkpoint n the
// coordinator calls SetNextID(n+1), so that a restart never reuses n even if
// chk-n was discarded. The counter never goes backwards: an id not greater
// than the stored one is ignored.
func (s *FS) SetNextID(id event.CheckpointID) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	stored, err := s.readCounterLocked()
	if err != nil || id <= stored {
		return err
	}
	data := encodeFrame(counterMagic, strconv.AppendInt(nil, int64(id), 10))
	if err := s.put(counterName, data, putReplace); err != nil {
		return fmt.Errorf("checkpointstorage: persisting next checkpoint id %d: %w", id, s.unwritable(err))
	}
	return nil
}

func (s *FS) nextIDLocked() (event.CheckpointID, error) {
	next, err := s.readCounterLocked()
	if err != nil {
		return 0, err
	}
	entries, err := s.list("")
	if err != nil {
		return 0, fmt.Errorf("checkpointstorage: listing %s: %w", s.loc, err)
	}
	for _, e := range entries {
		id, ok := parseChkName(e.name)
		if !ok {
			id, ok = asideID(e.name) // a moved-aside id is used too
		}
		if ok && e.dir {
			next = max(next, id+1)
		}
	}
	return max(next, 1), nil
}

// readCounterLocked returns the stored counter, 0 when there is none.
func (s *FS) readCounterLocked() (event.CheckpointID, error) {
	p := s.Where(counterName)
	b, err := s.get(counterName)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("checkpointstorage: reading next checkpoint id: %w", err)
	}
	payload, err := decodeFrame(p, counterMagic, b)
	if err != nil {
		// Refuse to guess: falling back to the directory listing could
		// reuse the id of a discarded checkpoint.
		return 0, err
	}
	n, err := strconv.ParseInt(string(payload), 10, 64)
	if err != nil || n < 1 {
		return 0, corrupt(p, "payload %q is not a checkpoint id", payload)
	}
	return event.CheckpointID(n), nil
}
