package format

import (
	"fmt"
	"slices"
	"strings"
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

// A MULTISET<STRING> reads back from json and avro as it was written (a
// map of element to count in both, as Flink's formats hold it).
func TestMultisetRoundTrips(t *testing.T) {
	str := types.Type{Kind: types.String, Nullable: true}
	fields := []types.Field{{Name: "s", Type: types.Type{Kind: types.Multiset, Elem: &str, Nullable: true}}}
	want := types.MultisetValue{{Elem: "a", Count: 2}, {Elem: "b", Count: 1}}
	for _, name := range []string{"json", "avro"} {
		f, err := New(name, fields, nil)
		if err != nil {
			t.Fatal(err)
		}
		data, err := f.Encode([]any{types.MultisetValue{{Elem: "b", Count: 1}, {Elem: "a", Count: 2}}})
		if err != nil {
			t.Fatal(err)
		}
		row, err := f.Decode(data)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got, ok := row[0].(types.MultisetValue); !ok || !slices.Equal(got, want) {
			t.Errorf("%s: read back %v, want %v", name, row[0], want)
		}
	}
}

// The json format reads Flink's form of a MULTISET and fails the rest
// naming the column; a MULTISET the format has no form for is refused
// when the format is made, naming the column and the format.
func TestMultisetFormatErrors(t *testing.T) {
	str := types.Type{Kind: types.String, Nullable: true}
	ms := types.Type{Kind: types.Multiset, Elem: &str, Nullable: true}
	j := &JSON{Fields: []types.Field{{Name: "s", Type: ms}}}
	for in, want := range map[string]string{
		`{"s": {"x": 3}}`:      "[{x 3}]",
		`{"s": {}}`:            "[]",
		`{"s": null}`:          "[]",
		`{"s": ["x"]}`:         `json: field "s" (MULTISET<STRING>): want an object of element to count, got an array`,
		`{"s": {"x": "many"}}`: `json: field "s[\"x\"]" (INT): "many" is not an integer`,
	} {
		row, err := j.Decode([]byte(in))
		got := fmt.Sprint(err)
		if err == nil {
			got = fmt.Sprint(row[0])
			if row[0] == nil {
				got = "[]"
			}
		}
		if !strings.HasPrefix(got, want) {
			t.Errorf("%s: got %s, want %s", in, got, want)
		}
	}
	tInt := types.Type{Kind: types.Int, Nullable: true}
	ints := []types.Field{{Name: "n", Type: types.Type{Kind: types.Multiset, Elem: &tInt, Nullable: true}}}
	for format, want := range map[string]string{
		"json":          `format json: column "n" is MULTISET<INT>: the json format writes a MULTISET as an object of element to count, so its elements must be strings`,
		"debezium-json": `format debezium-json: column "n" is MULTISET<INT>`,
		"avro":          `avro: column "n": Avro writes a MULTISET as a map of element to count, and Avro maps have string keys`,
		"csv":           `format csv: column "n" is MULTISET<INT>, which the csv format cannot read or write`,
	} {
		var err error
		if IsChangelog(format) {
			_, err = NewChangelog(format, ints, nil)
		} else {
			_, err = New(format, ints, nil)
		}
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s: %v, want %s", format, err, want)
		}
	}
}
