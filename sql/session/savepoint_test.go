package session

import (
	"context"
	"encoding/binary"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weirstream/weir/checkpointstorage"
	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/internal/sim"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/runtime"
)

// heldRows is a bounded source of one-column rows in Splits splits (row i
// in split i mod Splits); its position is the next row index of the split.
// Its readers together emit Limit rows, then nothing until Release is
// closed, so a savepoint taken while it holds falls mid-stream whatever
// the machine's speed.
type heldRows struct {
	Keys    []string
	Splits  int
	Limit   int64
	Release chan struct{}
	emitted atomic.Int64
}

func (h *heldRows) Bounded() bool { return true }

func (h *heldRows) Enumerate(context.Context) ([]operator.SplitState, error) {
	out := make([]operator.SplitState, h.Splits)
	for i := range out {
		out[i] = operator.SplitState{ID: strconv.Itoa(i), Position: binary.AppendUvarint(nil, uint64(i))}
	}
	return out, nil
}

func (h *heldRows) CreateReader(operator.ReaderContext) (operator.SourceReader, error) {
	return &heldReader{h: h, pos: map[string]int{}}, nil
}

type heldReader struct {
	h      *heldRows
	splits []string
	pos    map[string]int // next row index of each split
	done   operator.FinishedSplits
}

func (r *heldReader) AddSplits(ss []operator.SplitState) error {
	for _, s := range ss {
		p, _ := binary.Uvarint(s.Position)
		r.splits, r.pos[s.ID] = append(r.splits, s.ID), int(p)
	}
	return nil
}

func (r *heldReader) holding() bool {
	select {
	case <-r.h.Release:
		return false
	default:
		return r.h.emitted.Load() >= r.h.Limit
	}
}

func (r *heldReader) Poll(out operator.ReaderOutput) (operator.ReaderStatus, error) {
	if r.holding() {
		return operator.NothingAvailable, nil
	}
	more := false
	for _, id := range r.splits {
		if i := r.pos[id]; i < len(r.h.Keys) {
			out.Collect(id, event.Record{Value: event.Row{Kind: event.Insert, Fields: []any{r.h.Keys[i]}}})
			r.pos[id] = i + r.h.Splits
			r.h.emitted.Add(1)
			more = true
		} else {
			r.done.Finish(out, id)
		}
	}
	if !more {
		return operator.EndOfInput, nil
	}
	return operator.MoreAvailable, nil
}

func (r *heldReader) Available() <-chan struct{} {
	if r.holding() {
		return r.h.Release
	}
	return nil
}

func (r *heldReader) SnapshotState(event.CheckpointID) ([]operator.SplitState, error) {
	out := make([]operator.SplitState, len(r.splits))
	for i, id := range r.splits {
		out[i] = operator.SplitState{ID: id, Position: binary.AppendUvarint(nil, uint64(r.pos[id]))}
	}
	return out, nil
}

func (r *heldReader) NotifyCheckpointComplete(event.CheckpointID) error { return nil }
func (r *heldReader) Close() error                                      { return nil }

// savepointScript is a group aggregation with retraction: the count of
// keys per count, whose rows retract as keys' counts grow.
const savepointScript = `
SET 'execution.checkpointing.interval' = '20 ms';
CREATE TABLE src (k STRING) WITH ('connector' = 'held');
CREATE TABLE dst (cnt BIGINT, n BIGINT) WITH ('connector' = 'tx');
INSERT INTO dst SELECT cnt, COUNT(*) AS n FROM (SELECT k, COUNT(*) AS cnt FROM src GROUP BY k) GROUP BY cnt;`

// savepointSession is a session running savepointScript at parallelism
// par on backend, reading src and committing into store.
func savepointSession(t *testing.T, src *heldRows, store *sim.Store, par int, backend string) *Session {
	t.Helper()
	s := heldSession(t, savepointScript, src, store, par)
	s.Settings["state.backend.type"] = backend
	s.Settings["state.backend.local-dir"] = t.TempDir()
	return s
}

// materialize applies a changelog in order and returns the table it
// leaves, one "[cnt n]" row per line, sorted.
func materialize(t *testing.T, changes []any) string {
	t.Helper()
	rows := map[string]int{}
	for _, c := range changes {
		r := c.(event.Row)
		if r.Kind.IsAccumulate() {
			rows[fmt.Sprint(r.Fields)]++
		} else if rows[fmt.Sprint(r.Fields)]--; rows[fmt.Sprint(r.Fields)] < 0 {
			t.Fatalf("%v retracts a row the table does not hold", r)
		}
	}
	var out []string
	for r, n := range rows {
		for ; n > 0; n-- {
			out = append(out, r)
		}
	}
	sort.Strings(out)
	return strings.Join(out, "\n")
}

// SQL group aggregation with retraction: a savepoint taken mid-run at
// parallelism 2 (on the heap) — the job runs on, is later killed — is
// restored at parallelism 3 and 1, on the heap and on Pebble. The table
// the committed changelog leaves (the first run's up to the savepoint,
// then the restored run's) is exact: equal to the result computed
// directly from the input, and to an uninterrupted run's.
func TestSQLSavepointRescaleGroupAggregation(t *testing.T) {
	var keys []string
	for i := 0; i < 600; i++ {
		keys = append(keys, fmt.Sprintf("k%d", (i*i+3*i)%37))
	}
	want := expectedCountOfCounts(keys)

	whole := sim.NewStore()
	src := &heldRows{Keys: keys, Splits: 4, Limit: 1 << 62, Release: make(chan struct{})}
	if _, err := savepointSession(t, src, whole, 2, "hashmap").Run(context.Background(), "agg", nil); err != nil {
		t.Fatal(err)
	}
	if got := materialize(t, whole.Committed()); got != want {
		t.Fatalf("uninterrupted run:\n%s\nwant\n%s", got, want)
	}

	store := sim.NewStore()
	src = &heldRows{Keys: keys, Splits: 4, Limit: int64(len(keys) / 2), Release: make(chan struct{})}
	path, before := savepointMidRun(t, savepointSession(t, src, store, 2, "hashmap"), src, store)
	for _, backend := range []string{"hashmap", "pebble"} {
		for _, par := range []int{3, 1} {
			t.Run(fmt.Sprintf("%s parallelism %d", backend, par), func(t *testing.T) {
				st := store.Clone()
				src := &heldRows{Keys: keys, Splits: 4, Limit: 1 << 62, Release: make(chan struct{})}
				res, err := savepointSession(t, src, st, par, backend).Run(context.Background(), "agg",
					func(o *runtime.Options) { o.Restore = path })
				if err != nil {
					t.Fatal(err)
				}
				if res.RestoredFrom == 0 {
					t.Fatal("did not restore the savepoint")
				}
				if got := materialize(t, st.Committed()); got != want {
					t.Fatalf("after restoring the savepoint (%d changes committed before it):\n%s\nwant\n%s", before, got, want)
				}
			})
		}
	}
}

// savepointMidRun runs the job until its source holds, takes a savepoint,
// waits for a checkpoint after it (so everything up to the savepoint is
// committed, and nothing after it exists), and kills the job. It returns
// the savepoint's path and how many changes were committed.
func savepointMidRun(t *testing.T, s *Session, src *heldRows, store *sim.Store) (string, int) {
	t.Helper()
	jg, opts, err := s.Job("agg")
	if err != nil {
		t.Fatal(err)
	}
	var completed atomic.Int64
	opts.Listener = func(e runtime.Event) {
		if e.Kind == runtime.EventCheckpointCompleted {
			completed.Store(e.Checkpoint)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	job, err := runtime.Start(ctx, jg, opts)
	if err != nil {
		t.Fatal(err)
	}
	for src.emitted.Load() < src.Limit {
		time.Sleep(5 * time.Millisecond)
	}
	path, err := job.TriggerSavepoint(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	id := spID(t, path)
	for completed.Load() <= id {
		time.Sleep(5 * time.Millisecond)
	}
	job.Cancel()
	if _, err := job.Wait(); err == nil {
		t.Fatal("the held job ended by itself")
	}
	return path, len(store.Committed())
}

// spID reads the checkpoint id of the savepoint at path.
func spID(t *testing.T, path string) int64 {
	t.Helper()
	m, _, err := checkpointstorage.Resolve("", path)
	if err != nil {
		t.Fatal(err)
	}
	return int64(m.ID)
}

// expectedCountOfCounts computes the query's result directly.
func expectedCountOfCounts(keys []string) string {
	perKey := map[string]int64{}
	for _, k := range keys {
		perKey[k]++
	}
	perCount := map[int64]int64{}
	for _, n := range perKey {
		perCount[n]++
	}
	var out []string
	for c, n := range perCount {
		out = append(out, fmt.Sprint([]any{c, n}))
	}
	sort.Strings(out)
	return strings.Join(out, "\n")
}
