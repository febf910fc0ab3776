package main

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/weirstream/weir/checkpoint"
	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/runtime"
)

// TestQ10WritesCommittedPartitions runs q10 with its own filesystem sink
// (not the changelog file the other tests substitute): every bid lands
// once in a dt=…/hm=… directory, and each directory is committed with
// _SUCCESS at the end of the bounded input.
func TestQ10WritesCommittedPartitions(t *testing.T) {
	s := testSuite(t)
	if _, ok := s.Queries["q10"]; !ok {
		t.Skip("no q10 in this queries file")
	}
	dir := t.TempDir()
	const events = 5_000 // 46 of every 50 events are bids
	cfg := RunConfig{Params: Params{Events: events, TPS: DiffTPS, Dir: dir}, Checkpoint: 100 * time.Millisecond}
	if _, err := runWeir(context.Background(), s, "q10", cfg); err != nil {
		t.Fatal(err)
	}
	partition := regexp.MustCompile(`dt=\d{4}-\d{2}-\d{2}/hm=\d{2}%3A\d{2}$`)
	rows, parts, success := 0, map[string]bool{}, map[string]bool{}
	err := filepath.WalkDir(filepath.Join(dir, "data", "output"), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == ".weir-committed" { // the sink's committed-checkpoint markers
				return filepath.SkipDir
			}
			return nil
		}
		p := filepath.Dir(path)
		if !partition.MatchString(p) {
			t.Errorf("%s is not in a dt=…/hm=… directory", path)
		}
		switch {
		case d.Name() == "_SUCCESS":
			success[p] = true
		case strings.HasPrefix(d.Name(), "part-"):
			parts[p] = true
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			for _, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
				if n := strings.Count(line, ","); n < 4 {
					t.Errorf("%s: line %q has %d fields, want auction, bidder, price, dateTime, extra", path, line, n+1)
				}
				rows++
			}
		default:
			t.Errorf("unexpected file %s", path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if rows != events*46/50 {
		t.Errorf("%d rows, want %d bids", rows, events*46/50)
	}
	if len(parts) == 0 || len(success) != len(parts) {
		t.Errorf("%d partition directories, %d with _SUCCESS; want all", len(parts), len(success))
	}
	for p := range parts {
		if !success[p] {
			t.Errorf("%s has no _SUCCESS", p)
		}
	}
}

// A run's checkpoint list holds every completed checkpoint, not only the
// newest checkpoint.HistorySize the coordinator keeps (a 10 M-event run at
// 1 s checkpoints takes hundreds): the listener keeps them as they
// complete, after any listener the options had.
func TestWeirRunListsEveryCheckpoint(t *testing.T) {
	var opts runtime.Options
	earlier := 0
	opts.Listener = func(runtime.Event) { earlier++ }
	all := collectCheckpoints(&opts)
	n := checkpoint.HistorySize + 50
	for id := 1; id <= n; id++ {
		st := checkpoint.CheckpointStats{ID: event.CheckpointID(id), Status: checkpoint.StatusCompleted}
		opts.Listener(runtime.Event{Kind: runtime.EventCheckpointCompleted, Checkpoint: int64(id), Stats: &st})
		opts.Listener(runtime.Event{Kind: runtime.EventCheckpointPending, Checkpoint: int64(id + 1), Stats: &checkpoint.CheckpointStats{ID: event.CheckpointID(id + 1)}})
	}
	got := completedCheckpoints(all())
	if len(got) != n || got[0][ckID] != 1 || got[n-1][ckID] != int64(n) || earlier != 2*n {
		t.Fatalf("%d checkpoints kept (first %v), the earlier listener called %d times; want %d, 1…%d, %d", len(got), got[0][ckID], earlier, n, n, 2*n)
	}
}

// A real run lists the checkpoints the runtime reports completed.
func TestWeirRunListsItsCheckpoints(t *testing.T) {
	s := testSuite(t)
	cfg := RunConfig{Params: Params{Events: 200_000, Dir: t.TempDir()}, Checkpoint: 20 * time.Millisecond}
	run, err := runWeir(context.Background(), s, "q0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	if run.Checkpoints == 0 || len(run.CheckpointList) != run.Checkpoints {
		t.Fatalf("%d checkpoints listed, %d counted; want some", len(run.CheckpointList), run.Checkpoints)
	}
	for i, c := range run.CheckpointList {
		if i > 0 && c[ckID] <= run.CheckpointList[i-1][ckID] {
			t.Fatalf("checkpoint %d listed after %d", c[ckID], run.CheckpointList[i-1][ckID])
		}
	}
}
