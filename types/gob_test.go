package types

import (
	"bytes"
	"encoding/gob"
	"reflect"
	"testing"
	"time"

	"github.com/shopspring/decimal"
)

// Every run-time value of a SQL type goes through gob as an interface (a
// row's field), as unaligned checkpoints persist rows in flight.
func TestValuesGoThroughGobAsInterfaces(t *testing.T) {
	type row struct{ Fields []any }
	in := row{Fields: []any{true, int64(7), 1.5, decimal.RequireFromString("12.30"), "s", []byte("b"),
		time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC), []any{int64(1), "x"}, map[any]any{"k": int64(2)},
		MultisetValue{{Elem: []any{int64(1), "x"}, Count: 2}, {Elem: "y", Count: 1}}, nil}}
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(in); err != nil {
		t.Fatal(err)
	}
	var out row
	if err := gob.NewDecoder(&buf).Decode(&out); err != nil {
		t.Fatal(err)
	}
	for i, want := range in.Fields {
		got := out.Fields[i]
		if d, ok := want.(decimal.Decimal); ok {
			if g, ok := got.(decimal.Decimal); !ok || !g.Equal(d) || g.String() != d.String() {
				t.Errorf("field %d: got %#v, want %v", i, got, d)
			}
			continue
		}
		if tm, ok := want.(time.Time); ok {
			if g, ok := got.(time.Time); !ok || !g.Equal(tm) {
				t.Errorf("field %d: got %#v, want %v", i, got, tm)
			}
			continue
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("field %d: got %#v, want %#v", i, got, want)
		}
	}
}
