package pebble_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/weirstream/weir/keygroup"
	"github.com/weirstream/weir/state"
	"github.com/weirstream/weir/state/pebble"
)

// TestRestoreOpensWithoutCompacting: a checkpoint whose database has
// overlapping L0 SSTs and a WAL to replay. Pebble's Open flushes the
// replayed WAL, the flush's end picks a compaction of L0, and Open waited
// for it before returning; the restore now opens the database with
// compactions paused (no compaction ends during Open) and lets them run
// afterwards (L0 shrinks), and every value is restored exactly.
func TestRestoreOpensWithoutCompacting(t *testing.T) {
	store := newFakeStore(t)
	all := keygroup.Range{Start: 0, End: metaMaxPar - 1}
	var m []byte
	var needs []state.FileHandle
	var l0 int64
	const n = 6000 // ~660 KB: the 256 KiB memtable flushes a few times
	pebble.WithoutCompactions(func() {
		b := newIncremental(t, t.TempDir(), all, nil)
		for round := range 2 {
			fill(b, 0, n)
			overwrite(b, n/2, "round", round)
		}
		l0 = pebble.L0Tables(b)
		snap, _ := b.Snapshot(0)
		m, _, needs = store.writeFiles(t, snap)
	})
	if l0 < 4 {
		t.Fatalf("the checkpoint's database has %d L0 SSTs; the test needs 4 or more (Pebble's L0 compaction threshold)", l0)
	}
	var paths []string
	for _, h := range needs {
		paths = append(paths, h.Path)
	}
	if len(logChunks(paths)) == 0 {
		t.Fatal("the checkpoint has no WAL chunk: the test needs a WAL to replay")
	}
	r := newIncremental(t, t.TempDir(), all, store)
	if err := r.Restore([][]byte{m}); err != nil {
		t.Fatal(err)
	}
	if c := pebble.OpenCompactions(r); c != 0 {
		t.Errorf("%d compactions ended during Open; want 0 (compactions paused until Open returns)", c)
	}
	want := map[int]string{}
	for k := range n {
		want[k] = fmt.Sprintf("%0100d", k)
		if k < n/2 {
			want[k] = "round1"
		}
	}
	checkRestored(t, r, all, want, "restored")
	deadline := time.Now().Add(time.Minute)
	for pebble.L0Tables(r) >= l0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if got := pebble.L0Tables(r); got >= l0 {
		t.Fatalf("L0 still holds %d SSTs (%d before the restore) a minute after it: compactions never resumed", got, l0)
	}
	checkRestored(t, r, all, want, "restored, after its compactions")
}
