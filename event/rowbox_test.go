package event

import (
	"fmt"
	"reflect"
	"runtime"
	"testing"
)

func TestNewRowAndBoxRow(t *testing.T) {
	for n := 0; n <= 40; n++ {
		r := NewRow(UpdateAfter, n)
		if r.Kind != UpdateAfter || len(r.Fields) != n || cap(r.Fields) != n {
			t.Fatalf("NewRow(+U, %d) = kind %v, len %d, cap %d", n, r.Kind, len(r.Fields), cap(r.Fields))
		}
		for i := range r.Fields {
			if r.Fields[i] != nil {
				t.Fatalf("NewRow(%d): field %d is %v, want NULL", n, i, r.Fields[i])
			}
			r.Fields[i] = fmt.Sprint("f", i)
		}
		v := BoxRow(r)
		got, ok := v.(Row)
		if !ok || !reflect.DeepEqual(got, *r) || !reflect.DeepEqual(v, any(*r)) {
			t.Fatalf("BoxRow of %v = %#v", *r, v)
		}
	}
}

// TestBoxRowOneAllocation: a row of up to 32 fields, boxed, is one
// allocation; wider rows take the usual ones.
func TestBoxRowOneAllocation(t *testing.T) {
	var sink any
	for _, c := range []struct{ n, want int }{{1, 1}, {7, 1}, {16, 1}, {32, 1}, {33, 2}} {
		got := testing.AllocsPerRun(100, func() { sink = BoxRow(NewRow(Insert, c.n)) })
		if int(got) != c.want {
			t.Errorf("%d fields: %v allocations, want %d", c.n, got, c.want)
		}
	}
	_ = sink
}

// TestBoxedRowsSurviveGC: boxed rows, held only by their interfaces, keep
// their fields' values alive through collections.
func TestBoxedRowsSurviveGC(t *testing.T) {
	boxed := make([]any, 2000)
	for i := range boxed {
		r := NewRow(Insert, 1+i%40)
		for j := range r.Fields {
			r.Fields[j] = fmt.Sprintf("row %d field %d", i, j)
		}
		boxed[i] = BoxRow(r)
		if i%100 == 0 {
			runtime.GC()
		}
	}
	runtime.GC()
	for i, v := range boxed {
		r := v.(Row)
		for j, f := range r.Fields {
			if want := fmt.Sprintf("row %d field %d", i, j); f != want {
				t.Fatalf("row %d field %d = %v, want %q", i, j, f, want)
			}
		}
	}
}
