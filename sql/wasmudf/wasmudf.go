// Package wasmudf runs SQL user-defined scalar functions compiled to
// WebAssembly (CREATE FUNCTION f AS 'export' LANGUAGE WASM USING JAR
// 'f.wasm'): the module runs in wazero's sandbox (pure Go, no cgo, no
// access to files, network or clock unless given), with a memory limit
// and a time limit per call, and its exported function's signature is
// checked against the SQL call's argument types at plan time.
//
// ABI: the export takes and returns WebAssembly numbers; SQL types map as
// INT/SMALLINT/TINYINT/BOOLEAN ↔ i32, BIGINT ↔ i64, FLOAT ↔ f32, DOUBLE ↔
// f64 (an INT argument also passes to an i64 parameter, a FLOAT to an
// f64 one). The result is INT for i32, BIGINT for i64, FLOAT, DOUBLE. A
// NULL argument gives a NULL result without calling the module. Strings
// and other types are not passed yet.
package wasmudf

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"sync"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"github.com/weirstream/weir/sql/expr"
	"github.com/weirstream/weir/types"
)

// Options are the sandbox's limits.
type Options struct {
	// Timeout is the longest one call may run (default 1 s); a call that
	// runs longer is stopped with an error.
	Timeout time.Duration
	// MemoryPages is the most linear memory the module may have, in 64 KiB
	// pages (default 512: 32 MiB); growing past it fails inside the module.
	MemoryPages uint32
}

// Error is a function that cannot be loaded or called.
type Error struct {
	Function string // the SQL name
	Module   string // the .wasm path
	Err      error
}

func (e *Error) Error() string {
	return fmt.Sprintf("function %s (module %s): %v", e.Function, e.Module, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// ErrTimeout is a call stopped at Options.Timeout.
var ErrTimeout = errors.New("wasmudf: the call ran longer than its time limit")

// Load compiles the module at path and returns the SQL function name that
// calls its export.
func Load(name, path, export string, o Options) (*expr.Function, error) {
	if o.Timeout <= 0 {
		o.Timeout = time.Second
	}
	if o.MemoryPages == 0 {
		o.MemoryPages = 512
	}
	fail := func(err error) error { return &Error{Function: name, Module: path, Err: err} }
	code, err := os.ReadFile(path)
	if err != nil {
		return nil, fail(err)
	}
	ctx := context.Background()
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfig().WithMemoryLimitPages(o.MemoryPages).WithCloseOnContextDone(true))
	if _, err := wasi_snapshot_preview1.Instantiate(ctx, rt); err != nil {
		return nil, fail(err)
	}
	mod, err := rt.CompileModule(ctx, code)
	if err != nil {
		return nil, fail(fmt.Errorf("not a valid WebAssembly module: %w", err))
	}
	def, ok := mod.ExportedFunctions()[export]
	if !ok {
		return nil, fail(fmt.Errorf("the module exports no function %q (AS '%s')", export, export))
	}
	if len(def.ResultTypes()) != 1 {
		return nil, fail(fmt.Errorf("export %q returns %d values, want 1", export, len(def.ResultTypes())))
	}
	u := &udf{name: name, path: path, export: export, rt: rt, mod: mod, params: def.ParamTypes(), result: def.ResultTypes()[0], o: o}
	return &expr.Function{Result: u.check, Eval: u.call, Deterministic: true}, nil
}

// udf is one loaded function; instances of its module are pooled (a
// module instance runs one call at a time).
type udf struct {
	name, path, export string
	rt                 wazero.Runtime
	mod                wazero.CompiledModule
	params             []api.ValueType
	result             api.ValueType
	o                  Options

	mu   sync.Mutex
	pool []api.Module
	n    int
}

// check is the plan-time signature check: each argument's SQL type must
// pass to its parameter.
func (u *udf) check(args []types.Type) (types.Type, error) {
	if len(args) != len(u.params) {
		return types.Type{}, fmt.Errorf("function %s takes %d arguments (%s), got %d", u.name, len(u.params), u.signature(), len(args))
	}
	for i, a := range args {
		if !passes(a, u.params[i]) {
			return types.Type{}, fmt.Errorf("function %s: argument %d is %s, which does not pass to the module's parameter %s (%s)",
				u.name, i+1, a, api.ValueTypeName(u.params[i]), u.signature())
		}
	}
	return resultType(u.result), nil
}

func (u *udf) signature() string {
	s := u.export + "("
	for i, p := range u.params {
		if i > 0 {
			s += ", "
		}
		s += api.ValueTypeName(p)
	}
	return s + ") " + api.ValueTypeName(u.result)
}

func passes(t types.Type, p api.ValueType) bool {
	switch t.Kind {
	case types.TinyInt, types.SmallInt, types.Int, types.Boolean:
		return p == api.ValueTypeI32 || p == api.ValueTypeI64
	case types.BigInt:
		return p == api.ValueTypeI64
	case types.Float:
		return p == api.ValueTypeF32 || p == api.ValueTypeF64
	case types.Double:
		return p == api.ValueTypeF64
	}
	return false
}

func resultType(r api.ValueType) types.Type {
	switch r {
	case api.ValueTypeI32:
		return types.Type{Kind: types.Int, Nullable: true}
	case api.ValueTypeI64:
		return types.Type{Kind: types.BigInt, Nullable: true}
	case api.ValueTypeF32:
		return types.Type{Kind: types.Float, Nullable: true}
	}
	return types.Type{Kind: types.Double, Nullable: true}
}

// call runs the export on a pooled instance, within the time limit.
func (u *udf) call(args []any) (any, error) {
	in := make([]uint64, len(args))
	for i, a := range args {
		if a == nil {
			return nil, nil
		}
		in[i] = encode(a, u.params[i])
	}
	m, err := u.instance()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), u.o.Timeout)
	out, err := m.ExportedFunction(u.export).Call(ctx, in...)
	timedOut := ctx.Err() == context.DeadlineExceeded
	cancel()
	if err != nil {
		m.Close(context.Background()) // a trapped or stopped instance is not reused
		if timedOut {
			err = fmt.Errorf("%w (%s)", ErrTimeout, u.o.Timeout)
		}
		return nil, &Error{Function: u.name, Module: u.path, Err: err}
	}
	u.release(m)
	return decode(out[0], u.result), nil
}

func (u *udf) instance() (api.Module, error) {
	u.mu.Lock()
	if n := len(u.pool); n > 0 {
		m := u.pool[n-1]
		u.pool = u.pool[:n-1]
		u.mu.Unlock()
		return m, nil
	}
	u.n++
	id := u.n
	u.mu.Unlock()
	cfg := wazero.NewModuleConfig().WithName(fmt.Sprintf("%s-%d", u.name, id)).WithStartFunctions("_initialize")
	m, err := u.rt.InstantiateModule(context.Background(), u.mod, cfg)
	if err != nil {
		return nil, &Error{Function: u.name, Module: u.path, Err: err}
	}
	return m, nil
}

func (u *udf) release(m api.Module) {
	u.mu.Lock()
	u.pool = append(u.pool, m)
	u.mu.Unlock()
}

func encode(v any, p api.ValueType) uint64 {
	switch x := v.(type) {
	case bool:
		if x {
			return 1
		}
		return 0
	case int64:
		if p == api.ValueTypeI32 {
			return api.EncodeI32(int32(x))
		}
		return api.EncodeI64(x)
	case float64:
		if p == api.ValueTypeF32 {
			return api.EncodeF32(float32(x))
		}
		return api.EncodeF64(x)
	}
	return 0
}

func decode(r uint64, t api.ValueType) any {
	switch t {
	case api.ValueTypeI32:
		return int64(api.DecodeI32(r))
	case api.ValueTypeI64:
		return int64(r)
	case api.ValueTypeF32:
		return float64(api.DecodeF32(r))
	}
	return math.Float64frombits(r)
}
