package expr

import (
	"testing"

	"github.com/weirstream/weir/types"
)

// Bags are equal when they hold the same elements as often, whatever the
// order of their entries.
func TestMultisetsEqual(t *testing.T) {
	a := types.MultisetValue{{Elem: []any{int64(1), "x"}, Count: 2}, {Elem: "y", Count: 1}}
	b := types.MultisetValue{{Elem: "y", Count: 1}, {Elem: []any{int64(1), "x"}, Count: 2}}
	if !valuesEqual(a, b) {
		t.Fatal("equal bags in another order differ")
	}
	c := types.MultisetValue{{Elem: "y", Count: 2}, {Elem: []any{int64(1), "x"}, Count: 2}}
	if valuesEqual(a, c) {
		t.Fatal("bags with different counts are equal")
	}
	if got, want := untypedString(b), "{[1, x]=2, y=1}"; got != want {
		t.Fatalf("printed %q, want %q", got, want)
	}
}
