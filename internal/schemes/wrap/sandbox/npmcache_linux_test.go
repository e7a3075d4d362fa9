package sandbox

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	wrapsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/wrap/section"

	"github.com/mcpsandbox/mcpsandbox/policy"
)

// The seeded npm cache links the client's content, and never by a hard link to a file the
// server's uid could write (it would write the client's cache through it).
func TestSeedNeverLinksWritableFiles(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("hard links are made only when wrap runs as root")
	}
	src, dst := t.TempDir(), filepath.Join(t.TempDir(), "seed")
	mk := func(name string, mode os.FileMode, uid int) string {
		p := filepath.Join(src, name)
		if err := os.WriteFile(p, []byte(name), mode); err != nil {
			t.Fatal(err)
		}
		os.Chmod(p, mode)
		os.Chown(p, uid, uid)
		return p
	}
	safe := mk("root-0644", 0o644, 0)
	mine := mk("server-owned", 0o644, 65534)
	open := mk("world-writable", 0o666, 0)
	if err := linkTree(src, dst, 65534, newSeedBudget()); err != nil {
		t.Fatal(err)
	}
	same := func(a string) bool {
		x, _ := os.Stat(a)
		y, err := os.Lstat(filepath.Join(dst, filepath.Base(a)))
		return err == nil && os.SameFile(x, y)
	}
	if !same(safe) {
		t.Error("a root-owned 0644 file was not hard-linked (the fast seed)")
	}
	for _, p := range []string{mine, open} {
		if same(p) {
			t.Errorf("%s is hard-linked into the server's cache: the server could write the client's file", filepath.Base(p))
		}
		if b, err := os.ReadFile(filepath.Join(dst, filepath.Base(p))); err != nil || string(b) != filepath.Base(p) {
			t.Errorf("%s not seeded: %q %v", filepath.Base(p), b, err)
		}
	}
}

// Two policies of one name get npm caches of their own (attack round 15b): the cache is
// writable and executable by the server and kept between starts, so under a shared one a server
// of the project's .mcp.json planted code that the user's same-named server, given a token,
// then ran. A policy that lets the server do the same (the harness's copy of it) keeps its cache.
func TestNPMCachePerPolicy(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	cacheOf := func(file string, env ...string) string {
		p := policy.Default(wrapsec.Name)
		p.Name, p.File = "github", file
		wrapsec.Of(p).Env = env
		c, release, err := privateNPMCache(p, "", os.Getuid(), os.Getgid(), func(string) {})
		if err != nil {
			t.Fatal(err)
		}
		release()
		return c
	}
	project := cacheOf("/home/u/.config/mcpsandbox/wrap/claude-code-project-github.toml")
	user := cacheOf("/home/u/.config/mcpsandbox/wrap/claude-code-github.toml", "GITHUB_TOKEN")
	if project == user {
		t.Fatalf("two policies named github share the npm cache %s: one server's planted code runs in the other", user)
	}
	if again := cacheOf("/tmp/harness-123/policy.toml", "GITHUB_TOKEN"); again != user {
		t.Errorf("the same policy elsewhere got another cache: %s, then %s (a harness run would seed one each time)", user, again)
	}
}

// The seed is made the server's, but a file hard-linked from the client's cache stays the
// client's: chowned through the link, root's own cache file became the server's to chmod and
// rewrite (attack round atk33, F8). Red with mutant wrap-npm-chown-links.
func TestSeedChownLeavesTheClientsFiles(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("hard links are made, and the seed chowned, only when wrap runs as root")
	}
	src, dst := t.TempDir(), filepath.Join(t.TempDir(), "seed")
	linked := filepath.Join(src, "content")
	copied := filepath.Join(src, "writable")
	os.WriteFile(linked, []byte("tarball"), 0o444)
	os.WriteFile(copied, []byte("index"), 0o666)
	os.Chmod(copied, 0o666)
	if err := linkTree(src, dst, 65534, newSeedBudget()); err != nil {
		t.Fatal(err)
	}
	if err := chownTree(dst, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	owner := func(p string) (uint32, os.FileMode) {
		st, err := os.Lstat(p)
		if err != nil {
			t.Fatal(err)
		}
		return st.Sys().(*syscall.Stat_t).Uid, st.Mode().Perm()
	}
	if uid, mode := owner(linked); uid != 0 || mode != 0o444 {
		t.Errorf("the client's file after the seed was chowned: uid %d mode %v, want root's, 0444", uid, mode)
	}
	if uid, _ := owner(filepath.Join(dst, "writable")); uid != 65534 {
		t.Errorf("the seed's own copy: uid %d, want the server's 65534", uid)
	}
	if uid, _ := owner(dst); uid != 65534 {
		t.Errorf("the seed's directory: uid %d, want the server's 65534", uid)
	}
}

// A relative XDG_CACHE_HOME is ignored, as the XDG specification says: wrap runs where its
// client starts it (a project's directory), and the server's writable cache would land there.
func TestWrapCacheDirIgnoresARelativeXDGCacheHome(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CACHE_HOME", "cache")
	base := filepath.Join(home, ".cache")
	if os.Geteuid() == 0 {
		base = "/var/cache"
	}
	got, err := wrapCacheDir("github-0123")
	if want := filepath.Join(base, "mcpsandbox", "wrap", "github-0123"); err != nil || got != want {
		t.Errorf("XDG_CACHE_HOME=cache: %q %v, want %q", got, err, want)
	}
}

// A start with network = false that failed for lack of the package made its cache (empty); a
// start with the registry then fetched the package into its own. Seeded only when made, the
// network = false cache stayed empty for good (trial35 F1). It is seeded again, from the client's
// cache and from the caches of wider policies of the server's name, once one of them changed;
// never from a policy that could do less or other (red with mutants wrap-npm-cache-never-reseeded,
// wrap-npm-seed-any-policy).
func TestNPMCacheReseededFromAWiderPolicy(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	client := t.TempDir()
	os.MkdirAll(filepath.Join(client, "_npx"), 0o755)
	mk := func(net any, env ...string) *policy.Policy {
		p := policy.Default(wrapsec.Name)
		p.Name = "everything"
		w := wrapsec.Of(p)
		w.Command = []string{"npx", "-y", "@modelcontextprotocol/server-everything"}
		w.Env = env
		if err := w.Egress.UnmarshalTOML(net); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cacheOf := func(p *policy.Policy) string {
		c, release, err := privateNPMCache(p, client, os.Getuid(), os.Getgid(), func(n string) { t.Log(n) })
		if err != nil {
			t.Fatal(err)
		}
		release()
		return c
	}
	offline := mk(false)
	registry := mk([]any{"registry.npmjs.org"})
	token := mk(false, "GITHUB_TOKEN")
	first := cacheOf(offline)
	_ = cacheOf(token)
	fetched := cacheOf(registry)
	files := map[string]string{
		"_npx/3b2a/node_modules/.bin/mcp-server-everything": "",
		"_npx/3b2a/node_modules/server-everything/index.js": "console.log('served')",
		"_cacache/index-v5/aa/bb/cdef":                      "hash\t{\"key\":\"make-fetch-happen:request-cache:x\"}\n",
		"_cacache/content-v2/sha512/01/02/0304":             "tarball",
	}
	for rel, text := range files {
		p := filepath.Join(fetched, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if text == "" {
			os.Symlink("../server-everything/index.js", p)
			continue
		}
		if err := os.WriteFile(p, []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if again := cacheOf(offline); again != first {
		t.Fatalf("the network = false cache moved: %s, then %s", first, again)
	}
	for rel, text := range files {
		b, err := os.ReadFile(filepath.Join(first, rel))
		if err != nil || (text != "" && string(b) != text) {
			t.Errorf("network = false start after the registry's: %s not in its cache (%q, %v): npx fails ENOTCACHED for good", rel, b, err)
		}
	}
	if st, err := os.Stat(filepath.Join(first, "_npx/3b2a/node_modules/server-everything/index.js")); err != nil || st.Mode().Perm()&0o100 == 0 {
		t.Errorf("a copied file lost its mode: %v %v", st, err)
	}
	tokenCache := cacheOf(token)
	if _, err := os.Stat(filepath.Join(tokenCache, "_npx/3b2a")); err == nil {
		t.Error("a policy given GITHUB_TOKEN was seeded from one that was not given it: code another server planted runs with the token")
	}
	// the reverse: the registry's cache never reads the network = false one's
	os.MkdirAll(filepath.Join(first, "_npx/evil"), 0o755)
	if _, err := os.Stat(filepath.Join(cacheOf(registry), "_npx/evil")); err == nil {
		t.Error("the registry policy's cache was seeded from the network = false one")
	}
}

func TestSeedWithin(t *testing.T) {
	base := seedInfo{Name: "s", Base: "b"}
	for _, c := range []struct {
		narrow, wide seedInfo
		want         bool
	}{
		{base, seedInfo{Name: "s", Base: "b", Hosts: []string{"registry.npmjs.org"}}, true},
		{base, seedInfo{Name: "s", Base: "b", NetAll: true}, true},
		{seedInfo{Name: "s", Base: "b", Deny: []string{"write_*"}}, seedInfo{Name: "s", Base: "b", NetAll: true}, true},
		{seedInfo{Name: "s", Base: "b", NetAll: true}, base, false},
		{seedInfo{Name: "s", Base: "b", Hosts: []string{"a.example"}}, seedInfo{Name: "s", Base: "b", Hosts: []string{"registry.npmjs.org"}}, false},
		{base, seedInfo{Name: "s", Base: "b", Deny: []string{"write_*"}}, false},
		{base, seedInfo{Name: "s", Base: "other", NetAll: true}, false},
		{base, seedInfo{Name: "t", Base: "b", NetAll: true}, false},
	} {
		if got := c.narrow.within(c.wide); got != c.want {
			t.Errorf("%+v within %+v: %v, want %v", c.narrow, c.wide, got, c.want)
		}
	}
}

// The seed writes at most maxSeed bytes of disk, holes kept as holes (attack round atk35b, F5):
// a wider policy's server truncated a file in its own cache to 256 MiB, at no cost of disk to
// it, and every re-seed of the narrower cache wrote the 256 MiB as zeros; the bound counted
// apparent sizes once, before the copy, so a file grown after that was copied whole (up to 2 GiB
// a file). Red with mutant wrap-npm-seed-unbounded.
func TestSeedKeepsHolesAndItsBound(t *testing.T) {
	onDisk := func(dir string) (n int64) {
		filepath.Walk(dir, func(_ string, i os.FileInfo, err error) error {
			if err == nil && i.Mode().IsRegular() {
				n += i.Sys().(*syscall.Stat_t).Blocks * 512
			}
			return nil
		})
		return n
	}
	write := func(path string, data []byte, at, size int64) {
		t.Helper()
		os.MkdirAll(filepath.Dir(path), 0o755)
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteAt(data, at); err != nil {
			t.Fatal(err)
		}
		if err := f.Truncate(size); err != nil {
			t.Fatal(err)
		}
	}
	const sparse = 64 << 20
	pkg := filepath.Join("_npx", "abc", "node_modules", "pkg", "index.js")
	client, src, dst := t.TempDir(), t.TempDir(), t.TempDir()
	write(filepath.Join(client, "_npx", "c", "node_modules", "pkg", "index.js"), []byte("client"), sparse/2, sparse)
	write(filepath.Join(src, pkg), []byte("planted"), sparse/2, sparse)
	b := newSeedBudget()
	if err := seedNPM(client, dst, os.Getuid(), b); err != nil {
		t.Fatal(err)
	}
	if err := overlayNPM(src, dst, client, os.Getuid(), b); err != nil {
		t.Fatal(err)
	}
	if n := onDisk(dst); n > 1<<20 {
		t.Errorf("two files of %d MiB with 4 KiB of data each took %d MiB of disk in the seed: holes copied as zeros", sparse>>20, n>>20)
	}
	f, err := os.Open(filepath.Join(dst, pkg))
	if err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 7)
	st, _ := f.Stat()
	f.ReadAt(got, sparse/2)
	f.Close()
	if string(got) != "planted" || st.Size() != sparse {
		t.Errorf("the sparse file's copy: %q at %d, size %d: want the same file", got, sparse/2, st.Size())
	}

	// The bound holds for what is written, also for a source that grows after it was judged: the
	// source is then taken out whole (no half npx tree), the next one still seeds, and wrap says so.
	defer func(m int64) { maxSeed = m }(maxSeed)
	maxSeed = 1 << 20
	grows, small, dst := t.TempDir(), t.TempDir(), t.TempDir()
	write(filepath.Join(grows, "_npx", "big", "node_modules", "pkg", "a.js"), []byte("a"), 0, 1)
	write(filepath.Join(grows, "_npx", "big", "node_modules", "pkg", "b.js"), nil, 0, 0)
	write(filepath.Join(grows, "_cacache", "index-v5", "aa", "bucket"), []byte("grows\n"), 0, 6)
	write(filepath.Join(dst, "_cacache", "index-v5", "aa", "bucket"), []byte("client\n"), 0, 7)
	write(filepath.Join(small, pkg), []byte("small"), 0, 5)
	defer func(f func(string)) { seedChecked = f }(seedChecked)
	seedChecked = func(s string) {
		if s == grows {
			write(filepath.Join(grows, "_npx", "big", "node_modules", "pkg", "b.js"), make([]byte, 2<<20), 0, 2<<20)
		}
	}
	b = newSeedBudget()
	for _, s := range []string{grows, small} {
		if err := overlayNPM(s, dst, "", os.Getuid(), b); err != nil {
			t.Fatal(err)
		}
	}
	if n := onDisk(dst); n > 1<<20 {
		t.Errorf("the seed wrote %d KiB under a bound of 1 MiB", n>>10)
	}
	if _, err := os.Lstat(filepath.Join(dst, "_npx", "big")); err == nil {
		t.Error("a source past the bound left (part of) its npx tree in the seed")
	}
	if b, _ := os.ReadFile(filepath.Join(dst, "_cacache", "index-v5", "aa", "bucket")); string(b) != "client\n" {
		t.Errorf("a source past the bound left its index lines: %q", b)
	}
	if b, err := os.ReadFile(filepath.Join(dst, pkg)); string(b) != "small" {
		t.Errorf("the source after the one past the bound was not seeded: %q %v", b, err)
	}
	if len(b.notes) != 1 || !strings.Contains(b.notes[0], grows) || !strings.Contains(b.notes[0], "1 MiB") {
		t.Errorf("notes: %q, want one naming %s and the bound", b.notes, grows)
	}
}

// Each change of a policy gives its server a new npm cache (CacheKey), and the old one was kept
// for good. A start prunes the caches of other keys that its own policy file used before (the
// file changed) or that no start used for pruneAge; never one a start is using, nor a directory
// wrap did not make. Red with mutant wrap-npm-cache-never-pruned.
func TestNPMCachesPruned(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	files := t.TempDir()
	start := func(file string, env ...string) (string, func()) {
		p := policy.Default(wrapsec.Name)
		p.Name, p.File = "github", filepath.Join(files, file)
		wrapsec.Of(p).Env = env
		c, release, err := privateNPMCache(p, "", os.Getuid(), os.Getgid(), func(string) {})
		if err != nil {
			t.Fatal(err)
		}
		return filepath.Dir(c), release
	}
	startOnce := func(file string, env ...string) string {
		dir, release := start(file, env...)
		release()
		return dir
	}
	there := func(dir string) bool { _, err := os.Stat(dir); return err == nil }
	old := startOnce("github.toml", "A")
	other := startOnce("project-github.toml")
	now := startOnce("github.toml", "B") // the file changed: its old key's cache goes
	if there(old) {
		t.Errorf("the cache of the policy file's former [wrap] section %s is kept after the file changed", old)
	}
	if !there(other) || !there(now) {
		t.Fatalf("a cache in use by another policy file went: %v %v", there(other), there(now))
	}
	// one in use is kept, and goes at a start after its use ended
	_, hold := start("github.toml", "B")
	next := startOnce("github.toml", "C")
	if !there(now) {
		t.Error("a cache a start was using was pruned")
	}
	hold()
	if startOnce("github.toml", "C") != next || there(now) {
		t.Errorf("the replaced cache %s is kept once no start uses it", now)
	}
	// unused for pruneAge: gone; a directory wrap did not make: kept, whatever its age
	long := time.Now().Add(-pruneAge - time.Hour)
	for _, p := range []string{"use.lock", "seed.json", "npm"} {
		os.Chtimes(filepath.Join(other, p), long, long)
	}
	foreign := filepath.Join(filepath.Dir(other), "github-0123456789ab")
	os.MkdirAll(foreign, 0o700)
	os.WriteFile(filepath.Join(foreign, "use.lock"), nil, 0o600)
	os.Chtimes(filepath.Join(foreign, "use.lock"), long, long)
	ran := startOnce("ran-before-use-lock-was-timed.toml", "D") // npm wrote in it lately
	for _, p := range []string{"use.lock", "seed.json"} {
		os.Chtimes(filepath.Join(ran, p), long, long)
	}
	startOnce("github.toml", "C")
	if !there(ran) {
		t.Error("a cache npm wrote in lately was pruned for its old use.lock")
	}
	if there(other) {
		t.Errorf("a cache no start used for %s is kept", pruneAge)
	}
	if !there(foreign) {
		t.Error("a directory without wrap's seed.json was pruned")
	}
	// the file widened for one start with the registry, then narrowed again: the wider cache
	// seeds the narrower one and stays (network = false works after one start with the registry)
	startNet := func(net any) string {
		p := policy.Default(wrapsec.Name)
		p.Name, p.File = "github", filepath.Join(files, "github.toml")
		w := wrapsec.Of(p)
		w.Env = []string{"C"}
		if err := w.Egress.UnmarshalTOML(net); err != nil {
			t.Fatal(err)
		}
		c, release, err := privateNPMCache(p, "", os.Getuid(), os.Getgid(), func(string) {})
		if err != nil {
			t.Fatal(err)
		}
		release()
		return c
	}
	wide := filepath.Dir(startNet([]any{"registry.npmjs.org"}))
	os.MkdirAll(filepath.Join(wide, "npm", "_npx", "3b2a"), 0o755)
	c := startNet(false)
	if filepath.Dir(c) == wide {
		t.Fatal("network = false and the registry share a cache")
	}
	if !there(wide) || !there(filepath.Join(c, "_npx", "3b2a")) {
		t.Errorf("the wider policy's cache that seeds the narrower one: kept %v, seeded from %v", there(wide), there(filepath.Join(c, "_npx", "3b2a")))
	}
}

// trial48 F3: a node script that ended because the sandbox hid a module it imports got the npm
// cache's advice (for a cache miss, ENOTCACHED) and no word of the module. Now the npm advice
// comes with an npm cache miss alone, and a "Cannot find module '/abs'" that exists on this
// host is named with the read = [...] that shows it (a package's node_modules whole). Red under
// mutant wrap-end-hint-unread.
func TestEndHintFollowsWhatTheServerSaid(t *testing.T) {
	dir := t.TempDir()
	mod := filepath.Join(dir, "node", "node_modules", "@modelcontextprotocol", "sdk", "dist", "esm", "server", "mcp.js")
	os.MkdirAll(filepath.Dir(mod), 0o755)
	os.WriteFile(mod, nil, 0o644)
	none := policy.Network{Mode: policy.NetNone}
	cache := filepath.Join(dir, "cache", "npm")
	hint := func(stderr string) string {
		var seen stderrSeen
		relayServerStderr(strings.NewReader(stderr), io.Discard, time.Now, &seen)
		return endHint(&seen, cache, none, "/p.toml")
	}
	esm := "node:internal/modules/esm/resolve:283\n    throw new ERR_MODULE_NOT_FOUND(\n\nError [ERR_MODULE_NOT_FOUND]: Cannot find module '" + mod +
		"' imported from /srv/echo/server.mjs\n  code: 'ERR_MODULE_NOT_FOUND',\n}\n"
	got := hint(esm)
	if strings.Contains(got, "npm cache") || !strings.Contains(got, "it could not find "+mod+", which the sandbox hides from it: add read = [\""+filepath.Join(dir, "node", "node_modules")+"\"] in /p.toml") {
		t.Errorf("a hidden module: %q", got)
	}
	// a module not on this host either: nothing to show it, no hint
	if got := hint("Error: Cannot find module '/nonexistent/x.js'\n"); got != "" {
		t.Errorf("a module that is nowhere: %q", got)
	}
	// any other end: no npm advice
	if got := hint("Error: something else\n"); got != "" {
		t.Errorf("an end with no npm cache miss: %q", got)
	}
	for _, miss := range []string{"npm ERR! code ENOTCACHED\n", "npm error code ENOTCACHED\n", "npm error request to https://registry.npmjs.org/x failed: cache mode is 'only-if-cached' but no cached response is available.\n"} {
		if got := hint(miss); !strings.Contains(got, "its npm cache was "+cache) {
			t.Errorf("an npm cache miss %q: %q", miss, got)
		}
	}
}
