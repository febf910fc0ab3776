package runtime

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/graph"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/task"
)

// baseSource is a bounded source of base+1 … base+n in one split "s"; it
// snapshots nothing but the split and reads it again from the start.
type baseSource struct{ base, n int }

func (s baseSource) Bounded() bool { return true }
func (s baseSource) Enumerate(context.Context) ([]operator.SplitState, error) {
	return []operator.SplitState{{ID: "s"}}, nil
}
func (s baseSource) CreateReader(operator.ReaderContext) (operator.SourceReader, error) {
	return &baseReader{s: s}, nil
}

type baseReader struct {
	s      baseSource
	splits int
	done   bool
}

func (r *baseReader) AddSplits(ss []operator.SplitState) error { r.splits += len(ss); return nil }
func (r *baseReader) Poll(out operator.ReaderOutput) (operator.ReaderStatus, error) {
	if !r.done && r.splits > 0 {
		for i := 1; i <= r.s.n; i++ {
			out.Collect("s", event.Record{Value: int64(r.s.base + i), Timestamp: event.NoTimestamp})
		}
		r.done = true
	}
	return operator.EndOfInput, nil
}
func (r *baseReader) Available() <-chan struct{} { return nil }
func (r *baseReader) SnapshotState(event.CheckpointID) ([]operator.SplitState, error) {
	return []operator.SplitState{{ID: "s"}}, nil
}
func (r *baseReader) NotifyCheckpointComplete(event.CheckpointID) error { return nil }
func (r *baseReader) Close() error                                      { return nil }

// sourcesJob unions sources (by uid) into one write-ahead sink that keeps
// every value it is handed.
func sourcesJob(t *testing.T, got *[]int64, mu *sync.Mutex, srcs map[string]baseSource) *graph.JobGraph {
	t.Helper()
	wal := &operator.WriteAheadSink{Write: func(_ context.Context, _ int, _ event.CheckpointID, vs []any) error {
		mu.Lock()
		defer mu.Unlock()
		for _, v := range vs {
			*got = append(*got, v.(int64))
		}
		return nil
	}}
	g := &graph.StreamGraph{JobName: "new-source-test"}
	k := g.AddNode(&graph.Node{Name: "Sink: out", UID: "sink", Parallelism: 1,
		NewOperator: func() operator.Operator { return operator.NewSinkOperator(wal) }})
	uids := make([]string, 0, len(srcs))
	for uid := range srcs {
		uids = append(uids, uid)
	}
	slices.Sort(uids)
	for _, uid := range uids {
		s := g.AddNode(&graph.Node{Name: "Source: " + uid, UID: uid, Parallelism: 1, Source: srcs[uid]})
		g.Connect(&graph.Edge{From: s.ID, To: k.ID})
	}
	jg, err := g.JobGraph()
	if err != nil {
		t.Fatal(err)
	}
	return jg
}

// A source the checkpoint has no state for is a new operator (added to the
// job since, or given a new uid): as in Flink it starts as configured —
// it enumerates its splits — instead of restoring an empty split list and
// reading nothing, silently. A source the checkpoint knows, even with no
// splits left, restores what it had.
func TestRestoredJobStartsNewSourceFresh(t *testing.T) {
	dir := t.TempDir()
	var mu sync.Mutex
	run := func(srcs map[string]baseSource, restore string) ([]int64, string) {
		t.Helper()
		var got []int64
		logs := &strings.Builder{}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		_, err := Run(ctx, sourcesJob(t, &got, &mu, srcs), Options{Mode: task.ExactlyOnce, CheckpointDir: dir,
			Restore: restore, Restart: NoRestart{}, Logger: slog.New(slog.NewTextHandler(logs, nil))})
		if err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		defer mu.Unlock()
		slices.Sort(got)
		return got, logs.String()
	}
	if got, _ := run(map[string]baseSource{"a": {0, 3}}, ""); !slices.Equal(got, []int64{1, 2, 3}) {
		t.Fatalf("first run: got %v, want [1 2 3]", got)
	}
	got, logs := run(map[string]baseSource{"a": {0, 3}, "b": {100, 3}}, RestoreLatest)
	// "b" is new and reads its own split, once. (What "a" gives again is
	// this reader's and the sink's business, the same before and after.)
	var fromB []int64
	for _, v := range got {
		if v > 100 {
			fromB = append(fromB, v)
		}
	}
	if want := []int64{101, 102, 103}; !slices.Equal(fromB, want) {
		t.Fatalf("restored run: the new source gave %v, want %v (all: %v)", fromB, want, got)
	}
	if !strings.Contains(logs, "uid=b") || !strings.Contains(logs, "no state in the checkpoint") {
		t.Errorf("the new source is not logged:\n%s", logs)
	}
}

// Restoring a checkpoint into a job without one of its operators (removed,
// or renamed by a new uid) would drop that operator's state: the restore
// fails naming the uid and the way out, and with IgnoreUnclaimedState it
// goes ahead, saying what it dropped.
func TestRestoreWithUnclaimedStateFails(t *testing.T) {
	dir := t.TempDir()
	var mu sync.Mutex
	run := func(srcs map[string]baseSource, ignore bool) ([]int64, string, error) {
		t.Helper()
		var got []int64
		logs := &strings.Builder{}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		_, err := Run(ctx, sourcesJob(t, &got, &mu, srcs), Options{Mode: task.ExactlyOnce, CheckpointDir: dir,
			Restore: RestoreLatest, IgnoreUnclaimedState: ignore, Restart: NoRestart{},
			Logger: slog.New(slog.NewTextHandler(logs, nil))})
		mu.Lock()
		defer mu.Unlock()
		slices.Sort(got)
		return got, logs.String(), err
	}
	if _, err := Run(context.Background(), sourcesJob(t, new([]int64), &mu, map[string]baseSource{"a": {0, 3}}),
		Options{Mode: task.ExactlyOnce, CheckpointDir: dir, Restart: NoRestart{}}); err != nil {
		t.Fatal(err)
	}
	got, _, err := run(map[string]baseSource{"renamed": {200, 3}}, false)
	var ue *UnclaimedStateError
	if !errors.As(err, &ue) || !slices.Equal(ue.UIDs, []string{"a"}) || len(got) != 0 ||
		!strings.Contains(err.Error(), "'execution.savepoint.ignore-unclaimed-state' = 'true'") {
		t.Fatalf("got %v (rows %v), want an UnclaimedStateError naming uid a and no rows", err, got)
	}
	got, logs, err := run(map[string]baseSource{"renamed": {200, 3}}, true)
	got = slices.DeleteFunc(got, func(v int64) bool { return v < 200 }) // the sink's own replay
	if err != nil || !slices.Equal(got, []int64{201, 202, 203}) {
		t.Fatalf("ignoring unclaimed state: got %v, %v; want the renamed source's rows [201 202 203]", got, err)
	}
	if !strings.Contains(logs, "drops the state") || !strings.Contains(logs, "uids=[a]") {
		t.Errorf("dropped state not logged:\n%s", logs)
	}
}
