package task

import (
	"encoding/binary"
	"fmt"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/state"
)

// PartOutputState is the part name, under the uid of the head of a
// subtask's chain, of the output channel state of an unaligned checkpoint:
// the batches its barrier overtook in the subtask's output queues (Flink's
// result subpartition state). A restore replays them at the receivers, not
// at the sender: each receiving subtask replays the output state meant for
// it after its own input channel state and before any new input, as Flink
// 2.x does with execution.checkpointing.unaligned.recover-output-on-downstream
// (FLIP-547). So it is re-partitioned as the input channel state is (see
// RestoredChannelState): one code path, and the sender's parallelism may
// change as freely as the receiver's.
const PartOutputState = "output-channel-state"

// outputStateVersion is the first byte of an output-state blob.
const outputStateVersion = 1

// overtaken is what an unaligned barrier overtook on one output channel.
type overtaken struct {
	c       *OutChannel
	records []event.Record
}

// outputStateSnap encodes a subtask's output channel state: per receiving
// subtask, a channel-state blob in the receiver's terms (its index and
// parallelism, the input edge and input number of each record's channel),
// so that the receiver's restore reads it as its own input channel state.
type outputStateSnap struct {
	vertices []string // receiving vertex (uid of its chain head), per target
	snaps    []channelStateSnap
}

var _ state.Snapshot = outputStateSnap{}

// newOutputStateSnap groups what the barrier overtook by receiving subtask.
func newOutputStateSnap(ov []overtaken) outputStateSnap {
	var s outputStateSnap
	type receiver struct {
		vertex  string
		subtask int
	}
	index := map[receiver]int{}
	for _, o := range ov {
		tg := o.c.gate.target
		key := receiver{tg.Vertex, tg.Subtask}
		i, ok := index[key]
		if !ok {
			i = len(s.snaps)
			index[key] = i
			s.vertices = append(s.vertices, tg.Vertex)
			s.snaps = append(s.snaps, channelStateSnap{subtask: tg.Subtask, parallelism: tg.Parallelism})
		}
		sn := &s.snaps[i]
		edge := 0
		if o.c.index < len(tg.EdgeOf) {
			edge = tg.EdgeOf[o.c.index]
		}
		sn.edgeOf = append(sn.edgeOf, edge)
		sn.inputOf = append(sn.inputOf, o.c.gate.inputOf[o.c.index])
		sn.records = append(sn.records, o.records)
	}
	return s
}

// Write encodes: version, target count, then per target the receiving
// vertex's uid and its channel-state blob, each length-prefixed.
func (s outputStateSnap) Write() ([]byte, error) {
	b := []byte{outputStateVersion}
	b = binary.AppendUvarint(b, uint64(len(s.snaps)))
	for i, sn := range s.snaps {
		blob, err := sn.Write()
		if err != nil {
			return nil, err
		}
		b = binary.AppendUvarint(b, uint64(len(s.vertices[i])))
		b = append(b, s.vertices[i]...)
		b = binary.AppendUvarint(b, uint64(len(blob)))
		b = append(b, blob...)
	}
	return b, nil
}

// DecodeOutputState parses an output-state blob into, per receiving vertex
// (the uid of its chain head), the channel-state blobs meant for its
// subtasks (DecodeChannelState reads each).
func DecodeOutputState(b []byte) (map[string][][]byte, error) {
	if len(b) == 0 || b[0] != outputStateVersion {
		return nil, fmt.Errorf("%w: output state of unknown version", errCorruptChannelState)
	}
	r := &uvarintReader{b: b[1:]}
	n := r.uvarint()
	if r.err != nil || n > uint64(len(b)) {
		return nil, fmt.Errorf("%w: bad output state header", errCorruptChannelState)
	}
	out := map[string][][]byte{}
	for i := range n {
		v, ok := r.bytes()
		blob, ok2 := r.bytes()
		if !ok || !ok2 {
			return nil, fmt.Errorf("%w: output state target %d truncated", errCorruptChannelState, i)
		}
		out[string(v)] = append(out[string(v)], blob)
	}
	return out, nil
}

// bytes reads a length-prefixed byte string.
func (r *uvarintReader) bytes() ([]byte, bool) {
	n := r.uvarint()
	if r.err != nil || n > uint64(len(r.b)) {
		return nil, false
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v, true
}

// headUID is the uid the subtask's checkpoint parts of its own (channel
// state) go under: its source's, or its chain head's.
func (t *Subtask) headUID() string {
	if t.spec.Source != nil {
		return t.spec.Source.UID
	}
	return t.spec.Chain[0].UID
}

// outputStatePart is the part holding what an unaligned barrier overtook,
// or false when it overtook nothing.
func (t *Subtask) outputStatePart(ov []overtaken) (uidPart, bool) {
	if len(ov) == 0 {
		return uidPart{}, false
	}
	return uidPart{uid: t.headUID(), part: operator.Part{Name: PartOutputState, Snap: newOutputStateSnap(ov)}}, true
}
