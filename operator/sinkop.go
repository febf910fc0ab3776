package operator

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/weirstream/weir/clock"
	"github.com/weirstream/weir/event"
)

// Part names of the sink operator.
const (
	PartCommits = "commits"
	PartWriter  = "writer"
)

// SinkOperator runs a Sink: the writer receives records; on each barrier it
// pre-commits and the committables go into the checkpoint (CommitLog); on
// NotifyCheckpointComplete(id) every committable of a checkpoint ≤ id is
// committed. Restored committables belong to a completed checkpoint and are
// committed at once on open (commit is idempotent).
//
// Without checkpoints (Context.Commit) a bounded job's sink pre-commits and
// commits everything at the end of input, as Flink's committer does; a sink
// with a committer in a job that takes no checkpoints and never ends fails
// to open with ErrNeverCommits rather than run and silently write nothing.
type SinkOperator struct {
	Base
	Sink      Sink
	writer    SinkWriter
	committer Committer
	log       *CommitLog
	parts     map[string][][]byte
	ctx       context.Context
}

// NewSinkOperator wraps sink.
func NewSinkOperator(sink Sink) *SinkOperator {
	return &SinkOperator{Sink: sink, log: NewCommitLog()}
}

// InitializeState keeps the restored parts for Open.
func (s *SinkOperator) InitializeState(parts map[string][][]byte) error {
	s.parts = parts
	return nil
}

// Open creates the writer and committer and commits restored committables.
func (s *SinkOperator) Open(ctx *Context) error {
	s.Ctx = ctx
	s.ctx = ctx.Context
	if s.ctx == nil {
		s.ctx = context.Background()
	}
	mine := s.inherited(PartCommits)
	for _, b := range mine {
		if err := s.log.DecodeInto(b); err != nil {
			return err
		}
	}
	wctx := WriterContext{Subtask: ctx.Subtask, Parallelism: ctx.Parallelism, JobID: ctx.JobID,
		CheckpointInterval: ctx.CheckpointInterval, CheckpointTimeout: ctx.CheckpointTimeout, Context: s.ctx,
		RestoredCheckpoint: ctx.RestoredCheckpoint, WriterState: s.inherited(PartWriter), Metrics: ctx.Metrics, Group: ctx.Group, Logger: ctx.Logger}
	if err := s.create(wctx); err != nil {
		return err
	}
	if s.committer != nil && ctx.Commit == CommitNever {
		return fmt.Errorf("%w: %q writes its output only when a checkpoint completes, but this job takes no checkpoints "+
			"and never ends, so it would never write anything; hint: enable checkpointing, e.g. "+
			"SET 'execution.checkpointing.interval' = '10 s' (Go: runtime.Options.Checkpoint.Interval)", ErrNeverCommits, ctx.Name)
	}
	if ctx.RestoredCheckpoint > 0 {
		return s.commitUpTo(ctx.RestoredCheckpoint)
	}
	return nil
}

// create makes the writer and the committer. They are kept only when their
// constructor succeeded: a sink that returns a typed nil pointer with its
// error must not leave Close a nil writer to call.
func (s *SinkOperator) create(wctx WriterContext) error {
	w, err := s.Sink.CreateWriter(wctx)
	if err != nil {
		return fmt.Errorf("sink %s: create writer: %w", wctx.Subtask, err)
	}
	s.writer = w
	c, err := s.Sink.CreateCommitter(wctx)
	if err != nil {
		return fmt.Errorf("sink %s: create committer: %w", wctx.Subtask, err)
	}
	s.committer = c
	return nil
}

// inherited returns the blobs of part name that this subtask takes over:
// blob i (old subtask i) goes to new subtask i mod parallelism.
func (s *SinkOperator) inherited(name string) [][]byte {
	var out [][]byte
	for i, b := range s.parts[name] {
		if i%s.Ctx.Parallelism == s.Ctx.Subtask.Index && len(b) > 0 {
			out = append(out, b)
		}
	}
	return out
}

// ProcessElement writes r.
func (s *SinkOperator) ProcessElement(r event.Record) error { return s.writer.Write(r) }

// ProcessWatermark is the end of the line: sinks drop watermarks, except
// that a writer that is a WatermarkWriter sees them.
func (s *SinkOperator) ProcessWatermark(wm event.Timestamp) error {
	if w, ok := s.writer.(WatermarkWriter); ok {
		return w.ProcessWatermark(wm)
	}
	return nil
}

// PrepareSnapshotPreBarrier flushes and pre-commits for checkpoint id.
func (s *SinkOperator) PrepareSnapshotPreBarrier(id event.CheckpointID) error {
	if err := s.writer.Flush(false); err != nil {
		return err
	}
	c, err := s.writer.PrepareCommit(id)
	if err != nil {
		return err
	}
	s.log.Add(id, c)
	return nil
}

// SnapshotState captures the commit log and the writer state.
func (s *SinkOperator) SnapshotState(id event.CheckpointID) ([]Part, error) {
	ws, err := s.writer.SnapshotState(id)
	if err != nil {
		return nil, err
	}
	return []Part{
		{Name: PartCommits, Snap: bytesSnapshot(s.log.Encode())},
		{Name: PartWriter, Snap: bytesSnapshot(ws)},
	}, nil
}

// NotifyCheckpointComplete commits every committable of checkpoints ≤ id.
func (s *SinkOperator) NotifyCheckpointComplete(id event.CheckpointID) error {
	return s.commitUpTo(id)
}

func (s *SinkOperator) commitUpTo(id event.CheckpointID) error {
	if s.committer == nil {
		return nil
	}
	for _, due := range s.log.Due(id) {
		if err := s.commitWithRetries(due); err != nil {
			return fmt.Errorf("sink %s: commit of checkpoint %d: %w", s.Ctx.Subtask, due, err)
		}
		s.log.Committed(due)
	}
	return nil
}

// DefaultCommitRetries and DefaultCommitBackoff are the in-place commit
// retries of a sink when Context.CommitRetries and Context.CommitBackoff
// are 0: a failed commit is retried 3 times, 50 ms after the first failure,
// the wait doubling, before the subtask fails and the job restores, which
// commits again. Data loss is never retried.
const (
	DefaultCommitRetries = 3
	DefaultCommitBackoff = 50 * time.Millisecond
)

// commitRetry returns the retries and first backoff of ctx, defaults
// filled in; negative retries mean none.
func commitRetry(ctx *Context) (int, time.Duration) {
	retries, backoff := ctx.CommitRetries, ctx.CommitBackoff
	if retries == 0 {
		retries = DefaultCommitRetries
	}
	if retries < 0 {
		retries = 0
	}
	if backoff <= 0 {
		backoff = DefaultCommitBackoff
	}
	return retries, backoff
}

func (s *SinkOperator) commitWithRetries(id event.CheckpointID) error {
	clk := clock.Or(s.Ctx.Clock)
	start := clk.Now()
	err := s.commitRetrying(id, clk)
	if m := s.Ctx.Metrics; m != nil && err == nil {
		m.Commits++
		m.LastCommitDuration = clock.Since(clk, start)
	}
	return err
}

func (s *SinkOperator) commitRetrying(id event.CheckpointID, clk clock.Clock) error {
	retries, backoff := commitRetry(s.Ctx)
	var err error
	for attempt := 0; attempt <= retries; attempt++ {
		if err = s.committer.Commit(s.ctx, id, s.log.Get(id)); err == nil || errors.Is(err, ErrDataLoss) {
			return err
		}
		if attempt < retries {
			if !clock.Sleep(s.ctx, clk, backoff) {
				return err // cancelled: the next attempt commits again
			}
			backoff *= 2
		}
	}
	return err
}

// ErrNeverCommits is the error of a sink with a committer in a job that
// takes no checkpoints and never ends. A restart would fail the same way.
var ErrNeverCommits = errors.New("operator: sink can never commit")

// ErrNonRestartable marks (errors.Is) a failure that a restart would only
// repeat: a misconfiguration such as wrong credentials, a missing table or
// column. The runtime fails the job at once, as for ErrNeverCommits.
var ErrNonRestartable = errors.New("operator: not restartable")

// EndOfInputCommit is the checkpoint id under which a job without
// checkpoints pre-commits and commits at the end of input. Flink uses
// Long.MAX_VALUE; Weir uses 1, the first id of a fresh start, because
// transactional sinks reset their bookkeeping on a fresh start and count
// from 1 (a run without checkpoints is always a fresh start), while a
// sink that remembers the last committed id would take MaxInt64 to mean
// that every later run of the job was already written.
const EndOfInputCommit event.CheckpointID = 1

// Finish flushes the writer at the end of input. In a job without
// checkpoints no barrier will come: everything written is pre-committed
// and committed now.
func (s *SinkOperator) Finish() error {
	if err := s.writer.Flush(true); err != nil || s.Ctx.Commit != CommitAtEndOfInput {
		return err
	}
	c, err := s.writer.PrepareCommit(EndOfInputCommit)
	if err != nil {
		return err
	}
	s.log.Add(EndOfInputCommit, c)
	return s.commitUpTo(EndOfInputCommit)
}

// Close closes writer and committer.
func (s *SinkOperator) Close() error {
	var err error
	if s.writer != nil {
		err = s.writer.Close()
	}
	if s.committer != nil {
		if cerr := s.committer.Close(); err == nil {
			err = cerr
		}
	}
	return err
}

// bytesSnapshot is a snapshot already encoded at capture time.
type bytesSnapshot []byte

func (b bytesSnapshot) Write() ([]byte, error) { return b, nil }
