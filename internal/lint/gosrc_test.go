package lint

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// goSources parses each non-test .go file under root with mode and calls fn with its path from
// root (slash-separated). vendor, testdata and hidden directories are skipped, and those skipDir
// names by their path from root.
func goSources(root string, mode parser.Mode, skipDir func(rel string) bool, fn func(rel string, fset *token.FileSet, f *ast.File)) error {
	fset := token.NewFileSet()
	return filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			name := d.Name()
			if path != root && (name == "vendor" || name == "testdata" || strings.HasPrefix(name, ".") || skipDir(rel)) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, mode)
		if err != nil {
			return err
		}
		fn(rel, fset, f)
		return nil
	})
}

// writeTree writes files (path from dir -> content) under dir, for a check's own test tree.
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, src := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// scanRepo fails t with each place scan finds in the repository, each followed by fix.
func scanRepo(t *testing.T, scan func(root string) ([]string, error), fix string) {
	t.Helper()
	found, err := scan(repoRoot(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range found {
		t.Errorf("%s: %s", s, fix)
	}
}

// scanFinds runs scan on a tree of files and wants exactly want found: a check that finds
// nothing would pass any tree.
func scanFinds(t *testing.T, files map[string]string, scan func(root string) ([]string, error), want []string) {
	t.Helper()
	dir := t.TempDir()
	writeTree(t, dir, files)
	found, err := scan(dir)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(found, "|") != strings.Join(want, "|") {
		t.Fatalf("found %q, want %q", found, want)
	}
}
