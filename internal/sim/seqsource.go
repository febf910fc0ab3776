package sim

import (
	"context"
	"encoding/binary"
	"fmt"
	"time"

	"github.com/weirstream/weir/clock"
	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
)

// Seq is one generated element: the seq-th element of key Key. Its event
// time is Seq*10 ms.
type Seq struct {
	Key int
	Seq int
}

// SeqSource is a bounded source that emits, for each of Keys keys, the gap-
// free sequence 0..PerKey-1. Keys are spread over Splits splits; a split's
// position is the next sequence number of each of its keys. It emits Burst
// elements per poll and then waits Pause, so checkpoints fall mid-stream.
type SeqSource struct {
	Keys, PerKey, Splits, Burst int
	Pause                       time.Duration
	Faults                      *Faults
	// Unbounded makes the source idle forever after its data instead of ending.
	Unbounded bool
	// EndWhen, if set, holds a bounded source's end of input (it idles,
	// asking again every Pause) until EndWhen returns true: a test whose
	// fault needs some checkpoints to happen first does not depend on
	// how fast the machine is.
	EndWhen func() bool
	// Clock times Pause (a simulation's Sched). Default: clock.Real.
	Clock clock.Clock
}

// Bounded implements operator.Source.
func (s *SeqSource) Bounded() bool { return !s.Unbounded }

// Enumerate returns Splits splits starting at sequence 0.
func (s *SeqSource) Enumerate(context.Context) ([]operator.SplitState, error) {
	out := make([]operator.SplitState, s.Splits)
	for i := range out {
		keys := s.keysOf(i)
		out[i] = operator.SplitState{ID: fmt.Sprint(i), Position: encodePos(make([]int, len(keys)))}
	}
	return out, nil
}

// AssignSplit gives split i to reader i mod n (a reader may get none).
func (s *SeqSource) AssignSplit(id string, n int) int {
	var i int
	fmt.Sscan(id, &i)
	return i % n
}

func (s *SeqSource) keysOf(split int) []int {
	var keys []int
	for k := split; k < s.Keys; k += s.Splits {
		keys = append(keys, k)
	}
	return keys
}

// CreateReader implements operator.Source.
func (s *SeqSource) CreateReader(ctx operator.ReaderContext) (operator.SourceReader, error) {
	if err := s.Faults.Maybe("restore"); err != nil {
		return nil, err
	}
	return &seqReader{src: s, pos: map[string][]int{}, ready: closedChan()}, nil
}

func closedChan() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}

func encodePos(p []int) []byte {
	b := binary.AppendUvarint(nil, uint64(len(p)))
	for _, v := range p {
		b = binary.AppendUvarint(b, uint64(v))
	}
	return b
}

func decodePos(b []byte) ([]int, error) {
	n, k := binary.Uvarint(b)
	if k <= 0 {
		return nil, fmt.Errorf("seqsource: corrupt position")
	}
	b = b[k:]
	out := make([]int, n)
	for i := range out {
		v, k := binary.Uvarint(b)
		if k <= 0 {
			return nil, fmt.Errorf("seqsource: corrupt position")
		}
		out[i], b = int(v), b[k:]
	}
	return out, nil
}

type seqReader struct {
	src    *SeqSource
	splits []string
	pos    map[string][]int
	next   int // round-robin cursor over splits
	done   operator.FinishedSplits
	ready  chan struct{}
}

func (r *seqReader) AddSplits(ss []operator.SplitState) error {
	for _, s := range ss {
		p, err := decodePos(s.Position)
		if err != nil {
			return err
		}
		r.splits = append(r.splits, s.ID)
		r.pos[s.ID] = p
	}
	return nil
}

// Poll emits up to Burst elements round-robin over splits and keys.
func (r *seqReader) Poll(out operator.ReaderOutput) (operator.ReaderStatus, error) {
	emitted := 0
	for emitted < r.src.Burst {
		if !r.emitOne(out) {
			if r.src.Unbounded {
				r.ready = make(chan struct{})
				return operator.NothingAvailable, nil
			}
			if r.src.EndWhen != nil && !r.src.EndWhen() {
				break // ask again after Pause
			}
			return operator.EndOfInput, nil
		}
		emitted++
	}
	r.ready = make(chan struct{})
	ready := r.ready
	clock.Or(r.src.Clock).AfterFunc(r.src.Pause, func() { close(ready) })
	return operator.NothingAvailable, nil
}

func (r *seqReader) emitOne(out operator.ReaderOutput) bool {
	for tries := 0; tries < len(r.splits); tries++ {
		id := r.splits[r.next%len(r.splits)]
		r.next++
		var split int
		fmt.Sscan(id, &split)
		keys := r.src.keysOf(split)
		p := r.pos[id]
		for j, k := range keys {
			if p[j] < r.src.PerKey {
				out.Collect(id, event.Record{Value: Seq{Key: k, Seq: p[j]}, Timestamp: int64(p[j]) * 10})
				p[j]++
				if r.ended(p) {
					r.finish(out, id)
				}
				return true
			}
		}
		r.finish(out, id) // a no-op unless it had nothing left when added
	}
	return false
}

// ended reports whether a split at position p emitted all its elements.
func (r *seqReader) ended(p []int) bool {
	for _, n := range p {
		if n < r.src.PerKey {
			return false
		}
	}
	return true
}

// finish reports a split of a bounded source finished (an unbounded one's
// splits never end: they wait for more).
func (r *seqReader) finish(out operator.ReaderOutput, id string) {
	if !r.src.Unbounded {
		r.done.Finish(out, id)
	}
}

func (r *seqReader) Available() <-chan struct{} { return r.ready }

func (r *seqReader) SnapshotState(event.CheckpointID) ([]operator.SplitState, error) {
	out := make([]operator.SplitState, 0, len(r.splits))
	for _, id := range r.splits {
		out = append(out, operator.SplitState{ID: id, Position: encodePos(r.pos[id])})
	}
	return out, nil
}

func (r *seqReader) NotifyCheckpointComplete(event.CheckpointID) error { return nil }
func (r *seqReader) Close() error                                      { return nil }
