package lazy

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// A pattern compiled at first use fails at first use: every literal one in the tree is compiled
// here instead, as package initialisation used to.
func TestEveryPatternCompiles(t *testing.T) {
	n := 0
	err := filepath.WalkDir("../..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".")) && path != "../.." {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(x ast.Node) bool {
			call, ok := x.(*ast.CallExpr)
			if !ok || len(call.Args) != 1 {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok || sel.Sel.Name != "Regexp" {
				return true
			}
			if id, ok := sel.X.(*ast.Ident); !ok || id.Name != "lazy" {
				return true
			}
			lit, ok := call.Args[0].(*ast.BasicLit)
			if !ok {
				return true // built at run time: its own tests compile it
			}
			p, err := strconv.Unquote(lit.Value)
			if err != nil {
				t.Errorf("%s: %v", path, err)
				return true
			}
			n++
			if _, err := regexp.Compile(p); err != nil {
				t.Errorf("%s: lazy.Regexp(%s): %v", path, lit.Value, err)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 10 {
		t.Fatalf("found %d lazy patterns: the walk missed the tree", n)
	}
}

func TestRegexpCompilesOnce(t *testing.T) {
	re := Regexp(`^a+$`)
	first, second := re(), re()
	if first != second || !first.MatchString("aa") {
		t.Fatal("not one compiled expression")
	}
}
