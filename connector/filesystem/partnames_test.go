package filesystem

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/weirstream/weir/connector/format"
	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
)

// writeRun is one fresh run of subtask 0 of a sink into dir: it writes rows,
// prepares checkpoint 1 and commits it.
func writeRun(t *testing.T, dir string, restored event.CheckpointID, rows ...string) {
	t.Helper()
	s := &Sink{Dir: dir, Format: &format.CSV{Fields: schema, Delimiter: ','}}
	wc := operator.WriterContext{Subtask: event.SubtaskID{Index: 0}, Parallelism: 1, RestoredCheckpoint: restored}
	w, err := s.CreateWriter(wc)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		id, name, _ := strings.Cut(r, ",")
		if err := w.Write(event.Record{Value: event.Row{Kind: event.Insert, Fields: []any{mustInt(t, id), name}}}); err != nil {
			t.Fatal(err)
		}
	}
	cs, err := w.PrepareCommit(1)
	if err != nil {
		t.Fatal(err)
	}
	c, _ := s.CreateCommitter(wc)
	if err := c.Commit(context.Background(), 1, cs); err != nil {
		t.Fatal(err)
	}
}

func mustInt(t *testing.T, s string) int64 {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// A job run twice into one directory, its checkpoint ids starting over,
// keeps both runs' files: a part file is never replaced.
func TestRerunAddsPartFiles(t *testing.T) {
	dir := t.TempDir()
	writeRun(t, dir, 0, "1,a", "2,b")
	writeRun(t, dir, 0, "3,c")
	var lines, hidden []string
	entries, _ := os.ReadDir(dir)
	entries = slices.DeleteFunc(entries, func(e os.DirEntry) bool { return e.Name() == markerDir }) // the committed-checkpoint markers
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			hidden = append(hidden, e.Name())
			continue
		}
		if !strings.HasPrefix(e.Name(), "part-") || !strings.HasSuffix(e.Name(), "-0-1") {
			t.Errorf("part file %s, want part-<run>-0-1", e.Name())
		}
		data, _ := os.ReadFile(filepath.Join(dir, e.Name()))
		lines = append(lines, strings.Fields(string(data))...)
	}
	slices.Sort(lines)
	if want := []string{"1,a", "2,b", "3,c"}; !slices.Equal(lines, want) || len(entries) != 2 || hidden != nil {
		t.Fatalf("files %d, lines %q, hidden %q; want 2 files with %q", len(entries), lines, hidden, want)
	}
}

// A writer removes its subtask's leftovers of any run — in-progress files
// and pending files newer than the restored checkpoint — and nothing else.
func TestCleanupOfEarlierRuns(t *testing.T) {
	dir := t.TempDir()
	names := []string{
		".part-aaaa0001-0.inprogress", // subtask 0, in progress: stale
		".part-aaaa0001-0-3.pending",  // subtask 0, checkpoint 3 > 2: stale
		".part-aaaa0001-0-2.pending",  // subtask 0, checkpoint 2 ≤ 2: kept for the committer
		".part-bbbb0002-1.inprogress", // subtask 1: not ours
		".part-bbbb0002-1-9.pending",  // subtask 1: not ours
		"part-aaaa0001-0-1",           // committed
		".part-0-4.pending",           // not a part name of this format: left alone
	}
	for _, n := range names {
		if err := os.WriteFile(filepath.Join(dir, n), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s := &Sink{Dir: dir, Format: &format.CSV{Fields: schema, Delimiter: ','}}
	if _, err := s.CreateWriter(operator.WriterContext{RestoredCheckpoint: 2}); err != nil {
		t.Fatal(err)
	}
	var left []string
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		left = append(left, e.Name())
	}
	want := []string{".part-0-4.pending", ".part-aaaa0001-0-2.pending", ".part-bbbb0002-1-9.pending",
		".part-bbbb0002-1.inprogress", "part-aaaa0001-0-1"}
	if !slices.Equal(left, want) {
		t.Fatalf("left %q, want %q", left, want)
	}
}
