package filesystem

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/weirstream/weir/connector/format"
	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/graph"
	"github.com/weirstream/weir/internal/sim"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/operator/sourcetest"
	"github.com/weirstream/weir/runtime"
	"github.com/weirstream/weir/task"
	"github.com/weirstream/weir/types"
)

var schema = []types.Field{{Name: "id", Type: types.Type{Kind: types.BigInt}}, {Name: "name", Type: types.Type{Kind: types.String}}}

// crashRow passes rows through and crashes as faults decide.
type crashRow struct {
	operator.Base
	f *sim.Faults
}

func (c *crashRow) ProcessElement(r event.Record) error {
	if err := c.f.Maybe("process"); err != nil {
		return err
	}
	c.Ctx.Output.Collect(r)
	return nil
}

// csv files in → crashes → csv part files out, exactly once: the finished
// part files hold every input line exactly once; no pending or in-progress
// file is left.
func TestFileToFileExactlyOnce(t *testing.T) {
	in, out := t.TempDir(), t.TempDir()
	var want []string
	for f := 0; f < 3; f++ {
		var lines []string
		for i := 0; i < 400; i++ {
			id := f*1000 + i
			lines = append(lines, fmt.Sprintf("%d,name-%d", id, id))
		}
		want = append(want, lines...)
		if err := os.WriteFile(filepath.Join(in, fmt.Sprintf("f%d.csv", f)), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	csv := &format.CSV{Fields: schema, Delimiter: ','}
	faults := sim.NewFaults(5, 4, map[string]float64{"process": 0.004})
	g := &graph.StreamGraph{JobName: "files"}
	s := g.AddNode(&graph.Node{Name: "Source: files", UID: "src", Parallelism: 2, Source: &Source{Path: in, Format: csv}})
	c := g.AddNode(&graph.Node{Name: "Crash", UID: "crash", Parallelism: 2,
		NewOperator: func() operator.Operator { return &crashRow{f: faults} }})
	k := g.AddNode(&graph.Node{Name: "Sink: files", UID: "sink", Parallelism: 2,
		NewOperator: func() operator.Operator { return operator.NewSinkOperator(&Sink{Dir: out, Format: csv}) }})
	g.Connect(&graph.Edge{From: s.ID, To: c.ID})
	g.Connect(&graph.Edge{From: c.ID, To: k.ID, Partitioning: graph.Rebalance})
	jg, err := g.JobGraph()
	if err != nil {
		t.Fatal(err)
	}
	opts := runtime.Options{Mode: task.ExactlyOnce, CheckpointDir: t.TempDir(), Restart: runtime.FixedDelay{Attempts: 10}}
	opts.Checkpoint.Interval = 5 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := runtime.Run(ctx, jg, opts)
	if err != nil {
		t.Fatal(err)
	}
	if res.Restarts == 0 {
		t.Fatal("no failure injected")
	}
	var got []string
	entries, _ := os.ReadDir(out)
	for _, e := range entries {
		if e.Name() == markerDir {
			continue // the committed-checkpoint markers stay
		}
		if strings.HasPrefix(e.Name(), ".") {
			t.Errorf("leftover file %s", e.Name())
			continue
		}
		data, _ := os.ReadFile(filepath.Join(out, e.Name()))
		got = append(got, strings.Split(strings.TrimSpace(string(data)), "\n")...)
	}
	sort.Strings(got)
	sort.Strings(want)
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("output has %d lines, want %d exactly once", len(got), len(want))
	}
}

func TestBadLineNamesFileAndLine(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "in.csv")
	os.WriteFile(path, []byte("1,a\nx,b\n"), 0o644)
	src := &Source{Path: path, Format: &format.CSV{Fields: schema, Delimiter: ','}}
	splits, _ := src.Enumerate(context.Background())
	r, _ := src.CreateReader(operator.ReaderContext{})
	r.AddSplits(splits)
	var err error
	for i := 0; i < 5 && err == nil; i++ {
		_, err = r.Poll(nopOut{})
	}
	if err == nil || !strings.Contains(err.Error(), "in.csv line 2") || !strings.Contains(err.Error(), `column "id"`) {
		t.Fatalf("error %v", err)
	}
}

// An unclosed quote on line 3 names line 3 once: encoding/csv, which sees
// the line alone, would add "parse error on line 1".
func TestUnclosedQuoteNamesOneLine(t *testing.T) {
	dir := writeFiles(t, map[string]string{"in.csv": "1,a\n2,b\n3,\"c\n4,d\n"})
	r := openReader(t, dir, nil)
	var err error
	for i := 0; i < 5 && err == nil; i++ {
		_, err = r.Poll(nopOut{})
	}
	want := filepath.Join(dir, "in.csv") + ` line 3: csv: column 5: extraneous or missing " in quoted-field` +
		" (to continue past such lines set filesystem.Source.OnBadLine)"
	if err == nil || err.Error() != "filesystem: "+want {
		t.Fatalf("got  %v\nwant filesystem: %s", err, want)
	}
}

type nopOut struct{}

func (nopOut) Collect(string, event.Record) {}

// openReader returns a reader of the files under dir, positioned as in
// splits (nil: enumerated from the start).
func openReader(t *testing.T, dir string, splits []operator.SplitState) operator.SourceReader {
	t.Helper()
	return sourcetest.Open(t, &Source{Path: dir, Format: &format.CSV{Fields: schema, Delimiter: ','}}, splits)
}

func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func checkLines(t *testing.T, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("reader output:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

// Each file is reported finished right after its last line — also an empty
// file, one without a final newline and one ending in blank lines — so it
// leaves the subtask's watermark minimum before the next file is read.
func TestReaderReportsFinishedFiles(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"a.csv": "1,a\n2,b\n",
		"b.csv": "",
		"c.csv": "3,c\n\n\n",
		"d.csv": "4,d",
	})
	a, b, c, d := filepath.Join(dir, "a.csv"), filepath.Join(dir, "b.csv"), filepath.Join(dir, "c.csv"), filepath.Join(dir, "d.csv")
	got := sourcetest.Drain(t, openReader(t, dir, nil), &sourcetest.Output{})
	checkLines(t, got, []string{
		a + ": +I[1, a]", a + ": +I[2, b]", "finished " + a,
		"finished " + b,
		c + ": +I[3, c]", "finished " + c,
		d + ": +I[4, d]", "finished " + d,
	})
}

// A file restored at its end (its last line was read before the
// checkpoint) is reported finished at once, without records.
func TestReaderReportsRestoredFinishedFile(t *testing.T) {
	dir := writeFiles(t, map[string]string{"a.csv": "1,a\n2,b\n", "b.csv": "3,c\n"})
	a, b := filepath.Join(dir, "a.csv"), filepath.Join(dir, "b.csv")
	r := openReader(t, dir, nil)
	out := &sourcetest.Output{}
	for len(out.Lines) < 3 { // a's two rows and its end
		if _, err := r.Poll(out); err != nil {
			t.Fatal(err)
		}
	}
	snap, err := r.SnapshotState(1)
	if err != nil {
		t.Fatal(err)
	}
	got := sourcetest.Drain(t, openReader(t, dir, snap), &sourcetest.Output{})
	checkLines(t, got, []string{"finished " + a, b + ": +I[3, c]", "finished " + b})
}
