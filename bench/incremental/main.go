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
	"path/filepath"
	"sync/atomic"
	"syscall"
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
	mode := flag.String("mode", "local", "local, remote (experimental disaggregated state, L5–L6 remote) or remote-all (every SST remote)")
	full := flag.Bool("full", true, "also measure the full (canonical) checkpoint's size each round (reads the whole state)")
	s3 := flag.Bool("s3", false, "checkpoint to the S3 test server (WEIR_S3_* of scripts/services.sh env)")
	flag.Parse()
	opts, err := storageOptions(dir, *s3)
	if err != nil {
		log.Fatal(err)
	}
	cfg := config{keys: *keys, value: *value, rounds: *rounds, update: *update, dir: *dir, restore: *restore, hot: *hot,
		mode: *mode, full: *full, storage: opts}
	if err := run(cfg); err != nil {
		log.Fatal(err)
	}
}

// config is the run's flags.
type config struct {
	keys, value, rounds, hot int
	update                   float64
	dir, mode                string
	restore, full            bool
	storage                  checkpointstorage.Options
}

// storageOptions points dir at the S3 test server for -s3.
func storageOptions(dir *string, s3 bool) (checkpointstorage.Options, error) {
	if !s3 {
		return checkpointstorage.Options{}, nil
	}
	get := func(k string) string { return os.Getenv("WEIR_S3_" + k) }
	if get("ENDPOINT") == "" {
		return checkpointstorage.Options{}, fmt.Errorf("-s3: WEIR_S3_ENDPOINT is not set; run eval \"$(bash scripts/services.sh env)\" first")
	}
	*dir = fmt.Sprintf("s3://%s/bench-incremental/%d", get("BUCKET"), time.Now().UnixNano())
	return checkpointstorage.Options{S3: checkpointstorage.S3Options{Endpoint: get("ENDPOINT"), Region: get("REGION"),
		AccessKey: get("ACCESS_KEY"), SecretKey: get("SECRET_KEY")}}, nil
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
	full         bool
	remote       *pebble.RemoteOptions // nil in local mode
	remoteSeen   int64                 // remote bytes written before the last checkpoint
}

func run(c config) error {
	local, err := os.MkdirTemp("", "bench-incremental-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(local)
	if c.dir == "" {
		c.dir = local + "/checkpoints"
	}
	fs, err := checkpointstorage.Open(c.dir, c.storage)
	if err != nil {
		return err
	}
	defer fs.Close()
	bn := &bench{fs: fs, local: local, keys: c.keys, value: c.value, update: c.update, hot: c.hot, full: c.full}
	if bn.remote, err = remoteOptions(fs, c.mode); err != nil {
		return err
	}
	b, err := bn.backend(nil)
	if err != nil {
		return err
	}
	t0 := time.Now()
	bn.hot = 0 // the whole state first
	bn.put(b, 0, c.keys)
	bn.hot = c.hot
	fmt.Printf("state: %d keys × %d B random values written in %s; checkpoints to %s, mode %s\n", c.keys, c.value, time.Since(t0).Round(time.Millisecond), fs.Dir(), c.mode)
	fmt.Printf("%-10s %14s %14s %8s %14s %10s %10s %14s\n", "checkpoint", "full B", "incremental B", "ratio", "files uploaded", "sync", "inc time", "remote B")
	err = bn.rounds(b, c.rounds+1, false)
	_ = b.Close()
	if err != nil || !c.restore {
		return err
	}
	return bn.restoreAndRepeat(c.rounds)
}

// restoreAndRepeat restores the last checkpoint into a new backend,
// reports the time to the restore and to the first read and the local
// bytes, then repeats the rounds.
func (bn *bench) restoreAndRepeat(rounds int) error {
	t1 := time.Now()
	r, err := bn.backend(task.RestoreFiles{Storage: bn.fs, ID: bn.id})
	if err == nil {
		err = r.Restore([][]byte{bn.lastManifest})
	}
	if err != nil {
		return err
	}
	defer r.Close()
	restored := time.Since(t1)
	key := int64(bn.keys / 2)
	r.SetCurrentKey(key, keygroup.ForKey(key, maxPar))
	if _, ok := state.Value(r, state.ValueDescriptor[[]byte]{Name: "v"}).Value(); !ok {
		return fmt.Errorf("restored state lacks key %d", key)
	}
	first := time.Since(t1)
	t2 := time.Now()
	v := state.Value(r, state.ValueDescriptor[[]byte]{Name: "v"})
	for i := range 10_000 {
		k := int64(i * 7919 % bn.keys)
		r.SetCurrentKey(k, keygroup.ForKey(k, maxPar))
		v.Value()
	}
	fmt.Printf("restored checkpoint %d into a new backend in %s, first read at %s, 10000 reads of spread keys then %s; %d B on local disk\n",
		bn.id, restored.Round(time.Millisecond), first.Round(time.Millisecond), time.Since(t2).Round(time.Millisecond), du(r.Dir()))
	return bn.rounds(r, rounds+1, true)
}

// remoteOptions is the experimental disaggregated state of mode, in fs.
func remoteOptions(fs *checkpointstorage.FS, mode string) (*pebble.RemoteOptions, error) {
	switch mode {
	case "local":
		return nil, nil
	case "remote", "remote-all":
		b, _, err := fs.ObjectBucket() // released with the process
		if err != nil {
			return nil, err
		}
		return &pebble.RemoteOptions{Bucket: b, Location: fs.Dir(), AllLevels: mode == "remote-all", CacheSize: 64 << 20}, nil
	}
	return nil, fmt.Errorf("-mode %q: want local, remote or remote-all", mode)
}

// du is the bytes the files under dir take on disk (a cache file is
// sparse until filled).
func du(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if fi, err := d.Info(); err == nil {
				if st, ok := fi.Sys().(*syscall.Stat_t); ok {
					n += st.Blocks * 512
				}
			}
		}
		return nil
	})
	return n
}

// backend opens a backend over all key groups, restoring from files when
// not nil.
func (bn *bench) backend(files state.RestoreFiles) (*pebble.Backend, error) {
	return pebble.New(pebble.Options{LocalDir: bn.local, MaxParallelism: maxPar,
		KeyGroupRange: keygroup.Range{Start: 0, End: maxPar - 1}, RestoreFiles: files, ExperimentalRemote: bn.remote})
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
		var full int64 = -1
		if bn.full {
			var err error
			if full, err = fullBytes(b); err != nil {
				return err
			}
		}
		var remote int64
		if bn.remote != nil {
			w := bn.remote.ObjectBytesWritten()
			remote, bn.remoteSeen = w-bn.remoteSeen, w
		}
		bn.id++
		t1 := time.Now()
		inc, files, sync, err := bn.incremental(b)
		if err != nil {
			return err
		}
		fullCol, ratio := "-", "-"
		if full >= 0 {
			fullCol, ratio = fmt.Sprint(full), fmt.Sprintf("%.1f%%", 100*float64(inc)/float64(full))
		}
		fmt.Printf("%-10d %14s %14d %8s %14d %10s %10s %14d\n", bn.id, fullCol, inc, ratio, files,
			sync.Round(time.Millisecond), time.Since(t1).Round(time.Millisecond), remote)
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
// returns the bytes and files uploaded, and the synchronous part's time.
func (bn *bench) incremental(b *pebble.Backend) (int64, int, time.Duration, error) {
	t0 := time.Now()
	s, err := b.Snapshot(0)
	if err != nil {
		return 0, 0, 0, err
	}
	sync := time.Since(t0)
	files := &counting{SnapshotFiles: &task.SnapshotFiles{Storage: bn.fs, ID: bn.id, Prefix: "op-0-keyed"}}
	manifest, needs, err := s.(state.IncrementalSnapshot).WriteFiles(files)
	if err != nil {
		return 0, 0, 0, err
	}
	h, err := bn.fs.WriteState(bn.id, "op-0-keyed", manifest)
	if err != nil {
		return 0, 0, 0, err
	}
	m := checkpointstorage.Metadata{ID: bn.id, JobID: "bench", Tasks: map[string][]byte{}, Handles: []checkpointstorage.Handle{h}}
	for _, n := range needs {
		m.Handles = append(m.Handles, checkpointstorage.Handle(n))
	}
	if err := bn.fs.WriteMetadata(m); err != nil {
		return 0, 0, 0, err
	}
	bn.lastManifest = manifest
	return files.Written() + int64(len(manifest)), int(files.n.Load()), sync, nil
}

// counting counts the files put; the backend calls Put from several
// goroutines at once.
type counting struct {
	*task.SnapshotFiles
	n atomic.Int64
}

func (c *counting) Put(files []state.LocalFile) ([]state.FileHandle, error) {
	c.n.Add(int64(len(files)))
	return c.SnapshotFiles.Put(files)
}
