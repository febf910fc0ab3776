package wasmudf

import (
	"context"
	"encoding/binary"
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
	bufs = append(bufs, [2]uint32{ptr, n})
	switch sig.result {
	case types.String:
		return string(b), nil
	case types.Array:
		return elements(b, sig.elem)
	}
	return append([]byte(nil), b...), nil
}

// elements reads an ARRAY result's buffer: BIGINTs as 8 bytes each, STRINGs
// each as a 4-byte length and its bytes (little-endian, as WebAssembly's
// memory is).
func elements(b []byte, elem types.Kind) ([]any, error) {
	out := []any{}
	if elem == types.BigInt {
		if len(b)%8 != 0 {
			return nil, fmt.Errorf("an ARRAY<BIGINT> result of %d bytes, not a multiple of 8", len(b))
		}
		for i := 0; i < len(b); i += 8 {
			out = append(out, int64(binary.LittleEndian.Uint64(b[i:])))
		}
		return out, nil
	}
	for len(b) > 0 {
		if len(b) < 4 || uint64(binary.LittleEndian.Uint32(b)) > uint64(len(b)-4) {
			return nil, fmt.Errorf("an ARRAY<STRING> result's element %d runs past the result's end", len(out)+1)
		}
		n := binary.LittleEndian.Uint32(b)
		out = append(out, string(b[4:4+n]))
		b = b[4+n:]
	}
	return out, nil
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
