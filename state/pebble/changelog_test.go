package pebble_test

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weirstream/weir/keygroup"
	"github.com/weirstream/weir/state"
	"github.com/weirstream/weir/state/pebble"
)

// logChunks returns the WAL chunks among shared paths.
func logChunks(paths []string) []string {
	var out []string
	for _, p := range paths {
		if strings.Contains(path.Base(p), ".log.") {
			out = append(out, p)
		}
	}
	return out
}

// chunkRange parses "<group>/<file>.log.<from>-<to>".
func chunkRange(t *testing.T, p string) (log string, from, to int64) {
	t.Helper()
	base := path.Base(p)
	i := strings.Index(base, ".log.") + len(".log")
	if _, err := fmt.Sscanf(base[i+1:], "%d-%d", &from, &to); err != nil {
		t.Fatalf("chunk %s: %v", p, err)
	}
	return base[:i], from, to
}

// TestChangelogUploadsOnlyNewWALBytes: with the WAL shipped, a checkpoint
// flushes nothing (the first uploads no SST) and uploads the WAL bytes
// written since the previous one: each WAL file's new chunk starts where
// its previous one ended, and the chunks uploaded hold the values written
// since. A checkpoint names the earlier chunks of its WAL files again.
// (Pebble's first memtables are small, so the WAL file changes early.)
func TestChangelogUploadsOnlyNewWALBytes(t *testing.T) {
	store := newFakeStore(t)
	b := newIncremental(t, t.TempDir(), keygroup.Range{Start: 0, End: metaMaxPar - 1}, nil,
		func(o *pebble.Options) { o.WriteBufferSize = 4 << 20 })
	end := map[string]int64{} // WAL file → bytes uploaded
	var chunks []string       // every chunk uploaded
	for i := range 4 {
		fill(b, i*1000, 1000)
		snap, _ := b.Snapshot(0)
		_, id, needs := store.writeFiles(t, snap)
		up, _ := store.uploaded(id)
		if i == 0 && len(up) != 1 {
			t.Fatalf("checkpoint 1 uploaded %v; want one WAL chunk and no SST", up)
		}
		var bytes int64
		for _, c := range logChunks(up) {
			log, from, to := chunkRange(t, c)
			if from != end[log] || to <= from {
				t.Fatalf("checkpoint %d uploaded %s bytes %d-%d; %d uploaded before", id, log, from, to, end[log])
			}
			end[log], bytes = to, bytes+to-from
			chunks = append(chunks, c)
		}
		if bytes < 1000*100 || bytes > 1000*150 {
			t.Fatalf("checkpoint %d uploaded %d WAL bytes (%v); want those of 1000 values of 100 bytes", id, bytes, up)
		}
		named := logChunks(sharedOf(needs))
		if !isSubset(logChunks(up), named) || !isSubset(named, chunks) {
			t.Fatalf("checkpoint %d names chunks %v; uploaded %v, all so far %v", id, named, up, chunks)
		}
	}
}

// TestChangelogRestoresEveryCheckpoint: values written across several
// checkpoints, memtable flushes among them, restore from each checkpoint
// exactly as they were at it — the SSTs and the WAL chunks together — at
// the same parallelism and split over two subtasks (rescale: each keeps
// its key groups only). A restored backend's own checkpoint restores too.
func TestChangelogRestoresEveryCheckpoint(t *testing.T) {
	store := newFakeStore(t)
	all := keygroup.Range{Start: 0, End: metaMaxPar - 1}
	b := newIncremental(t, t.TempDir(), all, nil)
	var ms [][]byte
	const per = 1500 // ~165 KB of WAL per checkpoint: the 256 KiB memtable flushes every few
	for i := range 6 {
		fill(b, i*per, per)
		overwrite(b, i*per/2, "round", i) // keys of earlier checkpoints change too
		snap, _ := b.Snapshot(0)
		m, _, _ := store.writeFiles(t, snap)
		ms = append(ms, m)
	}
	if ssts := sstsIn(store); len(ssts) == 0 {
		t.Fatal("no memtable flushed: the test needs SSTs and WAL chunks together")
	}
	halves := []keygroup.Range{{Start: 0, End: metaMaxPar/2 - 1}, {Start: metaMaxPar / 2, End: metaMaxPar - 1}}
	for i, m := range ms {
		want := expected((i+1)*per, i)
		for _, rng := range append([]keygroup.Range{all}, halves...) {
			r := newIncremental(t, t.TempDir(), rng, store)
			if err := r.Restore([][]byte{m}); err != nil {
				t.Fatalf("restoring checkpoint %d into %v: %v", i+1, rng, err)
			}
			checkRestored(t, r, rng, want, fmt.Sprintf("checkpoint %d into %v", i+1, rng))
		}
	}
	r := newIncremental(t, t.TempDir(), all, store)
	if err := r.Restore([][]byte{ms[2]}); err != nil {
		t.Fatal(err)
	}
	fill(r, 100000, 10)
	snap, _ := r.Snapshot(0)
	m, _, _ := store.writeFiles(t, snap)
	again := newIncremental(t, t.TempDir(), all, store)
	if err := again.Restore([][]byte{m}); err != nil {
		t.Fatal(err)
	}
	want := expected(3*per, 2)
	for k := 100000; k < 100010; k++ {
		want[k] = fmt.Sprintf("%0100d", k)
	}
	checkRestored(t, again, all, want, "a restored backend's checkpoint")
}

// overwrite gives keys 0..n-1 the value "<tag><round>".
func overwrite(b state.KeyedBackend, n int, tag string, round int) {
	v := state.Value(b, state.ValueDescriptor[string]{Name: "v"})
	for k := range n {
		b.SetCurrentKey(k, keygroup.ForKey(k, metaMaxPar))
		v.Update(fmt.Sprintf("%s%d", tag, round))
	}
}

// expected recomputes the values after fill of keys 0..n-1 and
// overwrite of rounds 0..last.
func expected(n, last int) map[int]string {
	want := map[int]string{}
	for k := range n {
		want[k] = fmt.Sprintf("%0100d", k)
	}
	for i := 0; i <= last; i++ {
		for k := range i * 1500 / 2 {
			want[k] = fmt.Sprintf("round%d", i)
		}
	}
	return want
}

// checkRestored compares r's state "v" with want's keys in rng.
func checkRestored(t *testing.T, r *pebble.Backend, rng keygroup.Range, want map[int]string, what string) {
	t.Helper()
	v := state.Value(r, state.ValueDescriptor[string]{Name: "v"})
	n := 0
	for k, w := range want {
		kg := keygroup.ForKey(k, metaMaxPar)
		if !rng.Contains(kg) {
			continue
		}
		n++
		r.SetCurrentKey(k, kg)
		if got, _ := v.Value(); got != w {
			t.Fatalf("%s: key %d is %q, want %q", what, k, got, w)
		}
	}
	if got := len(r.Keys("v")); got != n {
		t.Fatalf("%s: %d keys, want %d", what, got, n)
	}
}

// sstsIn returns the SSTs the store holds.
func sstsIn(s *fakeStore) []string {
	ssts, _ := filepath.Glob(filepath.Join(s.dir, "shared", "*", "*.sst"))
	return ssts
}

// TestChangelogBadChunk: a restore whose WAL chunk is missing, or whose
// content differs, fails naming the WAL file and the chunk.
func TestChangelogBadChunk(t *testing.T) {
	for _, tc := range []struct {
		name  string
		spoil func(string) error
	}{
		{"missing", os.Remove},
		{"corrupt", func(p string) error {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			b[len(b)/2] ^= 1
			return os.WriteFile(p, b, 0o644)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := newFakeStore(t)
			all := keygroup.Range{Start: 0, End: metaMaxPar - 1}
			b := newIncremental(t, t.TempDir(), all, nil)
			fill(b, 0, 100)
			snap, _ := b.Snapshot(0)
			store.writeFiles(t, snap)
			fill(b, 100, 100)
			snap, _ = b.Snapshot(0)
			m, _, needs := store.writeFiles(t, snap)
			chunks := logChunks(sharedOf(needs))
			if len(chunks) != 2 {
				t.Fatalf("checkpoint 2 names chunks %v; want two", chunks)
			}
			if err := tc.spoil(filepath.Join(store.dir, chunks[0])); err != nil {
				t.Fatal(err)
			}
			r := newIncremental(t, t.TempDir(), all, store)
			err := r.Restore([][]byte{m})
			log, _, _ := chunkRange(t, chunks[0])
			if err == nil || !strings.Contains(err.Error(), "WAL "+log) || !strings.Contains(err.Error(), chunks[0]) {
				t.Fatalf("restore with chunk %s %s: got %v, want an error naming WAL %s and the chunk", chunks[0], tc.name, err, log)
			}
		})
	}
}

// TestChangelogRestoredIntoFlushing: a checkpoint that carries WAL chunks
// restores into a backend that flushes instead, whose checkpoints restore
// too.
func TestChangelogRestoredIntoFlushing(t *testing.T) {
	store := newFakeStore(t)
	all := keygroup.Range{Start: 0, End: metaMaxPar - 1}
	b := newIncremental(t, t.TempDir(), all, nil)
	fill(b, 0, 500)
	snap, _ := b.Snapshot(0)
	m, _, _ := store.writeFiles(t, snap)
	r := newIncremental(t, t.TempDir(), all, store, flushing)
	if err := r.Restore([][]byte{m}); err != nil {
		t.Fatal(err)
	}
	snap, _ = r.Snapshot(0)
	m, _, needs := store.writeFiles(t, snap)
	if c := logChunks(sharedOf(needs)); len(c) != 0 {
		t.Fatalf("a flushing backend's checkpoint names WAL chunks %v", c)
	}
	again := newIncremental(t, t.TempDir(), all, store)
	if err := again.Restore([][]byte{m}); err != nil {
		t.Fatal(err)
	}
	checkRestored(t, again, all, expected(500, -1), "restored twice")
}
