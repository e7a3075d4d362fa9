package lint

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// A scheme is one directory plus one registry line (DESIGN.md): code outside the scheme's own
// directory asks the registry (schemes.Lookup, policy.Section) and never names a scheme. The
// scheme's directory is internal/schemes/<name>/ (its entry, its policy section in section/, its
// executor in sandbox/); the registry is internal/schemes/schemes.go. The schemes are the directories
// under schemes/ that hold a policy section (schemeDirs), so the scan needs no registry of its own.

// schemeNamesAllowed are the places outside a scheme's own that still name it, as
// "dir/file.go:name" (name: the scheme's string, its policy.SchemeX constant or its
// policy.Policy field), each with why; a stale entry fails the test, so the list only shrinks.
// It is empty: a scheme is one directory plus one registry line.
var schemeNamesAllowed = map[string]string{}

// schemeName is one place a scheme is named.
type schemeName struct {
	file, name string
	line       int
}

// schemeDirs are the schemes of the tree at root: the directories internal/schemes/<name> holding a
// policy section (internal/schemes/<name>/section).
func schemeDirs(root string) ([]string, error) {
	ents, err := os.ReadDir(filepath.Join(root, "internal", "schemes"))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		if fi, err := os.Stat(filepath.Join(root, "internal", "schemes", e.Name(), "section")); err == nil && fi.IsDir() {
			out = append(out, e.Name())
		}
	}
	return out, nil
}

// schemeWords are what names each scheme: its string, its old constant (policy.SchemeX) and its
// old policy field (p.X); the section's types are reached through its own package.
func schemeWords(schemes []string) map[string]string {
	words := map[string]string{} // word -> scheme
	for _, s := range schemes {
		words[strconv.Quote(s)] = s
		words["Scheme"+exported(s)] = s
		words["."+exported(s)] = s
	}
	return words
}

// exported is the Go constant suffix of a scheme name: "allowlist" -> "Allowlist", "e2b" -> "E2B".
func exported(s string) string {
	if strings.ContainsAny(s, "0123456789") {
		return strings.ToUpper(s)
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// schemeNames lists every place in the non-test, non-generated .go files under root that names
// a scheme outside the scheme's own places.
func schemeNames(root string, schemes []string, words map[string]string) ([]schemeName, error) {
	var out []schemeName
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if path != root && (d.Name() == "vendor" || d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) {
				return filepath.SkipDir
			}
			for _, s := range schemes {
				if rel == "internal/schemes/"+s {
					return filepath.SkipDir
				}
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") || rel == "internal/schemes/schemes.go" {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		if ast.IsGenerated(f) {
			return nil
		}
		ast.Inspect(f, func(n ast.Node) bool {
			var word string
			switch x := n.(type) {
			case *ast.BasicLit:
				if x.Kind == token.STRING {
					if v, err := strconv.Unquote(x.Value); err == nil {
						word = strconv.Quote(v)
					}
				}
			case *ast.Ident: // policy.SchemeX, or SchemeX inside policy
				word = x.Name
			case *ast.SelectorExpr: // p.X, the scheme's policy section
				word = "." + x.Sel.Name
			}
			if _, ok := words[word]; ok {
				out = append(out, schemeName{file: rel, name: word, line: fset.Position(n.Pos()).Line})
			}
			return true
		})
		return nil
	})
	sort.Slice(out, func(i, j int) bool {
		if out[i].file != out[j].file {
			return out[i].file < out[j].file
		}
		return out[i].line < out[j].line
	})
	return out, err
}

func TestSchemesNamedOnlyInTheirPlaces(t *testing.T) {
	schemes, err := schemeDirs(repoRoot(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(schemes) < 4 {
		t.Fatalf("found the schemes %v under schemes/: the scan would judge too little", schemes)
	}
	found, err := schemeNames(repoRoot(t), schemes, schemeWords(schemes))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, f := range found {
		k := f.file + ":" + f.name
		seen[k] = true
		if _, ok := schemeNamesAllowed[k]; !ok {
			t.Errorf("%s:%d names a scheme (%s): ask the registry (schemes.Lookup, policy.Section) or move the code into the scheme's own directory", f.file, f.line, f.name)
		}
	}
	for k := range schemeNamesAllowed {
		if !seen[k] {
			t.Errorf("schemeNamesAllowed names %s, which no longer names a scheme: remove the entry", k)
		}
	}
}

// TestSchemeNamesFindsThem proves the scan sees a scheme's string, its constant and its policy
// field, and skips the scheme's own places and test files (a scan that finds nothing would pass
// any tree).
func TestSchemeNamesFindsThem(t *testing.T) {
	root := t.TempDir()
	src := "package x\n\nvar a = \"toy\"\nvar b = policy.SchemeToy\nvar c = p.Toy.Size\nvar d = \"toys\"\nvar e = `toy`\n"
	for _, f := range []string{"shared/x.go", "shared/x_test.go", "internal/schemes/toy/x.go", "internal/schemes/toy/sandbox/x.go", "internal/schemes/toy/section/x.go", "policy/toy.go", "internal/schemes/schemes.go"} {
		if err := os.MkdirAll(filepath.Join(root, filepath.Dir(f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, f), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	words := map[string]string{`"toy"`: "toy", "SchemeToy": "toy", ".Toy": "toy"}
	got, err := schemeNames(root, []string{"toy"}, words)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, g := range got {
		keys = append(keys, fmt.Sprintf("%s:%d:%s", g.file, g.line, g.name))
	}
	want := []string{`policy/toy.go:3:"toy"`, "policy/toy.go:4:SchemeToy", "policy/toy.go:5:.Toy", `policy/toy.go:7:"toy"`,
		`shared/x.go:3:"toy"`, "shared/x.go:4:SchemeToy", "shared/x.go:5:.Toy", `shared/x.go:7:"toy"`}
	if !slices.Equal(keys, want) {
		t.Fatalf("found %v, want %v", keys, want)
	}
	if dirs, err := schemeDirs(root); err != nil || !slices.Equal(dirs, []string{"toy"}) {
		t.Fatalf("schemeDirs = %v, %v; want [toy]", dirs, err)
	}
	if w := schemeWords([]string{"allowlist", "e2b", "docker"}); w[`"allowlist"`] == "" || w["SchemeE2B"] == "" || w[".Docker"] == "" {
		t.Fatalf("schemeWords misses a scheme's string, constant or field: %v", w)
	}
}
