package weir

import (
	"fmt"
	"os"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
)

// Print writes every element of s to standard output, one line each
// (Flink's DataStream.print): with fmt's %v, prefixed by "n> " — the
// subtask's index plus one — when the sink runs on more than one subtask.
// It is at-least-once and meant for trying things out.
func Print[T any](s DataStream[T], opts ...OperatorOpt) DataStream[T] {
	return SinkTo(s, printSink{}, "Print to Std. Out", opts...)
}

type printSink struct{}

func (printSink) CreateWriter(c operator.WriterContext) (operator.SinkWriter, error) {
	prefix := ""
	if c.Parallelism > 1 {
		prefix = fmt.Sprintf("%d> ", c.Subtask.Index+1)
	}
	return printWriter{prefix}, nil
}

func (printSink) CreateCommitter(operator.WriterContext) (operator.Committer, error) { return nil, nil }

type printWriter struct{ prefix string }

// Write reads os.Stdout at each call, so a test that swaps it (as go
// test does for examples) sees the lines.
func (w printWriter) Write(r event.Record) error {
	_, err := fmt.Fprintf(os.Stdout, "%s%v\n", w.prefix, r.Value)
	return err
}

func (printWriter) Flush(bool) error                                   { return nil }
func (printWriter) PrepareCommit(event.CheckpointID) ([][]byte, error) { return nil, nil }
func (printWriter) SnapshotState(event.CheckpointID) ([]byte, error)   { return nil, nil }
func (printWriter) Close() error                                       { return nil }
