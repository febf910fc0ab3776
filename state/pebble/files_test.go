package pebble_test

import (
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/weirstream/weir/keygroup"
	"github.com/weirstream/weir/state"
	"github.com/weirstream/weir/state/pebble"
)

// fakeStore is checkpoint storage in a local directory for the backend's
// own tests (state may not import checkpointstorage; the task package
// tests the backend against the real one, on a directory and on S3). It
// records what each checkpoint uploaded.
type fakeStore struct {
	dir string
	mu  sync.Mutex
	seq int
	put map[int][]string // checkpoint → uploaded paths
}

func newFakeStore(t *testing.T) *fakeStore {
	return &fakeStore{dir: t.TempDir(), put: map[int][]string{}}
}

func (s *fakeStore) Location() string { return s.dir }

// checkpoint returns the SnapshotFiles of a new checkpoint and its number.
func (s *fakeStore) checkpoint() (*fakeFiles, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	return &fakeFiles{s: s, id: s.seq}, s.seq
}

type fakeFiles struct {
	s  *fakeStore
	id int
}

func (f *fakeFiles) Location() string { return f.s.dir }

func (f *fakeFiles) Put(files []state.LocalFile) ([]state.FileHandle, error) {
	var hs []state.FileHandle
	for _, lf := range files {
		rel := path.Join(fmt.Sprintf("chk-%d", f.id), lf.Name)
		if lf.Shared {
			rel = path.Join("shared", lf.Name)
		}
		data, err := os.ReadFile(lf.Path)
		if err != nil {
			return nil, err
		}
		dst := filepath.Join(f.s.dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(dst, data, 0o644); err != nil {
			return nil, err
		}
		hs = append(hs, state.FileHandle{Path: rel, Size: int64(len(data)), CRC32C: crc32.Checksum(data, crc32.MakeTable(crc32.Castagnoli))})
		f.s.mu.Lock()
		f.s.put[f.id] = append(f.s.put[f.id], rel)
		f.s.mu.Unlock()
	}
	return hs, nil
}

func (s *fakeStore) Fetch(h state.FileHandle, dst string, link bool) error {
	src := filepath.Join(s.dir, filepath.FromSlash(h.Path))
	if link {
		return os.Link(src, dst)
	}
	data, err := os.ReadFile(src)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s is missing: %w", h.Path, err)
	}
	if err != nil {
		return err
	}
	if int64(len(data)) != h.Size || crc32.Checksum(data, crc32.MakeTable(crc32.Castagnoli)) != h.CRC32C {
		return fmt.Errorf("%s: size or checksum differs from the checkpoint's", h.Path)
	}
	return os.WriteFile(dst, data, 0o644)
}

// uploaded returns what checkpoint id uploaded, sorted, shared files
// first.
func (s *fakeStore) uploaded(id int) (shared, own []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range s.put[id] {
		if strings.HasPrefix(p, "shared/") {
			shared = append(shared, p)
		} else {
			own = append(own, p)
		}
	}
	slices.Sort(shared)
	slices.Sort(own)
	return shared, own
}

// writeFiles writes snapshot s as checkpoint files into the store.
func (s *fakeStore) writeFiles(t *testing.T, snap state.Snapshot) (manifest []byte, id int, needs []state.FileHandle) {
	t.Helper()
	inc, ok := snap.(state.IncrementalSnapshot)
	if !ok {
		t.Fatalf("%T is not an incremental snapshot", snap)
	}
	f, id := s.checkpoint()
	manifest, needs, err := inc.WriteFiles(f)
	if err != nil {
		t.Fatal(err)
	}
	return manifest, id, needs
}

func sharedOf(hs []state.FileHandle) []string {
	var out []string
	for _, h := range hs {
		if strings.HasPrefix(h.Path, "shared/") {
			out = append(out, h.Path)
		}
	}
	slices.Sort(out)
	return out
}

// newIncremental opens a backend with incremental checkpoints, its
// options changed by mods.
func newIncremental(t *testing.T, local string, rng keygroup.Range, files state.RestoreFiles, mods ...func(*pebble.Options)) *pebble.Backend {
	t.Helper()
	o := pebble.Options{LocalDir: local, KeyGroupRange: rng, MaxParallelism: metaMaxPar,
		WriteBufferSize: 256 << 10, RestoreFiles: files}
	for _, m := range mods {
		m(&o)
	}
	b, err := pebble.New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b
}

// flushing makes each checkpoint flush the memtables instead of shipping
// the WAL.
func flushing(o *pebble.Options) { o.DisableChangelog = true }

// fill writes n values of about 100 bytes each under keys from..from+n-1.
func fill(b state.KeyedBackend, from, n int) {
	v := state.Value(b, state.ValueDescriptor[string]{Name: "v"})
	for k := from; k < from+n; k++ {
		b.SetCurrentKey(k, keygroup.ForKey(k, metaMaxPar))
		v.Update(fmt.Sprintf("%0100d", k))
	}
}

// TestIncrementalUploadsOnlyNewSSTs: checkpoints that flush
// (DisableChangelog): the second checkpoint uploads the one SST flushed
// since the first and names the first's SSTs again; a third
// with no change uploads no SST at all.
func TestIncrementalUploadsOnlyNewSSTs(t *testing.T) {
	pebble.WithoutCompactions(func() { uploadsOnlyNew(t) })
}

func uploadsOnlyNew(t *testing.T) {
	store := newFakeStore(t)
	b := newIncremental(t, t.TempDir(), keygroup.Range{Start: 0, End: metaMaxPar - 1}, nil, flushing)
	fill(b, 0, 1000)
	snap, _ := b.Snapshot(0)
	_, id1, needs1 := store.writeFiles(t, snap)
	up1, own1 := store.uploaded(id1)
	if len(up1) != 1 || !slices.Equal(up1, sharedOf(needs1)) || len(own1) != 0 || len(needs1) != 1 {
		t.Fatalf("checkpoint 1 uploaded shared %v and own %v, needs %v; want one SST (the small files inline)", up1, own1, needs1)
	}
	fill(b, 1000, 1000)
	snap, _ = b.Snapshot(0)
	_, id2, needs2 := store.writeFiles(t, snap)
	up2, own2 := store.uploaded(id2)
	if len(up2) != 1 || slices.Contains(up1, up2[0]) {
		t.Fatalf("checkpoint 2 uploaded %v; want one new SST (checkpoint 1 uploaded %v)", up2, up1)
	}
	if want := slices.Sorted(slices.Values(append(slices.Clone(up1), up2...))); !slices.Equal(sharedOf(needs2), want) {
		t.Fatalf("checkpoint 2 needs %v, want %v", sharedOf(needs2), want)
	}
	if len(own2) != 0 {
		t.Fatalf("checkpoint 2 wrote own files %v; want them inline", own2)
	}
	snap, _ = b.Snapshot(0)
	_, id3, needs3 := store.writeFiles(t, snap)
	if up3, _ := store.uploaded(id3); len(up3) != 0 || !slices.Equal(sharedOf(needs3), sharedOf(needs2)) {
		t.Fatalf("unchanged checkpoint 3 uploaded %v and needs %v; want none and %v", up3, sharedOf(needs3), sharedOf(needs2))
	}
}

// TestIncrementalRestoreReusesFiles: checkpoints that flush; a restore
// from the same storage
// names the restored SSTs again instead of uploading them; a restore
// from another storage (no-claim) uploads everything to the new one.
func TestIncrementalRestoreReusesFiles(t *testing.T) {
	pebble.WithoutCompactions(func() { restoreReuses(t) })
}

func restoreReuses(t *testing.T) {
	store := newFakeStore(t)
	all := keygroup.Range{Start: 0, End: metaMaxPar - 1}
	b := newIncremental(t, t.TempDir(), all, nil, flushing)
	fill(b, 0, 500)
	snap, _ := b.Snapshot(0)
	m, _, needs := store.writeFiles(t, snap)
	r := newIncremental(t, t.TempDir(), all, store, flushing)
	if err := r.Restore([][]byte{m}); err != nil {
		t.Fatal(err)
	}
	fill(r, 500, 10)
	snap, _ = r.Snapshot(0)
	_, id, needs2 := store.writeFiles(t, snap)
	up, _ := store.uploaded(id)
	if len(up) != 1 || !isSubset(sharedOf(needs), sharedOf(needs2)) {
		t.Fatalf("after a restore, uploaded %v and needs %v; want one new SST and the restored %v", up, sharedOf(needs2), sharedOf(needs))
	}
	other := newFakeStore(t)
	snap, _ = r.Snapshot(0)
	_, id, needs3 := other.writeFiles(t, snap)
	if up, _ := other.uploaded(id); !slices.Equal(up, sharedOf(needs3)) || len(up) != 2 {
		t.Fatalf("to another storage: uploaded %v, needs %v; want both SSTs uploaded", up, sharedOf(needs3))
	}
}

func isSubset(a, b []string) bool {
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	return true
}

// TestIncrementalSmallFilesInline: a checkpoint carries Pebble's small
// files (MANIFEST, OPTIONS, markers) in its manifest instead of writing
// each to storage, and restores from it; a manifest of the older form,
// those files stored apart, restores too.
func TestIncrementalSmallFilesInline(t *testing.T) {
	for _, older := range []bool{false, true} {
		t.Run(fmt.Sprintf("stored apart %v", older), func(t *testing.T) {
			store := newFakeStore(t)
			all := keygroup.Range{Start: 0, End: metaMaxPar - 1}
			b := newIncremental(t, t.TempDir(), all, nil, flushing)
			fill(b, 0, 500)
			snap, _ := b.Snapshot(0)
			m, id, _ := store.writeFiles(t, snap)
			inline, err := pebble.InlineFiles(m)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.ContainsFunc(inline, func(n string) bool { return strings.HasPrefix(n, "MANIFEST-") }) ||
				!slices.ContainsFunc(inline, func(n string) bool { return strings.HasPrefix(n, "OPTIONS-") }) {
				t.Fatalf("inline files %v; want the MANIFEST and OPTIONS among them", inline)
			}
			if _, own := store.uploaded(id); len(own) != 0 {
				t.Fatalf("checkpoint wrote own files %v; want them inline", own)
			}
			if older {
				f, _ := store.checkpoint()
				if m, err = pebble.StoreInlineApart(m, f, t.TempDir()); err != nil {
					t.Fatal(err)
				}
			}
			r := newIncremental(t, t.TempDir(), all, store, flushing)
			if err := r.Restore([][]byte{m}); err != nil {
				t.Fatal(err)
			}
			want := map[int]string{}
			for k := range 500 {
				want[k] = fmt.Sprintf("%0100d", k)
			}
			checkRestored(t, r, all, want, "restored")
		})
	}
}

// TestIncrementalMissingFile: a restore whose shared SST is gone fails,
// naming the file.
func TestIncrementalMissingFile(t *testing.T) {
	store := newFakeStore(t)
	all := keygroup.Range{Start: 0, End: metaMaxPar - 1}
	b := newIncremental(t, t.TempDir(), all, nil)
	fill(b, 0, 100)
	snap, _ := b.Snapshot(0)
	m, _, needs := store.writeFiles(t, snap)
	sst := sharedOf(needs)[0]
	if err := os.Remove(filepath.Join(store.dir, sst)); err != nil {
		t.Fatal(err)
	}
	r := newIncremental(t, t.TempDir(), all, store)
	err := r.Restore([][]byte{m})
	if err == nil || !strings.Contains(err.Error(), path.Base(sst)) {
		t.Fatalf("restore without %s: got %v, want an error naming it", sst, err)
	}
}

// TestIncrementalIntoHeapRefused: the heap backend cannot read a manifest
// and says what to do.
func TestIncrementalIntoHeapRefused(t *testing.T) {
	store := newFakeStore(t)
	b := newIncremental(t, t.TempDir(), keygroup.Range{Start: 0, End: metaMaxPar - 1}, nil)
	fill(b, 0, 10)
	snap, _ := b.Snapshot(0)
	m, _, _ := store.writeFiles(t, snap)
	w := newWorld(t, false, t.TempDir(), new(int64), 1, nil)
	err := w.bs[0].Restore([][]byte{m})
	if !errors.Is(err, state.ErrIncompatible) || !strings.Contains(err.Error(), "state.backend.type 'pebble'") {
		t.Fatalf("heap restore of a manifest: got %v, want ErrIncompatible naming state.backend.type", err)
	}
}

// TestIncrementalRestoreTimers: a restore keeps the timers the files hold
// under their queues' names, whatever order the restored instance first
// uses its queues in (a queue's id depends on that order), and adding
// them back, as the timer service does from its own part, finds each
// there already.
func TestIncrementalRestoreTimers(t *testing.T) {
	store := newFakeStore(t)
	all := keygroup.Range{Start: 0, End: metaMaxPar - 1}
	b := newIncremental(t, t.TempDir(), all, nil)
	qa, _ := b.TimerQueue("a")
	qb, _ := b.TimerQueue("b")
	for kg := range metaMaxPar {
		qa.Add(kg, []byte(fmt.Sprintf("a%02d", kg)))
	}
	qb.Add(3, []byte("b03"))
	fill(b, 0, 100)
	snap, _ := b.Snapshot(0)
	m, _, _ := store.writeFiles(t, snap)
	for _, rng := range []keygroup.Range{all, {Start: 4, End: 9}} {
		r := newIncremental(t, t.TempDir(), rng, store)
		if err := r.Restore([][]byte{m}); err != nil {
			t.Fatal(err)
		}
		rb, _ := r.TimerQueue("b") // first, unlike the old instance
		ra, _ := r.TimerQueue("a")
		wantB := 0
		if rng.Contains(3) {
			wantB = 1
		}
		if rb.Len() != wantB || ra.Len() != rng.Len() {
			t.Fatalf("restored %v: queues b and a hold %d and %d timers, want %d and %d", rng, rb.Len(), ra.Len(), wantB, rng.Len())
		}
		if rng.Contains(3) && rb.Add(3, []byte("b03")) {
			t.Fatalf("restored %v: adding b03 back added it again", rng)
		}
		for kg := rng.Start; kg <= rng.End; kg++ {
			if ra.Add(kg, []byte(fmt.Sprintf("a%02d", kg))) {
				t.Fatalf("restored %v: adding a%02d back added it again", rng, kg)
			}
		}
		if kg, e, _ := ra.Peek(); ra.Len() != rng.Len() || kg != rng.Start || string(e) != fmt.Sprintf("a%02d", rng.Start) {
			t.Fatalf("restored %v: queue a holds %d, head %d %q", rng, ra.Len(), kg, e)
		}
		if kg, e, _ := rb.Peek(); rng.Contains(3) && (kg != 3 || string(e) != "b03") {
			t.Fatalf("restored %v: queue b's head is %d %q, want 3 b03", rng, kg, e)
		}
	}
}

// TestIncrementalRestoreUploadsNothingUnchanged: checkpoints that flush;
// the first checkpoint after a restore at the same parallelism, from the same storage, with
// the timers added back and the state read but nothing changed, uploads
// no SST and names the restored ones. It uploaded one before the timers
// stayed in place: the restore's deletions of the timers and their
// re-insertion, one SST spanning every key group, whose L0 compaction
// rewrote every SST below it.
func TestIncrementalRestoreUploadsNothingUnchanged(t *testing.T) {
	pebble.WithoutCompactions(func() { restoreUploadsNothing(t) })
}

func restoreUploadsNothing(t *testing.T) {
	store := newFakeStore(t)
	all := keygroup.Range{Start: 0, End: metaMaxPar - 1}
	b := newIncremental(t, t.TempDir(), all, nil, flushing)
	addTimers := func(b *pebble.Backend) {
		q, _ := b.TimerQueue("event")
		for kg := range metaMaxPar {
			q.Add(kg, []byte(fmt.Sprintf("t%02d", kg)))
		}
	}
	addTimers(b)
	fill(b, 0, 3000)
	snap, _ := b.Snapshot(0)
	m, _, needs := store.writeFiles(t, snap)
	r := newIncremental(t, t.TempDir(), all, store, flushing)
	if err := r.Restore([][]byte{m}); err != nil {
		t.Fatal(err)
	}
	addTimers(r)
	v := state.Value(r, state.ValueDescriptor[string]{Name: "v"})
	r.SetCurrentKey(7, keygroup.ForKey(7, metaMaxPar))
	if got, _ := v.Value(); got != fmt.Sprintf("%0100d", 7) {
		t.Fatalf("restored value of key 7: %q", got)
	}
	snap, _ = r.Snapshot(0)
	_, id, needs2 := store.writeFiles(t, snap)
	if up, _ := store.uploaded(id); len(up) != 0 || !slices.Equal(sharedOf(needs2), sharedOf(needs)) {
		t.Fatalf("first checkpoint after the restore uploaded %v and needs %v; want none and the restored %v", up, sharedOf(needs2), sharedOf(needs))
	}
}
