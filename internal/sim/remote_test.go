package sim

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/weirstream/weir/checkpointstorage"
	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/keygroup"
	"github.com/weirstream/weir/state"
	"github.com/weirstream/weir/state/pebble"
	"github.com/weirstream/weir/task"
)

// The experimental disaggregated state (pebble.Options.ExperimentalRemote)
// on real checkpoint storage, a directory and the S3 test server: SSTs
// created in the storage's shared/pebble-remote/, checkpoints that name
// them without uploading them, restores that read them in place, and
// retention that never deletes one a retained checkpoint names, though
// the live database compacted it away.

const remotePrefix = "shared/pebble-remote/"

// fetchRecorder is task's RestoreFiles that remembers what it fetched.
type fetchRecorder struct {
	state.RestoreFiles
	mu      *sync.Mutex
	fetched *[]string
}

func (f fetchRecorder) Fetch(h state.FileHandle, dst string, link bool) error {
	f.mu.Lock()
	*f.fetched = append(*f.fetched, h.Path)
	f.mu.Unlock()
	return f.RestoreFiles.Fetch(h, dst, link)
}

// remoteJob opens par subtasks with disaggregated state in s, restored
// from m when not nil; it returns the paths the restore fetched.
func remoteJob(t *testing.T, par int, s *checkpointstorage.FS, m *checkpointstorage.Metadata, all bool) (*incJob, []string) {
	t.Helper()
	b, release, err := s.ObjectBucket()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = release() })
	ro := &pebble.RemoteOptions{Bucket: b, Location: s.Dir(), AllLevels: all, CacheSize: 4 << 20}
	var mu sync.Mutex
	var fetched []string
	j := newIncJobWith(t, par, s, m, func(o *pebble.Options) {
		o.ExperimentalRemote = ro
		if o.RestoreFiles != nil {
			o.RestoreFiles = fetchRecorder{o.RestoreFiles, &mu, &fetched}
		}
	})
	return j, fetched
}

// compactedAway tells whether the oldest of the retain checkpoints up to
// id names remote objects the newest does not.
func compactedAway(byID map[event.CheckpointID][]string, id event.CheckpointID, retain event.CheckpointID) bool {
	if id < retain {
		return false
	}
	return len(without(remoteOf(byID[id-retain+1]), byID[id])) > 0
}

func remoteOf(names []string) []string {
	return slices.DeleteFunc(slices.Clone(names), func(n string) bool { return !strings.HasPrefix(n, remotePrefix) })
}

// TestRemoteCheckpointsRetained: checkpoints of two subtasks with
// disaggregated state, retaining 3. No checkpoint uploads a remote SST;
// after each Retain the storage holds every file a retained checkpoint
// names; the oldest retained checkpoint, whose remote SSTs the live
// databases have since compacted away, restores exactly, and so does the
// newest, at parallelism 2 and 3, fetching no remote SST; GC after the
// job keeps them restorable.
func TestRemoteCheckpointsRetained(t *testing.T) {
	for _, st := range incStorages {
		for _, all := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/all-levels=%v", st.name, all), func(t *testing.T) {
				remoteRetained(t, st, all)
			})
		}
	}
}

func remoteRetained(t *testing.T, st incStorage, all bool) {
	s := st.open(t)
	j, _ := remoteJob(t, 2, s, nil, all)
	const keys, retain = 2000, 3
	byID := map[event.CheckpointID][]string{}
	wants := map[event.CheckpointID]map[int]string{}
	var ever []string
	id := event.CheckpointID(0)
	// Until the oldest retained checkpoint names remote objects that the
	// newest no longer does (the live databases compacted them away).
	for round := 1; round <= 16 && !compactedAway(byID, id, retain); round++ {
		j.put(0, keys, round) // overwrite everything: compactions obsolete the older SSTs
		id++
		names, up := j.checkpoint(t, s, id, false)
		if r := remoteOf(up); len(r) > 0 {
			t.Fatalf("checkpoint %d uploaded remote objects %v", id, r)
		}
		byID[id], wants[id] = names, j.read(keys)
		ever = union(ever, names)
		if _, err := s.Retain(retain, 0); err != nil {
			t.Fatal(err)
		}
		var want []string
		for k := max(1, id-retain+1); k <= id; k++ {
			want = union(want, byID[k])
		}
		if in, _ := exists(t, s, ever); !slices.Equal(in, want) {
			t.Fatalf("after checkpoint %d and Retain(%d): storage holds %v; want %v", id, retain, in, want)
		}
	}
	oldest := id - retain + 1
	if !compactedAway(byID, id, retain) {
		t.Fatalf("checkpoint %d names remote objects %v, of which the newest (%d) no longer names %v: want some of each (the test proves nothing otherwise)",
			oldest, remoteOf(byID[oldest]), id, without(remoteOf(byID[oldest]), byID[id]))
	}
	check := func(cid event.CheckpointID, par int) {
		t.Helper()
		m, err := s.ReadMetadata(cid)
		if err != nil {
			t.Fatal(err)
		}
		r, fetched := remoteJob(t, par, s, &m, all)
		if got := r.read(keys); !maps.Equal(got, wants[cid]) {
			t.Fatalf("checkpoint %d restored at parallelism %d: %d keys differ", cid, par, diff(got, wants[cid]))
		}
		if f := remoteOf(fetched); len(f) > 0 {
			t.Fatalf("restoring checkpoint %d fetched remote objects %v", cid, f)
		}
	}
	check(oldest, 2)
	check(id, 2)
	check(id, 3)
	if _, err := s.GC(); err != nil {
		t.Fatal(err)
	}
	check(oldest, 2)
}

// TestRemoteCheckpointNeedsRemoteOption: a checkpoint with remote SSTs
// does not restore into a backend without disaggregated state (the error
// says what to turn on, instead of fetching the objects as local files),
// nor into one whose remote storage is another (its checkpoints could not
// name the objects).
func TestRemoteCheckpointNeedsRemoteOption(t *testing.T) {
	s := incStorages[0].open(t)
	j, _ := remoteJob(t, 1, s, nil, true)
	j.put(0, 500, 1)
	j.checkpoint(t, s, 1, false)
	m, err := s.ReadMetadata(1)
	if err != nil {
		t.Fatal(err)
	}
	b, err := pebble.New(pebble.Options{LocalDir: t.TempDir(), KeyGroupRange: keygroup.Range{Start: 0, End: incMaxPar - 1},
		MaxParallelism: incMaxPar, RestoreFiles: task.RestoreFiles{Storage: s, ID: 1}})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	err = b.Restore(manifests(t, s, m))
	if err == nil || !strings.Contains(err.Error(), remotePrefix) || !strings.Contains(err.Error(), "disaggregated state") {
		t.Fatalf("restoring a remote checkpoint into a local backend: %v; want an error naming a remote object and the option", err)
	}
	other := incStorages[0].open(t)
	ob, release, err := other.ObjectBucket()
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	b2, err := pebble.New(pebble.Options{LocalDir: t.TempDir(), KeyGroupRange: keygroup.Range{Start: 0, End: incMaxPar - 1},
		MaxParallelism: incMaxPar, RestoreFiles: task.RestoreFiles{Storage: s, ID: 1},
		ExperimentalRemote: &pebble.RemoteOptions{Bucket: ob, Location: other.Dir()}})
	if err != nil {
		t.Fatal(err)
	}
	defer b2.Close()
	if err := b2.Restore(manifests(t, s, m)); err == nil || !strings.Contains(err.Error(), "another storage") {
		t.Fatalf("restoring remote SSTs of %s with the disaggregated state in %s: %v; want an error", s.Dir(), other.Dir(), err)
	}
	_, err = pebble.New(pebble.Options{LocalDir: t.TempDir(), ExperimentalRemote: &pebble.RemoteOptions{Location: s.Dir()}})
	if err == nil || !strings.Contains(err.Error(), "RemoteOptions.Bucket") {
		t.Fatalf("remote options without a bucket: %v; want an error naming RemoteOptions.Bucket", err)
	}
}

// TestRemoteRestoredTwice: one checkpoint restored into two jobs that
// then write different values and checkpoint: each restored database
// creates objects under its own creator id, so neither overwrites the
// other's (a restored database continues the original's file numbers),
// and each checkpoint restores to what its job wrote.
func TestRemoteRestoredTwice(t *testing.T) {
	s := incStorages[0].open(t)
	const keys = 800
	j, _ := remoteJob(t, 1, s, nil, true)
	j.put(0, keys, 1)
	j.checkpoint(t, s, 1, false)
	m1, err := s.ReadMetadata(1)
	if err != nil {
		t.Fatal(err)
	}
	wants := map[event.CheckpointID]map[int]string{}
	for i, id := range []event.CheckpointID{2, 3} {
		r, _ := remoteJob(t, 1, s, &m1, true)
		r.put(0, keys, 10+i)
		r.checkpoint(t, s, id, false)
		wants[id] = r.read(keys)
	}
	if maps.Equal(wants[2], wants[3]) {
		t.Fatal("the two restored jobs wrote the same values: the test proves nothing")
	}
	for _, id := range []event.CheckpointID{2, 3} {
		m, err := s.ReadMetadata(id)
		if err != nil {
			t.Fatal(err)
		}
		r, _ := remoteJob(t, 1, s, &m, true)
		if got := r.read(keys); !maps.Equal(got, wants[id]) {
			t.Fatalf("checkpoint %d restored %d keys that differ from what its job wrote", id, diff(got, wants[id]))
		}
	}
}
