package session

import (
	"fmt"
	"strings"

	"github.com/weirstream/weir/sql/wasmudf"
	"github.com/weirstream/weir/state/backends"
)

// wasmOptions reads the limits and error policy of WebAssembly functions
// from the session, as they are when CREATE FUNCTION runs:
// 'weir.wasm-udf.timeout' (per call, default 1 s),
// 'weir.wasm-udf.memory' (per module instance, default 32 mb) and
// 'weir.wasm-udf.on-error': 'fail' (default: the call's error fails
// the job) or 'null' (the row gets NULL and the job goes on).
func (st Settings) wasmOptions() (wasmudf.Options, error) {
	var o wasmudf.Options
	d, _, err := st.duration("weir.wasm-udf.timeout")
	if err != nil {
		return o, err
	}
	o.Timeout = d
	if v, ok := st.get("weir.wasm-udf.memory"); ok {
		n, err := backends.ParseMemorySize(v)
		if err != nil || n < 64<<10 || n > 4<<30 {
			return o, fmt.Errorf("SET 'weir.wasm-udf.memory' = '%s': want a memory size from 64 kb to 4 gb", v)
		}
		o.MemoryPages = uint32((n + 65535) / 65536)
	}
	switch v, _ := st.get("weir.wasm-udf.on-error"); strings.ToLower(strings.TrimSpace(v)) {
	case "", "fail":
	case "null":
		o.OnError = wasmudf.NullOnError
	default:
		return o, fmt.Errorf("SET 'weir.wasm-udf.on-error' = '%s': want 'fail' or 'null'", v)
	}
	return o, nil
}
