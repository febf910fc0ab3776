package exec

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
)

// valuesSplit is the id of the one split of a ValuesSource.
const valuesSplit = "values"

// ValuesSource is the source of a VALUES clause (Flink's StreamExecValues):
// a fixed list of rows, emitted as +I in order and then the end of input.
// The rows are one split, read by one reader (run it at parallelism 1);
// the split's position is the index of the next row, so a job restored
// from a checkpoint goes on after the checkpoint's last row and emits no
// row twice.
type ValuesSource struct {
	rows [][]any
}

// NewValuesSource returns a source of rows. It keeps rows and never
// modifies them; each emitted row is a copy.
func NewValuesSource(rows [][]any) *ValuesSource { return &ValuesSource{rows: rows} }

// Bounded implements operator.Source: VALUES ends.
func (s *ValuesSource) Bounded() bool { return true }

// Enumerate implements operator.Source: one split, from row 0.
func (s *ValuesSource) Enumerate(context.Context) ([]operator.SplitState, error) {
	return []operator.SplitState{{ID: valuesSplit, Position: binary.AppendUvarint(nil, 0)}}, nil
}

// CreateReader implements operator.Source.
func (s *ValuesSource) CreateReader(operator.ReaderContext) (operator.SourceReader, error) {
	return &valuesReader{rows: s.rows}, nil
}

// valuesReader emits the rows of the split it was given, one a Poll.
type valuesReader struct {
	rows  [][]any
	has   bool // the split was added to this reader
	next  int  // index of the next row
	ended operator.FinishedSplits
}

func (r *valuesReader) AddSplits(ss []operator.SplitState) error {
	for _, sp := range ss {
		n, k := binary.Uvarint(sp.Position)
		if sp.ID != valuesSplit || k <= 0 || n > uint64(len(r.rows)) {
			return fmt.Errorf("sql/exec: VALUES source: split %q has a position (%x) that is not one of its %d rows; was the query changed since the checkpoint?",
				sp.ID, sp.Position, len(r.rows))
		}
		r.has, r.next = true, int(n)
	}
	return nil
}

// Poll emits the next row; the split is reported finished right after the
// last one (or on the first Poll, when restored at its end).
func (r *valuesReader) Poll(out operator.ReaderOutput) (operator.ReaderStatus, error) {
	if !r.has {
		return operator.EndOfInput, nil
	}
	if r.next >= len(r.rows) {
		r.ended.Finish(out, valuesSplit)
		return operator.EndOfInput, nil
	}
	row := event.Row{Kind: event.Insert, Fields: slices.Clone(r.rows[r.next])}
	out.Collect(valuesSplit, event.Record{Value: row, Timestamp: event.NoTimestamp})
	r.next++
	if r.next == len(r.rows) {
		r.ended.Finish(out, valuesSplit)
	}
	return operator.MoreAvailable, nil
}

// Available implements operator.SourceReader; Poll never says
// NothingAvailable, so it is never waited on.
func (r *valuesReader) Available() <-chan struct{} { return nil }

// SnapshotState returns the index of the next row.
func (r *valuesReader) SnapshotState(event.CheckpointID) ([]operator.SplitState, error) {
	if !r.has {
		return nil, nil
	}
	return []operator.SplitState{{ID: valuesSplit, Position: binary.AppendUvarint(nil, uint64(r.next))}}, nil
}

func (r *valuesReader) NotifyCheckpointComplete(event.CheckpointID) error { return nil }
func (r *valuesReader) Close() error                                      { return nil }
