package lint

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

const module = "github.com/weirstream/weir"

// layer names a group of packages by path prefix (relative to the module
// root; "." is the root package, the DataStream API) and the prefixes of
// Weir packages it may import. Anything not listed may not be imported.
// The order follows docs/DESIGN.md, leaves first.
type layer struct {
	prefixes []string
	mayUse   []string
}

var (
	leaves     = []string{"event", "keygroup", "delivery", "duration", "types", "clock", "durable"}
	primitives = append([]string{"metrics", "barrier", "debloat", "watermark", "state", "checkpointstorage", "checkpoint", "restart"}, leaves...)
	runtime    = append([]string{"operator", "graph", "task", "runtime"}, primitives...)
	api        = append([]string{"."}, runtime...)
	// Connectors' integration tests find services through internal/testsvc
	// and reuse the fault-injection harness in internal/sim.
	// internal/savepointtest takes jobs through savepoints in their tests;
	// internal/txncheck finds the prepared transactions a job left behind.
	connectors = append([]string{"connector", "internal/testsvc", "internal/sim", "internal/savepointtest", "internal/txncheck"}, api...)
	sqlLayer   = append([]string{"sql"}, connectors...)
	jobManager = append([]string{"jobmanager", "rest/api"}, sqlLayer...)
	everything = append([]string{"rest", "examples", "bench", "internal"}, jobManager...)
)

var layers = []layer{
	{prefixes: leaves, mayUse: nil},
	// metrics holds the live metric groups (no reporter library);
	// metrics/prom reads them for Prometheus.
	{prefixes: []string{"metrics"}, mayUse: nil},
	{prefixes: []string{"metrics/prom"}, mayUse: []string{"metrics"}},
	{prefixes: []string{"barrier", "debloat", "watermark", "checkpoint", "restart"}, mayUse: leaves},
	// Its tests reach the S3 test server through internal/testsvc.
	{prefixes: []string{"checkpointstorage"}, mayUse: append([]string{"internal/testsvc"}, leaves...)},
	{prefixes: []string{"state"}, mayUse: append([]string{"state"}, leaves...)},
	{prefixes: []string{"operator", "graph"}, mayUse: append([]string{"operator", "graph"}, primitives...)},
	{prefixes: []string{"task", "runtime"}, mayUse: runtime},
	{prefixes: []string{"."}, mayUse: api},
	{prefixes: []string{"connector"}, mayUse: connectors},
	{prefixes: []string{"sql"}, mayUse: sqlLayer},
	// rest/api holds the REST API's JSON bodies (Flink's shapes) and
	// imports nothing of Weir's; the JobManager renders its jobs into them
	// above the runtime and the SQL layer; rest serves the JobManager.
	{prefixes: []string{"rest/api"}, mayUse: nil},
	{prefixes: []string{"jobmanager"}, mayUse: append([]string{"jobmanager", "rest/api"}, sqlLayer...)},
	// rest's contract tests run the billing job on bills from
	// internal/billgen, as the chaos tool and the example do.
	{prefixes: []string{"rest"}, mayUse: append([]string{"rest", "internal/billgen"}, jobManager...)},
	// rest/web is the dashboard's embedded HTML/JS: it reads the REST API
	// over HTTP in the browser and imports nothing of Weir's.
	{prefixes: []string{"rest/web"}, mayUse: nil},
	{prefixes: []string{"internal/testsvc"}, mayUse: nil},
	{prefixes: []string{"internal/txncheck"}, mayUse: nil},
	{prefixes: []string{"internal/billgen"}, mayUse: nil},
	{prefixes: []string{"internal/savepointtest"}, mayUse: runtime},
	{prefixes: []string{"internal/lint"}, mayUse: nil},
	{prefixes: []string{"internal", "examples", "bench", "cmd"}, mayUse: everything},
}

// matches reports whether package path p (relative, "." for the root) lies
// under prefix.
func matches(p, prefix string) bool {
	if prefix == "." {
		return p == "."
	}
	return p == prefix || strings.HasPrefix(p, prefix+"/")
}

// layerOf finds the most specific layer for p.
func layerOf(p string) (layer, bool) {
	best, bestLen, found := layer{}, -1, false
	for _, l := range layers {
		for _, pre := range l.prefixes {
			if matches(p, pre) && len(pre) > bestLen {
				best, bestLen, found = l, len(pre), true
			}
		}
	}
	return best, found
}

func allowed(l layer, imp string) bool {
	for _, pre := range l.mayUse {
		if matches(imp, pre) {
			return true
		}
	}
	return false
}

// weirImports returns, for every package directory under root, the Weir
// packages its Go files (tests included) import, as relative paths.
func weirImports(t *testing.T, root string) map[string]map[string]bool {
	out := map[string]map[string]bool{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "node_modules") && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		rel = filepath.ToSlash(rel)
		if out[rel] == nil {
			out[rel] = map[string]bool{}
		}
		for _, imp := range f.Imports {
			p := strings.Trim(imp.Path.Value, `"`)
			if p == module {
				out[rel]["."] = true
			} else if strings.HasPrefix(p, module+"/") {
				out[rel][strings.TrimPrefix(p, module+"/")] = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestImportDirection(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root not found at %s: %v", root, err)
	}
	imports := weirImports(t, root)
	var pkgs []string
	for p := range imports {
		pkgs = append(pkgs, p)
	}
	sort.Strings(pkgs)
	for _, p := range pkgs {
		l, ok := layerOf(p)
		if !ok {
			t.Errorf("package %s has no layer in internal/lint's table: add it (and to docs/DESIGN.md)", p)
			continue
		}
		for imp := range imports[p] {
			if imp != p && !allowed(l, imp) {
				t.Errorf("package %s imports %s, against the layering in docs/DESIGN.md", p, imp)
			}
		}
	}
}

// TestNoPhantomLayers keeps the table to packages that exist: a layer is
// added when its first package lands, so the table describes the tree.
func TestNoPhantomLayers(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range layers {
		for _, pre := range l.prefixes {
			if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(pre))); err != nil {
				t.Errorf("layer %q names no package in the tree: remove it until one lands (%v)", pre, err)
			}
		}
	}
}

// TestTableCatchesViolations proves the checker is not vacuous.
func TestTableCatchesViolations(t *testing.T) {
	cases := []struct {
		pkg, imp string
		ok       bool
	}{
		{"checkpoint", "task", false},
		{"checkpoint", "operator", false},
		{"checkpoint", "state", false},
		{"checkpoint", "event", true},
		{"event", "keygroup", false},
		{"task", "sql/planner", false},
		{".", "sql", false},
		{"sql/planner", ".", true},
		{"connector/kafka", "task", true},
		{"state/heap", "state", true},
		{"cmd/weir", "sql/parser", true},
	}
	for _, c := range cases {
		l, found := layerOf(c.pkg)
		if !found {
			t.Fatalf("no layer for %s", c.pkg)
		}
		if got := allowed(l, c.imp); got != c.ok {
			t.Errorf("%s importing %s: allowed=%v, want %v", c.pkg, c.imp, got, c.ok)
		}
	}
}
