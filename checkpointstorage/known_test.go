package checkpointstorage

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/weirstream/weir/event"
)

// statCounting records the files a storage stats (on S3, one HEAD each).
type statCounting struct {
	objects
	mu    sync.Mutex
	stats []string
}

func (c *statCounting) size(ctx context.Context, key string) (int64, error) {
	c.mu.Lock()
	c.stats = append(c.stats, key)
	c.mu.Unlock()
	return c.objects.size(ctx, key)
}

// take returns the stats since the last call, sorted.
func (c *statCounting) take() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.stats
	c.stats = nil
	slices.Sort(out)
	return out
}

func countStats(s *FS) *statCounting {
	c := &statCounting{objects: s.obj}
	s.obj = c
	return c
}

// incrementalCommit completes checkpoint id on s as an incremental
// checkpoint does: its own MANIFEST and one new SST uploaded, the SSTs of
// the previous checkpoint named again but its oldest (compacted away).
func incrementalCommit(t *testing.T, s *FS, id event.CheckpointID, prev []Handle) []Handle {
	t.Helper()
	var reused []Handle
	for _, h := range prev {
		if h.Path != fmt.Sprintf("shared/g/%d.sst", id-3) && h.Path != fmt.Sprintf("chk-%d/MANIFEST", id-1) {
			reused = append(reused, h)
		}
	}
	return commit(t, s, id, localFiles(t, fmt.Sprintf("g/%d.sst", id), fmt.Sprintf("sst %d", id), "MANIFEST", fmt.Sprintf("m%d", id)), reused...)
}

// TestRetainStatsOnlyUnknownFiles: Retain after each checkpoint stats no
// file the storage handle wrote or found before — none at all when it
// wrote them — where it statted every file of every retained checkpoint;
// a new handle (a restarted job) stats each retained file once, then only
// the files a new checkpoint adds. Nothing a retained checkpoint needs is
// deleted, and an orphan of a checkpoint that never completed is still
// collected by GC.
func TestRetainStatsOnlyUnknownFiles(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		loc, opts := b.loc(t)
		s := mustOpen(t, loc, opts)
		stats := countStats(s)
		var hs []Handle
		for id := event.CheckpointID(1); id <= 6; id++ {
			hs = incrementalCommit(t, s, id, hs)
			if _, err := s.Retain(4, 0); err != nil {
				t.Fatal(err)
			}
			if got := stats.take(); len(got) != 0 {
				t.Fatalf("Retain after checkpoint %d statted %v; want nothing (this handle wrote every file)", id, got)
			}
		}

		restarted := mustOpen(t, loc, opts)
		stats = countStats(restarted)
		if _, err := restarted.Retain(4, 0); err != nil {
			t.Fatal(err)
		}
		want := []string{"chk-3/MANIFEST", "chk-4/MANIFEST", "chk-5/MANIFEST", "chk-6/MANIFEST",
			"shared/g/1.sst", "shared/g/2.sst", "shared/g/3.sst", "shared/g/4.sst", "shared/g/5.sst", "shared/g/6.sst"}
		if got := stats.take(); !slices.Equal(got, want) {
			t.Fatalf("a new handle's first Retain statted %v; want each retained file once: %v", got, want)
		}

		hs = incrementalCommit(t, s, 7, hs) // written through another handle, as by a task
		if _, err := restarted.Retain(4, 0); err != nil {
			t.Fatal(err)
		}
		if got, want := stats.take(), []string{"chk-7/MANIFEST", "shared/g/7.sst"}; !slices.Equal(got, want) {
			t.Fatalf("Retain after checkpoint 7 statted %v; want only its new files %v", got, want)
		}

		// Checkpoint 8 uploads an SST and fails before its metadata.
		if _, err := restarted.WriteFiles(8, localFiles(t, "g/8.sst", "sst 8")); err != nil {
			t.Fatal(err)
		}
		if _, err := restarted.Retain(4, 0); err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(listAll(t, restarted), "shared/g/8.sst") {
			t.Fatal("Retain deleted shared/g/8.sst, the upload of a checkpoint that may still complete")
		}
		c, err := restarted.GC()
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{"shared/g/8.sst"}; !slices.Equal(c.Removed, want) {
			t.Fatalf("GC removed %v, want the orphan %v", c.Removed, want)
		}
		fresh := mustOpen(t, loc, opts)
		if ids, err := fresh.Completed(); err != nil || !slices.Equal(ids, []event.CheckpointID{4, 5, 6, 7}) {
			t.Fatalf("valid checkpoints (every file checked) %v, %v; want 4..7", ids, err)
		}
	})
}
