// Package sourcetest helps test source readers (operator.SourceReader): an
// output that records, in order, the records a reader emits and the split
// changes it reports, and helpers that open a reader and poll it to its end.
package sourcetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
)

// Output is a ReaderOutput that is also a SplitListener, as the runtime's
// is. It keeps one line per call, in call order:
//
//	split: value @ts    a record (without " @ts" if it has no timestamp)
//	added split         SplitAdded
//	finished split      SplitFinished
type Output struct {
	Lines []string
	// Value formats a record's value. Default: fmt's %v.
	Value func(v any) string
}

var _ operator.SplitListener = (*Output)(nil)

// Collect implements operator.ReaderOutput.
func (o *Output) Collect(split string, r event.Record) {
	v := fmt.Sprint(r.Value)
	if o.Value != nil {
		v = o.Value(r.Value)
	}
	line := split + ": " + v
	if r.Timestamp != event.NoTimestamp {
		line += fmt.Sprintf(" @%d", r.Timestamp)
	}
	o.Lines = append(o.Lines, line)
}

// SplitAdded implements operator.SplitListener.
func (o *Output) SplitAdded(id string) { o.Lines = append(o.Lines, "added "+id) }

// SplitFinished implements operator.SplitListener.
func (o *Output) SplitFinished(id string) { o.Lines = append(o.Lines, "finished "+id) }

// Open returns the reader of a source subtask of parallelism 1, given
// splits — or, when splits is nil, every split src enumerates — and closes
// it when the test ends.
func Open(t testing.TB, src operator.Source, splits []operator.SplitState) operator.SourceReader {
	t.Helper()
	if splits == nil {
		var err error
		if splits, err = src.Enumerate(context.Background()); err != nil {
			t.Fatalf("Enumerate: %v", err)
		}
	}
	r, err := src.CreateReader(operator.ReaderContext{Parallelism: 1, Context: context.Background()})
	if err != nil {
		t.Fatalf("CreateReader: %v", err)
	}
	t.Cleanup(func() { r.Close() })
	if err := r.AddSplits(splits); err != nil {
		t.Fatalf("AddSplits: %v", err)
	}
	return r
}

// Drain polls r into out until r reports EndOfInput, waiting on Available
// (at most 10 s) when it has nothing, and returns out.Lines. It fails the
// test on an error, and after a million polls.
func Drain(t testing.TB, r operator.SourceReader, out *Output) []string {
	t.Helper()
	for range 1_000_000 {
		st, err := r.Poll(out)
		if err != nil {
			t.Fatalf("Poll: %v", err)
		}
		switch st {
		case operator.EndOfInput:
			return out.Lines
		case operator.NothingAvailable:
			if c := r.Available(); c != nil {
				select {
				case <-c:
				case <-time.After(10 * time.Second):
					t.Fatalf("Available not signalled within 10 s; read so far: %q", out.Lines)
				}
			}
		}
	}
	t.Fatalf("no end of input after a million polls; read: %d lines", len(out.Lines))
	return nil
}
