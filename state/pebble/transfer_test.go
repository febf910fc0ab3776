package pebble_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/weirstream/weir/keygroup"
	"github.com/weirstream/weir/state"
	"github.com/weirstream/weir/state/pebble"
)

// inFlight counts the transfers running at once and the most seen.
type inFlight struct {
	mu       sync.Mutex
	now, max int
}

// during runs f counted as one transfer. It holds each transfer a
// moment, so that transfers a broken bound let through overlap.
func (c *inFlight) during(f func() error) error {
	c.mu.Lock()
	c.now++
	c.max = max(c.max, c.now)
	c.mu.Unlock()
	defer func() { c.mu.Lock(); c.now--; c.mu.Unlock() }()
	time.Sleep(2 * time.Millisecond)
	return f()
}

func (c *inFlight) most() int { c.mu.Lock(); defer c.mu.Unlock(); return c.max }

// countingFiles is a checkpoint's SnapshotFiles counting its uploads.
type countingFiles struct {
	*fakeFiles
	c *inFlight
}

func (f countingFiles) Put(files []state.LocalFile) (hs []state.FileHandle, err error) {
	err = f.c.during(func() error { hs, err = f.fakeFiles.Put(files); return err })
	return hs, err
}

// countingStore is a fakeStore counting its fetches.
type countingStore struct {
	*fakeStore
	c *inFlight
}

func (s countingStore) Fetch(h state.FileHandle, dst string, link bool) error {
	return s.c.during(func() error { return s.fakeStore.Fetch(h, dst, link) })
}

// checkFilled fails unless b holds exactly the values fill(b, from, n)
// wrote, and none for the keys just outside.
func checkFilled(t *testing.T, b state.KeyedBackend, from, n int) {
	t.Helper()
	v := state.Value(b, state.ValueDescriptor[string]{Name: "v"})
	for k := from - 1; k <= from+n; k++ {
		b.SetCurrentKey(k, keygroup.ForKey(k, metaMaxPar))
		got, ok := v.Value()
		want, wantOK := fmt.Sprintf("%0100d", k), k >= from && k < from+n
		if ok != wantOK || (ok && got != want) {
			t.Fatalf("key %d: got %q (set %v), want %q (set %v)", k, got, ok, want, wantOK)
		}
	}
}

// threads sets Options.TransferThreads.
func threads(n int) func(*pebble.Options) {
	return func(o *pebble.Options) { o.TransferThreads = n }
}

// TestTransferThreads: a checkpoint of several SSTs uploads them, and a
// restore fetches them, at most TransferThreads at once (state.backend.
// rocksdb.checkpoint.transfer.thread.num); with one thread the restored
// state is exact, at the same parallelism and merging two subtasks.
func TestTransferThreads(t *testing.T) {
	for _, n := range []int{1, 3} {
		t.Run(fmt.Sprintf("threads %d", n), func(t *testing.T) {
			pebble.WithoutCompactions(func() { transferThreads(t, n) })
		})
	}
}

func transferThreads(t *testing.T, n int) {
	halves := [2]keygroup.Range{{Start: 0, End: metaMaxPar/2 - 1}, {Start: metaMaxPar / 2, End: metaMaxPar - 1}}
	all := keygroup.Range{Start: 0, End: metaMaxPar - 1}
	store := newFakeStore(t)
	var manifests [][]byte
	var up inFlight
	for _, rng := range halves {
		b := newIncremental(t, t.TempDir(), rng, nil, flushing, threads(n))
		scratch := newFakeStore(t)
		for i := range 4 { // four checkpoints: four SSTs
			fillIn(b, rng, i*250, 250)
			snap, _ := b.Snapshot(0)
			scratch.writeFiles(t, snap)
		}
		snap, _ := b.Snapshot(0)
		f, id := store.checkpoint()
		m, _, err := snap.(state.IncrementalSnapshot).WriteFiles(countingFiles{f, &up})
		if err != nil {
			t.Fatal(err)
		}
		if shared, _ := store.uploaded(id); len(shared) != 4 {
			t.Fatalf("checkpoint to a new storage uploaded %v; want the 4 SSTs", shared)
		}
		manifests = append(manifests, m)
	}
	if up.most() > n {
		t.Fatalf("%d uploads at once; TransferThreads is %d", up.most(), n)
	}
	var down inFlight
	cs := countingStore{store, &down}
	same := newIncremental(t, t.TempDir(), halves[0], cs, threads(n))
	if err := same.Restore(manifests[:1]); err != nil {
		t.Fatal(err)
	}
	merged := newIncremental(t, t.TempDir(), all, cs, threads(n))
	if err := merged.Restore(manifests); err != nil {
		t.Fatal(err)
	}
	if down.most() > n {
		t.Fatalf("%d fetches at once; TransferThreads is %d", down.most(), n)
	}
	// Each half's backend holds the keys 0..999 of its key groups.
	checkFilled(t, merged, 0, 1000)
	checkHalf(t, same, halves[0], 1000)
}

// fillIn is fill for the keys whose key group is in rng.
func fillIn(b state.KeyedBackend, rng keygroup.Range, from, n int) {
	v := state.Value(b, state.ValueDescriptor[string]{Name: "v"})
	for k := from; k < from+n; k++ {
		if kg := keygroup.ForKey(k, metaMaxPar); rng.Contains(kg) {
			b.SetCurrentKey(k, kg)
			v.Update(fmt.Sprintf("%0100d", k))
		}
	}
}

// checkHalf fails unless b holds the value of every key below n in rng,
// and no other.
func checkHalf(t *testing.T, b state.KeyedBackend, rng keygroup.Range, n int) {
	t.Helper()
	v := state.Value(b, state.ValueDescriptor[string]{Name: "v"})
	for k := range n {
		kg := keygroup.ForKey(k, metaMaxPar)
		if !rng.Contains(kg) {
			continue
		}
		b.SetCurrentKey(k, kg)
		if got, ok := v.Value(); !ok || got != fmt.Sprintf("%0100d", k) {
			t.Fatalf("key %d: got %q (set %v)", k, got, ok)
		}
	}
}

// TestTransferThreadsRefused: fewer than one thread is refused, naming
// the option.
func TestTransferThreadsRefused(t *testing.T) {
	_, err := pebble.New(pebble.Options{LocalDir: t.TempDir(), TransferThreads: -1})
	if err == nil || err.Error() != "pebble: state.backend.pebble.checkpoint.transfer.thread.num is -1; want 1 or more" {
		t.Fatalf("TransferThreads -1: %v", err)
	}
}
