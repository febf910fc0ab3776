package task

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/weirstream/weir/checkpoint"
	"github.com/weirstream/weir/checkpointstorage"
	"github.com/weirstream/weir/clock"
	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/state"
)

// TaskState is the state handle blob a subtask acknowledges a checkpoint
// with: for each operator UID, the storage handle of each snapshot part.
type TaskState struct {
	Operators map[string]map[string]checkpointstorage.Handle `json:"operators"`
	// Files lists the other files the parts need: those of incremental
	// snapshots (shared SSTs, the snapshot's own small files), named in
	// the part's manifest. The checkpoint metadata lists them, so
	// retention and GC keep them.
	Files []checkpointstorage.Handle `json:"files,omitempty"`
}

// DecodeTaskState parses a blob written by a subtask's acknowledgement.
func DecodeTaskState(b []byte) (TaskState, error) {
	var s TaskState
	if err := json.Unmarshal(b, &s); err != nil {
		return s, fmt.Errorf("task: corrupt task state: %w", err)
	}
	return s, nil
}

type uidPart struct {
	uid  string
	part operator.Part
}

// checkpoint takes this subtask's part of checkpoint b: pre-barrier flush,
// barrier forwarded, synchronous capture; the encoding and upload run on
// another goroutine, which acknowledges when done.
// An unaligned snapshot is not written yet: it waits in t.unal for its
// input channel state (see unaligned.go).
func (t *Subtask) checkpoint(b event.CheckpointBarrier, alignment time.Duration, unaligned bool) {
	if t.spec.Mode == AtMostOnce || t.err != nil {
		return
	}
	start := t.spec.Now()
	t.dropNow()
	t.reportProgress(b.ID, checkpoint.PhaseSync, "")
	for _, c := range t.spec.Chain {
		if t.setErr(c.Op.PrepareSnapshotPreBarrier(b.ID)); t.err != nil {
			return
		}
	}
	ov := t.forwardBarrier(b, unaligned)
	parts, err := t.capture(b.ID, !b.Type.IsSavepoint())
	if err != nil {
		t.setErr(fmt.Errorf("checkpoint %d: synchronous snapshot: %w", b.ID, err))
		return
	}
	if p, ok := t.outputStatePart(ov); ok {
		parts = append(parts, p)
	}
	if b.Final {
		t.finalID = b.ID
	}
	if b.Type == event.SnapshotSuspend {
		t.finalID, t.stopping = b.ID, b.ID
	}
	m := checkpoint.TaskMetrics{AlignmentDuration: alignment, SyncDuration: t.spec.Now().Sub(start),
		StartDelay: startDelay(b, start, alignment), Unaligned: t.overtakesOutput(b, unaligned)}
	if g := t.spec.Gate; g != nil {
		m.AlignmentBuffered = g.heldRecords() // still held: the gate unblocks after the snapshot
	}
	storage, err := t.storageFor(b)
	if err != nil {
		t.report(Report{Kind: ReportDecline, ID: b.ID, Phase: checkpoint.PhaseSync, Err: err})
		return
	}
	if unaligned {
		n := t.spec.Gate.NumChannels()
		t.unal = &unalignedCheckpoint{b: b, parts: parts, m: m, storage: storage,
			persisting: make([]bool, n), records: make([][]event.Record, n)}
		return
	}
	if t.holdQueued(b, parts, m, storage) {
		return
	}
	t.startAsync(b.ID, func() { t.writeAsync(b.ID, storage, parts, m, !b.Type.IsSavepoint()) })
}

// startAsync runs write, the asynchronous part of checkpoint id, on a
// goroutine of its own, holding a slot of t.asyncs.
func (t *Subtask) startAsync(id event.CheckpointID, write func()) {
	t.asyncs <- struct{}{}
	if t.sched == nil {
		go write()
		return
	}
	t.sched.Go(fmt.Sprintf("%s async %d", t.spec.ID, id), write)
}

// startDelay is the time from the trigger of b to its first barrier here
// (Flink's checkpointStartDelayNanos): the snapshot started at start after
// aligning for alignment. Zero when b carries no trigger time.
func startDelay(b event.CheckpointBarrier, start time.Time, alignment time.Duration) time.Duration {
	if b.Timestamp == 0 {
		return 0
	}
	return max(0, start.Sub(time.UnixMilli(int64(b.Timestamp)))-alignment)
}

// storageFor is where the state of b goes: the checkpoint storage, or the
// directory of a savepoint.
func (t *Subtask) storageFor(b event.CheckpointBarrier) (*checkpointstorage.FS, error) {
	if !b.Type.IsSavepoint() {
		return t.spec.Storage, nil
	}
	if t.spec.Savepoints != nil {
		if s := t.spec.Savepoints(b.ID); s != nil {
			return s, nil
		}
	}
	return nil, fmt.Errorf("%s %d: no savepoint directory registered for it", b.Type, b.ID)
}

// capture takes the synchronous snapshot of every operator of the chain
// (and the source), telling each keyed state backend first whether it is
// for a checkpoint, which encode writes incrementally, or a savepoint.
func (t *Subtask) capture(id event.CheckpointID, checkpoint bool) ([]uidPart, error) {
	var out []uidPart
	if t.src != nil {
		p, err := t.src.snapshot(id)
		if err != nil {
			return nil, err
		}
		out = append(out, uidPart{t.spec.Source.UID, p})
	}
	for _, c := range t.spec.Chain {
		if p, ok := keyedOf(c).(state.SnapshotPurpose); ok {
			p.SnapshotFor(checkpoint)
		}
		parts, err := c.Op.SnapshotState(id)
		if err != nil {
			return nil, fmt.Errorf("operator %s: %w", c.UID, err)
		}
		for _, p := range parts {
			out = append(out, uidPart{c.UID, p})
		}
	}
	return out, nil
}

func keyedOf(c ChainedOperator) state.KeyedBackend {
	if c.Ctx == nil {
		return nil
	}
	return c.Ctx.Keyed
}

// writeAsync runs off the task goroutine: it encodes each captured part,
// writes them to storage (in parallel, as the storage allows) and
// acknowledges the checkpoint. A part that cannot be encoded or written
// declines it, naming the operator, the part or the file. With
// incremental (a checkpoint, not a savepoint, which stays canonical) a
// part that can be written as files is.
func (t *Subtask) writeAsync(id event.CheckpointID, storage *checkpointstorage.FS, parts []uidPart, m checkpoint.TaskMetrics, incremental bool) {
	defer func() { <-t.asyncs }()
	start := t.spec.Clock.Now()
	t.reportProgress(id, checkpoint.PhaseAsync, "")
	decline := func(err error) {
		t.report(Report{Kind: ReportDecline, ID: id, Phase: checkpoint.PhaseAsync, Err: err})
	}
	files := make([]checkpointstorage.StateFile, len(parts))
	st := TaskState{Operators: map[string]map[string]checkpointstorage.Handle{}}
	for i, p := range parts {
		data, needs, written, err := t.encode(id, storage, p, incremental)
		if err != nil {
			decline(fmt.Errorf("operator %s part %s: %w", p.uid, p.part.Name, err))
			return
		}
		files[i] = checkpointstorage.StateFile{Name: t.fileName(p), Data: data}
		st.Files = append(st.Files, needs...)
		m.Bytes += int64(len(data)) + written
		m.StateBytes += int64(len(data))
		for _, h := range needs {
			m.StateBytes += h.Size
		}
		switch p.part.Name {
		case PartChannelState:
			m.PersistedBytes += int64(len(data))
		case PartOutputState:
			m.PersistedBytes += int64(len(data))
			m.PersistedOutputBytes += int64(len(data))
		}
	}
	hs, err := storage.WriteStates(id, files)
	if err != nil {
		decline(fmt.Errorf("writing state: %w", err))
		return
	}
	for i, p := range parts {
		if st.Operators[p.uid] == nil {
			st.Operators[p.uid] = map[string]checkpointstorage.Handle{}
		}
		st.Operators[p.uid][p.part.Name] = hs[i]
	}
	blob, err := json.Marshal(st)
	if err != nil {
		decline(err)
		return
	}
	m.AsyncDuration = clock.Since(t.spec.Clock, start)
	t.report(Report{Kind: ReportAck, ID: id, Ack: checkpoint.Ack{State: blob, Metrics: m}})
}

// encode writes part p: as a canonical blob, or, when incremental and the
// part can, as files (uploaded here: written bytes) and a manifest naming
// them (needs).
func (t *Subtask) encode(id event.CheckpointID, storage *checkpointstorage.FS, p uidPart, incremental bool) (
	data []byte, needs []checkpointstorage.Handle, written int64, err error) {
	inc, ok := p.part.Snap.(state.IncrementalSnapshot)
	if !incremental || !ok {
		data, err = p.part.Snap.Write()
		return data, nil, 0, err
	}
	f := &SnapshotFiles{Storage: storage, ID: id, Prefix: t.fileName(p)}
	data, hs, err := inc.WriteFiles(f)
	for _, h := range hs {
		needs = append(needs, checkpointstorage.Handle(h))
	}
	return data, needs, f.Written(), err
}

// fileName is the state file of part p in this subtask, e.g. "map-0-keyed".
func (t *Subtask) fileName(p uidPart) string {
	return fmt.Sprintf("%s-%d-%s", fileSafe(p.uid), t.spec.ID.Index, p.part.Name)
}

func fileSafe(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '/' || r == ' ' || r == '\\' || r == ':' {
			return '_'
		}
		return r
	}, s)
}

// waitAsync waits until running async snapshot parts are done.
func (t *Subtask) waitAsync() {
	if t.sched != nil {
		t.sched.Wait(func() bool { return len(t.asyncs) == 0 })
	}
	for i := 0; i < cap(t.asyncs); i++ {
		t.asyncs <- struct{}{}
	}
}
