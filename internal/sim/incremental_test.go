package sim

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weirstream/weir/checkpointstorage"
	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/internal/testsvc"
	"github.com/weirstream/weir/keygroup"
	"github.com/weirstream/weir/state"
	"github.com/weirstream/weir/state/pebble"
	"github.com/weirstream/weir/task"
)

// Incremental checkpoints of the Pebble backend on real checkpoint
// storage, a directory and the S3 test server: the backends' snapshots are
// written as the subtasks write them (task.SnapshotFiles), completed with
// metadata as the driver completes them, retained, collected and
// restored.

const incMaxPar = 32

// incStorage opens a fresh checkpoint storage of one kind.
type incStorage struct {
	name string
	open func(t *testing.T) *checkpointstorage.FS
}

var incStorages = []incStorage{
	{"file", func(t *testing.T) *checkpointstorage.FS {
		return mustOpenStorage(t, filepath.Join(t.TempDir(), "chk"), checkpointstorage.Options{})
	}},
	{"s3", func(t *testing.T) *checkpointstorage.FS {
		srv := testsvc.S3(t)
		loc := fmt.Sprintf("s3://%s/sim/incremental-%d", srv.Bucket, time.Now().UnixNano())
		return mustOpenStorage(t, loc, checkpointstorage.Options{S3: checkpointstorage.S3Options{
			Endpoint: srv.Endpoint, Region: srv.Region, AccessKey: srv.AccessKey, SecretKey: srv.SecretKey}})
	}},
}

func mustOpenStorage(t *testing.T, loc string, o checkpointstorage.Options) *checkpointstorage.FS {
	t.Helper()
	s, err := checkpointstorage.Open(loc, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// incJob is one attempt's keyed subtasks on the Pebble backend.
type incJob struct {
	bs []*pebble.Backend
}

// newIncJob opens par subtasks, restored from checkpoint m of s when m is
// not nil.
func newIncJob(t *testing.T, par int, s *checkpointstorage.FS, m *checkpointstorage.Metadata) *incJob {
	t.Helper()
	return newIncJobWith(t, par, s, m, func(*pebble.Options) {})
}

// newIncJobWith is newIncJob with the subtasks' options changed by tweak.
func newIncJobWith(t *testing.T, par int, s *checkpointstorage.FS, m *checkpointstorage.Metadata, tweak func(*pebble.Options)) *incJob {
	t.Helper()
	j := &incJob{}
	local := t.TempDir()
	for i := range par {
		o := pebble.Options{LocalDir: local, Name: fmt.Sprintf("op-%d", i), WriteBufferSize: 256 << 10,
			KeyGroupRange: keygroup.RangeFor(incMaxPar, par, i), MaxParallelism: incMaxPar}
		if m != nil {
			o.RestoreFiles = task.RestoreFiles{Storage: s, ID: m.ID}
		}
		tweak(&o)
		b, err := pebble.New(o)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = b.Close() })
		if m != nil {
			if err := b.Restore(manifests(t, s, *m)); err != nil {
				t.Fatal(err)
			}
		}
		j.bs = append(j.bs, b)
	}
	return j
}

// manifests reads the keyed parts of every subtask of checkpoint m, in
// subtask order.
func manifests(t *testing.T, s *checkpointstorage.FS, m checkpointstorage.Metadata) [][]byte {
	t.Helper()
	var blobs [][]byte
	for i := range len(m.Tasks) {
		ts, err := task.DecodeTaskState(m.Tasks[fmt.Sprint("op/", i)])
		if err != nil {
			t.Fatal(err)
		}
		b, err := s.ReadState(ts.Operators["op"]["keyed"])
		if err != nil {
			t.Fatal(err)
		}
		blobs = append(blobs, b)
	}
	return blobs
}

// put sets n keys from `from` to a value of about 200 bytes naming round.
func (j *incJob) put(from, n, round int) {
	for k := from; k < from+n; k++ {
		kg := keygroup.ForKey(k, incMaxPar)
		b := j.bs[keygroup.OperatorIndex(kg, incMaxPar, len(j.bs))]
		b.SetCurrentKey(k, kg)
		state.Value(b, state.ValueDescriptor[string]{Name: "v"}).Update(fmt.Sprintf("%d:%0200d", round, k))
	}
}

// read returns every key's value.
func (j *incJob) read(keys int) map[int]string {
	out := map[int]string{}
	for k := range keys {
		kg := keygroup.ForKey(k, incMaxPar)
		b := j.bs[keygroup.OperatorIndex(kg, incMaxPar, len(j.bs))]
		b.SetCurrentKey(k, kg)
		if v, ok := state.Value(b, state.ValueDescriptor[string]{Name: "v"}).Value(); ok {
			out[k] = v
		}
	}
	return out
}

// recorder is task.SnapshotFiles that remembers what it uploaded.
type recorder struct {
	*task.SnapshotFiles
	mu  *sync.Mutex
	put *[]string
}

func (r recorder) Put(files []state.LocalFile) ([]state.FileHandle, error) {
	hs, err := r.SnapshotFiles.Put(files)
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, f := range files {
		if f.Shared && err == nil {
			*r.put = append(*r.put, hs[i].Path)
		}
	}
	return hs, err
}

// checkpoint takes checkpoint id of every subtask as the runtime does and,
// unless decline, completes it; it returns the shared files it names and
// those it uploaded.
func (j *incJob) checkpoint(t *testing.T, s *checkpointstorage.FS, id event.CheckpointID, decline bool) (names, uploaded []string) {
	t.Helper()
	m := checkpointstorage.Metadata{ID: id, JobID: "inc", Tasks: map[string][]byte{}}
	var mu sync.Mutex
	seen := map[string]bool{}
	for i, b := range j.bs {
		snap, err := b.Snapshot(0)
		if err != nil {
			t.Fatal(err)
		}
		prefix := fmt.Sprintf("op-%d-keyed", i)
		f := recorder{&task.SnapshotFiles{Storage: s, ID: id, Prefix: prefix}, &mu, &uploaded}
		manifest, needs, err := snap.(state.IncrementalSnapshot).WriteFiles(f)
		if err != nil {
			t.Fatal(err)
		}
		h, err := s.WriteState(id, prefix, manifest)
		if err != nil {
			t.Fatal(err)
		}
		ts := task.TaskState{Operators: map[string]map[string]checkpointstorage.Handle{"op": {"keyed": h}}}
		m.Handles = append(m.Handles, h)
		for _, n := range needs {
			ts.Files = append(ts.Files, checkpointstorage.Handle(n))
			if !seen[n.Path] {
				seen[n.Path] = true
				m.Handles = append(m.Handles, checkpointstorage.Handle(n))
			}
			if strings.HasPrefix(n.Path, "shared/") && !slices.Contains(names, n.Path) {
				names = append(names, n.Path)
			}
		}
		m.Tasks[fmt.Sprint("op/", i)], _ = json.Marshal(ts)
	}
	if !decline {
		if err := s.WriteMetadata(m); err != nil {
			t.Fatal(err)
		}
	}
	slices.Sort(names)
	slices.Sort(uploaded)
	return names, uploaded
}

// exists tells which of the shared files are in s.
func exists(t *testing.T, s *checkpointstorage.FS, files []string) (in, out []string) {
	t.Helper()
	for _, f := range files {
		err := s.FetchFile(checkpointstorage.Handle{Path: f}, filepath.Join(t.TempDir(), "f"), false)
		var ce *checkpointstorage.CorruptError
		switch {
		case errors.As(err, &ce) && strings.Contains(ce.Reason, "missing"):
			out = append(out, f)
		case err == nil || errors.As(err, &ce): // present (its size differs from the empty handle's)
			in = append(in, f)
		default:
			t.Fatal(err)
		}
	}
	return in, out
}

// TestIncrementalCheckpointsRetained: several incremental checkpoints of
// two subtasks, retained 1 and 3. Each uploads exactly the shared files
// the previous one did not name; after retention the storage holds every
// shared file a retained checkpoint names and none other; the newest
// checkpoint restores the state exactly.
func TestIncrementalCheckpointsRetained(t *testing.T) {
	for _, st := range incStorages {
		retains := []int{1, 3}
		if st.name == "s3" {
			retains = []int{2} // each S3 request is slow on a loaded machine
		}
		for _, retain := range retains {
			t.Run(fmt.Sprintf("%s/retain=%d", st.name, retain), func(t *testing.T) {
				s := st.open(t)
				j := newIncJob(t, 2, nil, nil)
				const keys = 2000
				byID := map[event.CheckpointID][]string{}
				var ever, prev []string
				reused := 0
				for id := event.CheckpointID(1); id <= 4; id++ {
					j.put(int(id-1)*keys/6, keys/3, int(id)) // overwrite some keys, add others
					names, up := j.checkpoint(t, s, id, false)
					if want := without(names, prev); !slices.Equal(up, want) {
						t.Fatalf("checkpoint %d uploaded %v; want exactly the files checkpoint %d did not name: %v", id, up, id-1, want)
					}
					reused += len(names) - len(up)
					byID[id], prev = names, names
					ever = union(ever, names)
					if _, err := s.Retain(retain, 0); err != nil {
						t.Fatal(err)
					}
					var want []string
					for k := max(1, id-event.CheckpointID(retain)+1); k <= id; k++ {
						want = union(want, byID[k])
					}
					in, _ := exists(t, s, ever)
					if !slices.Equal(in, want) {
						t.Fatalf("after checkpoint %d and Retain(%d), the storage holds shared files %v; want %v", id, retain, in, want)
					}
				}
				if reused == 0 {
					t.Fatal("no checkpoint named a file an earlier one uploaded")
				}
				m, _, err := s.Latest()
				if err != nil {
					t.Fatal(err)
				}
				want := j.read(keys)
				if got := newIncJob(t, 2, s, &m).read(keys); !maps.Equal(got, want) {
					t.Fatalf("restored checkpoint %d differs: %d keys, want %d", m.ID, len(got), len(want))
				}
			})
		}
	}
}

// TestIncrementalRescaleAndGC: a checkpoint of 2 subtasks restores at 3
// and at 1 exactly; the restored job's next checkpoint names the restored
// shared files it still holds instead of uploading them (Pebble compacts
// the restored L0 files right after opening, so here it usually holds
// none: state/pebble's tests check the reuse with compactions off); a declined
// checkpoint's uploads are orphans that GC collects, keeping every file of
// the valid checkpoints, which still restore.
func TestIncrementalRescaleAndGC(t *testing.T) {
	for _, st := range incStorages {
		t.Run(st.name, func(t *testing.T) {
			s := st.open(t)
			const keys = 3000
			j := newIncJob(t, 2, nil, nil)
			j.put(0, keys, 1)
			names1, _ := j.checkpoint(t, s, 1, false)
			want := j.read(keys)
			m1, err := s.ReadMetadata(1)
			if err != nil {
				t.Fatal(err)
			}
			for _, par := range []int{3, 1} {
				if got := newIncJob(t, par, s, &m1).read(keys); !maps.Equal(got, want) {
					t.Fatalf("restored at parallelism %d: %d keys differ from the %d written", par, diff(got, want), len(want))
				}
			}
			r := newIncJob(t, 3, s, &m1)
			r.put(0, 10, 2)
			names2, up2 := r.checkpoint(t, s, 2, false)
			if kept := without(names2, up2); len(without(kept, names1)) != 0 {
				t.Fatalf("after the rescale, checkpoint 2 names %v and uploaded %v; what it did not upload must be checkpoint 1's %v", names2, up2, names1)
			}
			want2 := r.read(keys)
			r.put(10, 100, 3)
			names3, up3 := r.checkpoint(t, s, 3, true) // declined: no metadata
			if len(up3) == 0 {
				t.Fatal("declined checkpoint uploaded nothing")
			}
			if _, err := s.GC(); err != nil {
				t.Fatal(err)
			}
			in, out := exists(t, s, union(union(names1, names2), names3))
			if wantIn := union(names1, names2); !slices.Equal(in, wantIn) || !slices.Equal(out, up3) {
				t.Fatalf("after GC the storage holds %v and lacks %v; want %v and the declined checkpoint's uploads %v", in, out, wantIn, up3)
			}
			for id, want := range map[event.CheckpointID]map[int]string{1: want, 2: want2} {
				m, err := s.ReadMetadata(id)
				if err != nil {
					t.Fatal(err)
				}
				if got := newIncJob(t, 2, s, &m).read(keys); !maps.Equal(got, want) {
					t.Fatalf("checkpoint %d after GC restored %d keys that differ", id, diff(got, want))
				}
			}
		})
	}
}

// TestIncrementalMissingSharedFile: a checkpoint whose shared SST is gone
// is skipped by Latest, naming the checkpoint and the file; restoring it
// anyway fails, naming both.
// (On a directory: the storage's own tests cover a missing file on S3.)
func TestIncrementalMissingSharedFile(t *testing.T) {
	for _, st := range incStorages[:1] {
		t.Run(st.name, func(t *testing.T) {
			s := st.open(t)
			j := newIncJob(t, 1, nil, nil)
			j.put(0, 500, 1)
			j.checkpoint(t, s, 1, false)
			j.put(500, 500, 2)
			names, up := j.checkpoint(t, s, 2, false)
			gone := up[0]
			if err := os.Remove(s.Where(gone)); err != nil {
				t.Fatal(err)
			}
			m, skipped, err := s.Latest()
			if err != nil || m.ID != 1 || len(skipped) != 1 {
				t.Fatalf("Latest: %v, skipped %v, %v; want checkpoint 1 and checkpoint 2 skipped", m.ID, skipped, err)
			}
			if msg := skipped[0].Error(); !strings.Contains(msg, "checkpoint 2") || !strings.Contains(msg, gone) {
				t.Fatalf("skipped: %q; want it to name checkpoint 2 and %s", msg, gone)
			}
			m2, err := s.ReadMetadata(2)
			if err != nil {
				t.Fatal(err)
			}
			b, err := pebble.New(pebble.Options{LocalDir: t.TempDir(), KeyGroupRange: keygroup.Range{Start: 0, End: incMaxPar - 1},
				MaxParallelism: incMaxPar, RestoreFiles: task.RestoreFiles{Storage: s, ID: 2}})
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			err = b.Restore(manifests(t, s, m2))
			if err == nil || !strings.Contains(err.Error(), "checkpoint 2") || !strings.Contains(err.Error(), gone) ||
				!errors.Is(err, checkpointstorage.ErrCorrupt) {
				t.Fatalf("restoring checkpoint 2 without %s (of %v): got %v; want a corrupt-file error naming both", gone, names, err)
			}
		})
	}
}

func without(a, b []string) []string {
	return slices.DeleteFunc(slices.Clone(a), func(x string) bool { return slices.Contains(b, x) })
}

func union(a, b []string) []string {
	out := slices.Clone(a)
	for _, x := range b {
		if !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	slices.Sort(out)
	return out
}

func diff(a, b map[int]string) int {
	n := 0
	for k, v := range a {
		if b[k] != v {
			n++
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			n++
		}
	}
	return n
}
