package planner

import (
	"context"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
)

// mappedSource wraps a source whose values are not event.Rows yet, turning
// each value into a +I row with toRow.
type mappedSource struct {
	operator.Source
	toRow func(v any) []any
}

func (m mappedSource) CreateReader(ctx operator.ReaderContext) (operator.SourceReader, error) {
	r, err := m.Source.CreateReader(ctx)
	if err != nil {
		return nil, err
	}
	return mappedReader{SourceReader: r, toRow: m.toRow}, nil
}

// AssignSplit keeps the wrapped source's split placement.
func (m mappedSource) AssignSplit(id string, n int) int {
	if a, ok := m.Source.(operator.SplitAssigner); ok {
		return a.AssignSplit(id, n)
	}
	return operator.HashSplit(id, n) // where the runtime would place it unwrapped
}

func (m mappedSource) Enumerate(ctx context.Context) ([]operator.SplitState, error) {
	return m.Source.Enumerate(ctx)
}

type mappedReader struct {
	operator.SourceReader
	toRow func(v any) []any
}

// Poll turns each value into a row on its way to out; split changes pass
// through unchanged.
func (r mappedReader) Poll(out operator.ReaderOutput) (operator.ReaderStatus, error) {
	return r.SourceReader.Poll(operator.MapOutput(out, func(rec event.Record) event.Record {
		rec.Value = event.Row{Kind: event.Insert, Fields: r.toRow(rec.Value)}
		return rec
	}))
}
