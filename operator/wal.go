package operator

import (
	"context"
	"encoding/binary"
	"errors"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/state"
)

// WriteAheadSink keeps the records of each checkpoint in the checkpoint
// itself (as its committable) and hands them to Write only once that
// checkpoint is complete (Flink's GenericWriteAheadSink). Write must be
// idempotent per (subtask, checkpoint id): after a restore, the restored
// checkpoint's records are handed over again.
type WriteAheadSink struct {
	// Codec encodes records into the checkpoint. Default state.AnyCodec.
	Codec state.Codec[any]
	// Write writes one checkpoint's records of one subtask.
	Write func(ctx context.Context, subtask int, id event.CheckpointID, records []any) error
}

// IdempotentSink writes records at every barrier and at the end of input
// (at-least-once); Write must be idempotent (an upsert by key), which makes
// replays after a restore harmless.
type IdempotentSink struct {
	Write func(ctx context.Context, records []any) error
}

// CreateWriter implements Sink.
func (s *IdempotentSink) CreateWriter(ctx WriterContext) (SinkWriter, error) {
	return &idemWriter{s: s, ctx: ctx.Context}, nil
}

// CreateCommitter implements Sink: nothing to commit.
func (s *IdempotentSink) CreateCommitter(WriterContext) (Committer, error) { return nil, nil }

type idemWriter struct {
	s   *IdempotentSink
	ctx context.Context
	buf []any
}

func (w *idemWriter) Write(r event.Record) error { w.buf = append(w.buf, r.Value); return nil }
func (w *idemWriter) Flush(bool) error {
	if len(w.buf) == 0 {
		return nil
	}
	err := w.s.Write(w.ctx, w.buf)
	w.buf = w.buf[:0]
	return err
}
func (w *idemWriter) PrepareCommit(event.CheckpointID) ([][]byte, error) { return nil, w.Flush(false) }
func (w *idemWriter) SnapshotState(event.CheckpointID) ([]byte, error)   { return nil, nil }
func (w *idemWriter) Close() error                                       { return nil }

func (s *WriteAheadSink) codec() state.Codec[any] {
	if s.Codec == nil {
		return state.AnyCodec{}
	}
	return s.Codec
}

// CreateWriter implements Sink.
func (s *WriteAheadSink) CreateWriter(ctx WriterContext) (SinkWriter, error) {
	return &walWriter{s: s, subtask: ctx.Subtask.Index}, nil
}

// CreateCommitter implements Sink.
func (s *WriteAheadSink) CreateCommitter(ctx WriterContext) (Committer, error) {
	return &walCommitter{s: s}, nil
}

type walWriter struct {
	s       *WriteAheadSink
	subtask int
	buf     []any
}

func (w *walWriter) Write(r event.Record) error { w.buf = append(w.buf, r.Value); return nil }
func (w *walWriter) Flush(bool) error           { return nil }

// PrepareCommit moves the buffered records into the committable.
func (w *walWriter) PrepareCommit(event.CheckpointID) ([][]byte, error) {
	if len(w.buf) == 0 {
		return nil, nil
	}
	c := binary.AppendUvarint(nil, uint64(w.subtask))
	c = binary.AppendUvarint(c, uint64(len(w.buf)))
	for _, v := range w.buf {
		c = w.s.codec().Encode(c, v)
	}
	w.buf = w.buf[:0]
	return [][]byte{c}, nil
}

func (w *walWriter) SnapshotState(event.CheckpointID) ([]byte, error) { return nil, nil }
func (w *walWriter) Close() error                                     { return nil }

type walCommitter struct{ s *WriteAheadSink }

var errCorruptWAL = errors.New("operator: corrupt write-ahead log entry")

func (c *walCommitter) Commit(ctx context.Context, id event.CheckpointID, cs [][]byte) error {
	for _, b := range cs {
		subtask, records, err := c.decode(b)
		if err != nil {
			return err
		}
		if err := c.s.Write(ctx, subtask, id, records); err != nil {
			return err
		}
	}
	return nil
}

func (c *walCommitter) decode(b []byte) (int, []any, error) {
	sub, k := binary.Uvarint(b)
	if k <= 0 {
		return 0, nil, errCorruptWAL
	}
	n, k2 := binary.Uvarint(b[k:])
	if k2 <= 0 {
		return 0, nil, errCorruptWAL
	}
	b = b[k+k2:]
	out := make([]any, 0, n)
	for i := uint64(0); i < n; i++ {
		v, rest, err := c.s.codec().Decode(b)
		if err != nil {
			return 0, nil, err
		}
		out, b = append(out, v), rest
	}
	return int(sub), out, nil
}

func (c *walCommitter) Close() error { return nil }
