package parquet

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weirstream/weir/connector/filesystem"
	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/graph"
	"github.com/weirstream/weir/internal/sim"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/runtime"
	"github.com/weirstream/weir/task"
	"github.com/weirstream/weir/types"
)

// crashRow passes rows through and crashes as faults decide, once a
// checkpoint completed in its attempt: each restart then restores
// progress, read positions and part files.
type crashRow struct {
	operator.Base
	f         *sim.Faults
	completed bool
}

func (c *crashRow) ProcessElement(r event.Record) error {
	if c.completed {
		if err := c.f.Maybe("process"); err != nil {
			return err
		}
	}
	c.Ctx.Output.Collect(r)
	return nil
}

func (c *crashRow) NotifyCheckpointComplete(event.CheckpointID) error {
	c.completed = true
	return nil
}

// pacedSource reads at most every rows between two completed checkpoints,
// so checkpoints (and the crashes after them) fall inside the input
// whatever the machine's speed.
type pacedSource struct {
	operator.Source
	every int
}

func (p pacedSource) CreateReader(ctx operator.ReaderContext) (operator.SourceReader, error) {
	r, err := p.Source.CreateReader(ctx)
	return &pacedReader{SourceReader: r, every: p.every}, err
}

type pacedReader struct {
	operator.SourceReader
	every, n int
	wait     chan struct{} // closed at the next completed checkpoint
}

func (r *pacedReader) Poll(out operator.ReaderOutput) (operator.ReaderStatus, error) {
	if r.n >= r.every {
		if r.wait == nil {
			r.wait = make(chan struct{})
		}
		return operator.NothingAvailable, nil
	}
	r.n++
	return r.SourceReader.Poll(out)
}

func (r *pacedReader) Available() <-chan struct{} {
	if r.wait != nil {
		return r.wait
	}
	return r.SourceReader.Available()
}

func (r *pacedReader) NotifyCheckpointComplete(id event.CheckpointID) error {
	r.n = 0
	if r.wait != nil {
		close(r.wait)
		r.wait = nil
	}
	return r.SourceReader.NotifyCheckpointComplete(id)
}

// jobRow is row i of TestPartitionedParquetExactlyOnce's input: every
// type, NULLs, and the partition column dt (last) from 4 days, one NULL.
func jobRow(i int) []any {
	r := slices.Clone(allRows[i%len(allRows)])
	r[0] = int64(i)
	day := any(fmt.Sprintf("2024-01-0%d", 1+i%4))
	if i%13 == 0 {
		day = nil
	}
	return append(r, day)
}

// TestPartitionedParquetExactlyOnce: parquet files in (several row groups
// each, read by two subtasks) → random crashes after checkpoints → a
// PARTITIONED BY (dt) parquet sink committing partitions with _SUCCESS.
// Afterwards every input row is in exactly one committed part file of its
// partition directory (read back by the filesystem source, which fills dt
// from the directory), each partition has its _SUCCESS, and no
// in-progress or pending file is left.
func TestPartitionedParquetExactlyOnce(t *testing.T) {
	in, out := t.TempDir(), t.TempDir()
	withDt := append(slices.Clone(allFields), field0("dt"))
	inFormat, err := FromOptions(withDt, map[string]string{"parquet.block.size": "4000"})
	if err != nil {
		t.Fatal(err)
	}
	var want [][]any
	for f := range 3 {
		var rows [][]any
		for i := range 1000 {
			rows = append(rows, jobRow(f*10000+i))
		}
		want = append(want, rows...)
		if err := os.WriteFile(filepath.Join(in, fmt.Sprintf("f%d.parquet", f)), writeFile(t, inFormat, rows), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	outFormat, err := FromOptions(allFields, map[string]string{"parquet.compression": "SNAPPY"})
	if err != nil {
		t.Fatal(err)
	}
	dtIdx := len(allFields)
	faults := sim.NewFaults(7, 3, map[string]float64{"process": 0.05})
	g := &graph.StreamGraph{JobName: "parquet"}
	s := g.AddNode(&graph.Node{Name: "Source: files", UID: "src", Parallelism: 2, Source: pacedSource{&filesystem.Source{Path: in, Bulk: inFormat}, 200}})
	c := g.AddNode(&graph.Node{Name: "Crash", UID: "crash", Parallelism: 2,
		NewOperator: func() operator.Operator { return &crashRow{f: faults} }})
	commit := &filesystem.CommitPolicy{Trigger: filesystem.TriggerProcessTime, Delay: time.Hour, SuccessFile: "_SUCCESS"}
	k := g.AddNode(&graph.Node{Name: "Sink: files", UID: "sink", Parallelism: 2,
		NewOperator: func() operator.Operator {
			return operator.NewSinkOperator(&filesystem.Sink{Dir: out, Bulk: outFormat, PartitionCols: []string{"dt"},
				PartitionIdx: []int{dtIdx}, Commit: commit})
		}})
	g.Connect(&graph.Edge{From: s.ID, To: c.ID})
	g.Connect(&graph.Edge{From: c.ID, To: k.ID, Partitioning: graph.Rebalance})
	jg, err := g.JobGraph()
	if err != nil {
		t.Fatal(err)
	}
	opts := runtime.Options{Mode: task.ExactlyOnce, CheckpointDir: t.TempDir(), Restart: runtime.FixedDelay{Attempts: 20}}
	opts.Checkpoint.Interval = 20 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := runtime.Run(ctx, jg, opts)
	if err != nil {
		t.Fatal(err)
	}
	if res.Restarts == 0 {
		t.Fatal("no failure injected")
	}
	dirs := checkOutputFiles(t, out)
	wantDirs := []string{"dt=2024-01-01", "dt=2024-01-02", "dt=2024-01-03", "dt=2024-01-04", "dt=" + filesystem.DefaultPartitionName}
	slices.Sort(wantDirs)
	if !reflect.DeepEqual(dirs, wantDirs) {
		t.Errorf("committed partitions %v, want %v", dirs, wantDirs)
	}
	// Read back with the source: partition values come from the paths.
	back := &filesystem.Source{Path: out, Bulk: outFormat, PartitionCols: []string{"dt"}, PartitionIdx: []int{dtIdx},
		ParsePartition: func(_ int, v string) (any, error) {
			if v == filesystem.DefaultPartitionName {
				return nil, nil
			}
			return v, nil
		}}
	got := readSource(t, back)
	byID := func(a, b []any) int { return int(a[0].(int64) - b[0].(int64)) }
	slices.SortFunc(got, byID)
	slices.SortFunc(want, byID)
	if len(got) != len(want) {
		t.Fatalf("read back %d rows, want %d (exactly once)", len(got), len(want))
	}
	if g, w := normal(got), normal(want); !reflect.DeepEqual(g, w) {
		for i := range g {
			if !reflect.DeepEqual(g[i], w[i]) {
				t.Fatalf("row %d: got %v, want %v", i, g[i], w[i])
			}
		}
	}
	t.Logf("%d restarts", res.Restarts)
}

// checkOutputFiles fails on any leftover hidden part file and returns the
// partition directories that hold a _SUCCESS file.
func checkOutputFiles(t *testing.T, out string) []string {
	t.Helper()
	var success []string
	filepath.WalkDir(out, func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() && d.Name() == ".weir-committed" {
			return filepath.SkipDir // the sink's committed-checkpoint markers
		}
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(out, filepath.Dir(path))
		switch {
		case d.Name() == "_SUCCESS":
			success = append(success, rel)
		case !strings.HasPrefix(d.Name(), "part-"):
			t.Errorf("leftover file %s in %s", d.Name(), rel)
		}
		return nil
	})
	slices.Sort(success)
	return success
}

// readSource reads every row of a bounded filesystem source.
func readSource(t *testing.T, s *filesystem.Source) [][]any {
	t.Helper()
	splits, err := s.Enumerate(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	r, _ := s.CreateReader(operator.ReaderContext{})
	r.AddSplits(splits)
	var c collect
	for {
		st, err := r.Poll(&c)
		if err != nil {
			t.Fatal(err)
		}
		if st == operator.EndOfInput {
			return c.rows
		}
	}
}

type collect struct{ rows [][]any }

func (c *collect) Collect(_ string, r event.Record) {
	c.rows = append(c.rows, r.Value.(event.Row).Fields)
}

func field0(name string) types.Field {
	return types.Field{Name: name, Type: typ(types.String, true, 0, 0)}
}
