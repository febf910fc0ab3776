package exec

import (
	"testing"
	"unsafe"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
)

// TestRankedRowsStandAlone: each row diffRanks emits is an allocation of
// its own, capped, so a downstream operator that keeps one (a sink's
// materializer, a join) keeps no other row alive and one that appends to
// one writes into no other. Rows carved out of one array per call, as
// before, lay end to end; a row of its own has its header before it.
func TestRankedRowsStandAlone(t *testing.T) {
	var clock int64
	c := openChain(t, []newStage{func() (operator.Operator, bool) {
		top, err := NewTopN(TopNOptions{PartitionKeys: []int{0}, OrderBy: []SortKey{{Field: 1, Desc: true}},
			N: 3, RankNumber: true, InputInsertOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		return top, true
	}}, &clock, nil)
	for _, price := range []int64{10, 20, 30, 40} { // each enters at rank 1, shifting the others
		row := event.Row{Kind: event.Insert, Fields: []any{"p", price}}
		if err := c.process(t, 0, event.Record{Value: row}); err != nil {
			t.Fatal(err)
		}
	}
	rows := c.out.rows()
	if len(rows) != 1+3+5+6 {
		t.Fatalf("%d rows: %v", len(rows), c.out.take())
	}
	for i, r := range rows {
		if len(r.Fields) != 3 || cap(r.Fields) != 3 {
			t.Fatalf("row %d: %v, capacity %d", i, r.Fields, cap(r.Fields))
		}
		end := addr(r.Fields) + 3*unsafe.Sizeof(any(nil)) // an address, not a pointer: checkptr
		for j, o := range rows {
			if addr(o.Fields) == end {
				t.Fatalf("rows %d and %d lie end to end in one array", i, j)
			}
		}
	}
}

// addr is the address of fields' first element.
func addr(fields []any) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(fields))) }
