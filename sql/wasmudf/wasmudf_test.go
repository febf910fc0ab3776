package wasmudf

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weirstream/weir/types"
)

var bigint = types.Type{Kind: types.BigInt, Nullable: true}

func TestCallsAndLimits(t *testing.T) {
	path := writeTestModule(t, t.TempDir())
	add, err := Load("ADD", path, "add", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rt, err := add.Result([]types.Type{bigint, {Kind: types.Int}}); err != nil || rt.Kind != types.BigInt {
		t.Fatalf("result type %v, %v", rt, err)
	}
	if v, err := add.Eval([]any{int64(40), int64(2)}); err != nil || v != int64(42) {
		t.Fatalf("add(40, 2) = %v, %v", v, err)
	}
	if v, err := add.Eval([]any{nil, int64(2)}); err != nil || v != nil {
		t.Fatalf("add(NULL, 2) = %v, %v", v, err)
	}
	_, err = add.Result([]types.Type{bigint, {Kind: types.String, Nullable: true}})
	if want := "function ADD: argument 2 is STRING, which does not pass to the module's parameter i64 (add(i64, i64) i64)"; err == nil || err.Error() != want {
		t.Errorf("error %v, want %s", err, want)
	}
	_, err = add.Result([]types.Type{bigint})
	if want := "function ADD takes 2 arguments (add(i64, i64) i64), got 1"; err == nil || err.Error() != want {
		t.Errorf("error %v, want %s", err, want)
	}

	spin, _ := Load("SPIN", path, "spin", Options{Timeout: 50 * time.Millisecond})
	_, err = spin.Eval([]any{int64(1)})
	if !errors.Is(err, ErrTimeout) || !strings.HasPrefix(err.Error(), "function SPIN (module "+path+"): wasmudf: the call ran longer than its time limit") {
		t.Errorf("spin: %v", err)
	}
	grow, _ := Load("GROW", path, "grow", Options{MemoryPages: 16})
	if _, err = grow.Eval([]any{int64(1)}); err == nil || !strings.Contains(err.Error(), "unreachable") {
		t.Errorf("grow: %v", err)
	}
	// The instance that failed is dropped; the function still works.
	if v, err := add.Eval([]any{int64(-1), int64(1)}); err != nil || v != int64(0) {
		t.Fatalf("add(-1, 1) = %v, %v", v, err)
	}
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	path := writeTestModule(t, dir)
	os.WriteFile(filepath.Join(dir, "bad.wasm"), []byte("not wasm"), 0o644)
	for _, c := range []struct{ path, export, want string }{
		{filepath.Join(dir, "none.wasm"), "add", "no such file or directory"},
		{filepath.Join(dir, "bad.wasm"), "add", "not a valid WebAssembly module"},
		{path, "mul", `the module exports no function "mul" (AS 'mul')`},
	} {
		_, err := Load("F", c.path, c.export, Options{})
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "function F (module "+c.path+")") {
			t.Errorf("%s %s: %v, want …%s", c.path, c.export, err, c.want)
		}
	}
}

func writeTestModule(t testing.TB, dir string) string {
	path := filepath.Join(dir, "udf.wasm")
	if err := os.WriteFile(path, TestModule(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// BenchmarkCall measures one call of the test module's add (pooled
// instance, time limit armed): go test -run '^$' -bench Call ./sql/wasmudf/
func BenchmarkCall(b *testing.B) {
	add, err := Load("ADD", writeTestModule(b, b.TempDir()), "add", Options{})
	if err != nil {
		b.Fatal(err)
	}
	args := []any{int64(1), int64(2)}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := add.Eval(args); err != nil {
			b.Fatal(err)
		}
	}
}
