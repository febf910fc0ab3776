package runtime

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weirstream/weir/checkpointstorage"
	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/task"
)

// runBounded runs a bounded three-record job on dir (its final checkpoint
// is the only one) and returns its result and log.
func runBounded(t *testing.T, dir, restore string, listener func(Event)) (*Result, string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	wal := &operator.WriteAheadSink{Write: func(context.Context, int, event.CheckpointID, []any) error { return nil }}
	logs := &strings.Builder{} // slog's handlers lock around writes; read after Run returned
	res, err := Run(ctx, sinkJob(t, countSource{n: 3, bounded: true}, wal), Options{Mode: task.ExactlyOnce,
		CheckpointDir: dir, Restore: restore, Restart: NoRestart{}, Listener: listener,
		Logger: slog.New(slog.NewTextHandler(logs, nil))})
	return res, logs.String(), err
}

// files lists every file under dir, relative and sorted.
func files(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return err
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// Issue 11, bug 3: restore "latest" whose only checkpoint is unusable, or
// whose directory is empty or mistyped, used to start the job from
// scratch, exit 0, and let GC delete the corrupt checkpoint. It fails,
// naming the directory, what it found and why, and touches nothing.
func TestRestoreLatestFailsWithoutUsableCheckpoint(t *testing.T) {
	damage := []struct {
		name string
		do   func(meta string) error
		want string
	}{
		{"truncated", func(m string) error { return os.Truncate(m, 30) }, "chk-1, corrupt: "},
		{"empty", func(m string) error { return os.Truncate(m, 0) }, "chk-1, corrupt: "},
		{"missing", os.Remove, "chk-1 without _metadata (the checkpoint never completed)"},
	}
	for _, c := range damage {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			if _, _, err := runBounded(t, dir, "", nil); err != nil {
				t.Fatal(err)
			}
			if err := c.do(filepath.Join(dir, "chk-1", "_metadata")); err != nil {
				t.Fatal(err)
			}
			before := files(t, dir)
			res, _, err := runBounded(t, dir, RestoreLatest, nil)
			if !errors.Is(err, checkpointstorage.ErrNoCheckpoint) || res.RestoredFrom != 0 ||
				!strings.Contains(err.Error(), "no usable checkpoint in "+dir+": found "+c.want) ||
				!strings.Contains(err.Error(), `restore "latest-or-empty"`) {
				t.Fatalf("restore latest = %v, want ErrNoCheckpoint naming %s, %q and the latest-or-empty choice", err, dir, c.want)
			}
			if after := files(t, dir); !slices.Equal(after, before) {
				t.Errorf("files after the failed restore %v, want them untouched: %v", after, before)
			}
		})
	}
	for name, c := range map[string]struct{ dir, want string }{
		"empty dir":    {t.TempDir(), ": the directory is empty"},
		"mistyped dir": {filepath.Join(t.TempDir(), "chekpoints"), ": the directory does not exist"},
	} {
		t.Run(name, func(t *testing.T) {
			_, _, err := runBounded(t, c.dir, RestoreLatest, nil)
			if !errors.Is(err, checkpointstorage.ErrNoCheckpoint) || !strings.Contains(err.Error(), c.dir+c.want) {
				t.Fatalf("restore latest on %s = %v, want ErrNoCheckpoint saying %q", name, err, c.dir+c.want)
			}
		})
	}
}

// restore "latest-or-empty" is the explicit choice to start empty: it does
// when the only checkpoint is corrupt, says so at error level, and moves
// the corrupt checkpoint aside instead of deleting it.
func TestRestoreLatestOrEmptyMovesCorruptAside(t *testing.T) {
	dir := t.TempDir()
	if _, _, err := runBounded(t, dir, "", nil); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(filepath.Join(dir, "chk-1", "_metadata"), 30); err != nil {
		t.Fatal(err)
	}
	res, logs, err := runBounded(t, dir, RestoreLatestOrEmpty, nil)
	if err != nil || res.RestoredFrom != 0 {
		t.Fatalf("restore latest-or-empty = %v (from %d), want an empty start", err, res.RestoredFrom)
	}
	if !strings.Contains(logs, "level=ERROR msg=\"CORRUPT CHECKPOINT moved aside") ||
		!strings.Contains(logs, filepath.Join(dir, "chk-1.corrupt")) || !strings.Contains(logs, "starting empty") {
		t.Errorf("logs do not report the corrupt checkpoint moved aside and the empty start:\n%s", logs)
	}
	got := files(t, dir)
	for _, want := range []string{"chk-1.corrupt/_metadata", "chk-2/_metadata"} {
		if !slices.Contains(got, want) {
			t.Errorf("files %v lack %s", got, want)
		}
	}
}

// Issue 11, bug 9: runs killed right after each checkpoint completes
// (before that checkpoint's Retain) left one more checkpoint each time,
// because only a completed checkpoint ran Retain. A restore now brings
// the directory back to the bound (1 here), keeping what it restores.
func TestRestoreBringsStorageToRetentionBound(t *testing.T) {
	for _, c := range []struct {
		restore string
		want    []event.CheckpointID
	}{
		{RestoreLatest, []event.CheckpointID{4}},
		{"chk-2", []event.CheckpointID{2, 4}}, // the restored one is kept
	} {
		dir := t.TempDir()
		s := pileUp(t, dir)
		var atRestore []event.CheckpointID
		var listErr error
		_, _, err := runBounded(t, dir, c.restore, func(e Event) {
			if e.Kind == EventRestored {
				atRestore, listErr = s.Completed()
			}
		})
		if err != nil || listErr != nil {
			t.Fatal(err, listErr)
		}
		if !slices.Equal(atRestore, c.want) {
			t.Errorf("restore %s: completed checkpoints at the restore %v, want %v", c.restore, atRestore, c.want)
		}
	}
}

// pileUp leaves in dir what three runs killed right after their checkpoint
// left: the checkpoint each restored, and the one it completed — four
// valid checkpoints, 1 to 4 (2 to 4 reuse the state files of 1).
func pileUp(t *testing.T, dir string) *checkpointstorage.FS {
	t.Helper()
	if _, _, err := runBounded(t, dir, "", nil); err != nil {
		t.Fatal(err)
	}
	s, err := checkpointstorage.OpenFS(dir)
	if err != nil {
		t.Fatal(err)
	}
	m, err := s.ReadMetadata(1)
	if err != nil {
		t.Fatal(err)
	}
	for id := event.CheckpointID(2); id <= 4; id++ {
		m.ID = id
		if err := s.WriteMetadata(m); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// A state file whose checksum fails as the newest checkpoint is loaded
// (its size is right, so the catalog took the checkpoint for valid): the
// checkpoint is moved aside and the next older one restored, loudly.
func TestRestoreLatestFallsBackOnCorruptStateFile(t *testing.T) {
	dir := t.TempDir()
	if _, _, err := runBounded(t, dir, "", nil); err != nil {
		t.Fatal(err)
	}
	saved := filepath.Join(t.TempDir(), "chk-1")
	if err := os.Rename(filepath.Join(dir, "chk-1"), saved); err != nil {
		t.Fatal(err)
	}
	if _, _, err := runBounded(t, dir, "", nil); err != nil { // chk-2
		t.Fatal(err)
	}
	if err := os.Rename(saved, filepath.Join(dir, "chk-1")); err != nil {
		t.Fatal(err)
	}
	var flipped string
	for _, f := range files(t, dir) {
		if strings.HasPrefix(f, "chk-2/") && f != "chk-2/_metadata" && flipped == "" {
			flipped = filepath.Join(dir, f)
		}
	}
	b, err := os.ReadFile(flipped)
	if err != nil || len(b) == 0 {
		t.Fatalf("state file of chk-2: %q, %v", flipped, err)
	}
	b[len(b)-1] ^= 1
	if err := os.WriteFile(flipped, b, 0o644); err != nil {
		t.Fatal(err)
	}
	res, logs, err := runBounded(t, dir, RestoreLatest, nil)
	if err != nil || res.RestoredFrom != 1 {
		t.Fatalf("restore latest = %v (from %d), want checkpoint 1", err, res.RestoredFrom)
	}
	for _, want := range []string{`level=ERROR msg="CORRUPT CHECKPOINT skipped; restoring older checkpoint 1" job=commit-test checkpoint=2 file=` + flipped,
		filepath.Join(dir, "chk-2.corrupt")} {
		if !strings.Contains(logs, want) {
			t.Errorf("logs lack %q:\n%s", want, logs)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "chk-2.corrupt", "_metadata")); err != nil {
		t.Errorf("chk-2 not moved aside: %v", err)
	}
}
