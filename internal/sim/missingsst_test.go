package sim

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weirstream/weir/checkpointstorage"
	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/runtime"
	"github.com/weirstream/weir/state/pebble"
)

// A missing shared SST in the newest checkpoint makes the restore fall
// back to the previous one, loudly. The job runs on the Pebble backend
// with incremental checkpoints and stops at the instant its 4th checkpoint
// n completes (two retained: n-1 and n); an SST that n uploaded (n-1 does
// not name it) is then deleted from shared/. A new process restoring
// "latest" reports n as corrupt, naming the checkpoint and the file (event
// and error log), and restores n-1, with exact output.
func TestMissingSharedSSTFallsBack(t *testing.T) {
	sharedFileFallsBack(t, corruptStores[0].make, sstFile, removeFile)
}

// The same with a WAL chunk that checkpoint n uploaded (its database
// ships the WAL: pebble.Options.DisableChangelog false): the restore names
// n and the chunk and restores n-1.
func TestMissingWALChunkFallsBack(t *testing.T) {
	sharedFileFallsBack(t, corruptStores[0].make, walChunk, removeFile)
}

// sharedKind is a kind of shared file and the backend options that make
// a checkpoint upload one.
type sharedKind struct {
	name string
	pick func(string) bool
	opts pebble.Options
}

// sstFile: with the changelog off every checkpoint flushes into an SST (the
// job's state is too small for a flush of its own); walChunk: the
// default, where a checkpoint ships the WAL written since the last one.
var (
	sstFile  = sharedKind{"sst", func(p string) bool { return strings.HasSuffix(p, ".sst") }, pebble.Options{DisableChangelog: true}}
	walChunk = sharedKind{"wal chunk", func(p string) bool { return strings.Contains(path.Base(p), ".log.") }, pebble.Options{}}
)

// backend returns the pebble factory for kind with its own local directory.
func (k sharedKind) backend(t *testing.T) pebble.Factory {
	o := k.opts
	o.LocalDir = t.TempDir()
	return pebble.Factory{Options: o}
}

// removeFile deletes a shared file and returns the reason a restore must give.
func removeFile(t *testing.T, cs corruptStore, rel string) string {
	cs.remove(t, rel)
	return "state file referenced by the checkpoint is missing"
}

// sharedFileFallsBack runs the job to its 4th checkpoint n on the storage
// store makes, spoils a shared file of kind that n uploaded, and
// checks that a restore names n, the file and the reason spoil returns,
// and restores n-1 exactly.
func sharedFileFallsBack(t *testing.T, store func(*testing.T) corruptStore, kind sharedKind,
	spoil func(*testing.T, corruptStore, string) string) {
	const keys, perKey = 4, 1500
	src := &SeqSource{Keys: keys, PerKey: perKey, Splits: 2, Burst: 10, Pause: time.Millisecond, Unbounded: true}
	var (
		cs   corruptStore
		at   stopAt
		prev int64
		fs   *checkpointstorage.FS
		gone string
	)
	// On a loaded machine the 4th checkpoint may come so soon after the
	// 3rd that it has nothing new of kind: run again, on a fresh location.
	for attempt := 1; gone == ""; attempt++ {
		cs = store(t)
		cs.store = NewStore()
		jg := seqJob{Source: src, SourcePar: 2, KeyedPar: 2, V: &Violations{}, Sink: &TxSink{Store: cs.store}}.jobGraph(t)
		opts := testOptions(cs.loc, 10*time.Millisecond)
		opts.CheckpointStorage, opts.Retained = cs.opts, 2
		opts.StateBackend = kind.backend(t)
		at = runUntil(t, jg, opts, cs.store, 4)
		if at.dir != cs.loc {
			cs = fileCorruptStore(at.dir)
		}
		completed := at.ev.ids(runtime.EventCheckpointCompleted)
		prev = completed[slices.Index(completed, int64(at.id))-1]
		var err error
		if fs, err = checkpointstorage.Open(at.dir, cs.opts); err != nil {
			t.Fatal(err)
		}
		defer fs.Close()
		news, named, old := newSharedFiles(t, fs, at.id, event.CheckpointID(prev), kind.pick)
		if len(news) > 0 {
			gone = news[0]
		} else if attempt == 3 {
			t.Fatalf("checkpoint %d uploaded no shared %s in 3 runs (it names %v, checkpoint %d %v)", at.id, kind.name, named, prev, old)
		}
	}
	reason := spoil(t, cs, gone)

	st, v, ev, logs := at.store.Clone(), &Violations{}, &events{}, &syncBuffer{}
	bounded := *src
	bounded.Unbounded = false
	jg := seqJob{Source: &bounded, SourcePar: 2, KeyedPar: 2, V: v, Sink: &TxSink{Store: st}}.jobGraph(t)
	opts := testOptions(at.dir, 10*time.Millisecond)
	opts.CheckpointStorage, opts.Retained = cs.opts, 2
	opts.StateBackend = kind.backend(t)
	opts.Restore = "latest"
	opts.Listener = ev.listener(nil)
	opts.Logger = slog.New(slog.NewTextHandler(logs, nil))
	res, err := runJob(context.Background(), jg, opts)
	if err != nil {
		t.Fatalf("job failed: %v; events: %s", err, ev)
	}
	corrupt := ev.of(runtime.EventCorruptCheckpointSkipped)
	if len(corrupt) != 1 || corrupt[0].Checkpoint != int64(at.id) {
		t.Fatalf("events %s; want checkpoint %d skipped as corrupt, once", ev, at.id)
	}
	file := fs.Where(gone)
	cause := fmt.Sprintf("checkpointstorage: corrupt file %s: %s", file, reason)
	wantErr := fmt.Sprintf("checkpoint %d skipped: %s", at.id, cause)
	if c := corrupt[0].Err; !errors.Is(c, checkpointstorage.ErrCorrupt) || c.Error() != wantErr {
		t.Errorf("corrupt event error %q; want ErrCorrupt %q", c, wantErr)
	}
	// The catalog sees a missing file or a wrong size; a wrong checksum
	// shows as the restore verifies the files before anything is deployed.
	if r := ev.ids(runtime.EventRestored); !slices.Equal(r, []int64{prev}) || res.Restarts != 0 || res.RestoredFrom != event.CheckpointID(prev) {
		t.Errorf("restored %v (result: from %d, %d restarts), want [%d]; events: %s", r, res.RestoredFrom, res.Restarts, prev, ev)
	}
	wantLogs := []string{
		fmt.Sprintf(`level=ERROR msg="CORRUPT CHECKPOINT skipped; restoring older checkpoint %d" job=scenario checkpoint=%d file=%s reason=%q err=%q`,
			prev, at.id, file, reason, wantErr),
		fmt.Sprintf(`level=ERROR msg="CORRUPT CHECKPOINT moved aside (not deleted; inspect or delete it)" job=scenario checkpoint=%d to=%s err=%q`,
			at.id, fs.Where(fmt.Sprintf("chk-%d.corrupt", at.id)), cause),
		fmt.Sprintf(`level=INFO msg="restoring checkpoint" job=scenario checkpoint=%d dir=%s`, prev, at.dir),
	}
	if got := firstLogLines(logs.String(), len(wantLogs)); !slices.Equal(got, wantLogs) {
		t.Errorf("the restore logged\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(wantLogs, "\n"))
	}
	checkOutput(t, 0, st.Committed(), keys, perKey, true)
	if g, r := v.Gaps.Load(), v.Repeats.Load(); g != 0 || r != 0 {
		t.Errorf("sequence checker saw %d gaps and %d repeats", g, r)
	}
	if l := st.Lingering(); len(l) != 0 {
		t.Errorf("lingering transactions: %v", l)
	}
}

// newSharedFiles returns the shared files that checkpoint n names and prev
// does not, those that pick accepts, and the shared files each names.
func newSharedFiles(t *testing.T, fs *checkpointstorage.FS, n, prev event.CheckpointID, pick func(string) bool) (news, named, old []string) {
	t.Helper()
	shared := func(id event.CheckpointID) []string {
		m, err := fs.ReadMetadata(id)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, h := range m.Handles {
			if strings.HasPrefix(h.Path, "shared/") {
				out = append(out, h.Path)
			}
		}
		return out
	}
	named, old = shared(n), shared(prev)
	for _, p := range named {
		if !slices.Contains(old, p) && pick(p) {
			news = append(news, p)
		}
	}
	return news, named, old
}

// firstLogLines returns the first n lines of a text log without their
// time= field.
func firstLogLines(log string, n int) []string {
	lines := strings.Split(log, "\n")
	out := make([]string, 0, n)
	for _, l := range lines[:min(n, len(lines))] {
		if _, rest, ok := strings.Cut(l, " "); ok && strings.HasPrefix(l, "time=") {
			l = rest
		}
		out = append(out, l)
	}
	return out
}
