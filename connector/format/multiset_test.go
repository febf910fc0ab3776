package format

import (
	"testing"

	"github.com/weirstream/weir/types"
)

// A MULTISET is written as Flink's json format writes it: an object of
// element to count.
func TestJSONEncodesMultiset(t *testing.T) {
	str := types.Type{Kind: types.String, Nullable: true}
	j := &JSON{Fields: []types.Field{{Name: "s", Type: types.Type{Kind: types.Multiset, Elem: &str}}}}
	data, err := j.Encode([]any{types.MultisetValue{{Elem: "b", Count: 1}, {Elem: "a", Count: 2}}})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"s":{"a":2,"b":1}}`; string(data) != want {
		t.Fatalf("encoded %s, want %s", data, want)
	}
}
