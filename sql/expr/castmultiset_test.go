package expr

import (
	"slices"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/weirstream/weir/types"
)

// Casting a MULTISET casts each element; elements that become equal are
// one element with their counts summed, and NULL stays an element.
func TestCastMultiset(t *testing.T) {
	dec := types.Type{Kind: types.Decimal, Precision: 5, Scale: 1, Nullable: true}
	i := types.Type{Kind: types.Int, Nullable: true}
	fn, err := castFn(types.Type{Kind: types.Multiset, Elem: &dec}, types.Type{Kind: types.Multiset, Elem: &i}, time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	in := types.MultisetValue{{Elem: decimal.RequireFromString("1.2"), Count: 2}, {Elem: nil, Count: 1},
		{Elem: decimal.RequireFromString("1.4"), Count: 3}, {Elem: decimal.RequireFromString("2.0"), Count: 1}}
	got, err := fn(in)
	if err != nil {
		t.Fatal(err)
	}
	want := types.MultisetValue{{Elem: int64(1), Count: 5}, {Elem: nil, Count: 1}, {Elem: int64(2), Count: 1}}
	if !slices.Equal(got.(types.MultisetValue), want) {
		t.Fatalf("cast %v = %v, want %v", in, got, want)
	}
}
