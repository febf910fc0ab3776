package filesystem

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/weirstream/weir/durable"
	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
)

// Committed-checkpoint markers: a restore of a checkpoint older than what
// the sink already committed (the newer checkpoint deleted, or corrupt,
// after its commit) would write the committed part files' rows again, in
// files of another run id. So each committer subtask keeps the id of the
// newest checkpoint it committed in a small file of its own,
//
//	<path>/.weir-committed/<job id, path-escaped>/subtask-<n>
//
// (hidden, as a dot name is to Flink's and Weir's filesystem readers), written
// (temporary file, sync, rename) before the commit renames that
// checkpoint's files: after a SIGKILL at any point the marker is at least
// the newest checkpoint any of whose files are final. A writer restored
// from checkpoint N reads the markers of its job (one small file per
// subtask that ever committed, whatever the parallelism then) and refuses
// to start if one is past N, before touching anything, unless
// Sink.AllowReplay. A fresh start (no restore) forgets the markers of its
// job that it owns (old subtask j goes to j mod parallelism, as state
// does), so checkpoint ids starting over are not taken for a replay; its
// files are added next to the old output, as always. Flink has no such
// check.

const markerDir = ".weir-committed"

// jobMarkers is the directory of job's markers under dir.
func jobMarkers(dir, job string) string {
	return filepath.Join(dir, markerDir, url.PathEscape(job))
}

func markerName(subtask int) string { return fmt.Sprintf("subtask-%d", subtask) }

// markerSubtask parses a marker file name; ok false for anything else.
func markerSubtask(name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, "subtask-")
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(rest)
	return n, err == nil && n >= 0
}

// writeMarker records checkpoint id as committed by subtask.
func writeMarker(dir, job string, subtask int, id event.CheckpointID) error {
	d := jobMarkers(dir, job)
	if err := os.MkdirAll(d, 0o755); err != nil {
		return fmt.Errorf("filesystem sink: committed-checkpoint marker: %w", err)
	}
	final := filepath.Join(d, markerName(subtask))
	if err := durable.WriteFile(final, []byte(strconv.FormatInt(int64(id), 10)+"\n")); err != nil {
		return fmt.Errorf("filesystem sink: committed-checkpoint marker %s: %w", final, err)
	}
	return nil
}

// newestMarker returns the newest checkpoint committed by any subtask of
// job under dir, and its marker's path (0, "" when none).
func newestMarker(dir, job string) (event.CheckpointID, string, error) {
	d := jobMarkers(dir, job)
	entries, err := os.ReadDir(d)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, "", nil
	}
	if err != nil {
		return 0, "", fmt.Errorf("filesystem sink: reading committed-checkpoint markers: %w", err)
	}
	var newest event.CheckpointID
	var at string
	for _, e := range entries {
		if _, ok := markerSubtask(e.Name()); !ok || e.IsDir() {
			continue
		}
		p := filepath.Join(d, e.Name())
		b, err := os.ReadFile(p)
		if err != nil {
			return 0, "", fmt.Errorf("filesystem sink: committed-checkpoint marker: %w", err)
		}
		n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		if err != nil || n < 0 {
			return 0, "", fmt.Errorf("filesystem sink: committed-checkpoint marker %s holds %q, not a checkpoint id "+
				"(remove the file to skip the check that a restore is not older than the committed output)", p, b)
		}
		if event.CheckpointID(n) > newest {
			newest, at = event.CheckpointID(n), p
		}
	}
	return newest, at, nil
}

// forgetMarkers removes, on a fresh start, the markers of job that
// subtask owns at parallelism: its own and those of old subtasks j ≥
// parallelism with j mod parallelism = subtask.
func forgetMarkers(dir, job string, subtask, parallelism int) error {
	d := jobMarkers(dir, job)
	entries, err := os.ReadDir(d)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("filesystem sink: reading committed-checkpoint markers: %w", err)
	}
	for _, e := range entries {
		j, ok := markerSubtask(e.Name())
		if !ok || !(j == subtask || (j >= parallelism && j%parallelism == subtask)) {
			continue
		}
		if err := os.Remove(filepath.Join(d, e.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("filesystem sink: committed-checkpoint marker: %w", err)
		}
	}
	return nil
}

// checkNotAhead fails a writer restored behind its job's committed output
// with an operator.ReplayError, unless Sink.AllowReplay (then a warning);
// on a fresh start it forgets the markers it owns.
func (s *Sink) checkNotAhead(ctx operator.WriterContext) error {
	if ctx.RestoredCheckpoint == 0 {
		return forgetMarkers(s.Dir, ctx.JobID, ctx.Subtask.Index, max(1, ctx.Parallelism))
	}
	committed, marker, err := newestMarker(s.Dir, ctx.JobID)
	if err != nil || committed <= ctx.RestoredCheckpoint {
		return err
	}
	name := "filesystem sink"
	if s.Name != "" {
		name = fmt.Sprintf("filesystem sink of table %q", s.Name)
	}
	e := &operator.ReplayError{
		Sink:     fmt.Sprintf("%s (path '%s', subtask %d)", name, s.Dir, ctx.Subtask.Index),
		Restored: ctx.RestoredCheckpoint, Committed: committed,
		Evidence: "its committed-checkpoint marker " + marker,
		Fix:      "'sink.allow-replay' = 'true' on the table (Go: filesystem.Sink.AllowReplay)"}
	if !s.AllowReplay {
		return e
	}
	log := ctx.Logger
	if log == nil {
		log = slog.Default()
	}
	log.Warn("filesystem sink: replay accepted (sink.allow-replay): rows of committed checkpoints will be written again",
		"table", s.Name, "path", s.Dir, "restored", e.Restored, "committed", committed)
	return nil
}
