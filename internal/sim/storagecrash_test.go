package sim

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"gocloud.dev/blob"

	"github.com/weirstream/weir/checkpointstorage"
	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/internal/testsvc"
	"github.com/weirstream/weir/runtime"
	"github.com/weirstream/weir/state/pebble"
	"github.com/weirstream/weir/task"
)

// The exactly-once soak on the Pebble backend with incremental
// checkpoints, where the process also dies inside checkpoint storage: while
// a checkpoint's files upload (some stored, not all), after they are all
// stored but before its _metadata commits it, and in the middle of a
// garbage collection or retention deleting an old checkpoint's files. The
// dead process writes and deletes nothing more (checkpointstorage.Options.
// Faults refuses every later operation), its runtime.Run is cancelled, and a
// new Run restores "latest". After every crash and at the end, every
// retained checkpoint (a chk-N with a _metadata) has every file its
// metadata names, of the right size and checksum, and none was moved
// aside as corrupt; the sink commits every element exactly once.
//
// WEIR_STORAGE_SOAK_SEEDS=n runs n seeds per storage instead of 5 on a
// directory (seed 5 is the one that catches Retain deleting a retired
// checkpoint's shared files before its _metadata) and 1 on S3 (a run on
// the S3 test server takes about 10 s): a longer soak, see
// internal/sim/README.md.
func TestSoakStorageCrashesPebble(t *testing.T) {
	var seeds int64
	if s := os.Getenv("WEIR_STORAGE_SOAK_SEEDS"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 1 {
			t.Fatalf("WEIR_STORAGE_SOAK_SEEDS=%q: want a positive number of seeds", s)
		}
		seeds = n
	}
	kinds := []struct {
		name  string
		seeds int64 // each seed crashes at every point once, in its own order
		loc   func(t *testing.T) (string, checkpointstorage.Options)
	}{
		{"file", 5, func(t *testing.T) (string, checkpointstorage.Options) {
			return filepath.Join(t.TempDir(), "chk"), checkpointstorage.Options{}
		}},
		{"s3", 1, func(t *testing.T) (string, checkpointstorage.Options) {
			srv := testsvc.S3(t)
			return fmt.Sprintf("s3://%s/sim/storagecrash-%d", srv.Bucket, time.Now().UnixNano()),
				checkpointstorage.Options{S3: checkpointstorage.S3Options{Endpoint: srv.Endpoint, Region: srv.Region,
					AccessKey: srv.AccessKey, SecretKey: srv.SecretKey}}
		}},
	}
	for _, kind := range kinds {
		t.Run(kind.name, func(t *testing.T) {
			fired := map[string]int{}
			for seed := int64(1); seed <= cmp.Or(seeds, kind.seeds); seed++ {
				t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
					loc, opts := kind.loc(t)
					for _, c := range storageSoak(t, seed, loc, opts) {
						fired[c.point]++
					}
					if strings.HasPrefix(loc, "s3://") {
						cleanS3(t, loc, opts)
					}
				})
			}
			for _, p := range storageCrashPoints {
				if fired[p] == 0 && !t.Failed() {
					t.Errorf("no seed crashed the process at %q (crashes: %v)", p, fired)
				}
			}
		})
	}
}

// storageCrashPoints are the places where storageCrash kills the process.
var storageCrashPoints = []string{"upload", "metadata", "delete"}

// errDead is every storage operation's error once the process crashed.
var errDead = errors.New("sim: the process crashed in checkpoint storage")

// storageCrash kills a process at one point of its checkpoint storage, as
// checkpointstorage.Options.Faults: once `after` checkpoints of the run
// have committed their _metadata, it lets `skip` operations of its point
// through (uploads since the last _metadata; deletes), then refuses the
// next, cancels the run and refuses every later operation.
type storageCrash struct {
	point       string
	after, skip int
	// prefix, if set, limits the operations counted to keys under it
	// (shared/: a delete crash among the shared files Retain and GC drop).
	prefix string

	mu      sync.Mutex
	cancel  context.CancelFunc
	commits int // _metadata written
	seen    int // operations of point counted towards skip
	at      string
}

func (c *storageCrash) String() string {
	return fmt.Sprintf("%s after %d checkpoints and %d operations on %q", c.point, c.after, c.skip, c.prefix+"*")
}

func (c *storageCrash) hook(op, key string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.at != "" {
		return errDead
	}
	armed := c.commits >= c.after
	switch {
	case op == "metadata" && armed && c.point == "metadata":
		return c.crash(op, key)
	case op == "metadata":
		c.commits++
		if c.point == "upload" {
			c.seen = 0 // count the uploads of the next checkpoint
		}
	case op == c.point && armed && strings.HasPrefix(key, c.prefix):
		if c.seen++; c.seen > c.skip {
			return c.crash(op, key)
		}
	}
	return nil
}

func (c *storageCrash) crash(op, key string) error {
	c.at = op + " " + key
	c.cancel()
	return errDead
}

// fired returns where the crash came, or "".
func (c *storageCrash) fired() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.at
}

// storageSoak runs the soak job at loc through a seeded sequence of storage
// crashes, one per run, then a last run to the end of input, and checks it.
// It returns the crashes that fired.
func storageSoak(t *testing.T, seed int64, loc string, sopts checkpointstorage.Options) []*storageCrash {
	t.Helper()
	rnd := rand.New(rand.NewSource(seed))
	var plan []*storageCrash
	for i := range 3 {
		c := &storageCrash{point: storageCrashPoints[(int(seed)+i)%len(storageCrashPoints)], skip: 1 + rnd.Intn(4)}
		// A first run must complete a checkpoint to restore; a later one
		// may die in the GC of its start, before any checkpoint of its own.
		if c.after = 1 + rnd.Intn(3); i > 0 && c.point == "delete" {
			c.after = rnd.Intn(3)
		}
		if c.point == "delete" && seed%2 == 1 {
			c.prefix, c.skip = "shared/", 1+rnd.Intn(2)
		}
		plan = append(plan, c)
	}
	const keys, perKey = 6, 400
	rates := map[string]float64{"process": 0.002, "snapshot": 0.03, "restore": 0.03, "notify": 0.03, "commit": 0.03}
	f := NewFaults(seed, 2, rates)
	v, store := &Violations{}, NewStore()
	sink := &TxSink{Store: store, Faults: f}
	backend := pebble.Options{LocalDir: t.TempDir(), DisableChangelog: seed%2 == 1} // SSTs, or WAL chunks
	retained := 1 + int(seed%2)
	var fired []*storageCrash
	for run := 0; ; run++ {
		var c *storageCrash
		if run < len(plan) {
			c = plan[run]
		}
		// While a crash is due the source never ends, so that the crash
		// comes whatever the machine's speed; the last run ends.
		src := &SeqSource{Keys: keys, PerKey: perKey, Splits: 3, Burst: 5, Pause: time.Millisecond, Faults: f, Unbounded: c != nil}
		jg, err := buildSoakGraph(src, f, v, sink).JobGraph()
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		opts := runtime.Options{Mode: task.ExactlyOnce, CheckpointDir: loc, CheckpointStorage: sopts, ChannelCredits: 1,
			BatchSize: 3, Restart: runtime.FixedDelay{Attempts: 10}, StateBackend: pebble.Factory{Options: backend},
			Retained: retained, Logger: quietLogger()}
		opts.Checkpoint.Interval = 10 * time.Millisecond
		opts.Checkpoint.TolerableFailures = -1
		if run > 0 {
			opts.Restore = runtime.RestoreLatest
		}
		if c != nil {
			c.cancel = cancel
			opts.CheckpointStorage.Faults = c.hook
		}
		_, err = runtime.Run(ctx, jg, opts)
		timedOut := ctx.Err() != nil && (c == nil || c.fired() == "")
		cancel()
		if c == nil || c.fired() == "" {
			if err != nil || timedOut {
				t.Fatalf("seed %d run %d (crash planned: %v) failed: %v (faults fired: %v)", seed, run, c, err, f.Fired)
			}
			break
		}
		t.Logf("seed %d run %d: crashed at %s (%v)", seed, run, c.fired(), c)
		fired = append(fired, c)
		checkRetained(t, fmt.Sprintf("seed %d, after the crash at %s", seed, c.fired()), loc, sopts)
	}
	checkRetained(t, fmt.Sprintf("seed %d, at the end", seed), loc, sopts)
	checkOutput(t, seed, store.Committed(), keys, perKey, true)
	if g, rep := v.Gaps.Load(), v.Repeats.Load(); g != 0 || rep != 0 {
		t.Errorf("seed %d: sequence checker saw %d gaps and %d repeats", seed, g, rep)
	}
	if l := store.Lingering(); len(l) != 0 {
		t.Errorf("seed %d: lingering transactions: %v", seed, l)
	}
	if len(fired) != len(plan) {
		t.Errorf("seed %d: %d of the %d planned storage crashes fired", seed, len(fired), len(plan))
	}
	return fired
}

var metadataKey = regexp.MustCompile(`^chk-([0-9]+)/_metadata$`)

// checkRetained lists the storage at loc object by object and checks that
// every chk-N with a _metadata holds every file its metadata names (size
// and checksum: VerifyFiles), that one at least does, and that nothing was
// moved aside as corrupt.
func checkRetained(t *testing.T, when, loc string, opts checkpointstorage.Options) {
	t.Helper()
	opts.Faults = nil
	s, err := checkpointstorage.Open(loc, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	b, release, err := s.ObjectBucket()
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	var ids []event.CheckpointID
	aside := map[string]bool{}
	it := b.List(&blob.ListOptions{})
	for {
		obj, err := it.Next(context.Background())
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("%s: listing %s: %v", when, loc, err)
		}
		if m := metadataKey.FindStringSubmatch(obj.Key); m != nil {
			n, _ := strconv.ParseInt(m[1], 10, 64)
			ids = append(ids, event.CheckpointID(n))
		}
		if dir, _, _ := strings.Cut(obj.Key, "/"); strings.HasSuffix(dir, ".corrupt") && !aside[dir] {
			aside[dir] = true
			t.Errorf("%s: %s was moved aside as corrupt", when, s.Where(dir))
		}
	}
	if len(ids) == 0 {
		t.Errorf("%s: no checkpoint with a _metadata in %s", when, loc)
	}
	for _, id := range ids {
		m, err := s.ReadMetadata(id)
		if err != nil {
			t.Errorf("%s: retained checkpoint %d: %v", when, id, err)
			continue
		}
		if err := s.VerifyFiles(m.Handles); err != nil {
			t.Errorf("%s: retained checkpoint %d misses a file: %v", when, id, err)
		}
	}
}
