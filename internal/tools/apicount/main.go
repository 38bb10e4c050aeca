// Command apicount counts the exported identifiers of the public packages
// under a directory (default "."), per package and in total: top-level
// names (types, functions, variables, constants) and the exported methods
// of exported types, in non-test files, skipping internal/, cmd/ and
// examples/ and main packages. With -fields it adds exported struct fields
// and interface methods.
//
//	go run ./internal/tools/apicount
package main

import (
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

func main() {
	fields := flag.Bool("fields", false, "count exported struct fields and interface methods too")
	flag.Parse()
	root := "."
	if flag.NArg() > 0 {
		root = flag.Arg(0)
	}
	counts := map[string]int{}
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if d.IsDir() {
			n := d.Name()
			if n == "node_modules" || n == "internal" || n == "cmd" || n == "examples" || strings.HasPrefix(n, ".") && p != root {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, 0)
		if err != nil || f.Name.Name == "main" {
			return nil
		}
		dir, _ := filepath.Rel(root, filepath.Dir(p))
		n := 0
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				if !d.Name.IsExported() {
					continue
				}
				if d.Recv != nil {
					t := d.Recv.List[0].Type
					if s, ok := t.(*ast.StarExpr); ok {
						t = s.X
					}
					if ix, ok := t.(*ast.IndexExpr); ok {
						t = ix.X
					}
					if id, ok := t.(*ast.Ident); ok && !id.IsExported() {
						continue
					}
				}
				n++
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						if !s.Name.IsExported() {
							continue
						}
						n++
						if *fields {
							switch t := s.Type.(type) {
							case *ast.StructType:
								for _, fl := range t.Fields.List {
									for _, nm := range fl.Names {
										if nm.IsExported() {
											n++
										}
									}
								}
							case *ast.InterfaceType:
								for _, fl := range t.Methods.List {
									for _, nm := range fl.Names {
										if nm.IsExported() {
											n++
										}
									}
								}
							}
						}
					case *ast.ValueSpec:
						for _, nm := range s.Names {
							if nm.IsExported() {
								n++
							}
						}
					}
				}
			}
		}
		counts[dir] += n
		return nil
	})
	var ks []string
	tot := 0
	for k, v := range counts {
		ks = append(ks, k)
		tot += v
	}
	sort.Strings(ks)
	for _, k := range ks {
		fmt.Printf("%5d %s\n", counts[k], k)
	}
	fmt.Printf("%5d total\n", tot)
}
