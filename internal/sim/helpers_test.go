package sim

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weirstream/weir/checkpointstorage"
	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/graph"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/runtime"
	"github.com/weirstream/weir/task"
)

// seqJob is the scenario tests' pipeline:
//
//	Source "seq" (SourcePar) → mid (chained; CrashOp with Faults unless NewMid)
//	  → keyBy → SeqChecker "check" (KeyedPar) → [CrashOp "presink" with PreSink] → Sink "sink"
//
// everything after the keyBy chained into one vertex.
type seqJob struct {
	Source    operator.Source
	SourcePar int
	Faults    *Faults
	// NewMid, if set, replaces the CrashOp after the source; MidUID names it.
	NewMid   func() operator.Operator
	MidUID   string
	KeyedPar int
	V        *Violations
	// PreSink, if set, chains a CrashOp using it right before the sink, in
	// the sink's subtask: its snapshot runs after the sink pre-committed.
	PreSink *Faults
	Sink    operator.Sink
}

func (j seqJob) jobGraph(t *testing.T) *graph.JobGraph {
	t.Helper()
	g := &graph.StreamGraph{JobName: "scenario"}
	s := g.AddNode(&graph.Node{Name: "Source: seq", UID: "seq", Parallelism: j.SourcePar, Source: j.Source})
	mid, uid := j.NewMid, j.MidUID
	if mid == nil {
		mid, uid = func() operator.Operator { return &CrashOp{Faults: j.Faults, SlowSubtask: -1} }, "crash"
	}
	c := g.AddNode(&graph.Node{Name: "Mid", UID: uid, Parallelism: j.SourcePar, NewOperator: mid})
	key := func(x any) any { return x.(Seq).Key }
	k := g.AddNode(&graph.Node{Name: "Check", UID: "check", Parallelism: j.KeyedPar, KeySelector: key,
		NewOperator: func() operator.Operator { return &SeqChecker{V: j.V} }})
	g.Connect(&graph.Edge{From: s.ID, To: c.ID})
	g.Connect(&graph.Edge{From: c.ID, To: k.ID, Partitioning: graph.Hash, Key: key})
	last := k
	if j.PreSink != nil {
		p := g.AddNode(&graph.Node{Name: "PreSink", UID: "presink", Parallelism: j.KeyedPar,
			NewOperator: func() operator.Operator { return &CrashOp{Faults: j.PreSink, SlowSubtask: -1} }})
		g.Connect(&graph.Edge{From: k.ID, To: p.ID})
		last = p
	}
	o := g.AddNode(&graph.Node{Name: "Sink: tx", UID: "sink", Parallelism: j.KeyedPar,
		NewOperator: func() operator.Operator { return operator.NewSinkOperator(j.Sink) }})
	g.Connect(&graph.Edge{From: last.ID, To: o.ID})
	jg, err := g.JobGraph()
	if err != nil {
		t.Fatal(err)
	}
	return jg
}

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// testOptions: exactly-once, tiny channels (barriers queue behind data),
// restarts without delay, failed checkpoints tolerated.
func testOptions(dir string, interval time.Duration) runtime.Options {
	opts := runtime.Options{Mode: task.ExactlyOnce, CheckpointDir: dir, ChannelCredits: 1, BatchSize: 3,
		Restart: runtime.FixedDelay{Attempts: 5, Delay: 0}, Logger: quietLogger()}
	opts.Checkpoint.Interval = interval
	opts.Checkpoint.TolerableFailures = -1
	return opts
}

func runJob(ctx context.Context, jg *graph.JobGraph, opts runtime.Options) (*runtime.Result, error) {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	return runtime.Run(ctx, jg, opts)
}

// events records job events. Its listener may be chained with another.
type events struct {
	mu   sync.Mutex
	list []runtime.Event
}

func (e *events) listener(then func(runtime.Event)) func(runtime.Event) {
	return func(ev runtime.Event) {
		e.mu.Lock()
		e.list = append(e.list, ev)
		e.mu.Unlock()
		if then != nil {
			then(ev)
		}
	}
}

func (e *events) all() []runtime.Event {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]runtime.Event(nil), e.list...)
}

func (e *events) of(kind runtime.EventKind) []runtime.Event {
	var out []runtime.Event
	for _, ev := range e.all() {
		if ev.Kind == kind {
			out = append(out, ev)
		}
	}
	return out
}

func (e *events) ids(kind runtime.EventKind) []int64 {
	var out []int64
	for _, ev := range e.of(kind) {
		out = append(out, ev.Checkpoint)
	}
	return out
}

var kindNames = map[runtime.EventKind]string{
	runtime.EventCheckpointCompleted: "completed", runtime.EventCheckpointFailed: "failed",
	runtime.EventFailover: "failover", runtime.EventRestored: "restored",
	runtime.EventCorruptCheckpointSkipped: "corrupt-skipped", runtime.EventFinished: "finished",
}

// String lists the events compactly, e.g. "completed:1 completed:2 failover restored:2".
func (e *events) String() string {
	var b strings.Builder
	for _, ev := range e.all() {
		b.WriteString(kindNames[ev.Kind])
		switch ev.Kind {
		case runtime.EventCheckpointCompleted, runtime.EventCheckpointFailed, runtime.EventRestored:
			fmt.Fprintf(&b, ":%d", ev.Checkpoint)
		}
		b.WriteByte(' ')
	}
	return strings.TrimSpace(b.String())
}

// seqInput is every element a SeqSource of keys × perKey emits.
func seqInput(keys, perKey int) map[Seq]int {
	m := map[Seq]int{}
	for k := 0; k < keys; k++ {
		for q := 0; q < perKey; q++ {
			m[Seq{k, q}]++
		}
	}
	return m
}

// multiset counts values.
func multiset[T comparable](vs []any) map[T]int {
	m := map[T]int{}
	for _, v := range vs {
		m[v.(T)]++
	}
	return m
}

// minus returns a − b for multisets, failing on a negative count.
func minus[T comparable](t *testing.T, a, b map[T]int) map[T]int {
	t.Helper()
	out := map[T]int{}
	for k, n := range a {
		out[k] = n
	}
	for k, n := range b {
		out[k] -= n
		if out[k] < 0 {
			t.Errorf("%v: %d more than the whole", k, -out[k])
		}
		if out[k] <= 0 {
			delete(out, k)
		}
	}
	return out
}

func total[T comparable](m map[T]int) int {
	n := 0
	for _, c := range m {
		n += c
	}
	return n
}

// diffMultisets describes how got differs from want (empty: equal).
func diffMultisets[T comparable](got, want map[T]int) string {
	var lines []string
	for k, n := range want {
		if got[k] != n {
			lines = append(lines, fmt.Sprintf("%v: got %d, want %d", k, got[k], n))
		}
	}
	for k, n := range got {
		if _, ok := want[k]; !ok {
			lines = append(lines, fmt.Sprintf("%v: got %d, want 0", k, n))
		}
	}
	sort.Strings(lines)
	if len(lines) > 10 {
		lines = append(lines[:10], fmt.Sprintf("… %d differences in all", len(lines)))
	}
	return strings.Join(lines, "; ")
}

// listFiles returns every regular file under dir, relative, slash-separated, sorted.
func listFiles(dir string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		out = append(out, filepath.ToSlash(rel))
		return err
	})
	slices.Sort(out)
	return out, err
}

// referencedFiles is what storage should hold and nothing more: the
// _metadata and the Handles of every retained (valid completed) checkpoint,
// the id counter file, and the lock file of the job that used it.
func referencedFiles(dir string) ([]string, error) {
	s, err := checkpointstorage.OpenFS(dir)
	if err != nil {
		return nil, err
	}
	ids, err := s.Completed()
	if err != nil {
		return nil, err
	}
	set := map[string]bool{"_checkpoint_id": true, "_lock": true}
	for _, id := range ids {
		m, err := s.ReadMetadata(id)
		if err != nil {
			return nil, err
		}
		set[fmt.Sprintf("chk-%d/_metadata", id)] = true
		for _, h := range m.Handles {
			set[h.Path] = true
		}
	}
	out := make([]string, 0, len(set))
	for p := range set {
		out = append(out, p)
	}
	slices.Sort(out)
	return out, nil
}

// storageDiff compares the files under dir with the referenced ones.
func storageDiff(dir string) (string, error) {
	have, err := listFiles(dir)
	if err != nil {
		return "", err
	}
	want, err := referencedFiles(dir)
	if err != nil {
		return "", err
	}
	var extra, missing []string
	for _, f := range have {
		if !slices.Contains(want, f) {
			extra = append(extra, f)
		}
	}
	for _, f := range want {
		if !slices.Contains(have, f) {
			missing = append(missing, f)
		}
	}
	if len(extra)+len(missing) == 0 {
		return "", nil
	}
	return fmt.Sprintf("unreferenced files %v; missing files %v", extra, missing), nil
}

// copyDir copies the tree src to dst (which must not exist).
func copyDir(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
}

// sourcePositions reads, from checkpoint id in dir, the next sequence
// number of every key of src (the "seq" source's split positions).
func sourcePositions(t *testing.T, dir string, id event.CheckpointID, src *SeqSource) map[int]int {
	t.Helper()
	s, err := checkpointstorage.OpenFS(dir)
	if err != nil {
		t.Fatal(err)
	}
	m, err := s.ReadMetadata(id)
	if err != nil {
		t.Fatal(err)
	}
	out := map[int]int{}
	for key, blob := range m.Tasks {
		ts, err := task.DecodeTaskState(blob)
		if err != nil {
			t.Fatalf("%s: %v", key, err)
		}
		h, ok := ts.Operators["seq"][task.PartSplits]
		if !ok {
			continue
		}
		b, err := s.ReadState(h)
		if err != nil {
			t.Fatal(err)
		}
		splits, err := task.DecodeSplits(b)
		if err != nil {
			t.Fatal(err)
		}
		for _, sp := range splits {
			var n int
			fmt.Sscan(sp.ID, &n)
			pos, err := decodePos(sp.Position)
			if err != nil {
				t.Fatal(err)
			}
			for j, k := range src.keysOf(n) {
				out[k] = pos[j]
			}
		}
	}
	if len(out) != src.Keys {
		t.Fatalf("checkpoint %d has positions for %d keys, want %d", id, len(out), src.Keys)
	}
	return out
}

// stopAt is the outcome of runUntil: the job cancelled the instant its nth
// checkpoint completed, with copies of storage and store from that instant,
// before any subtask heard of the completion (so nothing of checkpoint n
// is committed yet).
type stopAt struct {
	id    event.CheckpointID
	dir   string // copy of the checkpoint directory (a bucket's location: itself)
	store *Store // clone of the store
	ev    *events
}

// runUntil runs jg (over an unbounded source) until its nth completed
// checkpoint, then cancels it. Retained old checkpoints are kept as opts says.
// opts.Listener, if set, hears every event first.
func runUntil(t *testing.T, jg *graph.JobGraph, opts runtime.Options, store *Store, n int) stopAt {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	at := stopAt{dir: filepath.Join(t.TempDir(), "snapshot"), ev: &events{}}
	var copyErr error
	completed := 0
	then := opts.Listener
	opts.Listener = at.ev.listener(func(e runtime.Event) {
		if then != nil {
			then(e)
		}
		if e.Kind != runtime.EventCheckpointCompleted {
			return
		}
		if completed++; completed == n {
			// The listener runs on the driver goroutine before it posts
			// the completion to any subtask: nothing of this checkpoint is
			// committed, and no newer one is being written.
			at.id, at.store = event.CheckpointID(e.Checkpoint), store.Clone()
			if _, local := checkpointstorage.LocalPath(opts.CheckpointDir); local {
				copyErr = copyDir(opts.CheckpointDir, at.dir)
			} else {
				at.dir = opts.CheckpointDir // a bucket: used in place
			}
			cancel()
		}
	})
	_, err := runtime.Run(ctx, jg, opts)
	if at.id == 0 {
		t.Fatalf("job ended (%v) before %d checkpoints completed; events: %s", err, n, at.ev)
	}
	if copyErr != nil {
		t.Fatal(copyErr)
	}
	return at
}

// noCommitRetries turns off in-place commit retries for one job, so that a
// commit crash fails the subtask and the job restores.
func noCommitRetries(opts *runtime.Options) { opts.CommitRetries = -1 }
