// Command incremental measures the bytes one checkpoint of a Pebble keyed
// backend uploads, full (the canonical blob, execution.checkpointing.
// incremental=false) against incremental (the SSTs checkpoint storage does
// not hold yet, and the small files), on a state of -keys × -value bytes
// of incompressible values, after each round that updates -update of the
// keys. It reports; it asserts nothing.
//
//	go run ./bench/incremental -keys 1500000 -value 160 -rounds 4 -update 0.01 [-dir s3://bucket/prefix]
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
	flag.Parse()
	if err := run(*keys, *value, *rounds, *update, *dir); err != nil {
		log.Fatal(err)
	}
}

const maxPar = 128

func run(keys, value, rounds int, update float64, dir string) error {
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
	b, err := pebble.New(pebble.Options{LocalDir: local, MaxParallelism: maxPar, KeyGroupRange: keygroup.Range{Start: 0, End: maxPar - 1}})
	if err != nil {
		return err
	}
	defer b.Close()
	v := state.Value(b, state.ValueDescriptor[[]byte]{Name: "v"})
	put := func(from, n int) {
		buf := make([]byte, value)
		for k := from; k < from+n; k++ {
			_, _ = rand.Read(buf)
			b.SetCurrentKey(int64(k%keys), keygroup.ForKey(int64(k%keys), maxPar))
			v.Update(append([]byte(nil), buf...))
		}
	}
	t0 := time.Now()
	put(0, keys)
	fmt.Printf("state: %d keys × %d B random values written in %s; checkpoints to %s\n", keys, value, time.Since(t0).Round(time.Millisecond), dir)
	fmt.Printf("%-10s %14s %14s %8s %14s %10s\n", "checkpoint", "full B", "incremental B", "ratio", "files uploaded", "inc time")
	next := 0
	for id := event.CheckpointID(1); id <= event.CheckpointID(rounds+1); id++ {
		if id > 1 {
			n := int(float64(keys) * update)
			put(next, n)
			next += n
		}
		full, err := fullBytes(b)
		if err != nil {
			return err
		}
		t1 := time.Now()
		inc, files, err := incremental(b, fs, id)
		if err != nil {
			return err
		}
		fmt.Printf("%-10d %14d %14d %7.1f%% %14d %10s\n", id, full, inc, 100*float64(inc)/float64(full), files, time.Since(t1).Round(time.Millisecond))
		if _, err := fs.Retain(1, 0); err != nil {
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

// incremental writes checkpoint id incrementally and completes it; it
// returns the bytes and files uploaded.
func incremental(b *pebble.Backend, fs *checkpointstorage.FS, id event.CheckpointID) (int64, int, error) {
	s, err := b.Snapshot(0)
	if err != nil {
		return 0, 0, err
	}
	files := &counting{SnapshotFiles: &task.SnapshotFiles{Storage: fs, ID: id, Prefix: "op-0-keyed"}}
	manifest, needs, err := s.(state.IncrementalSnapshot).WriteFiles(files)
	if err != nil {
		return 0, 0, err
	}
	h, err := fs.WriteState(id, "op-0-keyed", manifest)
	if err != nil {
		return 0, 0, err
	}
	m := checkpointstorage.Metadata{ID: id, JobID: "bench", Tasks: map[string][]byte{}, Handles: []checkpointstorage.Handle{h}}
	for _, n := range needs {
		m.Handles = append(m.Handles, checkpointstorage.Handle(n))
	}
	if err := fs.WriteMetadata(m); err != nil {
		return 0, 0, err
	}
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
