package wasmudf

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"

	"github.com/weirstream/weir/sql/expr"
	"github.com/weirstream/weir/types"
)

// languages are the example modules' source folders under testdata, each
// built to udf.wasm by testdata/build.sh.
var languages = []string{"rust", "go", "assemblyscript"}

// TestExampleModules calls the checked-in modules built from Rust, Go and
// AssemblyScript: numbers and strings give exact results, the loop is
// stopped at the time limit and the unbounded allocation at the memory
// limit, with the function named, and the function works after both.
func TestExampleModules(t *testing.T) {
	str := types.Type{Kind: types.String, Nullable: true}
	for _, lang := range languages {
		t.Run(lang, func(t *testing.T) {
			path := filepath.Join("testdata", lang, "udf.wasm")
			// Time limits are wall time: long ones for the functions that
			// must not reach theirs on a loaded machine.
			o := Options{Timeout: time.Minute, MemoryPages: 256}
			add := mustLoad(t, "PLUS", path, "add", o)
			shout := mustLoad(t, "SHOUT", path, "shout(STRING) RETURNS STRING", o)
			if rt, err := shout.Result([]types.Type{{Kind: types.Varchar, Precision: 5}}); err != nil || rt.String() != str.String() {
				t.Fatalf("shout result type %v, %v", rt, err)
			}
			for _, c := range []struct {
				f    func([]any) (any, error)
				args []any
				want any
			}{
				{add.Eval, []any{int64(40), int64(2)}, int64(42)},
				{shout.Eval, []any{"weir"}, "WEIR!"},
				{shout.Eval, []any{""}, "!"},
				{shout.Eval, []any{"héllo wörld"}, "HÉLLO WÖRLD!"},
				{shout.Eval, []any{strings.Repeat("ab", 50000)}, strings.Repeat("AB", 50000) + "!"},
				{shout.Eval, []any{nil}, nil},
			} {
				if got, err := c.f(c.args); err != nil || got != c.want {
					t.Errorf("%v: got %.40v, %v, want %.40v", c.args, got, err, c.want)
				}
			}
			words := mustLoad(t, "WORDS", path, "words(STRING) RETURNS ARRAY<STRING>", o)
			if rt, err := words.Result([]types.Type{str}); err != nil || rt.String() != "ARRAY<STRING NOT NULL>" {
				t.Fatalf("words result type %v, %v", rt, err)
			}
			for in, want := range map[string][]any{"the quick  brown fox": {"the", "quick", "brown", "fox"}, "": {}, "héllo": {"héllo"}} {
				if got, err := words.Eval([]any{in}); err != nil || !reflect.DeepEqual(got, want) {
					t.Errorf("words(%q) = %#v, %v, want %#v", in, got, err, want)
				}
			}
			spin := mustLoad(t, "SPIN", path, "spin", Options{Timeout: 200 * time.Millisecond})
			_, err := spin.Eval([]any{int64(1)})
			if want := fmt.Sprintf("function SPIN (module %s): wasmudf: the call ran longer than its time limit (200ms)", path); !errors.Is(err, ErrTimeout) || err.Error() != want {
				t.Errorf("spin: %v, want %s", err, want)
			}
			hog := mustLoad(t, "HOG", path, "hog", o)
			_, err = hog.Eval([]any{int64(1)})
			if want := fmt.Sprintf("function HOG (module %s): wasmudf: the module ran out of memory at its memory limit (16 MiB): ", path); !errors.Is(err, ErrMemoryLimit) || !strings.HasPrefix(err.Error(), want) {
				t.Errorf("hog: %v, want %s…", err, want)
			}
			// Many calls reuse one instance: the buffers are freed.
			for i := range 2000 {
				if got, err := shout.Eval([]any{strings.Repeat("x", 4096)}); err != nil || len(got.(string)) != 4097 {
					t.Fatalf("call %d: %.20v, %v", i, got, err)
				}
			}
		})
	}
}

// TestDeclaredSignatureErrors: a declared signature that the export's
// WebAssembly types or the module's exports do not fit is refused at load;
// an argument that does not pass is refused at planning.
func TestDeclaredSignatureErrors(t *testing.T) {
	rust := filepath.Join("testdata", "rust", "udf.wasm")
	for _, c := range []struct{ path, as, want string }{
		{rust, "shout(STRING) RETURNS DOUBLE", `export "shout" has WebAssembly type (i32, i32) -> (i64), but shout(STRING) RETURNS DOUBLE lowers to (i32, i32) -> (f64)`},
		{rust, "add(STRING, BIGINT) RETURNS BIGINT", `export "add" has WebAssembly type (i64, i64) -> (i64), but add(STRING, BIGINT) RETURNS BIGINT lowers to (i32, i32, i64) -> (i64)`},
		{rust, "add(BIGINT, BIGINT)", `AS 'add(BIGINT, BIGINT)': want RETURNS TYPE after the parameter list`},
		{rust, "words(STRING) RETURNS ARRAY<INT>", `AS 'words(STRING) RETURNS ARRAY<INT>': an ARRAY result holds STRING or BIGINT, not INT`},
		{rust, "add(BIGINT, DECIMAL) RETURNS BIGINT", `AS 'add(BIGINT, DECIMAL) RETURNS BIGINT': type "DECIMAL" is not one a WebAssembly function takes (BOOLEAN, TINYINT, SMALLINT, INT, BIGINT, FLOAT, DOUBLE, STRING, BYTES)`},
	} {
		_, err := Load("F", c.path, c.as, Options{})
		if want := "function F (module " + c.path + "): " + c.want; err == nil || err.Error() != want {
			t.Errorf("AS '%s':\n got %v\nwant %s", c.as, err, want)
		}
	}
	shout := mustLoad(t, "SHOUT", rust, "shout(STRING) RETURNS STRING", Options{})
	_, err := shout.Result([]types.Type{bigint})
	if want := "function SHOUT: argument 1 is BIGINT, which does not pass to the declared parameter STRING (shout(STRING) RETURNS STRING)"; err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
}

func mustLoad(t *testing.T, name, path, as string, o Options) *expr.Function {
	t.Helper()
	f, err := Load(name, path, as, o)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestExampleModulesRebuild builds each example module from its source
// with testdata/build.sh and checks that it exports what the checked-in
// udf.wasm exports (the bytes too are equal with the same toolchain
// versions, but a newer compiler may change them). A language whose
// toolchain is missing is skipped: the checked-in module stands, and
// TestExampleModules still calls it. Go is always present; Rust needs
// cargo and the wasm32-unknown-unknown target; AssemblyScript needs npm
// (build.sh installs the pinned compiler). -short skips the builds.
func TestExampleModulesRebuild(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds the example modules (up to a minute cold)")
	}
	out := t.TempDir()
	for _, lang := range languages {
		t.Run(lang, func(t *testing.T) {
			if why := missingToolchain(lang); why != "" {
				t.Skipf("%s; the checked-in testdata/%s/udf.wasm stands", why, lang)
			}
			cmd := exec.Command("bash", "testdata/build.sh", lang)
			cmd.Env = append(os.Environ(), "OUT="+out)
			if b, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("build.sh %s: %v\n%s", lang, err, b)
			}
			built := filepath.Join(out, lang+".wasm")
			checked := filepath.Join("testdata", lang, "udf.wasm")
			if got, want := exports(t, built), exports(t, checked); !slices.Equal(got, want) {
				t.Errorf("rebuilt %s exports\n%s\nchecked-in exports\n%s\n(run go generate ./sql/wasmudf/)",
					lang, strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			a, _ := os.ReadFile(built)
			b, _ := os.ReadFile(checked)
			t.Logf("rebuilt %s: %d bytes, byte-identical to the checked-in module: %v", lang, len(a), string(a) == string(b))
		})
	}
}

func missingToolchain(lang string) string {
	switch lang {
	case "rust":
		if _, err := exec.LookPath("cargo"); err != nil {
			return "no cargo"
		}
		dir, err := exec.Command("rustc", "--print", "target-libdir", "--target", "wasm32-unknown-unknown").Output()
		if _, serr := os.Stat(strings.TrimSpace(string(dir))); err != nil || serr != nil {
			return "no wasm32-unknown-unknown target (rustup target add wasm32-unknown-unknown)"
		}
	case "assemblyscript":
		if _, err := exec.LookPath("npm"); err != nil {
			return "no npm"
		}
	}
	return ""
}

// exports lists a module's exported functions with their WebAssembly
// types, sorted.
func exports(t *testing.T, path string) []string {
	code, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	rt := wazero.NewRuntime(ctx)
	defer rt.Close(ctx)
	mod, err := rt.CompileModule(ctx, code)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var list []string
	for name, def := range mod.ExportedFunctions() {
		list = append(list, fmt.Sprintf("%s%s -> %s", name, wasmTypes(def.ParamTypes()), wasmTypes(def.ResultTypes())))
	}
	slices.Sort(list)
	return list
}
