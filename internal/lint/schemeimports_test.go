package lint

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/mcpsandbox/mcpsandbox"

// schemeImportsAllowed are the files outside internal/schemes that import a scheme's own
// packages (internal/schemes/NAME/...), each with why; a stale entry fails the test. Shared code
// reaches a scheme through the registry (internal/schemes), never its packages.
var schemeImportsAllowed = map[string]string{
	// The exec helper runs in its package's initialisation, before the heavy packages: main
	// links it first and, where that did not happen, dispatches to it itself.
	"cmd/mcpsandbox/main.go": "the exec helper's entry point, linked before everything else",
	// bench's srt comparison starts the hostile server under three launchers; mcpsandbox's is
	// the wrap scheme's (Launch).
	"bench/srt.go": "the wrap scheme's launcher, one of the runtimes compared",
}

// schemeImports lists the non-test .go files under root, outside internal/schemes, that import a
// package of one scheme (a path below internal/schemes/NAME).
func schemeImports(root string) ([]string, error) {
	var out []string
	fset := token.NewFileSet()
	prefix := module + "/internal/schemes/"
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if path != root && (d.Name() == "vendor" || d.Name() == "testdata" || d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".") || rel == "internal/schemes") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, im := range f.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			if rest, ok := strings.CutPrefix(p, prefix); ok && rest != "" {
				out = append(out, rel)
				break
			}
		}
		return nil
	})
	return out, err
}

func TestSchemePackagesImportedOnlyThroughTheRegistry(t *testing.T) {
	found, err := schemeImports(repoRoot(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range found {
		if _, ok := schemeImportsAllowed[f]; !ok {
			t.Errorf("%s imports a scheme's own package: ask the registry (internal/schemes) or move the code into the scheme's directory", f)
		}
	}
	for f := range schemeImportsAllowed {
		if !slices.Contains(found, f) {
			t.Errorf("schemeImportsAllowed names %s, which no longer imports a scheme's package: remove the entry", f)
		}
	}
}

// TestSchemeImportsFindsThem proves the scan sees an import of a scheme's package outside
// internal/schemes and skips the registry's own import, the schemes' directories and tests.
func TestSchemeImportsFindsThem(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{
		"shared/a.go":                 `import x "` + module + `/internal/schemes/toy/section"`,
		"shared/b.go":                 `import "` + module + `/internal/schemes"`,
		"shared/c_test.go":            `import "` + module + `/internal/schemes/toy"`,
		"internal/schemes/schemes.go": `import "` + module + `/internal/schemes/toy"`,
		"internal/schemes/toy/x/x.go": `import "` + module + `/internal/schemes/toy/section"`,
		"internal/verify/pull.go":     `import "` + module + `/internal/schemes/toy/engine"`,
	}
	for f, imp := range files {
		p := filepath.Join(root, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("package x\n\n"+imp+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := schemeImports(root)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	if want := []string{"internal/verify/pull.go", "shared/a.go"}; !slices.Equal(got, want) {
		t.Fatalf("found %v, want %v", got, want)
	}
}
