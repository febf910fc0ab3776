// Command doccover measures how many exported identifiers of Weir's
// packages carry a doc comment (issue 15, item 6): per package and in
// total, over non-test files. Counted: exported funcs, methods of exported
// types, types, and each name of a const or var; a const/var spec counts as
// documented when it or its group has a doc comment (or a line comment).
//
//	go run ./bench/doccover [-v] [dir]
package main

import (
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

type count struct{ documented, total int }

func main() {
	verbose := flag.Bool("v", false, "list the undocumented identifiers")
	flag.Parse()
	root := "."
	if flag.NArg() > 0 {
		root = flag.Arg(0)
	}
	per := map[string]*count{}
	var missing []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ParseComments)
		if err != nil || f.Name.Name == "main" {
			return err
		}
		dir := filepath.ToSlash(filepath.Dir(path))
		if per[dir] == nil {
			per[dir] = &count{}
		}
		for _, name := range countFile(f, per[dir]) {
			missing = append(missing, dir+": "+name)
		}
		return nil
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	report(per)
	if *verbose {
		for _, m := range missing {
			fmt.Println("undocumented", m)
		}
	}
}

// countFile adds f's exported identifiers to c and returns the undocumented.
func countFile(f *ast.File, c *count) []string {
	var missing []string
	add := func(name string, doc bool) {
		c.total++
		if doc {
			c.documented++
		} else {
			missing = append(missing, name)
		}
	}
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			if d.Name.IsExported() && (d.Recv == nil || exportedRecv(d.Recv)) {
				add(d.Name.Name, d.Doc != nil)
			}
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				switch s := spec.(type) {
				case *ast.TypeSpec:
					if s.Name.IsExported() {
						add(s.Name.Name, d.Doc != nil || s.Doc != nil)
					}
				case *ast.ValueSpec:
					for _, n := range s.Names {
						if n.IsExported() {
							add(n.Name, d.Doc != nil || s.Doc != nil || s.Comment != nil)
						}
					}
				}
			}
		}
	}
	return missing
}

// exportedRecv reports whether a method's receiver type is exported.
func exportedRecv(r *ast.FieldList) bool {
	t := r.List[0].Type
	for {
		switch x := t.(type) {
		case *ast.StarExpr:
			t = x.X
		case *ast.IndexExpr:
			t = x.X
		case *ast.IndexListExpr:
			t = x.X
		case *ast.Ident:
			return x.IsExported()
		default:
			return false
		}
	}
}

func report(per map[string]*count) {
	dirs := make([]string, 0, len(per))
	var all count
	for d, c := range per {
		if c.total > 0 {
			dirs = append(dirs, d)
		}
		all.documented += c.documented
		all.total += c.total
	}
	sort.Strings(dirs)
	for _, d := range dirs {
		c := per[d]
		fmt.Printf("%-28s %4d/%-4d %5.1f%%\n", d, c.documented, c.total, pct(*c))
	}
	fmt.Printf("%-28s %4d/%-4d %5.1f%%\n", "TOTAL", all.documented, all.total, pct(all))
}

func pct(c count) float64 {
	if c.total == 0 {
		return 100
	}
	return 100 * float64(c.documented) / float64(c.total)
}
