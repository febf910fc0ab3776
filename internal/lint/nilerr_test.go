package lint

import (
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/tools/go/packages"
)

// TestNoNilErrorShapes runs the error checks (nilerr.go) over every
// non-test package of the module.
func TestNoNilErrorShapes(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	cfg := &packages.Config{Dir: root, Mode: packages.NeedName | packages.NeedFiles | packages.NeedSyntax |
		packages.NeedTypes | packages.NeedTypesInfo}
	pkgs, err := packages.Load(cfg, "./...")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pkgs {
		for _, e := range p.Errors {
			t.Errorf("loading %s: %v", p.PkgPath, e)
		}
		for _, f := range CheckErrors(p.Fset, p.Syntax, p.TypesInfo) {
			f.Pos.Filename, _ = filepath.Rel(root, f.Pos.Filename)
			t.Error(f)
		}
	}
}

var wantComment = regexp.MustCompile(`// want (\S+)`)

// TestErrorChecksCatchOldShapes proves the checks are not vacuous: the
// shapes of the Kafka sink's and the planner's code before their fixes
// are flagged, exactly where testdata/nilerr says.
func TestErrorChecksCatchOldShapes(t *testing.T) {
	fset := token.NewFileSet()
	path := filepath.Join("testdata", "nilerr", "nilerr.go")
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := parser.ParseFile(fset, path, src, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	info := &types.Info{Types: map[ast.Expr]types.TypeAndValue{}, Uses: map[*ast.Ident]types.Object{},
		Defs: map[*ast.Ident]types.Object{}}
	conf := types.Config{Importer: importer.ForCompiler(fset, "source", nil)}
	if _, err := conf.Check("nilerr", fset, []*ast.File{f}, info); err != nil {
		t.Fatal(err)
	}
	var want, got []string
	for i, line := range strings.Split(string(src), "\n") {
		if m := wantComment.FindStringSubmatch(line); m != nil {
			want = append(want, strings.Join([]string{path, itoa(i + 1), m[1]}, ":"))
		}
	}
	for _, fd := range CheckErrors(fset, []*ast.File{f}, info) {
		got = append(got, strings.Join([]string{fd.Pos.Filename, itoa(fd.Pos.Line), fd.Check}, ":"))
	}
	sort.Strings(got)
	sort.Strings(want)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
