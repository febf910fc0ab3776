package checkpointstorage

import (
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/weirstream/weir/event"
)

// corruptSuffix marks a checkpoint directory moved aside as corrupt:
// chk-7 becomes chk-7.corrupt (chk-7.corrupt-2, … if that exists). The name
// is no chk-N name, so neither a restore nor GC nor Retain looks at it again;
// it stays for the user to inspect and delete.
const corruptSuffix = ".corrupt"

// MovedAside reports a corrupt checkpoint that GC or Retain found.
type MovedAside struct {
	ID event.CheckpointID
	// To is the directory's new name relative to Dir, e.g. "chk-7.corrupt";
	// "" when it stays in place because a valid checkpoint references files
	// in it (moved aside once none does).
	To string
	// Err says why the checkpoint is corrupt (a *CorruptError naming the
	// file).
	Err error
}

// MoveAside renames chk-<id> to chk-<id>.corrupt, so that it is never
// restored nor deleted, and returns the new name relative to Dir. cause is
// why it is corrupt, for the caller's report. It refuses (returns "") when a
// valid completed checkpoint (other than id) references files in it.
func (s *FS) MoveAside(id event.CheckpointID, cause error) (MovedAside, error) {
	valid, err := s.completed()
	if err != nil {
		return MovedAside{ID: id, Err: cause}, err
	}
	others := slices.DeleteFunc(valid, func(m Metadata) bool { return m.ID == id }) // it may pass the size checks
	return s.moveAside(id, cause, references(others))
}

func (s *FS) moveAside(id event.CheckpointID, cause error, refs map[string]bool) (MovedAside, error) {
	q := MovedAside{ID: id, Err: cause}
	name := chkName(id)
	if refUnder(refs, name) {
		return q, nil
	}
	to := name + corruptSuffix
	for k := 2; ; k++ {
		taken, err := s.exists(to)
		if err != nil {
			return q, fmt.Errorf("checkpointstorage: moving corrupt %s aside: %w", name, err)
		}
		if !taken {
			break
		}
		to = fmt.Sprintf("%s%s-%d", name, corruptSuffix, k)
	}
	if err := s.rename(name, to); err != nil {
		return q, fmt.Errorf("checkpointstorage: moving corrupt %s aside: %w", name, err)
	}
	q.To = to
	return q, nil
}

// asideID parses the id of a moved-aside directory name ("chk-7.corrupt",
// "chk-7.corrupt-2").
func asideID(name string) (event.CheckpointID, bool) {
	i := strings.Index(name, corruptSuffix)
	if i < 0 {
		return 0, false
	}
	return parseChkName(name[:i])
}

// NoCheckpointError is returned (matching ErrNoCheckpoint) when a restore of
// the latest checkpoint finds none usable. It says what the directory holds
// and why each candidate was rejected, newest first.
type NoCheckpointError struct {
	Dir string
	// Missing: the directory does not exist.
	Missing bool
	// Rejected holds a *SkippedError for every chk-N directory, newest first.
	Rejected []error
	// Aside lists directories moved aside earlier as corrupt.
	Aside []string
	// Other lists (up to 5 of) the other entries, a hint that the directory
	// may be the wrong one.
	Other []string
}

// Error names the directory, what was found and why it was rejected.
func (e *NoCheckpointError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "checkpointstorage: no usable checkpoint in %s: ", e.Dir)
	switch {
	case e.Missing:
		b.WriteString("the directory does not exist (is the checkpoint directory spelt right?)")
	case len(e.Rejected) > 0:
		b.WriteString("found ")
		for i, r := range e.Rejected {
			if i > 0 {
				b.WriteString("; ")
			}
			b.WriteString(rejection(r))
		}
	case len(e.Other) > 0:
		fmt.Fprintf(&b, "it holds no chk-N directory, only %s (is it the job's checkpoint directory?)", strings.Join(e.Other, ", "))
	default:
		b.WriteString("the directory is empty")
	}
	if len(e.Aside) > 0 {
		fmt.Fprintf(&b, "; moved aside earlier as corrupt: %s", strings.Join(e.Aside, ", "))
	}
	return b.String()
}

// Unwrap returns ErrNoCheckpoint.
func (e *NoCheckpointError) Unwrap() error { return ErrNoCheckpoint }

// rejection says in a few words why a skipped checkpoint was rejected.
func rejection(err error) string {
	var se *SkippedError
	if !errors.As(err, &se) {
		return err.Error()
	}
	name := chkName(se.ID)
	var ce *CorruptError
	switch {
	case errors.As(se.Err, &ce):
		return fmt.Sprintf("%s, corrupt: %s: %s", name, ce.Path, ce.Reason)
	case errors.Is(se.Err, fs.ErrNotExist):
		return fmt.Sprintf("%s without %s (the checkpoint never completed)", name, metadataName)
	default:
		return fmt.Sprintf("%s: %v", name, se.Err)
	}
}

// noCheckpoint describes the directory after Latest found nothing usable.
func (s *FS) noCheckpoint(skipped []error) error {
	e := &NoCheckpointError{Dir: s.loc, Rejected: skipped}
	entries, err := s.list("")
	if err != nil {
		return fmt.Errorf("%w; listing it: %w", e, err)
	}
	for _, d := range entries {
		name := d.name
		if _, ok := parseChkName(name); ok && d.dir {
			continue
		}
		if _, ok := asideID(name); ok {
			e.Aside = append(e.Aside, name)
			continue
		}
		if name == counterName || name == lockName || strings.HasPrefix(name, counterName+tmpInfix) {
			continue
		}
		if d.dir {
			name += "/"
		}
		if len(e.Other) < 5 {
			e.Other = append(e.Other, name)
		}
	}
	slices.Sort(e.Aside)
	return e
}
