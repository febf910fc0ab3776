package wasmudf

import (
	"context"
	"fmt"

	"github.com/tetratelabs/wazero/api"

	"github.com/weirstream/weir/types"
)

// invoke calls sig's export on m with SQL arguments (none NULL): numbers
// pass as they are, each STRING or BYTES through a buffer weir_alloc gives,
// freed after the call with the result's.
func invoke(ctx context.Context, m api.Module, sig signature, params []api.ValueType, args []any) (any, error) {
	in := make([]uint64, 0, len(params))
	var bufs [][2]uint32
	defer func() {
		for _, b := range bufs {
			// After a failed call the instance is dropped, so a free that
			// fails (or is never reached) loses nothing.
			m.ExportedFunction(freeExport).Call(ctx, uint64(b[0]), uint64(b[1]))
		}
	}()
	for i, a := range args {
		if !isBuffer(sig.params[i]) {
			in = append(in, number(a, params[len(in)]))
			continue
		}
		ptr, err := put(ctx, m, bytesOf(a))
		if err != nil {
			return nil, fmt.Errorf("argument %d: %w", i+1, err)
		}
		bufs = append(bufs, ptr)
		in = append(in, uint64(ptr[0]), uint64(ptr[1]))
	}
	out, err := m.ExportedFunction(sig.export).Call(ctx, in...)
	if err != nil {
		return nil, err
	}
	if !isBuffer(sig.result) {
		return value(out[0], sig.result), nil
	}
	ptr, n := uint32(out[0]>>32), uint32(out[0])
	b, ok := m.Memory().Read(ptr, n)
	if !ok {
		return nil, fmt.Errorf("the result (pointer %d, length %d) is outside the module's memory (%d bytes)", ptr, n, m.Memory().Size())
	}
	b = append([]byte(nil), b...)
	bufs = append(bufs, [2]uint32{ptr, n})
	if sig.result == types.String {
		return string(b), nil
	}
	return b, nil
}

// put copies b into a buffer the module's weir_alloc gives.
func put(ctx context.Context, m api.Module, b []byte) ([2]uint32, error) {
	out, err := m.ExportedFunction(allocExport).Call(ctx, uint64(len(b)))
	if err != nil {
		return [2]uint32{}, fmt.Errorf("%s(%d): %w", allocExport, len(b), err)
	}
	ptr := api.DecodeU32(out[0])
	if !m.Memory().Write(ptr, b) {
		return [2]uint32{}, fmt.Errorf("%s(%d) returned %d, outside the module's memory (%d bytes)", allocExport, len(b), ptr, m.Memory().Size())
	}
	return [2]uint32{ptr, uint32(len(b))}, nil
}

func bytesOf(v any) []byte {
	if s, ok := v.(string); ok {
		return []byte(s)
	}
	return v.([]byte)
}
