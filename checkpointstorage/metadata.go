package checkpointstorage

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"strings"

	"github.com/weirstream/weir/event"
)

// Metadata describes one completed checkpoint (Flink's CheckpointMetadata):
// what the coordinator writes once every task acknowledged, and what a
// restore reads first. It is stored as JSON inside a checksummed frame.
type Metadata struct {
	// ID is the checkpoint id; it must match the chk-<id> directory.
	ID event.CheckpointID `json:"id"`
	// Timestamp is the trigger time in ms since the Unix epoch.
	Timestamp int64 `json:"timestamp"`
	// JobID names the job that took the checkpoint.
	JobID string `json:"jobId"`
	// Final marks the checkpoint taken at the end of bounded input.
	Final bool `json:"final,omitempty"`
	// Savepoint marks a savepoint (Flink's SAVEPOINT checkpoint type): its
	// Handles are relative to its own directory, so it can be moved, and
	// retention and GC never touch it (see CreateSavepoint).
	Savepoint bool `json:"savepoint,omitempty"`
	// Stop marks the savepoint of a stop-with-savepoint (the job ended
	// with it; its sinks committed it).
	Stop bool `json:"stop,omitempty"`
	// Tasks maps "vertex/index" to the task's opaque state blob, as the
	// runtime acknowledged it.
	Tasks map[string][]byte `json:"tasks"`
	// Handles lists every state file the checkpoint references; GC and
	// Retain keep exactly these files.
	Handles []Handle `json:"handles"`
	// StateSchemas maps an operator uid to the schema its state was
	// written for (graph.Node.StateSchema), for the operators that declare
	// one; a restore compares it with the job's (Flink's serializer
	// compatibility check). Checkpoints without it restore unchecked.
	StateSchemas map[string]StateSchema `json:"stateSchemas,omitempty"`
}

// StateSchema is what an operator's state was written for: Types is
// compared on restore, Text is shown when they differ.
type StateSchema struct {
	Types string `json:"types"`
	Text  string `json:"text"`
}

// WriteMetadata completes checkpoint m.ID by writing chk-<id>/_metadata,
// last and atomically, and only if it does not exist: a completed
// checkpoint is never overwritten (ErrCheckpointExists). In a local
// directory that is a temp file, fsync, link into place and fsync of the
// directory, which also makes the entries of every state file WriteState
// put there durable; in a bucket, a conditional PUT (If-None-Match: *).
func (s *FS) WriteMetadata(m Metadata) error {
	m.Savepoint = m.Savepoint || s.savepoint
	if lost := s.lost.Load(); lost != nil {
		return *lost
	}
	if err := validateMetadata(m); err != nil {
		return err
	}
	payload, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("checkpointstorage: encoding metadata of checkpoint %d: %w", m.ID, err)
	}
	rel := path.Join(s.chkDir(m.ID), metadataName)
	err = s.put(rel, encodeFrame(metadataMagic, payload), putExclusive)
	if errors.Is(err, errExists) {
		return fmt.Errorf("%w: %s exists", ErrCheckpointExists, s.Where(rel))
	}
	if err != nil {
		return fmt.Errorf("checkpointstorage: writing metadata of checkpoint %d: %w", m.ID, err)
	}
	return nil
}

func validateMetadata(m Metadata) error {
	if m.ID < 1 {
		return fmt.Errorf("checkpointstorage: metadata has checkpoint id %d; ids start at 1", m.ID)
	}
	for _, h := range m.Handles {
		if !filepath.IsLocal(filepath.FromSlash(h.Path)) {
			return fmt.Errorf("checkpointstorage: metadata of checkpoint %d: handle path %q is not inside the checkpoint directory", m.ID, h.Path)
		}
	}
	return nil
}

// ReadMetadata reads and verifies chk-<id>/_metadata. A bad magic, version,
// length or checksum, undecodable JSON or a mismatched id is a *CorruptError;
// a missing file is an error matching fs.ErrNotExist (the checkpoint never
// completed).
func (s *FS) ReadMetadata(id event.CheckpointID) (Metadata, error) {
	m, err := s.readMetadataFile(chkName(id)+"/"+metadataName, id)
	if errors.Is(err, fs.ErrNotExist) {
		return Metadata{}, fmt.Errorf("checkpointstorage: checkpoint %d has no %s (it never completed): %w", id, metadataName, err)
	}
	return m, err
}

// readMetadataFile reads the _metadata file rel; id 0 skips the id check.
func (s *FS) readMetadataFile(rel string, id event.CheckpointID) (Metadata, error) {
	p := s.Where(rel)
	b, err := s.get(rel)
	if err != nil {
		return Metadata{}, err
	}
	payload, err := decodeFrame(p, metadataMagic, b)
	if err != nil {
		return Metadata{}, err
	}
	var m Metadata
	if err := json.Unmarshal(payload, &m); err != nil {
		return Metadata{}, &CorruptError{Path: p, Reason: "payload is not valid metadata JSON", Err: err}
	}
	if id != 0 && m.ID != id {
		return Metadata{}, corrupt(p, "metadata names checkpoint %d, but lies in %s", m.ID, chkName(id))
	}
	// A checksummed payload can still name a file outside the checkpoint
	// directory (written by hand or by another tool): a restore must not
	// read it, nor GC reason about it.
	if err := validateMetadata(m); err != nil {
		return Metadata{}, &CorruptError{Path: p, Reason: strings.TrimPrefix(err.Error(), "checkpointstorage: "), Err: err}
	}
	return m, nil
}
