package lint

import (
	"go/ast"
	"go/parser"
	"go/token"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// xdgReader is the one package that reads the XDG base directory variables: it ignores a
// relative value, as the specification says (atk33 F6: init took XDG_STATE_HOME=state as given
// and wrote backups of configs holding secrets into the project's git work tree).
const xdgReader = "internal/xdg"

// TestXDGVariablesReadByTheHelper fails naming every place outside internal/xdg that reads an
// XDG_ variable itself (os.Getenv, os.LookupEnv, syscall.Getenv with the name written out).
func TestXDGVariablesReadByTheHelper(t *testing.T) {
	scanRepo(t, xdgReads, "reads an XDG variable itself: use xdg.Dir (internal/xdg), which ignores a relative value as the XDG specification says")
}

// TestXDGReadsFindsOne proves the scan sees each way of reading one (a check that finds nothing
// would pass any tree), and lets the helper, tests and other variables be.
func TestXDGReadsFindsOne(t *testing.T) {
	scanFinds(t, map[string]string{
		"a.go":               "package x\n\nimport \"os\"\n\nfunc a() string { return os.Getenv(\"XDG_STATE_HOME\") }\n",
		"b.go":               "package x\n\nimport \"os\"\n\nfunc b() { _, _ = os.LookupEnv(`XDG_CONFIG_HOME`) }\n",
		"c.go":               "package x\n\nimport \"syscall\"\n\nfunc c() { _, _ = syscall.Getenv(\"XDG_CACHE_HOME\") }\n",
		"other.go":           "package x\n\nimport \"os\"\n\nfunc o() string { return os.Getenv(\"HOME\") }\n",
		"x_test.go":          "package x\n\nimport \"os\"\n\nfunc t() string { return os.Getenv(\"XDG_STATE_HOME\") }\n",
		"internal/xdg/x.go":  "package xdg\n\nimport \"os\"\n\nfunc Dir(n string) string { return os.Getenv(n) + os.Getenv(\"XDG_DATA_HOME\") }\n",
		"testdata/t/skip.go": "package t\n\nimport \"os\"\n\nfunc s() string { return os.Getenv(\"XDG_STATE_HOME\") }\n",
	}, xdgReads, []string{"a.go:5 XDG_STATE_HOME", "b.go:5 XDG_CONFIG_HOME", "c.go:5 XDG_CACHE_HOME"})
}

// xdgReads lists, as "file:line NAME", the calls in non-test .go files under root (vendor,
// testdata, hidden directories and xdgReader skipped) that read an environment variable named
// XDG_… written as a string literal.
func xdgReads(root string) ([]string, error) {
	var out []string
	err := goSources(root, parser.SkipObjectResolution, func(rel string) bool { return rel == xdgReader }, func(rel string, fset *token.FileSet, f *ast.File) {
		ast.Inspect(f, func(n ast.Node) bool {
			if name, ok := envRead(n); ok && strings.HasPrefix(name, "XDG_") {
				out = append(out, rel+":"+strconv.Itoa(fset.Position(n.Pos()).Line)+" "+name)
			}
			return true
		})
	})
	sort.Strings(out)
	return out, err
}

// envRead: n is os.Getenv, os.LookupEnv or syscall.Getenv of a string literal, and its value.
func envRead(n ast.Node) (string, bool) {
	call, ok := n.(*ast.CallExpr)
	if !ok || len(call.Args) != 1 {
		return "", false
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok {
		return "", false
	}
	pkg, ok := sel.X.(*ast.Ident)
	if !ok || !(pkg.Name == "os" && (sel.Sel.Name == "Getenv" || sel.Sel.Name == "LookupEnv") || pkg.Name == "syscall" && sel.Sel.Name == "Getenv") {
		return "", false
	}
	lit, ok := call.Args[0].(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return "", false
	}
	v, err := strconv.Unquote(lit.Value)
	return v, err == nil
}
