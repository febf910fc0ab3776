package weir

import (
	"context"
	"encoding/binary"
	"fmt"
	"time"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/graph"
	"github.com/weirstream/weir/operator"
)

// SourceOption configures a source.
//
// Deprecated: sources take OperatorOpt like every operator.
type SourceOption = OperatorOpt

// WithWatermarks assigns event time with ts (ms) and generates watermarks
// per split with strategy.
//
// Deprecated: use Watermarks, which takes the event time as a time.Time.
// Kept while other packages' tests still call it.
func WithWatermarks[T any](strategy WatermarkStrategy, ts func(T) int64) OperatorOpt {
	return Watermarks(strategy, func(v T) time.Time { return timeOf(ts(v)) })
}

// WithParallelism sets the source's parallelism.
//
// Deprecated: use Parallelism.
func WithParallelism(p int) OperatorOpt { return Parallelism(p) }

// WithUID sets the source's stable id.
//
// Deprecated: use UID. Kept while other packages' tests still call it.
func WithUID(uid string) OperatorOpt { return UID(uid) }

// FromSource adds a split-based source producing T values (Flink's
// fromSource; FLIP-27), named "Source: "+name: a connector's (kafka.NewSource,
// filesystem, datagen, …) or your own operator.Source. Set UID on the
// sources of a long-running job: their split positions are matched by it
// on restore.
func FromSource[T any](env *Environment, src operator.Source, name string, opts ...OperatorOpt) DataStream[T] {
	n := &graph.Node{Name: "Source: " + name, Parallelism: env.parallelism, Source: src}
	env.apply(n, opts)
	env.graph.AddNode(n)
	return DataStream[T]{env: env, node: n}
}

// FromSlice is a bounded source of data, split into one split per subtask
// of the default parallelism; its position is the index of the next element.
func FromSlice[T any](env *Environment, data []T, name string, opts ...OperatorOpt) DataStream[T] {
	vals := make([]any, len(data))
	for i, d := range data {
		vals[i] = d
	}
	return FromSource[T](env, &sliceSource{data: vals, splits: max(1, env.parallelism)}, name, opts...)
}

// sliceSource reads an in-memory slice; split i holds elements i, i+n, …
type sliceSource struct {
	data   []any
	splits int
}

func (s *sliceSource) Bounded() bool { return true }

func (s *sliceSource) Enumerate(context.Context) ([]operator.SplitState, error) {
	out := make([]operator.SplitState, s.splits)
	for i := range out {
		out[i] = operator.SplitState{ID: fmt.Sprint(i), Position: binary.AppendUvarint(nil, uint64(i))}
	}
	return out, nil
}

func (s *sliceSource) AssignSplit(id string, n int) int {
	var i int
	fmt.Sscan(id, &i)
	return i % n
}

func (s *sliceSource) CreateReader(operator.ReaderContext) (operator.SourceReader, error) {
	return &sliceReader{src: s, pos: map[string]int{}}, nil
}

type sliceReader struct {
	src   *sliceSource
	order []string
	pos   map[string]int
	done  operator.FinishedSplits
}

func (r *sliceReader) AddSplits(splits []operator.SplitState) error {
	for _, sp := range splits {
		p, n := binary.Uvarint(sp.Position)
		if n <= 0 {
			return fmt.Errorf("slice source: corrupt position of split %s", sp.ID)
		}
		r.order = append(r.order, sp.ID)
		r.pos[sp.ID] = int(p)
	}
	return nil
}

// Poll emits the next element of the first split with elements left. A
// split is reported finished (operator.SplitListener) right after its last
// element, so it stops holding back the subtask's watermark.
func (r *sliceReader) Poll(out operator.ReaderOutput) (operator.ReaderStatus, error) {
	for _, id := range r.order {
		p := r.pos[id]
		if p >= len(r.src.data) {
			r.done.Finish(out, id) // a no-op unless it had nothing left when added
			continue
		}
		out.Collect(id, event.Record{Value: r.src.data[p], Timestamp: event.NoTimestamp})
		r.pos[id] = p + r.src.splits
		if r.pos[id] >= len(r.src.data) {
			r.done.Finish(out, id)
		}
		return operator.MoreAvailable, nil
	}
	return operator.EndOfInput, nil
}

func (r *sliceReader) Available() <-chan struct{} { return nil }

func (r *sliceReader) SnapshotState(event.CheckpointID) ([]operator.SplitState, error) {
	out := make([]operator.SplitState, 0, len(r.order))
	for _, id := range r.order {
		out = append(out, operator.SplitState{ID: id, Position: binary.AppendUvarint(nil, uint64(r.pos[id]))})
	}
	return out, nil
}

func (r *sliceReader) NotifyCheckpointComplete(event.CheckpointID) error { return nil }
func (r *sliceReader) Close() error                                      { return nil }
