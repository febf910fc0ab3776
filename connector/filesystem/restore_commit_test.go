package filesystem

import (
	"bytes"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weirstream/weir/connector/format"
	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/types"
)

// sinkAttempt is one attempt of a sink subtask, driven as the task drives
// its operator: rows, then per checkpoint the pre-barrier pre-commit and
// the snapshot, and the notification once it completed.
type sinkAttempt struct {
	t  *testing.T
	op *operator.SinkOperator
}

func startSink(t *testing.T, s *Sink, restored event.CheckpointID, parts map[string][][]byte) sinkAttempt {
	t.Helper()
	return startSinkLogged(t, s, restored, parts, nil)
}

// startSinkLogged is startSink with the subtask's logger.
func startSinkLogged(t *testing.T, s *Sink, restored event.CheckpointID, parts map[string][][]byte, log *slog.Logger) sinkAttempt {
	t.Helper()
	op := operator.NewSinkOperator(s)
	if err := op.InitializeState(parts); err != nil {
		t.Fatal(err)
	}
	ctx := &operator.Context{Subtask: event.SubtaskID{Index: 0}, Parallelism: 1, JobID: "job", RestoredCheckpoint: restored, Logger: log}
	if err := op.Open(ctx); err != nil {
		t.Fatal(err)
	}
	return sinkAttempt{t, op}
}

func (a sinkAttempt) write(days ...string) {
	a.t.Helper()
	for i, d := range days {
		if err := a.op.ProcessElement(event.Record{Value: event.Row{Kind: event.Insert, Fields: []any{int64(i), d}}}); err != nil {
			a.t.Fatal(err)
		}
	}
}

// snapshot takes checkpoint id and returns its parts as a restore sees
// them (one blob per old subtask).
func (a sinkAttempt) snapshot(id event.CheckpointID) map[string][][]byte {
	a.t.Helper()
	if err := a.op.PrepareSnapshotPreBarrier(id); err != nil {
		a.t.Fatal(err)
	}
	parts, err := a.op.SnapshotState(id)
	if err != nil {
		a.t.Fatal(err)
	}
	out := map[string][][]byte{}
	for _, p := range parts {
		b, err := p.Snap.Write()
		if err != nil {
			a.t.Fatal(err)
		}
		out[p.Name] = [][]byte{b}
	}
	return out
}

func (a sinkAttempt) complete(id event.CheckpointID) {
	a.t.Helper()
	if err := a.op.NotifyCheckpointComplete(id); err != nil {
		a.t.Fatal(err)
	}
}

// TestRestoredPartitionsCommitAtEndOfInput: partitions written before the
// restored checkpoint, and pending in it, get their _SUCCESS at the end of
// input of the restored attempt even when that attempt writes no row into
// them (or none at all), whichever way the end of input and the last
// checkpoints interleave; a checkpoint that never completed (the failed
// attempt's) commits nothing and leaves no file behind.
func TestRestoredPartitionsCommitAtEndOfInput(t *testing.T) {
	fields := []types.Field{{Name: "id", Type: types.Type{Kind: types.BigInt}}, {Name: "dt", Type: types.Type{Kind: types.String}}}
	for _, c := range []struct {
		name  string
		after []string // rows of the restored attempt
		// periodic: a periodic checkpoint after the end of input, completed
		// before the final one is taken.
		periodic bool
	}{
		{"no rows after restore", nil, false},
		{"rows into another partition", []string{"c", "c"}, false},
		{"rows into a restored partition", []string{"a"}, false},
		{"periodic checkpoint after the end", []string{"c"}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := t.TempDir()
			s := &Sink{Dir: out, Format: &format.CSV{Fields: fields[:1], Delimiter: ','}, PartitionCols: []string{"dt"},
				PartitionIdx: []int{1}, Commit: &CommitPolicy{Trigger: TriggerProcessTime, Delay: time.Hour, SuccessFile: "_SUCCESS"}}
			// Attempt 1: checkpoint 1 completes, 2 is taken, then it fails.
			a1 := startSink(t, s, 0, nil)
			a1.write("a", "b")
			parts := a1.snapshot(1)
			a1.complete(1)
			if got := successDirs(t, out); len(got) != 0 {
				t.Fatalf("_SUCCESS before the end of input: %v", got)
			}
			a1.write("b", "d")
			a1.snapshot(2)
			if err := a1.op.Close(); err != nil {
				t.Fatal(err)
			}
			// Attempt 2, restored from checkpoint 1 (2 never completed).
			a2 := startSink(t, s, 1, parts)
			a2.write(c.after...)
			if err := a2.op.Finish(); err != nil {
				t.Fatal(err)
			}
			last := event.CheckpointID(3)
			if c.periodic {
				a2.snapshot(last)
				a2.complete(last)
				last++
			}
			a2.snapshot(last)
			a2.complete(last)
			if err := a2.op.Close(); err != nil {
				t.Fatal(err)
			}
			want := []string{"dt=a", "dt=b"}
			for _, d := range c.after {
				want = append(want, "dt="+d)
			}
			slices.Sort(want)
			want = slices.Compact(want)
			if got := successDirs(t, out); !slices.Equal(got, want) {
				t.Errorf("partitions with _SUCCESS %v, want %v", got, want)
			}
		})
	}
}

// successDirs returns the partition directories under out with a
// _SUCCESS file, and fails on any hidden part file left behind.
func successDirs(t *testing.T, out string) []string {
	t.Helper()
	var dirs []string
	err := filepath.WalkDir(out, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			if err == nil && d.Name() == markerDir {
				return filepath.SkipDir
			}
			return err
		}
		rel, _ := filepath.Rel(out, filepath.Dir(path))
		switch {
		case d.Name() == "_SUCCESS":
			dirs = append(dirs, rel)
		case strings.HasPrefix(d.Name(), "."):
			t.Errorf("leftover %s", filepath.Join(rel, d.Name()))
		}
		return nil
	})
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	slices.Sort(dirs)
	return dirs
}

// TestCloseWarnsOfUncommittedPartitions: a writer closed before its
// partitions' commit trigger fired (a cancel) logs them, each by name,
// since none has its success file; one closed after the end of its input
// and the final checkpoint, which commit every partition, logs nothing.
func TestCloseWarnsOfUncommittedPartitions(t *testing.T) {
	fields := []types.Field{{Name: "id", Type: types.Type{Kind: types.BigInt}}, {Name: "dt", Type: types.Type{Kind: types.String}}}
	for _, ended := range []bool{false, true} {
		out := t.TempDir()
		s := &Sink{Name: "daily", Dir: out, Format: &format.CSV{Fields: fields[:1], Delimiter: ','}, PartitionCols: []string{"dt"},
			PartitionIdx: []int{1}, Commit: &CommitPolicy{Trigger: TriggerProcessTime, Delay: time.Hour, SuccessFile: "_SUCCESS"}}
		var logged bytes.Buffer
		a := startSinkLogged(t, s, 0, nil, slog.New(slog.NewTextHandler(&logged, nil)))
		a.write("2026-12-01", "2026-12-02")
		a.snapshot(1)
		a.complete(1)
		a.write("2026-12-03")
		if ended {
			if err := a.op.Finish(); err != nil {
				t.Fatal(err)
			}
			a.snapshot(2)
			a.complete(2)
		}
		if err := a.op.Close(); err != nil {
			t.Fatal(err)
		}
		l := logged.String()
		if ended {
			if l != "" || len(successDirs(t, out)) != 3 {
				t.Fatalf("closed after the end of input: logged %q, partitions with _SUCCESS %v, want no log and all 3", l, successDirs(t, out))
			}
			continue
		}
		for _, want := range []string{"level=WARN", "closing before these partitions were committed", "table=daily", "partitions=3",
			`uncommitted="dt=2026-12-01, dt=2026-12-02, dt=2026-12-03"`, "trigger=process-time"} {
			if !strings.Contains(l, want) {
				t.Fatalf("closed before the trigger fired: logged %q, want it to hold %q", l, want)
			}
		}
		if got := successDirs(t, out); len(got) != 0 {
			t.Fatalf("partitions with _SUCCESS %v before their trigger fired", got)
		}
	}
}

// TestRestoreWithoutPolicyDropsPendingPartitions: a checkpoint taken
// while the table had a partition commit policy, restored into the table
// without one, holds partitions nothing will commit: the writer says so
// and drops them, and its close does not fail (a review found it
// dereferencing the missing policy).
func TestRestoreWithoutPolicyDropsPendingPartitions(t *testing.T) {
	fields := []types.Field{{Name: "id", Type: types.Type{Kind: types.BigInt}}, {Name: "dt", Type: types.Type{Kind: types.String}}}
	out := t.TempDir()
	s := &Sink{Name: "daily", Dir: out, Format: &format.CSV{Fields: fields[:1], Delimiter: ','}, PartitionCols: []string{"dt"},
		PartitionIdx: []int{1}, Commit: &CommitPolicy{Trigger: TriggerProcessTime, Delay: time.Hour, SuccessFile: "_SUCCESS"}}
	a1 := startSink(t, s, 0, nil)
	a1.write("2026-12-01", "2026-12-02")
	parts := a1.snapshot(1)
	a1.complete(1)
	if err := a1.op.Close(); err != nil {
		t.Fatal(err)
	}
	without := *s
	without.Commit = nil
	var logged bytes.Buffer
	a2 := startSinkLogged(t, &without, 1, parts, slog.New(slog.NewTextHandler(&logged, nil)))
	l := logged.String()
	for _, want := range []string{"level=WARN", "sets no partition commit", "partitions=2", `uncommitted="dt=2026-12-01, dt=2026-12-02"`} {
		if !strings.Contains(l, want) {
			t.Fatalf("restored without a policy: logged %q, want it to hold %q", l, want)
		}
	}
	logged.Reset()
	a2.write("2026-12-03")
	if err := a2.op.Close(); err != nil {
		t.Fatalf("close of the writer restored without a policy: %v", err)
	}
	if l := logged.String(); l != "" {
		t.Fatalf("close of the writer restored without a policy logged %q, want nothing", l)
	}
	if got := successDirs(t, out); len(got) != 0 {
		t.Fatalf("partitions with _SUCCESS %v, want none", got)
	}
}
