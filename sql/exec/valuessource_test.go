package exec

import (
	"slices"
	"testing"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/operator/sourcetest"
)

// A VALUES source emits its rows as +I, in order, and finishes its split
// after the last.
func TestValuesSourceEmitsRowsInOrder(t *testing.T) {
	src := NewValuesSource([][]any{{int64(1), "a"}, {int64(2), "b"}})
	got := sourcetest.Drain(t, sourcetest.Open(t, src, nil), &sourcetest.Output{})
	want := []string{"values: +I[1, a]", "values: +I[2, b]", "finished values"}
	if !slices.Equal(got, want) {
		t.Fatalf("read %q, want %q", got, want)
	}
}

// Its position is the next row: a reader restored from a snapshot taken
// after the first row emits the rest, none twice; one restored at the end
// emits nothing and finishes its split.
func TestValuesSourceRestoresPosition(t *testing.T) {
	src := NewValuesSource([][]any{{int64(1)}, {int64(2)}, {int64(3)}})
	r := sourcetest.Open(t, src, nil)
	out := &sourcetest.Output{}
	if _, err := r.Poll(out); err != nil {
		t.Fatal(err)
	}
	snap, err := r.SnapshotState(1)
	if err != nil {
		t.Fatal(err)
	}
	got := sourcetest.Drain(t, sourcetest.Open(t, src, snap), &sourcetest.Output{})
	want := []string{"values: +I[2]", "values: +I[3]", "finished values"}
	if !slices.Equal(got, want) {
		t.Fatalf("restored after row 1: read %q, want %q", got, want)
	}
	r = sourcetest.Open(t, src, nil)
	sourcetest.Drain(t, r, &sourcetest.Output{})
	if snap, err = r.SnapshotState(2); err != nil {
		t.Fatal(err)
	}
	got = sourcetest.Drain(t, sourcetest.Open(t, src, snap), &sourcetest.Output{})
	if want := []string{"finished values"}; !slices.Equal(got, want) {
		t.Fatalf("restored at the end: read %q, want %q", got, want)
	}
}

// Emitted rows are copies: a downstream operator that changes a row in
// place does not change what a restarted job reads.
func TestValuesSourceEmitsCopies(t *testing.T) {
	rows := [][]any{{int64(1)}}
	src := NewValuesSource(rows)
	out := &rowCapture{}
	r := sourcetest.Open(t, src, nil)
	if _, err := r.Poll(out); err != nil {
		t.Fatal(err)
	}
	out.rows[0].Fields[0] = int64(9)
	if rows[0][0] != int64(1) {
		t.Fatalf("the source's row changed to %v through an emitted row", rows[0])
	}
}

// A position past the rows (a checkpoint of a different query) is refused.
func TestValuesSourceRefusesForeignPosition(t *testing.T) {
	src := NewValuesSource([][]any{{int64(1)}})
	r, err := src.CreateReader(operator.ReaderContext{Parallelism: 1})
	if err != nil {
		t.Fatal(err)
	}
	snap := []operator.SplitState{{ID: valuesSplit, Position: []byte{5}}}
	if err := r.AddSplits(snap); err == nil {
		t.Fatal("AddSplits accepted position 5 of a source of 1 row")
	}
}

// rowCapture keeps the rows a reader emits.
type rowCapture struct{ rows []event.Row }

func (c *rowCapture) Collect(_ string, r event.Record) { c.rows = append(c.rows, r.Value.(event.Row)) }
