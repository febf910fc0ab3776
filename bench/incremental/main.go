// Command incremental measures the bytes one checkpoint of a Pebble keyed
// backend uploads, full (the canonical blob, execution.checkpointing.
// incremental=false) against incremental (the SSTs checkpoint storage does
// not hold yet, and the small files), on a state of -keys × -value bytes
// of incompressible values, after each round that updates -update of the
// keys (of the first -hot-groups key groups only, when set). With -restore it then restores a new backend from the last
// checkpoint (same key groups, same storage, as a job restarted at the
// same parallelism) and repeats the rounds on it, so the first checkpoint
// after a restore can be compared with the others. It reports; it asserts
// nothing.
//
//	go run ./bench/incremental -keys 1500000 -value 160 -rounds 4 -update 0.01 [-hot-groups 8] [-restore] [-dir s3://bucket/prefix]
package main

import (
	"crypto/rand"
	"flag"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/weirstream/weir/checkpointstorage"
	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/keygroup"
	"github.com/weirstream/weir/state"
	"github.com/weirstream/weir/state/pebble"
	"github.com/weirstream/weir/task"
)

func main() {
	keys := flag.Int("keys", 1_500_000, "keys in the state")
	value := flag.Int("value", 160, "bytes per value (random)")
	rounds := flag.Int("rounds", 4, "checkpoints after the first")
	update := flag.Float64("update", 0.01, "share of the keys updated between checkpoints")
	dir := flag.String("dir", "", "checkpoint storage (a path or s3://…); default a temp dir")
	restore := flag.Bool("restore", false, "then restore from the last checkpoint and repeat the rounds")
	hot := flag.Int("hot-groups", 0, "update only keys of the first this many key groups (0: of all)")
	flag.Parse()
	if err := run(*keys, *value, *rounds, *update, *dir, *restore, *hot); err != nil {
		log.Fatal(err)
	}
}

const maxPar = 128

// bench is one run: the storage, the state's parameters, and the
// checkpoint ids and keys used so far.
type bench struct {
	fs           *checkpointstorage.FS
	local        string
	keys, value  int
	update       float64
	hot          int // updates go to the first hot key groups; 0: all
	next         int // first key of the next update
	id           event.CheckpointID
	lastManifest []byte
}

func run(keys, value, rounds int, update float64, dir string, restore bool, hot int) error {
	local, err := os.MkdirTemp("", "bench-incremental-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(local)
	if dir == "" {
		dir = local + "/checkpoints"
	}
	fs, err := checkpointstorage.Open(dir, checkpointstorage.Options{})
	if err != nil {
		return err
	}
	defer fs.Close()
	bn := &bench{fs: fs, local: local, keys: keys, value: value, update: update, hot: hot}
	b, err := bn.backend(nil)
	if err != nil {
		return err
	}
	t0 := time.Now()
	bn.hot = 0 // the whole state first
	bn.put(b, 0, keys)
	bn.hot = hot
	fmt.Printf("state: %d keys × %d B random values written in %s; checkpoints to %s\n", keys, value, time.Since(t0).Round(time.Millisecond), dir)
	fmt.Printf("%-10s %14s %14s %8s %14s %10s\n", "checkpoint", "full B", "incremental B", "ratio", "files uploaded", "inc time")
	err = bn.rounds(b, rounds+1, false)
	_ = b.Close()
	if err != nil || !restore {
		return err
	}
	t1 := time.Now()
	r, err := bn.backend(task.RestoreFiles{Storage: fs, ID: bn.id})
	if err == nil {
		err = r.Restore([][]byte{bn.lastManifest})
	}
	if err != nil {
		return err
	}
	defer r.Close()
	fmt.Printf("restored checkpoint %d into a new backend in %s\n", bn.id, time.Since(t1).Round(time.Millisecond))
	return bn.rounds(r, rounds+1, true)
}

// backend opens a backend over all key groups, restoring from files when
// not nil.
func (bn *bench) backend(files state.RestoreFiles) (*pebble.Backend, error) {
	return pebble.New(pebble.Options{LocalDir: bn.local, MaxParallelism: maxPar,
		KeyGroupRange: keygroup.Range{Start: 0, End: maxPar - 1}, RestoreFiles: files})
}

// put writes n random values under keys from.., modulo the key count,
// skipping keys outside the hot key groups; it returns the key after the
// last written.
func (bn *bench) put(b *pebble.Backend, from, n int) int {
	v := state.Value(b, state.ValueDescriptor[[]byte]{Name: "v"})
	buf := make([]byte, bn.value)
	k := from
	for written := 0; written < n; k++ {
		key := int64(k % bn.keys)
		kg := keygroup.ForKey(key, maxPar)
		if bn.hot > 0 && kg >= bn.hot {
			continue
		}
		_, _ = rand.Read(buf)
		b.SetCurrentKey(key, kg)
		v.Update(append([]byte(nil), buf...))
		written++
	}
	return k
}

// rounds takes n checkpoints of b, updating a share of the keys before
// each but the first unless updateFirst.
func (bn *bench) rounds(b *pebble.Backend, n int, updateFirst bool) error {
	for i := range n {
		if i > 0 || updateFirst {
			u := int(float64(bn.keys) * bn.update)
			bn.next = bn.put(b, bn.next, u)
		}
		full, err := fullBytes(b)
		if err != nil {
			return err
		}
		bn.id++
		t1 := time.Now()
		inc, files, err := bn.incremental(b)
		if err != nil {
			return err
		}
		fmt.Printf("%-10d %14d %14d %7.1f%% %14d %10s\n", bn.id, full, inc, 100*float64(inc)/float64(full), files, time.Since(t1).Round(time.Millisecond))
		if _, err := bn.fs.Retain(1, 0); err != nil {
			return err
		}
	}
	return nil
}

// fullBytes is the size of the canonical blob a full checkpoint uploads.
func fullBytes(b *pebble.Backend) (int64, error) {
	s, err := b.Snapshot(0)
	if err != nil {
		return 0, err
	}
	blob, err := s.Write()
	return int64(len(blob)), err
}

// incremental writes checkpoint bn.id incrementally and completes it; it
// returns the bytes and files uploaded.
func (bn *bench) incremental(b *pebble.Backend) (int64, int, error) {
	s, err := b.Snapshot(0)
	if err != nil {
		return 0, 0, err
	}
	files := &counting{SnapshotFiles: &task.SnapshotFiles{Storage: bn.fs, ID: bn.id, Prefix: "op-0-keyed"}}
	manifest, needs, err := s.(state.IncrementalSnapshot).WriteFiles(files)
	if err != nil {
		return 0, 0, err
	}
	h, err := bn.fs.WriteState(bn.id, "op-0-keyed", manifest)
	if err != nil {
		return 0, 0, err
	}
	m := checkpointstorage.Metadata{ID: bn.id, JobID: "bench", Tasks: map[string][]byte{}, Handles: []checkpointstorage.Handle{h}}
	for _, n := range needs {
		m.Handles = append(m.Handles, checkpointstorage.Handle(n))
	}
	if err := bn.fs.WriteMetadata(m); err != nil {
		return 0, 0, err
	}
	bn.lastManifest = manifest
	return files.Written() + int64(len(manifest)), files.n, nil
}

type counting struct {
	*task.SnapshotFiles
	n int
}

func (c *counting) Put(files []state.LocalFile) ([]state.FileHandle, error) {
	c.n += len(files)
	return c.SnapshotFiles.Put(files)
}
