package task

import (
	"encoding/binary"
	"encoding/gob"
	"errors"
	"fmt"
	"reflect"
	"time"

	"github.com/weirstream/weir/checkpoint"
	"github.com/weirstream/weir/checkpointstorage"
	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/state"
)

// PartChannelState is the part name, under the uid of a subtask's chain
// head, of the input channel state of an unaligned checkpoint: the records
// the subtask had read, or went on to read, before the barrier of each of
// its channels but had not processed when it took its snapshot. A restore
// replays them before any new input.
const PartChannelState = "channel-state"

// channelStateVersion is the first byte of a channel-state blob.
const channelStateVersion = 1

// PersistedRecord is one record of a restored channel state.
type PersistedRecord struct {
	// Edge is the number of the input edge (in the job graph's order of
	// the vertex's in-edges) the record came on; Input its input number
	// (0, or 1 for the second input of a two-input operator).
	Edge, Input int
	Record      event.Record
}

// ChannelState is the decoded channel state of one old subtask.
type ChannelState struct {
	Subtask, Parallelism int // the old subtask's index, and its vertex's parallelism
	Records              []PersistedRecord
}

// RestoredChannelState tells a restored subtask what to replay.
type RestoredChannelState struct {
	// Blobs are the channel-state parts of the checkpoint: those of every
	// old subtask of the vertex, whatever its parallelism was.
	Blobs [][]byte
	// Keep says whether this subtask replays record r, which old subtask
	// from (of its vertex at its old parallelism) had persisted from input
	// edge edge: for a keyed exchange the owner of its key group, for any
	// other the subtask from.Subtask modulo the new parallelism (Flink
	// re-partitions channel state the same way since 1.13). An error fails
	// the restore (a record that cannot be placed).
	Keep func(edge int, from ChannelState, r event.Record) (bool, error)
}

// unalignedCheckpoint is an unaligned checkpoint whose snapshot is taken
// and whose input channel state is still being persisted: its parts wait
// to be written until every channel delivered its barrier.
type unalignedCheckpoint struct {
	b          event.CheckpointBarrier
	parts      []uidPart
	m          checkpoint.TaskMetrics
	storage    *checkpointstorage.FS
	persisting []bool
	records    [][]event.Record // per channel
}

// persist appends the records of channel ch to the channel state.
func (u *unalignedCheckpoint) persist(ch int, rs []event.Record) {
	if len(rs) > 0 {
		u.records[ch] = append(u.records[ch], rs...)
	}
}

// channelStateSnap encodes the persisted records of one subtask.
type channelStateSnap struct {
	subtask, parallelism int
	edgeOf               []int // channel → in-edge number
	inputOf              []int // channel → input number
	records              [][]event.Record
}

var _ state.Snapshot = channelStateSnap{}

// Write encodes: version, subtask index, parallelism, record count, then
// per record its edge, input, timestamp and value (state.AnyCodec: a value
// of a type outside the built-in ones goes through encoding/gob, which
// needs the type registered; Write registers each type it meets, so that a
// failover in this process decodes them. A restore in another process needs
// them registered there, with gob.Register, before the job starts).
func (s channelStateSnap) Write() (b []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("encoding a persisted record: %v (register its type with gob.Register)", r)
		}
	}()
	registerTypes(s.records)
	n := 0
	for _, rs := range s.records {
		n += len(rs)
	}
	b = append(b, channelStateVersion)
	b = binary.AppendUvarint(b, uint64(s.subtask))
	b = binary.AppendUvarint(b, uint64(s.parallelism))
	b = binary.AppendUvarint(b, uint64(n))
	for ch, rs := range s.records {
		for _, r := range rs {
			b = binary.AppendUvarint(b, uint64(s.edgeOf[ch]))
			b = binary.AppendUvarint(b, uint64(s.inputOf[ch]))
			b = binary.AppendVarint(b, int64(r.Timestamp))
			b = state.AnyCodec{}.Encode(b, r.Value)
		}
	}
	return b, nil
}

// The types of SQL rows and their usual field values are registered up
// front, so that channel state of a SQL job restores in a new process.
func init() {
	for _, v := range []any{event.Row{}, time.Time{}, []any(nil), map[string]any(nil)} {
		gob.Register(v)
	}
}

// registerTypes registers with encoding/gob the dynamic type of every value
// AnyCodec encodes through gob. Registering a type twice is harmless; a name
// taken by another type panics, which Write reports.
func registerTypes(records [][]event.Record) {
	seen := map[reflect.Type]bool{}
	for _, rs := range records {
		for _, r := range rs {
			if r.Value == nil {
				continue
			}
			t := reflect.TypeOf(r.Value)
			if seen[t] || t.PkgPath() == "" && t.Kind() != reflect.Struct && t.Kind() != reflect.Pointer {
				continue
			}
			seen[t] = true
			gob.Register(r.Value)
		}
	}
}

var errCorruptChannelState = errors.New("task: corrupt channel state")

// DecodeChannelState parses a channel-state blob.
func DecodeChannelState(b []byte) (ChannelState, error) {
	var cs ChannelState
	if len(b) == 0 || b[0] != channelStateVersion {
		return cs, fmt.Errorf("%w: unknown version", errCorruptChannelState)
	}
	r := &uvarintReader{b: b[1:]}
	cs.Subtask = int(r.uvarint())
	cs.Parallelism = int(r.uvarint())
	n := r.uvarint()
	if r.err != nil || n > uint64(len(b)) {
		return cs, fmt.Errorf("%w: bad header", errCorruptChannelState)
	}
	cs.Records = make([]PersistedRecord, 0, n)
	for range n {
		p := PersistedRecord{Edge: int(r.uvarint()), Input: int(r.uvarint())}
		p.Record.Timestamp = event.Timestamp(r.varint())
		if r.err != nil {
			return cs, fmt.Errorf("%w: record %d: %v", errCorruptChannelState, len(cs.Records), r.err)
		}
		v, rest, err := state.AnyCodec{}.Decode(r.b)
		if err != nil {
			return cs, fmt.Errorf("%w: record %d: %v (a record type must be registered with gob.Register before a restore in a new process)",
				errCorruptChannelState, len(cs.Records), err)
		}
		p.Record.Value, r.b = v, rest
		cs.Records = append(cs.Records, p)
	}
	return cs, nil
}

type uvarintReader struct {
	b   []byte
	err error
}

func (r *uvarintReader) uvarint() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.err = errors.New("truncated")
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *uvarintReader) varint() int64 {
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.err = errors.New("truncated")
		return 0
	}
	r.b = r.b[n:]
	return v
}

// channelStatePart is the part that holds u's input channel state, under
// the chain head's uid.
func (t *Subtask) channelStatePart(u *unalignedCheckpoint) uidPart {
	edges := t.spec.ChannelEdges
	if edges == nil {
		edges = make([]int, t.spec.Gate.NumChannels())
	}
	snap := channelStateSnap{subtask: t.spec.ID.Index, parallelism: t.spec.Parallelism, edgeOf: edges,
		inputOf: t.spec.Gate.inputOf, records: u.records}
	return uidPart{uid: t.spec.Chain[0].UID, part: operator.Part{Name: PartChannelState, Snap: snap}}
}

// replayChannelState processes the restored channel state this subtask
// keeps, before it reads any input: the data that was in flight when the
// restored checkpoint was taken.
func (t *Subtask) replayChannelState() error {
	rc := t.spec.ChannelState
	if rc == nil {
		return nil
	}
	for _, blob := range rc.Blobs {
		cs, err := DecodeChannelState(blob)
		if err != nil {
			return fmt.Errorf("subtask %s: restoring channel state: %w", t.spec.ID, err)
		}
		for _, p := range cs.Records {
			keep, err := rc.Keep(p.Edge, cs, p.Record)
			if err != nil {
				return fmt.Errorf("subtask %s: restoring channel state: %w", t.spec.ID, err)
			}
			if keep {
				t.processRecord(p.Record, p.Input == 1)
			}
			if t.err != nil {
				return t.err
			}
		}
	}
	return t.err
}
