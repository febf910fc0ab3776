// Package wasmudf runs SQL user-defined scalar functions compiled to
// WebAssembly (CREATE FUNCTION f AS 'export' LANGUAGE WASM USING JAR
// 'f.wasm'): the module runs in wazero's sandbox (pure Go, no cgo, no
// access to files, network or clock unless given), with a memory limit
// and a time limit per call, and its exported function's signature is
// checked against the SQL call's argument types at plan time.
//
// ABI. AS names the export, alone ('add') or with its SQL signature
// ('shout(STRING) RETURNS STRING'). Alone, the export's WebAssembly
// numbers give its SQL types: i32 ↔ INT, i64 ↔ BIGINT, f32 ↔ FLOAT,
// f64 ↔ DOUBLE. Declared, the types lower to WebAssembly as BOOLEAN,
// TINYINT, SMALLINT, INT → i32; BIGINT → i64; FLOAT → f32; DOUBLE → f64;
// a STRING (UTF-8) or BYTES parameter → two i32s, the pointer and length
// of its bytes in the module's linear memory; a STRING or BYTES result →
// one i64, pointer<<32 | length; Load checks the export has exactly the
// lowered types. A module that takes or returns STRING or BYTES exports
// its allocator: weir_alloc(len i32) i32 returns len writable bytes, and
// weir_free(ptr i32, len i32) takes back a buffer. For each call the host
// weir_allocs and fills a buffer per string argument, calls the export,
// copies the result's bytes out, then weir_frees the result and the
// arguments: the export must not keep or free its arguments, and must
// return a buffer weir_free accepts. Integer arguments widen (INT to a
// BIGINT parameter), FLOAT widens to DOUBLE, CHAR and VARCHAR pass as
// STRING. A NULL argument gives a NULL result without calling the module;
// a module cannot return NULL.
//
// Limits. A call that runs past Options.Timeout is stopped; a module that
// grows its memory past Options.MemoryPages traps inside (its allocator
// fails). Either fails the call with an *Error naming the function and
// the limit, and the instance is dropped; Options.OnError says whether the
// call's row then fails the job (the default) or gets NULL.
package wasmudf

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"github.com/weirstream/weir/sql/expr"
	"github.com/weirstream/weir/types"
)

// Options are the sandbox's limits and what a failed call gives.
type Options struct {
	// Timeout is the longest one call may run (default 1 s); a call that
	// runs longer is stopped with an error.
	Timeout time.Duration
	// MemoryPages is the most linear memory the module may have, in 64 KiB
	// pages (default 512: 32 MiB); growing past it fails inside the module.
	MemoryPages uint32
	// OnError is what a call that fails (stopped at a limit, trapped)
	// gives: FailOnError (the default) returns its error, which fails the
	// job; NullOnError gives NULL for that row and goes on.
	OnError ErrorPolicy
}

// ErrorPolicy is what a failed call gives.
type ErrorPolicy int

const (
	// FailOnError returns the call's error.
	FailOnError ErrorPolicy = iota
	// NullOnError gives NULL.
	NullOnError
)

func (o *Options) ensureDefaults() {
	if o.Timeout <= 0 {
		o.Timeout = time.Second
	}
	if o.MemoryPages == 0 {
		o.MemoryPages = 512
	}
}

// Error is a function that cannot be loaded or called.
type Error struct {
	Function string // the SQL name
	Module   string // the .wasm path
	Err      error
}

// Error names the function and its module before the cause.
func (e *Error) Error() string {
	return fmt.Sprintf("function %s (module %s): %v", e.Function, e.Module, e.Err)
}

// Unwrap returns the cause, for errors.Is (ErrTimeout, …) and errors.As.
func (e *Error) Unwrap() error { return e.Err }

var (
	// ErrTimeout is a call stopped at Options.Timeout.
	ErrTimeout = errors.New("wasmudf: the call ran longer than its time limit")
	// ErrMemoryLimit is a call that failed with the module's memory at
	// (or within an allocation of) Options.MemoryPages.
	ErrMemoryLimit = errors.New("wasmudf: the module ran out of memory at its memory limit")
)

// compiled keeps each module's machine code, so that a module loaded for
// several functions (or again) is compiled once.
var compiled = wazero.NewCompilationCache()

// Load compiles the module at path and returns the SQL function that
// calls the export AS names (see the package doc for AS's forms).
func Load(name, path, as string, o Options) (*expr.Function, error) {
	o.ensureDefaults()
	fail := func(err error) error { return &Error{Function: name, Module: path, Err: err} }
	sig, err := parseSignature(as)
	if err != nil {
		return nil, fail(err)
	}
	code, err := os.ReadFile(path)
	if err != nil {
		return nil, fail(err)
	}
	ctx := context.Background()
	cfg := wazero.NewRuntimeConfig().WithMemoryLimitPages(o.MemoryPages).WithCloseOnContextDone(true).WithCompilationCache(compiled)
	rt := wazero.NewRuntimeWithConfig(ctx, cfg)
	if _, err := wasi_snapshot_preview1.Instantiate(ctx, rt); err != nil {
		return nil, fail(err)
	}
	mod, err := rt.CompileModule(ctx, code)
	if err != nil {
		return nil, fail(fmt.Errorf("not a valid WebAssembly module: %w", err))
	}
	if sig, err = bind(mod, sig); err != nil {
		return nil, fail(err)
	}
	u := &udf{name: name, path: path, rt: rt, mod: mod, sig: sig, o: o}
	u.params, _ = sig.lower()
	return &expr.Function{Result: u.check, Eval: u.call, Deterministic: true}, nil
}

// bind checks the module exports the function, with the WebAssembly types
// its declared signature lowers to (or infers them), and the allocator a
// STRING or BYTES needs.
func bind(mod wazero.CompiledModule, sig signature) (signature, error) {
	exports := mod.ExportedFunctions()
	def, ok := exports[sig.export]
	if !ok {
		return sig, fmt.Errorf("the module exports no function %q (AS '%s')", sig.export, sig.export)
	}
	if !sig.declared {
		if len(def.ResultTypes()) != 1 {
			return sig, fmt.Errorf("export %q returns %d values, want 1", sig.export, len(def.ResultTypes()))
		}
		return infer(sig.export, def), nil
	}
	params, results := sig.lower()
	if !slices.Equal(params, def.ParamTypes()) || !slices.Equal(results, def.ResultTypes()) {
		return sig, fmt.Errorf("export %q has WebAssembly type %s -> %s, but %s lowers to %s -> %s",
			sig.export, wasmTypes(def.ParamTypes()), wasmTypes(def.ResultTypes()), sig, wasmTypes(params), wasmTypes(results))
	}
	if !sig.usesBuffers() {
		return sig, nil
	}
	i32 := api.ValueTypeI32
	for _, want := range []struct {
		name            string
		params, results []api.ValueType
	}{{allocExport, []api.ValueType{i32}, []api.ValueType{i32}}, {freeExport, []api.ValueType{i32, i32}, nil}} {
		d, ok := exports[want.name]
		if !ok || !slices.Equal(d.ParamTypes(), want.params) || !slices.Equal(d.ResultTypes(), want.results) {
			return sig, fmt.Errorf("%s takes or returns STRING or BYTES, so the module must export %s%s -> %s", sig, want.name, wasmTypes(want.params), wasmTypes(want.results))
		}
	}
	return sig, nil
}

// udf is one loaded function; instances of its module are pooled (a
// module instance runs one call at a time).
type udf struct {
	name, path string
	rt         wazero.Runtime
	mod        wazero.CompiledModule
	sig        signature
	params     []api.ValueType // the export's, lowered
	o          Options

	mu   sync.Mutex
	pool []api.Module
	n    int
}

// check is the plan-time signature check: each argument's SQL type must
// pass to its parameter.
func (u *udf) check(args []types.Type) (types.Type, error) {
	if len(args) != len(u.sig.params) {
		return types.Type{}, fmt.Errorf("function %s takes %d arguments (%s), got %d", u.name, len(u.sig.params), u.sig, len(args))
	}
	whose := "the module's"
	if u.sig.declared {
		whose = "the declared"
	}
	for i, a := range args {
		if !passes(a, u.sig.params[i]) {
			return types.Type{}, fmt.Errorf("function %s: argument %d is %s, which does not pass to %s parameter %s (%s)",
				u.name, i+1, a, whose, u.sig.paramName(i), u.sig)
		}
	}
	return u.sig.resultType(), nil
}

// call runs the export on a pooled instance, within the time limit.
func (u *udf) call(args []any) (any, error) {
	if slices.Contains(args, nil) {
		return nil, nil
	}
	m, err := u.instance()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), u.o.Timeout)
	v, err := invoke(ctx, m, u.sig, u.params, args)
	timedOut := ctx.Err() == context.DeadlineExceeded
	cancel()
	if err != nil {
		err = u.failed(m, err, timedOut)
		if u.o.OnError == NullOnError {
			return nil, nil
		}
		return nil, err
	}
	u.release(m)
	return v, nil
}

// failed drops the instance a call failed on (a trapped or stopped
// instance is not reused) and says which limit stopped it, if one did.
func (u *udf) failed(m api.Module, err error, timedOut bool) error {
	// A trap's message goes on with a stack trace of the module's numbered
	// functions, which tells a SQL user nothing: keep its first line.
	err = errors.New(strings.SplitN(err.Error(), "\n", 2)[0])
	switch {
	case timedOut:
		err = fmt.Errorf("%w (%s)", ErrTimeout, u.o.Timeout)
	case nearLimit(m, u.o.MemoryPages):
		err = fmt.Errorf("%w (%d MiB): %v", ErrMemoryLimit, u.o.MemoryPages/16, err)
	}
	m.Close(context.Background())
	return &Error{Function: u.name, Module: u.path, Err: err}
}

// nearLimit tells whether a module's memory is within a quarter of limit
// pages: an allocator grows memory by more than it needs (Go's runtime in
// 4 MiB steps), so a trap at, say, 28 of 32 MiB is taken as one that
// memory.grow refused. A trap farther from the limit is reported as it is.
func nearLimit(m api.Module, limit uint32) bool {
	mem := m.Memory()
	if mem == nil {
		return false
	}
	max := uint64(limit) * 65536
	return uint64(mem.Size()) >= max-max/4
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
