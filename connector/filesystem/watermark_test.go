package filesystem_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/connector/filesystem"
	"github.com/weirstream/weir/connector/format"
	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/types"
)

// One subtask reads two files in turn. Once the first is read to its end
// it must leave the subtask's watermark minimum, so that event time follows
// the second file and a window over the first file's records fires before
// the end of input — as in Flink, whose source releases a finished split's
// output.
//
// a.csv holds 1 s and 2 s; b.csv 12 s, 15 s, 3 s, 16 s; the watermark
// trails by 1 s. The source pauses after 15 s (b's watermark: 13.999 s)
// until the window [0 s, 10 s) reaches the sink; then 3 s comes, late. Had
// a.csv stayed in the minimum at its last watermark (0.999 s), the window
// could fire only at the end of input: the pause would end by a timeout and
// 3 s would fall into the window. The window result, not a clock, ends the
// pause, so the outcome does not depend on timing.
func TestFinishedFileReleasesWatermark(t *testing.T) {
	dir := t.TempDir()
	for name, data := range map[string]string{"a.csv": "1000\n2000\n", "b.csv": "12000\n15000\n3000\n16000\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ts := []types.Field{{Name: "ts", Type: types.Type{Kind: types.BigInt}}}
	results, late := newListSink(), newListSink()
	src := &pausing{Source: &filesystem.Source{Path: dir, Format: &format.CSV{Fields: ts, Delimiter: ','}},
		after: 4, resume: results.first, timeout: 10 * time.Second}

	env := weir.NewEnvironment().SetParallelism(1).EnableCheckpointing(0, weir.AtMostOnce, "")
	rows := weir.FromSource[event.Row](env, src, "files", weir.WithWatermarks(weir.BoundedOutOfOrderness(time.Second),
		func(r event.Row) int64 { return r.Fields[0].(int64) }))
	lateTag := weir.NewOutputTag[int64]("late")
	windows := weir.WindowProcess(weir.Window(weir.KeyBy(weir.Map(rows, func(r event.Row) int64 { return r.Fields[0].(int64) }),
		func(int64) string { return "all" }), weir.TumblingEventTimeWindows(10*time.Second)).SideOutputLateData(lateTag),
		func(_ string, w weir.TimeWindow, elems []int64, out weir.Emitter[string]) error {
			out.Emit(fmt.Sprintf("%v %v", w, elems))
			return nil
		})
	weir.SinkTo(windows, results, "windows")
	weir.SinkTo(weir.SideOutput(windows, lateTag), late, "late")

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := env.Execute(ctx, "two files"); err != nil {
		t.Fatal(err)
	}
	if src.timedOut.Load() {
		t.Error("the window over a.csv did not fire while b.csv was read: the finished file held the watermark")
	}
	if got, want := results.values(), []any{"[0, 10000) [1000 2000]", "[10000, 20000) [12000 15000 16000]"}; !slices.Equal(got, want) {
		t.Errorf("windows %q, want %q", got, want)
	}
	if got, want := late.values(), []any{int64(3000)}; !slices.Equal(got, want) {
		t.Errorf("late %v, want %v", got, want)
	}
}

// pausing is a source whose reader stops after its first `after` records
// until resume is closed (or timeout passed, then timedOut is set).
type pausing struct {
	operator.Source
	after    int
	resume   <-chan struct{}
	timeout  time.Duration
	timedOut atomic.Bool
}

func (p *pausing) CreateReader(ctx operator.ReaderContext) (operator.SourceReader, error) {
	r, err := p.Source.CreateReader(ctx)
	if err != nil {
		return nil, err
	}
	return &pausingReader{SourceReader: r, p: p}, nil
}

type pausingReader struct {
	operator.SourceReader
	p       *pausing
	n       int
	waiting <-chan struct{}
}

func (r *pausingReader) Poll(out operator.ReaderOutput) (operator.ReaderStatus, error) {
	if r.n == r.p.after {
		if r.waiting == nil {
			r.waiting = r.wait()
		}
		select {
		case <-r.waiting:
		default:
			return operator.NothingAvailable, nil
		}
	}
	return r.SourceReader.Poll(operator.MapOutput(out, func(rec event.Record) event.Record {
		r.n++
		return rec
	}))
}

// wait returns a channel closed on resume or at the timeout.
func (r *pausingReader) wait() <-chan struct{} {
	c := make(chan struct{})
	timer := time.NewTimer(r.p.timeout)
	go func() {
		defer timer.Stop()
		select {
		case <-r.p.resume:
		case <-timer.C:
			r.p.timedOut.Store(true)
		}
		close(c)
	}()
	return c
}

func (r *pausingReader) Available() <-chan struct{} {
	if r.waiting != nil {
		return r.waiting
	}
	return r.SourceReader.Available()
}

// listSink keeps the values it receives, in order, and closes first on the
// first one.
type listSink struct {
	mu    sync.Mutex
	got   []any
	first chan struct{}
	once  sync.Once
}

func newListSink() *listSink { return &listSink{first: make(chan struct{})} }

func (s *listSink) values() []any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.got)
}

func (s *listSink) CreateWriter(operator.WriterContext) (operator.SinkWriter, error) {
	return listWriter{s}, nil
}

func (s *listSink) CreateCommitter(operator.WriterContext) (operator.Committer, error) {
	return nil, nil
}

type listWriter struct{ s *listSink }

func (w listWriter) Write(r event.Record) error {
	w.s.mu.Lock()
	defer w.s.mu.Unlock()
	w.s.got = append(w.s.got, r.Value)
	w.s.once.Do(func() { close(w.s.first) })
	return nil
}

func (listWriter) Flush(bool) error                                   { return nil }
func (listWriter) PrepareCommit(event.CheckpointID) ([][]byte, error) { return nil, nil }
func (listWriter) SnapshotState(event.CheckpointID) ([]byte, error)   { return nil, nil }
func (listWriter) Close() error                                       { return nil }
