package checkpointstorage

import (
	"context"
	"errors"
	"testing"
)

var errCrash = errors.New("crash")

// crashingObjects stops a directory's deletion the way a SIGKILL would
// stop it in the worst order: every entry but the checkpoint's _metadata
// is gone, then the process is.
type crashingObjects struct{ objects }

func (c crashingObjects) remove(ctx context.Context, key string, dir bool) error {
	if !dir {
		return c.objects.remove(ctx, key, false)
	}
	es, err := c.objects.list(ctx, key)
	if err != nil {
		return err
	}
	for _, e := range es {
		if e.name != metadataName {
			_ = c.objects.remove(ctx, key+"/"+e.name, e.dir)
		}
	}
	return errCrash
}

// A job killed while its cleanup deletes an old checkpoint (Retain after
// the next checkpoint, Discard of an aborted one) must not leave a
// completed checkpoint with missing state files behind: bench/soak found
// one after a SIGKILL, which the next start reported as CORRUPT and moved
// aside, kept forever. The _metadata goes first, so what a crash leaves is
// an incomplete checkpoint that GC removes without a word.
func TestCrashWhileDeletingLeavesNoCorruptCheckpoint(t *testing.T) {
	cases := []struct {
		name   string
		delete func(s *FS) error
	}{
		{"Retain", func(s *FS) error { _, err := s.Retain(1, 0); return err }},
		{"Discard", func(s *FS) error { return s.Discard(8) }},
	}
	forEachBackend(t, func(t *testing.T, b backend) {
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				s := b.open(t)
				complete(t, s, 8, "op-0", "op-1", "op-2")
				complete(t, s, 9, "op-0")
				real := s.obj
				s.obj = crashingObjects{real}
				if err := c.delete(s); !errors.Is(err, errCrash) {
					t.Fatalf("deletion: %v, want the simulated crash", err)
				}
				s.obj = real // the next start
				cl, err := s.GC()
				if err != nil {
					t.Fatal(err)
				}
				if len(cl.Corrupt) != 0 {
					t.Fatalf("GC after the crash found corrupt checkpoints %+v; want the half-deleted chk-8 removed as incomplete", cl.Corrupt)
				}
				if ok, err := s.exists("chk-8"); err != nil || ok {
					t.Fatalf("chk-8 still there after GC: %v, %v", ok, err)
				}
				if m, _, err := s.Latest(); err != nil || m.ID != 9 {
					t.Fatalf("Latest = %d, %v; want 9", m.ID, err)
				}
			})
		}
	})
}
