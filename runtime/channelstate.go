package runtime

import (
	"fmt"
	"slices"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/graph"
	"github.com/weirstream/weir/keygroup"
	"github.com/weirstream/weir/task"
)

// channelEdges returns, per input channel of a subtask of v, the number of
// the in-edge it belongs to, in the order makeGates numbers the channels.
func (dp *deployer) channelEdges(v *graph.Vertex, i int) []int {
	var out []int
	for n, e := range dp.jg.InEdges(v) {
		for j := 0; j < e.From.Parallelism; j++ {
			if e.Edge.Partitioning == graph.Forward && j != i {
				continue
			}
			out = append(out, n)
		}
	}
	return out
}

// restoredChannelState is what subtask i of v replays from the restored
// checkpoint's input channel state (unaligned checkpoints), or nil. Records
// that came over a keyed exchange go to the subtask owning their key group
// at the new parallelism; others to the old subtask's index modulo the new
// parallelism. A broadcast edge's records cannot be re-partitioned: each old
// subtask held its own copies, taken at different points.
func (dp *deployer) restoredChannelState(v *graph.Vertex, i int) *task.RestoredChannelState {
	if dp.restore == nil {
		return nil
	}
	blobs := dp.restore.of(v.Head().UID)[task.PartChannelState]
	out, err := dp.restoredOutputState(v)
	if err != nil {
		dp.fail(err)
		return nil
	}
	// Each channel's in-flight data in order: what the receivers had read
	// (their input state) before what the senders still queued (their
	// output state, which their barrier overtook).
	blobs = append(slices.Clone(blobs), out...)
	if len(blobs) == 0 {
		return nil
	}
	edges := dp.jg.InEdges(v)
	par := v.Parallelism
	keep := func(edge int, from task.ChannelState, r any) (bool, error) {
		if edge >= len(edges) {
			return false, fmt.Errorf("channel state names input edge %d of %s, which has %d: the job's graph changed", edge, v.Name, len(edges))
		}
		e := edges[edge]
		switch e.Edge.Partitioning {
		case graph.Hash:
			maxPar := e.From.Tail().MaxParallelism
			return keygroup.OperatorIndex(keygroup.ForKey(e.Edge.Key(r), maxPar), maxPar, par) == i, nil
		case graph.Broadcast:
			if from.Parallelism != par {
				return false, fmt.Errorf("the checkpoint holds in-flight broadcast records of %s at parallelism %d, "+
					"which cannot be re-partitioned to %d: restore it at parallelism %d, or rescale from a savepoint (always aligned)",
					v.Name, from.Parallelism, par, from.Parallelism)
			}
		}
		return from.Subtask%par == i, nil
	}
	return &task.RestoredChannelState{Blobs: blobs, Keep: func(edge int, from task.ChannelState, r event.Record) (bool, error) {
		return keep(edge, from, r.Value)
	}}
}

// restoredOutputState is the output channel state the upstream vertices of
// v persisted for v's subtasks: channel-state blobs in v's terms, which v's
// subtasks replay as they replay their own (see task.PartOutputState).
func (dp *deployer) restoredOutputState(v *graph.Vertex) ([][]byte, error) {
	var out [][]byte
	seen := map[string]bool{}
	for _, e := range dp.jg.InEdges(v) {
		uid := e.From.Head().UID
		if seen[uid] {
			continue
		}
		seen[uid] = true
		for _, b := range dp.restore.of(uid)[task.PartOutputState] {
			byTarget, err := task.DecodeOutputState(b)
			if err != nil {
				return nil, fmt.Errorf("checkpoint %d, output channel state of %s: %w", dp.restore.id, e.From.Name, err)
			}
			out = append(out, byTarget[v.Head().UID]...)
		}
	}
	return out, nil
}

// operatorState is the restored state of chain operator uid without the
// channel state (input and output), which subtasks replay, not the operator.
func operatorState(r *restoredState, uid string) map[string][][]byte {
	parts := r.of(uid)
	_, in := parts[task.PartChannelState]
	_, out := parts[task.PartOutputState]
	if !in && !out {
		return parts
	}
	own := make(map[string][][]byte, len(parts))
	for k, v := range parts {
		if k != task.PartChannelState && k != task.PartOutputState {
			own[k] = v
		}
	}
	return own
}
