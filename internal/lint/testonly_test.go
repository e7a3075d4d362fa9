package lint

import (
	"go/ast"
	"go/build/constraint"
	"go/parser"
	"go/token"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// testOnlyDirs may set TestOnly… fields outside test files: they are not part of the release
// binary. Each says why.
var testOnlyDirs = map[string]string{
	"bench": "a separate program (go run -tags testhooks ./bench) timing the egress proxy against servers on loopback",
}

// A TestOnly… field weakens a layer for a test (the egress proxy's loopback, its re-opened
// addresses). Outside _test.go files, files of a test build (-tags testhooks) and testOnlyDirs,
// nothing sets one, except by passing another TestOnly… field on: so no policy, flag or
// environment variable of a release binary can reach it.
func TestNothingReleasedSetsTestOnlyFields(t *testing.T) {
	scanRepo(t, testOnlySets, "a TestOnly… field is set outside the tests; set it in a _test.go file, or in a file built only with -tags testhooks (internal/testhooks)")
}

// TestTestOnlySetsFindsOne proves the scan sees a field set in a literal and by assignment (a
// check that finds nothing would pass any tree), and lets a test build's file, a test file and a
// pass-through be.
func TestTestOnlySetsFindsOne(t *testing.T) {
	scanFinds(t, map[string]string{
		"a.go":       "package x\n\nfunc a() { _ = O{TestOnlyAllowLoopback: true} }\n",
		"b.go":       "package x\n\nfunc b(o *O) { o.TestOnlyAllowAddrs = nil }\n",
		"pass.go":    "package x\n\nfunc p(q O) { _ = O{TestOnlyAllowLoopback: q.TestOnlyAllowLoopback} }\n",
		"hooks.go":   "//go:build testhooks\n\npackage x\n\nfunc h(o *O) { o.TestOnlyAllowAddrs = nil }\n",
		"release.go": "//go:build !testhooks\n\npackage x\n\nfunc r(o *O) { o.TestOnlyAllowAddrs = nil }\n",
		"x_test.go":  "package x\n\nfunc t() { _ = O{TestOnlyAllowLoopback: true} }\n",
		"bench/b.go": "package main\n\nfunc b() { _ = O{TestOnlyAllowLoopback: true} }\n",
		"types.go":   "package x\n\ntype O struct{ TestOnlyAllowLoopback bool; TestOnlyAllowAddrs []int }\n",
	}, testOnlySets, []string{"a.go:3 TestOnlyAllowLoopback", "b.go:3 TestOnlyAllowAddrs", "release.go:5 TestOnlyAllowAddrs"})
}

// testOnlySets lists, as "file:line Field", where a non-test .go file under root that a release
// build compiles sets a TestOnly… field, in a composite literal or by assignment, to anything
// but another TestOnly… field.
func testOnlySets(root string) ([]string, error) {
	var out []string
	skip := func(rel string) bool { return testOnlyDirs[rel] != "" }
	err := goSources(root, parser.ParseComments|parser.SkipObjectResolution, skip, func(rel string, fset *token.FileSet, f *ast.File) {
		if testBuildOnly(f) {
			return
		}
		note := func(n ast.Node, field string) {
			out = append(out, rel+":"+strconv.Itoa(fset.Position(n.Pos()).Line)+" "+field)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.KeyValueExpr:
				if k, ok := x.Key.(*ast.Ident); ok && isTestOnly(k.Name) && !testOnlyValue(x.Value) {
					note(x, k.Name)
				}
			case *ast.AssignStmt:
				for i, l := range x.Lhs {
					s, ok := l.(*ast.SelectorExpr)
					if !ok || !isTestOnly(s.Sel.Name) {
						continue
					}
					if i < len(x.Rhs) && testOnlyValue(x.Rhs[i]) {
						continue
					}
					note(x, s.Sel.Name)
				}
			}
			return true
		})
	})
	sort.Strings(out)
	return out, err
}

func isTestOnly(name string) bool { return strings.HasPrefix(name, "TestOnly") }

// testOnlyValue: the value is another TestOnly… field (a pass-through).
func testOnlyValue(e ast.Expr) bool {
	s, ok := e.(*ast.SelectorExpr)
	return ok && isTestOnly(s.Sel.Name)
}

// testBuildOnly: the file's //go:build line keeps it out of a build without the testhooks tag
// and in one with it (whatever the other tags are).
func testBuildOnly(f *ast.File) bool {
	for _, cg := range f.Comments {
		if cg.Pos() >= f.Package {
			break
		}
		for _, c := range cg.List {
			if !constraint.IsGoBuild(c.Text) {
				continue
			}
			x, err := constraint.Parse(c.Text)
			if err != nil {
				return false
			}
			with := func(on bool) bool { return x.Eval(func(tag string) bool { return tag != "testhooks" || on }) }
			return !with(false) && with(true)
		}
	}
	return false
}
