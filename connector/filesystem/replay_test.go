package filesystem

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/weirstream/weir/connector/format"
	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
)

func replayCtx(job string, subtask, parallelism int, restored event.CheckpointID) operator.WriterContext {
	return operator.WriterContext{JobID: job, Subtask: event.SubtaskID{Index: subtask}, Parallelism: parallelism,
		RestoredCheckpoint: restored}
}

func writeRows(t *testing.T, w operator.SinkWriter, rows ...event.Row) {
	t.Helper()
	for _, r := range rows {
		if err := w.Write(event.Record{Value: r}); err != nil {
			t.Fatal(err)
		}
	}
}

// checkpoint pre-commits w's rows for checkpoint id and commits them with
// a committer of wc, as the sink operator does once id completes.
func checkpoint(t *testing.T, s *Sink, wc operator.WriterContext, w operator.SinkWriter, id event.CheckpointID) {
	t.Helper()
	cs, err := w.PrepareCommit(id)
	if err != nil {
		t.Fatal(err)
	}
	cm, err := s.CreateCommitter(wc)
	if err != nil {
		t.Fatal(err)
	}
	if err := cm.Commit(context.Background(), id, cs); err != nil {
		t.Fatal(err)
	}
}

// freshRun starts a writer of subtask sub at parallelism par of job
// (no restore), writes one row (id, name) and commits it as checkpoint ck.
func freshRun(t *testing.T, s *Sink, job string, sub, par int, ck event.CheckpointID, id int64, name string) {
	t.Helper()
	wc := replayCtx(job, sub, par, 0)
	w, err := s.CreateWriter(wc)
	if err != nil {
		t.Fatal(err)
	}
	writeRows(t, w, event.Row{Kind: event.Insert, Fields: []any{id, name}})
	checkpoint(t, s, wc, w, ck)
}

// tree lists every file and directory under dir with the files' contents.
func tree(t *testing.T, dir string) string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			out = append(out, rel+"/")
			return nil
		}
		b, err := os.ReadFile(p)
		out = append(out, rel+"="+string(b))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(out, "\n")
}

// visibleLines returns the lines of the finished part files under dir
// (any depth), sorted.
func visibleLines(t *testing.T, dir string) []string {
	t.Helper()
	var lines []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		if strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return nil
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, filepath.Dir(p))
		for _, l := range strings.Fields(string(b)) {
			lines = append(lines, rel+":"+l)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(lines)
	return lines
}

// The bug of the new-user trial: the job committed the part files of
// checkpoints 1..3, checkpoint 3 was then lost (corrupt), and the job
// restored checkpoint 2: its replay would write checkpoint 3's rows again
// next to the committed ones. The writer refuses to start, touching
// nothing, with an error naming the table, the path, both checkpoints and
// 'sink.allow-replay'; with that option it proceeds (a warning) and the
// duplicates are written. Unpartitioned and partitioned alike (one marker
// per sink, at the table's path).
func TestRestoreBehindCommittedOutput(t *testing.T) {
	for _, partitioned := range []bool{false, true} {
		t.Run(fmt.Sprintf("partitioned=%v", partitioned), func(t *testing.T) {
			dir := t.TempDir()
			s := &Sink{Dir: dir, Format: &format.CSV{Fields: schema, Delimiter: ','}, Name: "out"}
			if partitioned {
				s.Format = &format.CSV{Fields: schema[:1], Delimiter: ','}
				s.PartitionCols, s.PartitionIdx = []string{"name"}, []int{1}
			}
			row := func(id int64) event.Row {
				return event.Row{Kind: event.Insert, Fields: []any{id, fmt.Sprintf("p%d", id%2)}}
			}
			fresh := replayCtx("job-a", 0, 1, 0)
			w, err := s.CreateWriter(fresh)
			if err != nil {
				t.Fatal(err)
			}
			for id := event.CheckpointID(1); id <= 3; id++ {
				writeRows(t, w, row(int64(id)))
				checkpoint(t, s, fresh, w, id)
			}
			writeRows(t, w, row(4)) // in progress when the job died
			before := tree(t, dir)
			if !strings.Contains(before, ".inprogress") {
				t.Fatalf("no in-progress file before the restore:\n%s", before)
			}

			_, err = s.CreateWriter(replayCtx("job-a", 0, 1, 2))
			want := fmt.Sprintf(`filesystem sink of table "out" (path '%s', subtask 0): data integrity: the job restored checkpoint 2, `+
				`but the sink already committed the output of checkpoint 3 (its committed-checkpoint marker %s); `+
				`going on would write the output after checkpoint 2 again. Restore checkpoint 3 or later (it was deleted or is corrupt?), `+
				`or accept the duplicates with 'sink.allow-replay' = 'true' on the table (Go: filesystem.Sink.AllowReplay)`,
				dir, filepath.Join(dir, ".weir-committed", "job-a", "subtask-0"))
			var re *operator.ReplayError
			if err == nil || err.Error() != want || !errors.As(err, &re) || re.Restored != 2 || re.Committed != 3 ||
				!errors.Is(err, operator.ErrNonRestartable) || !errors.Is(err, operator.ErrReplay) {
				t.Fatalf("writer restored from checkpoint 2:\n got %v\nwant %s", err, want)
			}
			if after := tree(t, dir); after != before {
				t.Fatalf("the refused restore changed the directory:\nbefore\n%s\nafter\n%s", before, after)
			}

			var logged bytes.Buffer
			replaying := *s
			replaying.AllowReplay = true
			wc := replayCtx("job-a", 0, 1, 2)
			wc.Logger = slog.New(slog.NewTextHandler(&logged, nil))
			w2, err := replaying.CreateWriter(wc)
			if err != nil {
				t.Fatalf("writer restored from checkpoint 2 with sink.allow-replay: %v", err)
			}
			if l := logged.String(); !strings.Contains(l, "level=WARN") || !strings.Contains(l, "replay accepted (sink.allow-replay)") ||
				!strings.Contains(l, "restored=2 committed=3") || !strings.Contains(l, "table=out") {
				t.Fatalf("log of the accepted replay = %q, want a warning naming checkpoints 2 and 3", l)
			}
			if strings.Contains(tree(t, dir), ".inprogress") {
				t.Fatal("the accepted restore left the in-progress file")
			}
			writeRows(t, w2, row(3), row(4)) // the replay after checkpoint 2
			checkpoint(t, &replaying, wc, w2, 4)
			dirOf := func(id int64) string {
				if partitioned {
					return fmt.Sprintf("name=p%d", id%2)
				}
				return "."
			}
			var wantLines []string
			for _, id := range []int64{1, 2, 3, 3, 4} {
				line := fmt.Sprint(id)
				if !partitioned {
					line += fmt.Sprintf(",p%d", id%2)
				}
				wantLines = append(wantLines, dirOf(id)+":"+line)
			}
			slices.Sort(wantLines)
			if got := visibleLines(t, dir); !slices.Equal(got, wantLines) {
				t.Fatalf("output after the accepted replay = %v, want %v", got, wantLines)
			}
			// The replay committed checkpoint 4: restoring it is no replay.
			if _, err := s.CreateWriter(replayCtx("job-a", 0, 1, 4)); err != nil {
				t.Fatalf("writer restored from checkpoint 4: %v", err)
			}
		})
	}
}

// A restore of the newest committed checkpoint, or of any checkpoint into
// a directory whose markers are of another job, is no replay.
func TestRestoreOfNewestCommittedCheckpoint(t *testing.T) {
	dir := t.TempDir()
	s := &Sink{Dir: dir, Format: &format.CSV{Fields: schema, Delimiter: ','}}
	freshRun(t, s, "job-a", 0, 1, 5, 1, "a")
	if _, err := s.CreateWriter(replayCtx("job-a", 0, 1, 5)); err != nil {
		t.Fatalf("restore of checkpoint 5: %v", err)
	}
	if _, err := s.CreateWriter(replayCtx("job-b", 0, 1, 1)); err != nil {
		t.Fatalf("restore of another job's checkpoint 1: %v", err)
	}
	_, err := s.CreateWriter(replayCtx("job-a", 0, 1, 4))
	if !errors.Is(err, operator.ErrReplay) {
		t.Fatalf("restore of checkpoint 4 = %v, want a ReplayError", err)
	}
}

// A fresh start (no restore) into a directory holding a run's output
// keeps that output and adds its own files, as before; it forgets the old
// run's markers, so its own checkpoint ids starting over are no replay.
func TestFreshStartForgetsMarkers(t *testing.T) {
	dir := t.TempDir()
	s := &Sink{Dir: dir, Format: &format.CSV{Fields: schema, Delimiter: ','}}
	// The old run at parallelism 2 committed up to checkpoint 9.
	for sub := 0; sub < 2; sub++ {
		freshRun(t, s, "job-a", sub, 2, 9, int64(sub), "old")
	}
	// The new run, at parallelism 1, commits checkpoint 1 and restores it.
	freshRun(t, s, "job-a", 0, 1, 1, 2, "new")
	if _, err := s.CreateWriter(replayCtx("job-a", 0, 1, 1)); err != nil {
		t.Fatalf("restore of the new run's checkpoint 1: %v", err)
	}
	want := []string{".:0,old", ".:1,old", ".:2,new"}
	if got := visibleLines(t, dir); !slices.Equal(got, want) {
		t.Fatalf("output = %v, want %v", got, want)
	}
}

// Rescale: any subtask's marker counts, whatever the parallelism of the
// restore. Subtask 1 of a run at parallelism 2 committed checkpoint 3
// (subtask 0 had no rows in it); the restore of checkpoint 2 at
// parallelism 1 is refused, naming subtask 1's marker.
func TestRestoreBehindAfterRescale(t *testing.T) {
	dir := t.TempDir()
	s := &Sink{Dir: dir, Format: &format.CSV{Fields: schema, Delimiter: ','}}
	for sub := 0; sub < 2; sub++ {
		wc := replayCtx("job-a", sub, 2, 0)
		w, err := s.CreateWriter(wc)
		if err != nil {
			t.Fatal(err)
		}
		last := event.CheckpointID(2 + sub)
		for id := event.CheckpointID(1); id <= last; id++ {
			writeRows(t, w, event.Row{Kind: event.Insert, Fields: []any{int64(id), "x"}})
			checkpoint(t, s, wc, w, id)
		}
	}
	_, err := s.CreateWriter(replayCtx("job-a", 0, 1, 2))
	var re *operator.ReplayError
	if !errors.As(err, &re) || re.Restored != 2 || re.Committed != 3 ||
		!strings.Contains(err.Error(), filepath.Join(".weir-committed", "job-a", "subtask-1")) {
		t.Fatalf("restore of checkpoint 2 at parallelism 1 = %v, want a ReplayError of checkpoint 3 naming subtask 1's marker", err)
	}
}

// SIGKILL of the committer at any point of its commit of checkpoint 3:
// before the marker (checkpoint 3's files all pending: a restore of 2 is
// no replay, and removes them), while writing it (a temporary file, which
// is ignored), after it and before or between the renames (a restore of 3
// commits the rest; a restore of 2 is refused, since checkpoint 3 is
// complete and some of its files may be final).
func TestCommitterKilledMidCommit(t *testing.T) {
	for _, c := range []struct {
		name    string
		marker  bool // the marker of checkpoint 3 was written
		tmp     bool // a torn temporary marker is left
		renamed int  // files of checkpoint 3 renamed before the kill
		refused bool // the restore of checkpoint 2 is refused
	}{
		{"before the marker", false, false, 0, false},
		{"while writing the marker", false, true, 0, false},
		{"after the marker", true, false, 0, true},
		{"between the renames", true, false, 1, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			s := &Sink{Dir: dir, Format: &format.CSV{Fields: schema[:1], Delimiter: ','},
				PartitionCols: []string{"name"}, PartitionIdx: []int{1}}
			wc := replayCtx("job-a", 0, 1, 0)
			w, err := s.CreateWriter(wc)
			if err != nil {
				t.Fatal(err)
			}
			for id := event.CheckpointID(1); id <= 2; id++ {
				writeRows(t, w, event.Row{Kind: event.Insert, Fields: []any{int64(id), "a"}})
				checkpoint(t, s, wc, w, id)
			}
			writeRows(t, w, event.Row{Kind: event.Insert, Fields: []any{int64(3), "a"}},
				event.Row{Kind: event.Insert, Fields: []any{int64(3), "b"}})
			cs, err := w.PrepareCommit(3)
			if err != nil {
				t.Fatal(err)
			}
			// The killed commit, done by hand up to the kill.
			if c.marker {
				if err := writeMarker(dir, "job-a", 0, 3); err != nil {
					t.Fatal(err)
				}
			}
			if c.tmp {
				if err := os.WriteFile(filepath.Join(dir, ".weir-committed", "job-a", ".subtask-0.tmp"), []byte("3"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			cm, _ := s.CreateCommitter(wc)
			if c.renamed > 0 {
				if err := cm.(committer).commitFiles(cs[:c.renamed]); err != nil {
					t.Fatal(err)
				}
			}
			before := tree(t, dir)
			_, err = s.CreateWriter(replayCtx("job-a", 0, 1, 2))
			if refused := errors.Is(err, operator.ErrReplay); refused != c.refused || (err != nil && !refused) {
				t.Fatalf("restore of checkpoint 2 = %v, want refused %v", err, c.refused)
			}
			if c.refused {
				if after := tree(t, dir); after != before {
					t.Fatalf("the refused restore changed the directory:\nbefore\n%s\nafter\n%s", before, after)
				}
				// The restore of checkpoint 3 commits its files, as the
				// sink operator does with the restored committables.
				if _, err := s.CreateWriter(replayCtx("job-a", 0, 1, 3)); err != nil {
					t.Fatalf("restore of checkpoint 3: %v", err)
				}
				if err := cm.Commit(context.Background(), 3, cs); err != nil {
					t.Fatal(err)
				}
				want := []string{"name=a:1", "name=a:2", "name=a:3", "name=b:3"}
				if got := visibleLines(t, dir); !slices.Equal(got, want) {
					t.Fatalf("output after restoring checkpoint 3 = %v, want %v", got, want)
				}
			} else if got, want := visibleLines(t, dir), []string{"name=a:1", "name=a:2"}; !slices.Equal(got, want) {
				t.Fatalf("output after restoring checkpoint 2 = %v, want %v", got, want)
			}
		})
	}
}
