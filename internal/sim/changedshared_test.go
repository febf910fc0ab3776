package sim

import (
	"context"
	"fmt"
	"hash/crc32"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/weirstream/weir/checkpointstorage"
	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/runtime"
)

// A shared file of the newest checkpoint whose bytes changed — one byte
// flipped (same size: only the checksum tells) or one byte appended — is
// named with its checkpoint and the restore falls back to the previous
// checkpoint, on a directory and on S3, for an SST and for a WAL chunk.
func TestChangedSharedFileFallsBack(t *testing.T) {
	for _, st := range corruptStores {
		for _, kind := range []sharedKind{sstFile, walChunk} {
			for _, ch := range []struct {
				name  string
				spoil func(*testing.T, corruptStore, string) string
			}{{"byte flipped", flipByte}, {"byte appended", appendByte}} {
				t.Run(st.name+"/"+kind.name+"/"+ch.name, func(t *testing.T) {
					t.Parallel()
					sharedFileFallsBack(t, st.make, kind, ch.spoil)
				})
			}
		}
	}
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// flipByte flips a bit of the middle byte of rel and returns the reason a
// restore must give.
func flipByte(t *testing.T, cs corruptStore, rel string) string {
	b, _ := cs.get(t, rel)
	want := crc32.Checksum(b, castagnoli)
	b[len(b)/2] ^= 1
	cs.put(t, rel, b)
	return fmt.Sprintf("checksum %#08x, want %#08x", crc32.Checksum(b, castagnoli), want)
}

// appendByte makes rel one byte longer.
func appendByte(t *testing.T, cs corruptStore, rel string) string {
	b, _ := cs.get(t, rel)
	cs.put(t, rel, append(b, 0))
	return fmt.Sprintf("size %d bytes, want %d", len(b)+1, len(b))
}

// A failover after a task failure at runtime does the same: the job
// restores its own newest checkpoint n, finds a file of it corrupt before
// deploying anything, names it, and restores n-1 instead of trying n
// again; output stays exact. The listener, on the driver goroutine as
// checkpoint n (the 4th) completes and before any subtask hears of it,
// flips a byte of a file of n — on Pebble a WAL chunk n uploaded, on the
// heap backend one of n's full snapshot blobs — and arms a crash in the
// sink's commit of n, so n's transaction is never committed.
func TestCorruptCheckpointAtFailoverFallsBack(t *testing.T) {
	for _, st := range corruptStores {
		for _, backend := range []string{"pebble", "heap"} {
			t.Run(st.name+"/"+backend, func(t *testing.T) {
				t.Parallel()
				corruptAtFailover(t, st.make(t), backend == "pebble")
			})
		}
	}
}

func corruptAtFailover(t *testing.T, cs corruptStore, pebble bool) {
	const keys, perKey = 4, 1500
	store, v, ev, logs := NewStore(), &Violations{}, &events{}, &syncBuffer{}
	commits := NewFaults(0, 0, nil) // armed by the listener
	src := &SeqSource{Keys: keys, PerKey: perKey, Splits: 2, Burst: 10, Pause: time.Millisecond}
	jg := seqJob{Source: src, SourcePar: 2, KeyedPar: 1, V: v, Sink: &TxSink{Store: store, Faults: commits}}.jobGraph(t)
	opts := testOptions(cs.loc, 10*time.Millisecond)
	opts.CheckpointStorage, opts.Retained = cs.opts, 2
	if pebble {
		opts.StateBackend = walChunk.backend(t)
	}
	noCommitRetries(&opts)
	opts.Logger = slog.New(slog.NewTextHandler(logs, nil))
	fs, err := checkpointstorage.Open(cs.loc, cs.opts)
	if err != nil {
		t.Fatal(err)
	}
	defer fs.Close()
	var done []event.CheckpointID
	var spoiled string
	var bad, prev event.CheckpointID
	opts.Listener = ev.listener(func(e runtime.Event) {
		if e.Kind != runtime.EventCheckpointCompleted || spoiled != "" {
			return
		}
		if done = append(done, event.CheckpointID(e.Checkpoint)); len(done) >= 4 {
			bad, prev = done[len(done)-1], done[len(done)-2]
			rel := heapFile(t, fs, bad)
			if pebble {
				news, _, _ := newSharedFiles(t, fs, bad, prev, walChunk.pick)
				if len(news) == 0 {
					return // nothing new since prev (a loaded machine): wait for a checkpoint with some
				}
				rel = news[0]
			}
			spoiled = fs.Where(rel) + ": " + flipByte(t, cs, rel)
			commits.mu.Lock()
			commits.plan = &plan{steps: []Step{Crash("commit", 1)}, calls: map[string]int{}}
			commits.mu.Unlock()
		}
	})
	res, err := runJob(context.Background(), jg, opts)
	if err != nil {
		t.Fatalf("job failed: %v; events: %s", err, ev)
	}
	if spoiled == "" || !commits.PlanDone() {
		t.Fatalf("the job completed checkpoints %v and crashed %v; want a 4th or later with something new, spoiled, then a crash", done, commits.Fired)
	}
	corrupt := ev.of(runtime.EventCorruptCheckpointSkipped)
	want := fmt.Sprintf("checkpoint %d skipped: checkpointstorage: corrupt file %s", bad, spoiled)
	if len(corrupt) != 1 || corrupt[0].Checkpoint != int64(bad) || corrupt[0].Err.Error() != want {
		t.Fatalf("events %s; want checkpoint %d skipped as corrupt, once: %s", ev, bad, want)
	}
	restored := ev.ids(runtime.EventRestored)
	if len(restored) != 1 || restored[0] != int64(prev) {
		t.Errorf("restored %v; want [%d] (never %d); events: %s", restored, prev, bad, ev)
	}
	msg := fmt.Sprintf(`level=ERROR msg="CORRUPT CHECKPOINT skipped; restoring older checkpoint %d" job=scenario checkpoint=%d file=`, prev, bad)
	if !strings.Contains(logs.String(), msg) {
		t.Errorf("logs lack %q:\n%s", msg, logs)
	}
	checkOutput(t, 0, store.Committed(), keys, perKey, true)
	if g, r := v.Gaps.Load(), v.Repeats.Load(); g != 0 || r != 0 {
		t.Errorf("sequence checker saw %d gaps and %d repeats", g, r)
	}
	if l := store.Lingering(); len(l) != 0 {
		t.Errorf("lingering transactions: %v", l)
	}
	if res.Restarts != 1 {
		t.Errorf("%d restarts; want 1 (the crash; the corrupt checkpoint is passed over before deploying)", res.Restarts)
	}
}

// heapFile is a full snapshot blob of checkpoint id.
func heapFile(t *testing.T, fs *checkpointstorage.FS, id event.CheckpointID) string {
	m, err := fs.ReadMetadata(id)
	if err != nil {
		t.Fatal(err)
	}
	return ownStateFile(t, m)
}
