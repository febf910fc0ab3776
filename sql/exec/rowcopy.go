package exec

import (
	"github.com/weirstream/weir/state"
	"github.com/weirstream/weir/types"
)

var _ state.Copier[[]any] = RowCodec{}

// Copy implements state.Copier: a deep copy of a row without encoding it.
// The heap state backend calls it when a row that an in-flight snapshot
// still holds is read, so the snapshot keeps the row as it was at the
// barrier. Slices ([]any, []byte) and maps are copied; every other SQL
// value (numbers, strings, decimals, times) is immutable and shared.
func (RowCodec) Copy(fields []any) []any {
	if fields == nil {
		return nil
	}
	out := make([]any, len(fields))
	for i, v := range fields {
		out[i] = copyValue(v)
	}
	return out
}

func copyValue(v any) any {
	switch x := v.(type) {
	case []any:
		return RowCodec{}.Copy(x)
	case []byte:
		return append([]byte(nil), x...)
	case map[any]any:
		m := make(map[any]any, len(x))
		for k, e := range x {
			m[copyValue(k)] = copyValue(e)
		}
		return m
	case types.MultisetValue:
		return copyMultiset(x)
	}
	return v
}
