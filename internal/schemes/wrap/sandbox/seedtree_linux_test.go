package sandbox

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	wrapsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/wrap/section"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// linksOut lists the links of the seed dst that lead out of it, read lexically from each
// link's directory (a relative one climbing out, an absolute one).
func linksOut(t *testing.T, dst string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dst, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.Type()&fs.ModeSymlink == 0 {
			return nil
		}
		target, _ := os.Readlink(p)
		if !strings.HasPrefix(filepath.Join(filepath.Dir(p), target), dst+"/") {
			out = append(out, p+" -> "+target)
		}
		return nil
	})
	return out
}

// A narrower policy's seed overlays two wider caches of the same server, both written by that
// server (attack round atk36, F1): one left a link climbing out of the cache where the other
// has a directory (or an index bucket) of the same path, and the seed (root) wrote the second
// one's file through the first one's link: a file created in any directory (/etc/cron.d), any
// file appended to (authorized_keys). In either order, nothing is written outside the seed,
// no link leading out of it is copied, nothing is written through a link the seed holds (one
// npm makes: an npx tree's .bin), and wrap says what it left out. Red with mutants
// wrap-npm-seed-dst-follows, wrap-npm-seed-any-link.
func TestSeedFollowsNoLinkAnotherSourcePlanted(t *testing.T) {
	top := t.TempDir()
	outside := filepath.Join(top, "outside")
	victim := filepath.Join(top, "victim.txt")
	os.MkdirAll(outside, 0o755)
	const was = "root:x:0:0::/root:/bin/bash\n"
	os.WriteFile(victim, []byte(was), 0o644)
	up := strings.Repeat("../", 40)
	write := func(p, text string) {
		t.Helper()
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	link := func(target, p string) {
		t.Helper()
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
	}
	// What the hostile server leaves in its two wider caches: in one, links (one climbing
	// out of the cache, one npm would make, into its own tree); in the other, a directory
	// and an index bucket at the links' paths.
	linker, filler := t.TempDir(), t.TempDir()
	link(up+strings.TrimPrefix(outside, "/"), filepath.Join(linker, "_npx", "zz"))
	link(up+strings.TrimPrefix(victim, "/"), filepath.Join(linker, "_cacache", "index-v5", "zz"))
	link(outside, filepath.Join(linker, "_npx", "abs"))
	write(filepath.Join(linker, "_npx", "h", "node_modules", "pkg", "index.js"), "ok")
	link("../pkg", filepath.Join(linker, "_npx", "h", "node_modules", ".bin", "x"))
	link("../pkg/index.js", filepath.Join(linker, "_npx", "h", "node_modules", ".bin", "pkg"))
	write(filepath.Join(filler, "_npx", "zz", "planted"), "#!/bin/sh\necho owned\n")
	write(filepath.Join(filler, "_npx", "abs", "planted"), "#!/bin/sh\necho owned\n")
	write(filepath.Join(filler, "_cacache", "index-v5", "zz"), "\nappended\n")
	write(filepath.Join(filler, "_npx", "h", "node_modules", ".bin", "x", "planted"), "through the bin link\n")
	for _, order := range [][2]string{{linker, filler}, {filler, linker}} {
		os.WriteFile(victim, []byte(was), 0o644)
		dst := t.TempDir()
		b := newSeedBudget()
		for _, src := range order {
			if err := overlayNPM(src, dst, "", os.Getuid(), b); err != nil {
				t.Errorf("overlay %s: %v", src, err)
			}
		}
		first := "the linking cache first"
		if order[0] == filler {
			first = "the filling cache first"
		}
		if ents, _ := os.ReadDir(outside); len(ents) > 0 {
			t.Errorf("%s: the seed created %s in %s, outside every cache, through a link another cache planted", first, ents[0].Name(), outside)
		}
		if v, _ := os.ReadFile(victim); string(v) != was {
			t.Errorf("%s: the seed appended to %s through a link: %q", first, victim, v)
		}
		if out := linksOut(t, dst); len(out) > 0 {
			t.Errorf("%s: the seed copied links leading out of it: %v", first, out)
		}
		if _, err := os.Lstat(filepath.Join(dst, "_npx", "h", "node_modules", "pkg", "planted")); err == nil {
			t.Errorf("%s: the seed wrote a file through the .bin link it holds (into the tree it leads to)", first)
		}
		if b, err := os.ReadFile(filepath.Join(dst, "_npx", "h", "node_modules", "pkg", "index.js")); string(b) != "ok" {
			t.Errorf("%s: the npx tree not seeded: %q %v", first, b, err)
		}
		if target, err := os.Readlink(filepath.Join(dst, "_npx", "h", "node_modules", ".bin", "pkg")); target != "../pkg/index.js" {
			t.Errorf("%s: the bin link npm made not seeded: %q %v", first, target, err)
		}
		if !strings.Contains(strings.Join(b.notes, "\n"), linker) {
			t.Errorf("%s: wrap did not say what it left out of %s: %q", first, linker, b.notes)
		}
	}

	// The same through privateNPMCache, as wrap calls it: three policies of one server, the two
	// wider caches planted alternately, starts of the narrowest one.
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	client := t.TempDir()
	os.MkdirAll(filepath.Join(client, "_npx"), 0o755)
	mk := func(net any) *policy.Policy {
		p := policy.Default(wrapsec.Name)
		p.Name = "everything"
		w := wrapsec.Of(p)
		w.Command = []string{"npx", "-y", "@modelcontextprotocol/server-everything"}
		if err := w.Egress.UnmarshalTOML(net); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cacheOf := func(p *policy.Policy) string {
		c, release, err := privateNPMCache(p, client, os.Getuid(), os.Getgid(), func(string) {})
		if err != nil {
			t.Errorf("a start failed: %v", err)
			return ""
		}
		release()
		return c
	}
	offline := mk(false)
	cacheOf(offline)
	a, c := cacheOf(mk([]any{"registry.npmjs.org"})), cacheOf(mk(true))
	plant := func(cache string, links bool) {
		for _, p := range []string{filepath.Join(cache, "_npx", "zz"), filepath.Join(cache, "_cacache", "index-v5", "zz")} {
			os.RemoveAll(p)
		}
		if links {
			link(up+strings.TrimPrefix(outside, "/"), filepath.Join(cache, "_npx", "zz"))
			link(up+strings.TrimPrefix(victim, "/"), filepath.Join(cache, "_cacache", "index-v5", "zz"))
		} else {
			write(filepath.Join(cache, "_npx", "zz", "planted"), "#!/bin/sh\necho owned\n")
			write(filepath.Join(cache, "_cacache", "index-v5", "zz"), "\nappended\n")
		}
	}
	os.WriteFile(victim, []byte(was), 0o644)
	for i := range 4 {
		plant(a, i%2 == 0)
		plant(c, i%2 != 0)
		cacheOf(offline)
		if ents, _ := os.ReadDir(outside); len(ents) > 0 {
			t.Fatalf("start %d: the seed created %s outside every cache", i, ents[0].Name())
		}
		if v, _ := os.ReadFile(victim); string(v) != was {
			t.Fatalf("start %d: the seed appended to a file outside every cache: %q", i, v)
		}
	}
}

// The seed's writes go through no link it holds, at the end of the path or on the way: an
// index bucket that is a link (or a hard link's other name) is not appended to, and nothing is
// created beneath a link. Red with mutant wrap-npm-seed-dst-follows.
func TestSeedDirWritesThroughNoLink(t *testing.T) {
	top := t.TempDir()
	dst, outside := filepath.Join(top, "seed"), filepath.Join(top, "outside")
	os.MkdirAll(filepath.Join(dst, "idx"), 0o755)
	os.MkdirAll(outside, 0o755)
	victim := filepath.Join(outside, "victim")
	os.WriteFile(victim, []byte("v\n"), 0o644)
	os.Symlink(victim, filepath.Join(dst, "idx", "bucket"))
	os.Link(victim, filepath.Join(dst, "idx", "hard"))
	os.Symlink(outside, filepath.Join(dst, "dir"))
	d, err := openSeedDir(dst)
	if err != nil {
		t.Fatal(err)
	}
	defer d.close()
	for _, rel := range []string{"idx/bucket", "idx/hard"} {
		if f, _, err := d.appendTo(rel); !errors.Is(err, errLinkThere) {
			if f != nil {
				f.Close()
			}
			t.Errorf("append to %s (a link to a file outside the seed): %v, want errLinkThere", rel, err)
		}
	}
	if f, err := d.create("dir/planted", 0o644); err == nil {
		f.Close()
		t.Error("a file was created beneath a link the seed holds (outside the seed)")
	}
	if _, err := d.mkdir("dir"); !errors.Is(err, errLinkThere) {
		t.Errorf("mkdir where the seed holds a link to a directory: %v, want errLinkThere", err)
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 1 {
		t.Errorf("outside the seed: %d entries, want the victim only", len(ents))
	}
}

// With one wider cache, its server swaps a directory of its cache for a link while a narrower
// start's seed walks it (attack round atk36, F1b): filepath.WalkDir listed, as root, the
// directory the link led to (another user's home, /) into the narrower cache. The seed lists
// a directory only once opened beneath the source with no link followed. Red with mutant
// wrap-npm-seed-src-by-path.
func TestSeedWalkEntersNoSwappedDir(t *testing.T) {
	secret := filepath.Join(t.TempDir(), "secret")
	os.MkdirAll(filepath.Join(secret, "ssh-keys-of-alice"), 0o755)
	os.MkdirAll(filepath.Join(secret, "payroll-2026"), 0o755)
	os.Chmod(secret, 0o700)
	src := t.TempDir()
	os.MkdirAll(filepath.Join(src, "_npx"), 0o755)
	zz := filepath.Join(src, "_npx", "zz")

	// the swap landing between the listing and the opening, every time
	os.Mkdir(zz, 0o755)
	defer func(f func(string)) { seedEntering = f }(seedEntering)
	seedEntering = func(rel string) {
		switch rel {
		case "_npx": // listed: a directory
			os.Remove(zz)
			os.Mkdir(zz, 0o755)
		case filepath.Join("_npx", "zz"): // entered: a link
			os.Remove(zz)
			os.Symlink(secret, zz)
		}
	}
	dst := t.TempDir()
	if err := overlayNPM(src, dst, "", os.Getuid(), newSeedBudget()); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadDir(filepath.Join(dst, "_npx", "zz")); len(got) > 0 {
		t.Fatalf("the seed listed %s (the link's target) into the narrower cache: %s", secret, got[0].Name())
	}
	seedEntering = func(string) {}

	// the server swapping as it runs, the seed in a loop
	os.Remove(zz)
	var stop atomic.Bool
	done := make(chan struct{})
	go func() { // the wider server, as it runs
		defer close(done)
		for !stop.Load() {
			os.Remove(zz)
			os.Mkdir(zz, 0o755)
			os.Remove(zz)
			os.Symlink(secret, zz)
		}
	}()
	defer func() { stop.Store(true); <-done }()
	end := time.Now().Add(2 * time.Second)
	for i := 0; i < 5000 && time.Now().Before(end); i++ {
		dst := t.TempDir()
		if err := overlayNPM(src, dst, "", os.Getuid(), newSeedBudget()); err != nil {
			t.Fatal(err)
		}
		if got, _ := os.ReadDir(filepath.Join(dst, "_npx", "zz")); len(got) > 0 {
			t.Fatalf("try %d: the seed listed %s (the link's target) into the narrower cache: %s", i, secret, got[0].Name())
		}
		os.RemoveAll(dst)
	}
}

// One seed lists a bounded number of entries, to a bounded depth: a wider server that fills its
// cache with directories (or links its tree to /, F1b) no longer holds the narrower start and
// its cache's lock. A source past the bound is left out whole, and wrap says so. Red with
// mutant wrap-npm-seed-entries-unbounded.
func TestSeedBoundsEntriesAndDepth(t *testing.T) {
	defer func(n, d int) { maxSeedEntries, maxSeedDepth = n, d }(maxSeedEntries, maxSeedDepth)
	maxSeedEntries, maxSeedDepth = 60, 8
	wide, deep, small := t.TempDir(), t.TempDir(), t.TempDir()
	for i := range 100 {
		os.MkdirAll(filepath.Join(wide, "_npx", "many", strings.Repeat("d", i+1)), 0o755)
	}
	os.MkdirAll(filepath.Join(deep, "_npx", strings.Repeat("a/", 12)), 0o755)
	os.MkdirAll(filepath.Join(small, "_npx", "s", "node_modules"), 0o755)
	os.WriteFile(filepath.Join(small, "_npx", "s", "node_modules", "f"), []byte("f"), 0o644)
	for _, src := range []string{wide, deep} {
		dst := t.TempDir()
		b := newSeedBudget()
		if err := overlayNPM(src, dst, "", os.Getuid(), b); err != nil {
			t.Fatal(err)
		}
		if ents, _ := os.ReadDir(filepath.Join(dst, "_npx")); len(ents) > 0 {
			t.Errorf("a source past the bound of entries or depth was seeded (%s)", ents[0].Name())
		}
		if len(b.notes) != 1 || !strings.Contains(b.notes[0], src) {
			t.Errorf("notes %q, want one naming %s", b.notes, src)
		}
		if err := overlayNPM(small, dst, "", os.Getuid(), newSeedBudget()); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(dst, "_npx", "s", "node_modules", "f")); err != nil {
			t.Errorf("a small source after it was not seeded: %v", err)
		}
	}
}

// Only the links npm makes are copied: an npx tree's .bin links into its node_modules, and a
// seed's links into the client's content store.
func TestSeedLinkKept(t *testing.T) {
	content := "/home/u/.npm/_cacache/content-v2"
	for _, c := range []struct {
		rel, target string
		want        bool
	}{
		{"_npx/h/node_modules/.bin/x", "../pkg/bin/x.js", true},
		{"_npx/h/node_modules/.bin/x", "../@scope/pkg/dist/cli.js", true},
		{"_npx/h/node_modules/a/node_modules/.bin/x", "../b/cli.js", true},
		{"_npx/h/node_modules/.bin/x", "../../../../etc", false},
		{"_npx/h/node_modules/.bin/x", "../pkg/../../..", false},
		{"_npx/h/node_modules/.bin/x", "../", false},
		{"_npx/h/node_modules/.bin/x", "/etc/cron.d", false},
		{"_npx/h/node_modules/.bin/x", "pkg", false},
		{"_npx/zz", "../../etc", false},
		{"_npx/h/node_modules/pkg", "../../x", false},
		{"_cacache/index-v5/zz", "../../../root/.bashrc", false},
		{"_cacache/content-v2/sha512/aa/bb", content + "/sha512/aa/bb", true},
		{"_cacache/content-v2/sha512/aa/bb", content + "/sha512/aa/../../../../../.ssh/id_rsa", false},
		{"_cacache/content-v2/sha512/aa/bb", content + "/sha512/aa/cc", false},
		{"_cacache/content-v2/sha512/aa/bb", "../cc", false},
	} {
		if got := seedLinkKept(c.rel, c.target, content); got != c.want {
			t.Errorf("%s -> %s: kept %v, want %v", c.rel, c.target, got, c.want)
		}
	}
}
