package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weirstream/weir/checkpointstorage"
	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/task"
)

// The billing job with unaligned checkpoints on the real Kafka and MariaDB
// (XA), restored at another parallelism after every SIGKILL: the runs take
// parallelism 2, 3, 1, 2, … (weir chaos --parallelism), so each restore
// re-partitions the in-flight rows the checkpoint persisted — the input
// channel state of the receivers and the output channel state of the
// senders — by key group over the new subtasks, and replays them before new
// input. The totals must equal the ground truth exactly and no prepared XA
// transaction of the job may be left.
//
// Whether a checkpoint persisted in-flight rows depends on timing: a run
// at parallelism 1 is held before its kill (asked while the job is stopped
// with SIGSTOP, so no newer checkpoint completes before the kill) until the
// newest completed checkpoint holds input and output channel state taken
// at another parallelism than the next run's, but at most 2 s: on a quiet
// machine the job keeps up and such checkpoints may never come. The runs'
// logs name the checkpoint each restored; how many restores at another
// parallelism loaded channel state is logged, not asserted. The rescaled replay of
// channel state is proven where timing is controlled: internal/sim's
// TestUnalignedRestoreAtOtherParallelism (tiny credits, a slowed subtask).
//
// Aligned timeout 0 makes every checkpoint unaligned from its first
// barrier; 5 ms starts each aligned and switches it where a barrier waits
// longer.
func TestBillingSQLUnalignedRescaleThroughKills(t *testing.T) {
	for _, timeout := range []string{"0", "5ms"} {
		t.Run("aligned-timeout-"+timeout, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
			defer cancel()
			r := newBillingRun(t, 150000, "mysql")
			r.interval, r.minDelay, r.maxDelay = "100ms", 150*time.Millisecond, 500*time.Millisecond
			r.flags.parallelism = []int{2, 3, 1}
			r.flags.logs = filepath.Join(r.dir, "logs")
			r.flags.killWhen = killOnceRescalable(r.flags, filepath.Join(r.dir, "checkpoints"), 2*time.Second)
			r.produce(ctx)
			r.chaos(ctx, 8, "execution.checkpointing.unaligned.enabled=true",
				"execution.checkpointing.aligned-checkpoint-timeout="+timeout,
				"execution.checkpointing.num-retained=100000")
			logRescaledChannelState(t, r.flags)
		})
	}
}

// killOnceRescalable is a chaos killWhen: a run at parallelism 1 may be
// killed once the newest completed checkpoint in dir holds input and output
// channel state and was taken at another parallelism than the next run's,
// or once patience has passed since chaos first asked; the other runs at
// any moment. (At parallelism 1 in-flight rows pile up in front of the
// sink most.)
func killOnceRescalable(f chaosFlags, dir string, patience time.Duration) func(run int) bool {
	var mu sync.Mutex
	asked := map[int]time.Time{}
	return func(run int) bool {
		if p, _ := f.runParallelism(run); p != 1 {
			return true
		}
		mu.Lock()
		first, ok := asked[run]
		if !ok {
			first = time.Now()
			asked[run] = first
		}
		mu.Unlock()
		if time.Since(first) >= patience {
			return true
		}
		next, _ := f.runParallelism(run + 1)
		c, err := newestCheckpoint(dir)
		return err == nil && c.replaysRescaled(next)
	}
}

// checkpointShape is what a checkpoint holds for a restore: the
// parallelism it was taken at (every vertex of the billing job has the
// same) and how many input and output channel-state files it has.
type checkpointShape struct {
	id                   event.CheckpointID
	parallelism          int
	inputFiles, outFiles int
}

// replaysRescaled reports whether a restore at parallelism par
// re-partitions input and output channel state of c.
func (c checkpointShape) replaysRescaled(par int) bool {
	return c.parallelism != par && c.inputFiles > 0 && c.outFiles > 0
}

func shapeOf(m checkpointstorage.Metadata) (checkpointShape, error) {
	c := checkpointShape{id: m.ID}
	for key := range m.Tasks {
		_, index, _ := strings.Cut(key, "/")
		i, err := strconv.Atoi(index)
		if err != nil {
			return c, fmt.Errorf("checkpoint %d: task %q has no subtask index", m.ID, key)
		}
		c.parallelism = max(c.parallelism, i+1)
	}
	for _, h := range m.Handles {
		switch {
		case strings.HasSuffix(h.Path, task.PartOutputState):
			c.outFiles++
		case strings.HasSuffix(h.Path, task.PartChannelState):
			c.inputFiles++
		}
	}
	return c, nil
}

// newestCheckpoint is the shape of the checkpoint a latest restore from dir
// would load.
func newestCheckpoint(dir string) (checkpointShape, error) {
	fs, err := checkpointstorage.OpenFS(dir)
	if err != nil {
		return checkpointShape{}, err
	}
	defer fs.Close()
	m, _, err := fs.Latest()
	if err != nil {
		return checkpointShape{}, err
	}
	return shapeOf(m)
}

// checkpointIn is the shape of checkpoint id in dir.
func checkpointIn(dir string, id event.CheckpointID) (checkpointShape, error) {
	fs, err := checkpointstorage.OpenFS(dir)
	if err != nil {
		return checkpointShape{}, err
	}
	defer fs.Close()
	m, err := fs.ReadMetadata(id)
	if err != nil {
		return checkpointShape{}, err
	}
	return shapeOf(m)
}

// restoreOf is what one run restored.
type restoreOf struct {
	run, parallelism int
	checkpointShape
}

func (r restoreOf) String() string {
	return fmt.Sprintf("run %d at parallelism %d restored checkpoint %d (taken at parallelism %d): "+
		"%d input and %d output channel-state files", r.run, r.parallelism, r.id, r.checkpointShape.parallelism,
		r.inputFiles, r.outFiles)
}

// logRescaledChannelState logs what each run restored and how many
// restores at another parallelism loaded input and output channel state.
func logRescaledChannelState(t *testing.T, f chaosFlags) {
	t.Helper()
	restores := readRestores(t, f)
	rescaled := 0
	for _, r := range restores {
		t.Log(r)
		if r.replaysRescaled(r.parallelism) {
			rescaled++
		}
	}
	t.Logf("%d of %d restores loaded input and output channel state at another parallelism", rescaled, len(restores))
}

// restoreLine is the job's log line for a restore (log/slog text).
var restoreLine = regexp.MustCompile(`msg="restoring checkpoint" .*\bcheckpoint=(\d+) dir=(\S+)`)

// readRestores reads, from each run's log (chaos --logs), the checkpoint it
// restored and what that checkpoint holds. Runs that started empty are
// left out.
func readRestores(t *testing.T, f chaosFlags) []restoreOf {
	var out []restoreOf
	for run := 2; ; run++ {
		b, err := os.ReadFile(filepath.Join(f.logs, fmt.Sprintf("run-%d.log", run)))
		if os.IsNotExist(err) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		m := restoreLine.FindSubmatch(b)
		if m == nil {
			continue
		}
		id, _ := strconv.ParseInt(string(m[1]), 10, 64)
		c, err := checkpointIn(string(m[2]), event.CheckpointID(id))
		if err != nil {
			t.Fatalf("run %d restored checkpoint %d: %v", run, id, err)
		}
		par, _ := f.runParallelism(run - 1)
		out = append(out, restoreOf{run: run, parallelism: par, checkpointShape: c})
	}
}
