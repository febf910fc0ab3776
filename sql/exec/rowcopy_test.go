package exec

import (
	"reflect"
	"testing"
	"time"

	"github.com/shopspring/decimal"
)

// Copy is deep: changing the copy's nested slices, bytes or maps leaves
// the original as it was, and the copy equals the original.
func TestRowCodecCopyIsDeep(t *testing.T) {
	orig := []any{int64(1), "a", decimal.RequireFromString("1.50"), time.UnixMilli(5).UTC(), nil,
		[]any{int64(2), []any{"x"}}, []byte("b"), map[any]any{"k": []any{int64(3)}}}
	want := []any{int64(1), "a", decimal.RequireFromString("1.50"), time.UnixMilli(5).UTC(), nil,
		[]any{int64(2), []any{"x"}}, []byte("b"), map[any]any{"k": []any{int64(3)}}}
	cp := RowCodec{}.Copy(orig)
	if !reflect.DeepEqual(cp, orig) {
		t.Fatalf("copy %v differs from %v", cp, orig)
	}
	cp[0] = int64(9)
	cp[5].([]any)[1].([]any)[0] = "changed"
	cp[6].([]byte)[0] = 'z'
	cp[7].(map[any]any)["k"].([]any)[0] = int64(9)
	cp[7].(map[any]any)["new"] = true
	if !reflect.DeepEqual(orig, want) {
		t.Fatalf("original changed to %v", orig)
	}
	if (RowCodec{}).Copy(nil) != nil {
		t.Fatal("Copy(nil) is not nil")
	}
}
