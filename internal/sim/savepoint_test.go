package sim

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weirstream/weir/checkpointstorage"
	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/internal/savepointtest"
	"github.com/weirstream/weir/internal/testsvc"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/runtime"
	"github.com/weirstream/weir/task"
)

// holdSource is a SeqSource whose readers, together, emit Limit elements
// and then nothing until Release is closed: a savepoint taken while it
// holds falls mid-stream whatever the machine's speed.
type holdSource struct {
	*SeqSource
	Limit   int64
	Release chan struct{}
	emitted atomic.Int64
}

func (h *holdSource) CreateReader(ctx operator.ReaderContext) (operator.SourceReader, error) {
	r, err := h.SeqSource.CreateReader(ctx)
	if err != nil {
		return nil, err
	}
	return &holdReader{seqReader: r.(*seqReader), h: h}, nil
}

type holdReader struct {
	*seqReader
	h *holdSource
}

func (r *holdReader) holding() bool {
	select {
	case <-r.h.Release:
		return false
	default:
		return r.h.emitted.Load() >= r.h.Limit
	}
}

func (r *holdReader) Poll(out operator.ReaderOutput) (operator.ReaderStatus, error) {
	if r.holding() {
		return operator.NothingAvailable, nil
	}
	return r.seqReader.Poll(countingOutput{out, &r.h.emitted})
}

func (r *holdReader) Available() <-chan struct{} {
	if r.holding() {
		return r.h.Release
	}
	return r.seqReader.Available()
}

type countingOutput struct {
	operator.ReaderOutput
	n *atomic.Int64
}

func (c countingOutput) Collect(split string, r event.Record) {
	c.n.Add(1)
	c.ReaderOutput.Collect(split, r)
}

// waitFor polls cond until it holds (a bound on the wait, not on speed).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// savepointPositions reads the next sequence number of every key from the
// source state of the savepoint (or checkpoint) at path.
func savepointPositions(t *testing.T, path string, src *SeqSource) map[int]int {
	t.Helper()
	m, s, _, err := checkpointstorage.ResolveFS("", path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[int]int{}
	for key, blob := range m.Tasks {
		ts, err := task.DecodeTaskState(blob)
		if err != nil {
			t.Fatalf("%s: %v", key, err)
		}
		h, ok := ts.Operators["seq"][task.PartSplits]
		if !ok {
			continue
		}
		b, err := s.ReadState(h)
		if err != nil {
			t.Fatal(err)
		}
		splits, err := task.DecodeSplits(b)
		if err != nil {
			t.Fatal(err)
		}
		for _, sp := range splits {
			var n int
			fmt.Sscan(sp.ID, &n)
			pos, err := decodePos(sp.Position)
			if err != nil {
				t.Fatal(err)
			}
			for j, k := range src.keysOf(n) {
				out[k] = pos[j]
			}
		}
	}
	return out
}

// Stop-with-savepoint at parallelism 2 with a two-phase-commit sink: the
// sources stop mid-stream, the savepoint is taken, the sink commits its
// transactions and the job finishes. The savepoint is then moved, and
// restored at keyed parallelism 3 and 1 (source parallelism 1): key groups
// merged and split, splits reassigned, the commit log carried over. Each
// restore, into a copy of the external system as the stop left it, ends
// with every element committed exactly once; the sequence checker's keyed
// state sees no gap or repeat. The same with the savepoint in the S3 test
// server's bucket (not moved: restored from its s3:// location).
func TestStopWithSavepointRestoresAtOtherParallelism(t *testing.T) {
	t.Run("file", func(t *testing.T) {
		stopWithSavepointRestore(t, filepath.Join(t.TempDir(), "savepoints"), checkpointstorage.Options{})
	})
	t.Run("s3", func(t *testing.T) {
		srv := testsvc.S3(t)
		storage := checkpointstorage.Options{S3: checkpointstorage.S3Options{Endpoint: srv.Endpoint, Region: srv.Region,
			AccessKey: srv.AccessKey, SecretKey: srv.SecretKey}}
		stopWithSavepointRestore(t, fmt.Sprintf("s3://%s/sim-savepoints/%d", srv.Bucket, time.Now().UnixNano()), storage)
	})
}

// stopWithSavepointRestore is TestStopWithSavepointRestoresAtOtherParallelism
// with the savepoint under spDir, a local one moved before the restores.
func stopWithSavepointRestore(t *testing.T, spDir string, storage checkpointstorage.Options) {
	const keys, perKey = 8, 200
	seq := &SeqSource{Keys: keys, PerKey: perKey, Splits: 4, Burst: 10, Pause: time.Millisecond}
	hold := &holdSource{SeqSource: seq, Limit: keys * perKey / 2, Release: make(chan struct{})}
	store, v := NewStore(), &Violations{}
	jg := seqJob{Source: hold, SourcePar: 2, Faults: &Faults{}, KeyedPar: 2, V: v, Sink: &TxSink{Store: store}}.jobGraph(t)
	opts := testOptions(filepath.Join(t.TempDir(), "checkpoints"), 10*time.Millisecond)
	opts.CheckpointStorage = storage
	stop := savepointtest.StopWhen(t, jg, opts, spDir, "the source to hold mid-stream with output committed", func() bool {
		return hold.emitted.Load() >= hold.Limit && len(store.Committed()) > 0
	})
	if stop.Result.Restarts != 0 {
		t.Fatalf("job after stop-with-savepoint: %+v; want it finished without restarts", stop.Result)
	}
	path := stop.Path
	if dir, name := path[:strings.LastIndex(path, "/")], path[strings.LastIndex(path, "/")+1:]; dir != spDir || !strings.HasPrefix(name, "savepoint-scenar-") {
		t.Fatalf("savepoint at %s; want savepoint-<job>-<random> under %s", path, spDir)
	}
	committed := len(store.Committed())
	if emitted := hold.emitted.Load(); int64(committed) != emitted || len(store.Lingering()) != 0 {
		t.Fatalf("after the stop: %d committed, lingering %v; want all %d elements read before it committed, none open",
			committed, store.Lingering(), emitted)
	}
	if g, r := v.Gaps.Load(), v.Repeats.Load(); g != 0 || r != 0 {
		t.Fatalf("sequence checker saw %d gaps and %d repeats", g, r)
	}
	moved := path
	if _, local := checkpointstorage.LocalPath(spDir); local {
		moved = filepath.Join(t.TempDir(), "moved")
		if err := os.Rename(path, moved); err != nil {
			t.Fatal(err)
		}
	}
	for _, keyedPar := range []int{3, 1} {
		t.Run(fmt.Sprintf("keyed parallelism %d", keyedPar), func(t *testing.T) {
			st, v := store.Clone(), &Violations{}
			jg := seqJob{Source: seq, SourcePar: 1, Faults: &Faults{}, KeyedPar: keyedPar, V: v, Sink: &TxSink{Store: st}}.jobGraph(t)
			opts := testOptions(filepath.Join(t.TempDir(), "checkpoints"), 10*time.Millisecond)
			opts.CheckpointStorage = storage
			opts.Restore = moved
			res, err := runJob(context.Background(), jg, opts)
			if err != nil {
				t.Fatal(err)
			}
			if res.RestoredFrom == 0 {
				t.Fatal("the job did not restore the savepoint")
			}
			checkOutput(t, 0, st.Committed(), keys, perKey, true)
			if g, r := v.Gaps.Load(), v.Repeats.Load(); g != 0 || r != 0 {
				t.Errorf("sequence checker saw %d gaps and %d repeats after the restore", g, r)
			}
			if ids := res.Checkpoints; len(ids) == 0 || ids[0].ID <= res.RestoredFrom {
				t.Errorf("first checkpoint after restoring savepoint %d: %+v; ids must go on from it", res.RestoredFrom, ids)
			}
		})
	}
}

// An intermediate savepoint, written into the checkpoint directory itself,
// survives checkpoint retention and the job's end; it commits nothing by
// itself, and a restore of it at another parallelism produces exactly the
// elements after the savepoint's source positions.
func TestSavepointSurvivesRetentionAndRestores(t *testing.T) {
	const keys, perKey = 6, 200
	seq := &SeqSource{Keys: keys, PerKey: perKey, Splits: 3, Burst: 10, Pause: time.Millisecond}
	hold := &holdSource{SeqSource: seq, Limit: keys * perKey / 3, Release: make(chan struct{})}
	store := NewStore()
	jg := seqJob{Source: hold, SourcePar: 2, Faults: &Faults{}, KeyedPar: 2, V: &Violations{}, Sink: &TxSink{Store: store}}.jobGraph(t)
	dir := filepath.Join(t.TempDir(), "checkpoints")
	opts := testOptions(dir, 10*time.Millisecond)
	opts.SavepointDir = dir // the default target: beside the checkpoints
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	job, err := runtime.Start(ctx, jg, opts)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the source to hold mid-stream", func() bool { return hold.emitted.Load() >= hold.Limit })
	path, err := job.TriggerSavepoint(ctx, "")
	if err != nil {
		t.Fatalf("savepoint: %v", err)
	}
	close(hold.Release)
	res, err := job.Wait()
	if err != nil {
		t.Fatal(err)
	}
	checkOutput(t, 0, store.Committed(), keys, perKey, true)
	completed := 0
	for _, c := range res.Checkpoints {
		if !c.Type.IsSavepoint() && c.ID > event.CheckpointID(0) {
			completed++
		}
	}
	if completed < 2 {
		t.Fatalf("%d checkpoints; want retention to have run after the savepoint", completed)
	}
	if filepath.Dir(path) != dir {
		t.Fatalf("savepoint at %s; want it in the default directory %s", path, dir)
	}
	if _, _, _, err := checkpointstorage.ResolveFS("", path); err != nil {
		t.Fatalf("savepoint after retention and GC: %v", err)
	}
	from := savepointPositions(t, path, seq)
	st, v := store.Clone(), &Violations{}
	jg = seqJob{Source: seq, SourcePar: 3, Faults: &Faults{}, KeyedPar: 3, V: v, Sink: &TxSink{Store: st}}.jobGraph(t)
	opts = testOptions(filepath.Join(t.TempDir(), "other"), 10*time.Millisecond)
	opts.Restore = path
	if _, err := runJob(context.Background(), jg, opts); err != nil {
		t.Fatal(err)
	}
	after := st.Committed()[len(store.Committed()):]
	want := map[Seq]int{}
	for k := 0; k < keys; k++ {
		for q := from[k]; q < perKey; q++ {
			want[Seq{k, q}] = 1
		}
	}
	if d := diffMultisets(multiset[Seq](after), want); d != "" {
		t.Errorf("output of the restore from the savepoint (positions %v): %s", from, d)
	}
	if g, r := v.Gaps.Load(), v.Repeats.Load(); g != 0 || r != 0 {
		t.Errorf("sequence checker saw %d gaps and %d repeats after the restore", g, r)
	}
}

// A savepoint of a job without checkpoints (at-most-once) is refused with
// the reason and the fix.
func TestSavepointNeedsCheckpointing(t *testing.T) {
	seq := &SeqSource{Keys: 2, PerKey: 10, Splits: 1, Burst: 1, Pause: time.Millisecond, Unbounded: true}
	jg := seqJob{Source: seq, SourcePar: 1, Faults: &Faults{}, KeyedPar: 1, V: &Violations{},
		Sink: &TxSink{Store: NewStore(), AtLeastOnce: true}}.jobGraph(t)
	opts := runtime.Options{Mode: task.AtMostOnce, Logger: quietLogger()}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	job, err := runtime.Start(ctx, jg, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer job.Wait()
	defer job.Cancel()
	_, err = job.TriggerSavepoint(ctx, t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "execution.checkpointing.interval") {
		t.Fatalf("savepoint of an at-most-once job: %v; want a refusal naming execution.checkpointing.interval", err)
	}
	job.Cancel()
	if _, err := job.TriggerSavepoint(context.Background(), t.TempDir()); !errors.Is(err, runtime.ErrJobNotRunning) {
		t.Fatalf("savepoint of a cancelled job: %v; want ErrJobNotRunning", err)
	}
}

// Stop-with-savepoint with drain: the sources end their input first, so
// the max watermark fires every pending event-time timer, and what the
// timers emit is committed with the savepoint. Without drain, the timers
// ahead of the watermark stay pending in the savepoint, and nothing after
// them is emitted.
func TestStopWithSavepointDrainFiresTimers(t *testing.T) {
	for _, drain := range []bool{true, false} {
		t.Run(fmt.Sprintf("drain=%t", drain), func(t *testing.T) {
			const keys, perKey = 4, 100
			seq := &SeqSource{Keys: keys, PerKey: perKey, Splits: 2, Burst: 10, Pause: time.Millisecond}
			hold := &holdSource{SeqSource: seq, Limit: keys * perKey / 2, Release: make(chan struct{})}
			store := NewStore()
			jg := timerGraph(t, hold, 2, 2, nil, &TimerFn{},
				func() operator.Operator { return operator.NewSinkOperator(&TxSink{Store: store}) })
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			job, err := runtime.Start(ctx, jg, testOptions(filepath.Join(t.TempDir(), "checkpoints"), 10*time.Millisecond))
			if err != nil {
				t.Fatal(err)
			}
			waitFor(t, "the source to hold mid-stream", func() bool { return hold.emitted.Load() >= hold.Limit })
			path, err := job.StopWithSavepoint(ctx, t.TempDir(), drain)
			if err != nil {
				t.Fatalf("stop with savepoint: %v", err)
			}
			if _, err := job.Wait(); err != nil {
				t.Fatal(err)
			}
			read := savepointPositions(t, path, seq)
			want := map[Fired]int{}
			for k := 0; k < keys; k++ {
				for q := 0; q < read[k]; q++ {
					want[Fired{k, int64(q) * 10}] = 1
				}
			}
			got := multiset[Fired](store.Committed())
			if drain {
				if d := diffMultisets(got, want); d != "" {
					t.Errorf("committed after stop --drain: %s; want a firing for every element read (positions %v)", d, read)
				}
				return
			}
			if total(got) >= total(want) || len(store.Lingering()) != 0 {
				t.Errorf("committed %d firings of %d elements read, lingering %v; without drain the timers ahead of "+
					"the watermark must not fire, and the rest must commit", total(got), total(want), store.Lingering())
			}
		})
	}
}
