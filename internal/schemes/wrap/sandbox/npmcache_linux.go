package sandbox

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	wrapsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/wrap/section"

	"github.com/mcpsandbox/mcpsandbox/internal/xdg"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// npm's cache cannot be shared read-only: reading a cached packument rewrites its index bucket
// (npm fails with ENOTCACHED when it cannot). So a node server gets a cache of its own, kept
// between starts: under the user's cache dir, $XDG_CACHE_HOME/mcpsandbox/wrap/KEY/npm (as root
// /var/cache/mcpsandbox/wrap/KEY/npm, which the sandbox's uid can reach; KEY: CacheKey), owned by the
// sandbox's uid. When it is made it is seeded from the client's npm cache, so a server the
// client already ran starts without the network, and fast: the index (small) and the installed
// npx trees are copied; the content store (the packages' tarballs, the bulk) is linked, never
// copied: a symlink to the client's file, which the server may read (Landlock: read only), or,
// when wrap runs as root and the server as another uid that cannot write the file, a hard link
// (the client's cache is under a home the server's uid cannot enter). New content npm fetches
// lands in the private cache.

// maxSeed bounds the disk one seed of a private npm cache writes (seedBudget).
var maxSeed int64 = 2 << 30

// CacheKey names a policy's private caches: its name and a hash of its [wrap] section (the
// command, what the server may read and write, the variables it is given, its network, its
// tools). The cache is writable and executable by the server and kept between starts, so a
// server can change what the next start runs: only servers the policy lets do the same may
// share it. Keyed by the name alone, a server under another policy of the same name (init
// --wrap gives a project's .mcp.json "github" the name of the user's own "github") planted code
// in the cache that a server given the user's token then ran. The same section elsewhere (the
// harness's copy of the policy, the file moved) keeps its cache.
func CacheKey(p *policy.Policy) string {
	if mutated("wrap-npm-cache-per-policy") {
		return p.Name
	}
	b, err := json.Marshal(wrapsec.Of(p))
	if err != nil {
		return p.Name + "-unhashable" // never shared with a hashed key
	}
	sum := sha256.Sum256(append([]byte(p.Name+"\x00"), b...))
	return p.Name + "-" + hex.EncodeToString(sum[:6])
}

// wrapCacheDir is where the policy's persistent private caches live (key: CacheKey).
func wrapCacheDir(name string) (string, error) {
	base := xdg.Dir("XDG_CACHE_HOME")
	if base == "" && os.Geteuid() == 0 {
		base = "/var/cache"
	}
	if base == "" {
		// not os.UserCacheDir: it fails on a relative XDG_CACHE_HOME rather than ignore it
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("find a cache dir for the server's npm cache: %w (set XDG_CACHE_HOME)", err)
		}
		base = filepath.Join(home, ".cache")
	}
	return filepath.Join(base, "mcpsandbox", "wrap", name), nil
}

// privateNPMCache returns the policy's npm cache, making (and seeding) it when missing, and
// re-seeding it when a source has changed since its seed and the policy cannot fetch what it
// lacks (see seedSources). release ends this start's use of it (a re-seed replaces the cache
// only while no other start of the policy uses it). warn is told what the seed left out.
func privateNPMCache(p *policy.Policy, client string, uid, gid int, warn func(string)) (cache string, release func(), err error) {
	dir, err := wrapCacheDir(CacheKey(p))
	if err != nil {
		return "", nil, err
	}
	cache = filepath.Join(dir, "npm")
	lock, alone, err := lockCacheDir(dir)
	if err != nil {
		return "", nil, err
	}
	closed := false
	release = func() { closed = true; lock.Close() }
	noteUse(dir, p.File, alone)
	me := seedOf(p)
	sources := seedSources(filepath.Dir(dir), filepath.Base(dir), me, client)
	if pruneNPMCaches(filepath.Dir(dir), filepath.Base(dir), p.File, sources) {
		sources = seedSources(filepath.Dir(dir), filepath.Base(dir), me, client) // what is left
	}
	if !alone {
		if st, err := os.Stat(cache); err == nil && st.IsDir() {
			return cache, release, nil
		}
		release()
		return "", nil, fmt.Errorf("the server's npm cache %s is missing after another start made it: start the server again", cache)
	}
	fd := int(lock.Fd())
	defer func() {
		if !closed { // downgraded: other starts may use it, none re-seed it
			_ = unix.Flock(fd, unix.LOCK_SH)
		}
	}()
	st, statErr := os.Stat(cache)
	if statErr == nil && st.IsDir() {
		old, _ := readSeed(dir)
		if me.fetches || (old != nil && !newer(sources, old.Sources)) || mutated("wrap-npm-cache-never-reseeded") {
			if old == nil { // made before seeds were recorded: a source for narrower policies from now on
				me.Sources = sources
				_ = writeSeed(dir, me)
			}
			return cache, release, nil
		}
	}
	tmp, err := os.MkdirTemp(dir, "npm-seed-")
	if err != nil {
		release()
		return "", nil, fmt.Errorf("make the server's npm cache: %w", err)
	}
	defer os.RemoveAll(tmp)
	fail := func(err error) (string, func(), error) { release(); return "", nil, err }
	budget := newSeedBudget()
	defer func() {
		for _, n := range budget.notes {
			warn(n)
		}
	}()
	if client != "" {
		if err := seedNPM(client, tmp, uid, budget); err != nil {
			return fail(fmt.Errorf("seed the server's npm cache from %s: %w", client, err))
		}
	}
	for src := range sources {
		if src == client {
			continue
		}
		if err := overlayNPM(src, tmp, client, uid, budget); err != nil {
			return fail(fmt.Errorf("seed the server's npm cache from %s: %w", src, err))
		}
	}
	if err := chownTree(tmp, uid, gid); err != nil {
		return fail(err)
	}
	if statErr == nil {
		// no start of this policy uses the old cache (the lock): it goes
		old := filepath.Join(dir, fmt.Sprintf("npm-old-%d", time.Now().UnixNano()))
		if err := os.Rename(cache, old); err != nil {
			return fail(fmt.Errorf("re-seed the server's npm cache %s: %w (remove it to re-seed)", cache, err))
		}
		defer os.RemoveAll(old)
	}
	if err := os.Rename(tmp, cache); err != nil && !errors.Is(err, fs.ErrExist) {
		return fail(fmt.Errorf("make the server's npm cache: %w", err))
	}
	me.Sources = sources
	if err := writeSeed(dir, me); err != nil {
		return fail(err)
	}
	return cache, release, nil
}

// newer says a source is new or changed since the seed (was): one gone since (its cache
// pruned, or removed) adds nothing, and a re-seed would only lose what it gave.
func newer(sources, was map[string]int64) bool {
	for src, stamp := range sources {
		if t, ok := was[src]; !ok || t != stamp {
			return true
		}
	}
	return false
}

// lockCacheDir makes dir and takes its use.lock: alone (exclusive) when no other start of the
// policy holds it, else shared (another start uses or makes the cache: it is taken as it is).
func lockCacheDir(dir string) (lock *os.File, alone bool, err error) {
	lockPath := filepath.Join(dir, "use.lock")
	for try := 0; ; try++ {
		if err := os.MkdirAll(dir, 0o711); err != nil {
			return nil, false, fmt.Errorf("make the server's npm cache: %w", err)
		}
		if lock, err = os.OpenFile(lockPath, os.O_RDWR|os.O_CREATE|unix.O_NOFOLLOW, 0o600); err != nil {
			return nil, false, fmt.Errorf("make the server's npm cache: %w", err)
		}
		alone = unix.Flock(int(lock.Fd()), unix.LOCK_EX|unix.LOCK_NB) == nil
		if !alone {
			if err := unix.Flock(int(lock.Fd()), unix.LOCK_SH); err != nil {
				lock.Close()
				return nil, false, fmt.Errorf("lock the server's npm cache: %w", err)
			}
		}
		if lockedHere(lock, lockPath) || try == 2 {
			return lock, alone, nil
		}
		lock.Close() // pruned (npmprune_linux.go) while this start waited: made again
	}
}

// seedInfo is KEY/seed.json, beside the cache (in a directory the server cannot write): what
// the cache's policy lets its server do, which another policy's cache compares (seedSources),
// and the _npx stamps of the sources it was seeded from.
type seedInfo struct {
	Name string `json:"name"`
	// Base is the [wrap] section without its network and tools.deny, as JSON.
	Base string `json:"base"`
	// NetAll: network = true; else Hosts: the host list (none: network = false).
	NetAll  bool             `json:"net_all,omitempty"`
	Hosts   []string         `json:"hosts,omitempty"`
	Deny    []string         `json:"deny,omitempty"`
	Sources map[string]int64 `json:"sources,omitempty"`
	// fetches: the server reaches the npm registry (it fetches what its cache lacks).
	fetches bool
}

func seedOf(p *policy.Policy) seedInfo {
	w := *wrapsec.Of(p)
	s := seedInfo{Name: p.Name, NetAll: w.Egress.Mode == policy.NetAll, Deny: w.Tools.Deny}
	if w.Egress.Mode == policy.NetHosts {
		for _, h := range w.Egress.Hosts() {
			s.Hosts = append(s.Hosts, h.Raw)
		}
	}
	_, s.fetches = w.Egress.Allows("registry.npmjs.org", 443)
	s.fetches = s.fetches || s.NetAll
	w.Egress, w.Tools.Deny = policy.Network{}, nil
	b, _ := json.Marshal(w)
	s.Base = string(b)
	return s
}

// within says whether a server under s may run what one under wider fetched. The private
// cache is writable and executable by its server, so what a server left in it is code the next
// one runs (TestNPMCachePerPolicy): another policy's cache may seed this one only when that
// policy's server could do everything this one can. The same name, command, read, write, env
// and server_requests (the kernel's bounds and what the server is given: a wider read or env
// could have fed it a file or a variable that changes what it plants, which this policy's own
// server never sees), a network that reaches every host this one does, and a tool deny list
// that holds every entry of the other's (a narrower relay): the code the other left then runs
// here with no more reach than it had there. Never the reverse: a network = false cache would
// otherwise seed one that holds a token and the network.
func (s seedInfo) within(wider seedInfo) bool {
	if mutated("wrap-npm-seed-any-policy") {
		return s.Name == wider.Name
	}
	if s.Name != wider.Name || s.Base != wider.Base {
		return false
	}
	if !wider.NetAll && (s.NetAll || !subset(s.Hosts, wider.Hosts)) {
		return false
	}
	return subset(wider.Deny, s.Deny)
}

func subset(a, b []string) bool {
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	return true
}

func readSeed(dir string) (*seedInfo, error) {
	b, err := os.ReadFile(filepath.Join(dir, "seed.json"))
	if err != nil {
		return nil, err
	}
	var s seedInfo
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, err
	}
	return &s, nil
}

func writeSeed(dir string, s seedInfo) error {
	b, _ := json.Marshal(s)
	tmp := filepath.Join(dir, "seed.json.tmp")
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return fmt.Errorf("record the server's npm cache's seed: %w", err)
	}
	return os.Rename(tmp, filepath.Join(dir, "seed.json"))
}

// seedSources are the caches a seed of key's cache reads, each with the latest modification
// time of its _npx, its trees and their node_modules (npx makes a tree there for each package
// it installs, and fills it): the client's, and the
// caches of the policy's name under policies wider than this one (within), e.g. the same
// policy with the registry, which fetched the package the start with network = false lacks.
// A changed stamp re-seeds a cache whose server cannot fetch (privateNPMCache).
func seedSources(root, key string, me seedInfo, client string) map[string]int64 {
	stamp := func(dir string) int64 {
		// an install ends by writing its tree's node_modules: the directories above it
		// change. Looked at beneath _npx with no link followed (a tree that is a link to
		// elsewhere has no stamp: the seed does not copy it).
		var t int64
		npx, err := openRoot(filepath.Join(dir, "_npx"))
		if err != nil {
			return 0
		}
		f := os.NewFile(uintptr(npx), "_npx")
		defer f.Close()
		look := func(rel string) {
			var st unix.Stat_t
			if fd, err := openBeneath(npx, rel, unix.O_PATH); err == nil {
				if unix.Fstat(fd, &st) == nil {
					t = max(t, st.Mtim.Nano())
				}
				unix.Close(fd)
			}
		}
		look(".")
		trees, _ := f.Readdirnames(1 << 16) // npx makes a tree a package: few
		for _, name := range trees {
			look(name)
			look(filepath.Join(name, "node_modules"))
		}
		return t
	}
	out := map[string]int64{}
	if client != "" {
		out[client] = stamp(client)
	}
	entries, _ := os.ReadDir(root)
	for _, e := range entries {
		if e.Name() == key || !e.IsDir() || !strings.HasPrefix(e.Name(), me.Name+"-") {
			continue
		}
		other, err := readSeed(filepath.Join(root, e.Name()))
		if err != nil || !me.within(*other) {
			continue
		}
		src := filepath.Join(root, e.Name(), "npm")
		if t := stamp(src); t != 0 {
			out[src] = t
		}
	}
	return out
}

// overlayNPM adds to the seed dst what another private cache src holds and dst lacks: its index
// lines, its npx trees, its content. src is written by its server (as root: the sandbox's uid),
// and so may be every other source the seed overlaid: src is walked, and dst written, by
// descriptors with no link followed on either side (seedtree_linux.go; atk36 F1, F1b), and, as
// root, only a file the sandbox's uid could read anyway is copied. Copies, never links: a link
// would let this policy's server write the other's cache; the only links made are the ones npm
// makes (seedLinkKept). What it writes counts against the seed's bound (b): past it, all src
// added is taken out again (a half-copied npx tree is worse than none) and b notes it.
func overlayNPM(src, dst, client string, uid int, b *seedBudget) error {
	// held shared, as a start of its own holds it: no prune removes it meanwhile (npmprune_linux.go)
	if l, err := os.OpenFile(filepath.Join(filepath.Dir(src), "use.lock"), os.O_RDONLY|unix.O_NOFOLLOW, 0); err == nil {
		defer l.Close()
		_ = unix.Flock(int(l.Fd()), unix.LOCK_SH|unix.LOCK_NB)
	}
	if allocated(src) > b.left {
		b.skipped(src)
		return nil
	}
	seedChecked(src)
	root, d, err := openSeedPair(src, dst)
	if err != nil || d == nil {
		return err // nil: pruned since it was listed
	}
	defer unix.Close(root)
	defer d.close()
	content := ""
	if client != "" {
		content = NPMContent(client)
	}
	var j journal
	index := filepath.Join("_cacache", "index-v5") + "/"
	err = b.walk(root, src, ".", func(e *seedEntry) (bool, error) {
		switch {
		case e.rel == "_logs":
			return false, nil
		case e.isDir():
			made, err := d.mkdir(e.rel)
			if errors.Is(err, errLinkThere) {
				b.refused(src, e.rel, whyLinkThere)
				return false, nil
			}
			if made {
				j.made = append(j.made, e.rel)
			}
			return err == nil, err
		case e.isLink():
			target, err := readLinkAt(e.dir, e.name)
			if err != nil {
				return false, nil
			}
			if !seedLinkKept(e.rel, target, content) {
				b.refused(src, e.rel, whyLink)
				return false, nil
			}
			if _, err := d.lstat(e.rel); errors.Is(err, unix.ENOENT) && d.symlink(target, e.rel) == nil {
				j.made = append(j.made, e.rel)
			}
			return false, nil
		case !e.isFile():
			return false, nil
		}
		_, lerr := d.lstat(e.rel)
		exists := lerr == nil
		if exists && !strings.HasPrefix(e.rel, index) {
			return false, nil // content is named by its hash, an npx tree by its package: the same
		}
		in, st, err := e.open()
		if err != nil {
			return false, nil
		}
		defer in.Close()
		if os.Geteuid() == 0 && int(st.Uid) != uid && st.Mode&0o004 == 0 {
			return false, nil // the server could not read it: root does not read it for the server
		}
		if exists { // an index bucket: npm reads its lines, the last one wins
			out, size, err := d.appendTo(e.rel)
			if errors.Is(err, errLinkThere) {
				b.refused(src, e.rel, whyLinkThere)
				return false, nil
			}
			if err != nil {
				return false, err
			}
			j.grown = append(j.grown, grownFile{e.rel, size})
			return false, errors.Join(b.appendAll(out, in, st.Size), out.Close())
		}
		out, err := d.create(e.rel, st.Mode&0o777|0o600)
		if err != nil {
			return false, err
		}
		j.made = append(j.made, e.rel)
		return false, errors.Join(b.copyData(out, in, st.Size), out.Close())
	})
	if errors.Is(err, errSeedFull) {
		j.undo(d)
		b.skipped(src)
		return nil
	}
	return err
}

// readLinkAt reads the link name in the directory dir.
func readLinkAt(dir int, name string) (string, error) {
	buf := make([]byte, unix.PathMax)
	n, err := unix.Readlinkat(dir, name, buf)
	if err != nil {
		return "", err
	}
	if n >= len(buf) {
		return "", unix.ENAMETOOLONG
	}
	return string(buf[:n]), nil
}

// seedNPM copies the index and the npx trees of the client's cache and links its content. Past
// the seed's bound (b) it copies none of them (dst is made empty again; npm installs what it
// needs, with network), and the content it would copy rather than link stops there.
func seedNPM(client, dst string, uid int, b *seedBudget) error {
	if allocated(filepath.Join(client, "_npx")) > b.left {
		b.skipped(client)
		return nil
	}
	root, d, err := openSeedPair(client, dst)
	if err != nil || d == nil {
		return err // nil: no cache there
	}
	defer unix.Close(root)
	defer d.close()
	for _, sub := range []string{filepath.Join("_cacache", "index-v5"), "_npx"} {
		err := copyTree(root, client, d, sub, b)
		if errors.Is(err, errSeedFull) {
			b.skipped(client)
			return emptyDir(dst)
		}
		if err != nil {
			return err
		}
	}
	return linkContent(root, client, d, filepath.Join("_cacache", "content-v2"), uid, b)
}

// openSeedPair opens a seed's source tree (its root, no link followed) and the seed it goes
// into; a nil seedDir and no error when the source is not there (pruned since it was listed,
// or never made).
func openSeedPair(src, dst string) (int, *seedDir, error) {
	root, err := openRoot(src)
	if errors.Is(err, unix.ENOENT) {
		return -1, nil, nil
	}
	if err != nil {
		return -1, nil, err
	}
	d, err := openSeedDir(dst)
	if err != nil {
		unix.Close(root)
		return -1, nil, err
	}
	return root, d, nil
}

// NPMContent is the client's npm content store the private cache links to: the server may read
// it (never write).
func NPMContent(client string) string { return filepath.Join(client, "_cacache", "content-v2") }

// seedSub makes the seed's directories for sub when the source (root) has sub as a directory
// (beneath it, no link followed); false when it has none.
func seedSub(root int, rootPath string, d *seedDir, sub string, b *seedBudget) (bool, error) {
	fd, err := openBeneath(root, sub, unix.O_PATH|unix.O_DIRECTORY)
	if errors.Is(err, unix.ELOOP) {
		b.refused(rootPath, sub, whyLink)
	}
	if err != nil {
		return false, nil
	}
	unix.Close(fd)
	p := ""
	for _, name := range strings.Split(sub, "/") {
		p = filepath.Join(p, name)
		if _, err := d.mkdir(p); err != nil {
			return false, fmt.Errorf("make %s in the seed: %w", p, err)
		}
	}
	return true, nil
}

// linkTree makes dst a tree of directories whose files link to src's (see privateNPMCache).
func linkTree(src, dst string, uid int, b *seedBudget) error {
	if err := os.Mkdir(dst, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	root, err := openRoot(src)
	if err != nil {
		return err
	}
	defer unix.Close(root)
	d, err := openSeedDir(dst)
	if err != nil {
		return err
	}
	defer d.close()
	return linkContent(root, src, d, ".", uid, b)
}

// linkContent links the seed's sub to the client's files beneath sub (root: the client's
// cache, rootPath its path), walked by descriptors as overlayNPM's sources. A copy past the
// seed's bound (b) is dropped, and the content after it not seeded: npm fetches (with
// network) what the index names and the store lacks.
func linkContent(root int, rootPath string, d *seedDir, sub string, uid int, b *seedBudget) error {
	if ok, err := seedSub(root, rootPath, d, sub, b); !ok || err != nil {
		return err
	}
	full := false
	err := b.walk(root, rootPath, sub, func(e *seedEntry) (bool, error) {
		switch {
		case e.isDir():
			made, err := d.mkdir(e.rel)
			return made || err == nil, nil
		case !e.isFile():
			return false, nil
		}
		if hardLinkSafe(&e.st, uid) && d.link(e, e.rel) == nil {
			return false, nil
		}
		if os.Geteuid() == 0 && uid != 0 {
			// the server's uid could not follow a symlink into root's home
			if full {
				return false, nil
			}
			in, st, err := e.open()
			if err != nil {
				return false, nil
			}
			defer in.Close()
			out, err := d.create(e.rel, st.Mode&0o777|0o600)
			if err != nil {
				return false, nil
			}
			err = errors.Join(b.copyData(out, in, st.Size), out.Close())
			if errors.Is(err, errSeedFull) {
				full = true
				b.skipped(rootPath)
				return false, d.remove(e.rel)
			}
			return false, err
		}
		return false, d.symlink(filepath.Join(rootPath, e.rel), e.rel)
	})
	if errors.Is(err, errSeedFull) { // past the bound of entries: the rest is not seeded
		b.skipped(rootPath)
		return nil
	}
	return err
}

// hardLinkSafe: a hard link lets the server reach the client's file whatever the path, so only
// a file the server's uid cannot write (another owner, not group- or world-writable) is linked.
func hardLinkSafe(st *unix.Stat_t, uid int) bool {
	if mutated("wrap-npm-link") {
		return os.Geteuid() == 0
	}
	return os.Geteuid() == 0 && int(st.Uid) != uid && st.Mode&0o022 == 0
}

// allocated is the disk dir's regular files hold (their blocks, not their apparent size: a
// sparse file's holes cost nothing to keep, as holes), counted up to maxSeed; more than maxSeed
// for a tree past the seed's bound of entries or depth. Walked as the seed walks it.
func allocated(dir string) int64 {
	root, err := openRoot(dir)
	if err != nil {
		return 0
	}
	defer unix.Close(root)
	var n int64
	count := &seedBudget{entries: maxSeedEntries}
	err = count.walk(root, dir, ".", func(e *seedEntry) (bool, error) {
		if e.isFile() {
			if mutated("wrap-npm-seed-unbounded") {
				n += e.st.Size
			} else {
				n += e.st.Blocks * 512
			}
		}
		if n > maxSeed {
			return false, errSeedFull
		}
		return true, nil
	})
	if errors.Is(err, errSeedFull) {
		return max(n, maxSeed+1)
	}
	return n
}

// copyTree copies the client's sub (root: its cache, rootPath its path) into the seed:
// regular files, directories, and the links npm makes (seedLinkKept), walked and written as
// overlayNPM does.
func copyTree(root int, rootPath string, d *seedDir, sub string, b *seedBudget) error {
	if ok, err := seedSub(root, rootPath, d, sub, b); !ok || err != nil {
		return err
	}
	return b.walk(root, rootPath, sub, func(e *seedEntry) (bool, error) {
		switch {
		case e.isDir():
			_, err := d.mkdir(e.rel)
			if errors.Is(err, errLinkThere) {
				b.refused(rootPath, e.rel, whyLinkThere)
				return false, nil
			}
			return err == nil, err
		case e.isLink():
			target, err := readLinkAt(e.dir, e.name)
			if err != nil {
				return false, nil
			}
			if !seedLinkKept(e.rel, target, "") {
				b.refused(rootPath, e.rel, whyLink)
				return false, nil
			}
			if err := d.symlink(target, e.rel); err != nil && !errors.Is(err, unix.EEXIST) {
				return false, err
			}
			return false, nil
		case !e.isFile():
			return false, nil
		}
		in, st, err := e.open()
		if err != nil {
			return false, nil
		}
		defer in.Close()
		out, err := d.create(e.rel, st.Mode&0o777|0o600)
		if errors.Is(err, unix.EEXIST) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		return false, errors.Join(b.copyData(out, in, st.Size), out.Close())
	})
}

// chownTree gives the server's uid what it must write (only when we are root).
func chownTree(dir string, uid, gid int) error {
	if os.Geteuid() != 0 {
		return nil
	}
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() && !mutated("wrap-npm-chown-links") {
			// a hard link (linkTree's) is the client's own file: chowned, it would be the
			// server's to chmod and rewrite (attack round atk33, F8). The seed is root's
			// alone while this runs: a file with other names is one linkTree made.
			var st unix.Stat_t
			if err := unix.Lstat(p, &st); err != nil {
				return err
			}
			if st.Nlink > 1 {
				return nil
			}
		}
		return os.Lchown(p, uid, gid)
	})
}

// endHint is what the server's last words (seen) call for, for a server that ended: the npm
// cache's advice for an npm cache miss alone, and the paths node could not find that the sandbox
// hides, with the read = [...] that shows them (trial48 F3: the npm advice was given to every
// server that ended with no network, a node script's hidden import named nowhere).
func endHint(seen *stderrSeen, cache string, net policy.Network, file string) string {
	miss, notFound := seen.get()
	if mutated("wrap-end-hint-unread") {
		return npmCacheHint(cache, net)
	}
	hint := notFoundHint(notFound, file)
	if miss {
		hint += npmCacheHint(cache, net)
	}
	return hint
}

// notFoundHint names the paths node could not find that are there on this host (so the sandbox
// hid them), and what to add to read: a package's node_modules directory whole, else the path.
func notFoundHint(paths []string, file string) string {
	var hidden, q []string
	for _, p := range paths {
		if _, err := os.Stat(p); err != nil {
			continue // not there outside the sandbox either: nothing to show it
		}
		hidden = append(hidden, p)
		dir := p
		if i := strings.LastIndex(p, "/node_modules/"); i >= 0 {
			dir = p[:i+len("/node_modules")]
		}
		if s := fmt.Sprintf("%q", dir); !slices.Contains(q, s) {
			q = append(q, s)
		}
	}
	if len(hidden) == 0 {
		return ""
	}
	if file == "" {
		file = "the policy"
	}
	return fmt.Sprintf("; it could not find %s, which the sandbox hides from it: add read = [%s] in %s to let it read them", strings.Join(hidden, ", "), strings.Join(q, ", "), file)
}

// npmCacheHint names, for a server that ended with no network, the private npm cache it ran
// with and what seeds it: ENOTCACHED is about that cache, not the client's.
func npmCacheHint(cache string, net policy.Network) string {
	if cache == "" || net.Mode != policy.NetNone {
		return ""
	}
	return fmt.Sprintf("; its npm cache was %s, seeded from your npm cache and from this server's caches under the same policy with the registry; it is seeded again at the next start once either has changed (run the server once with network = [\"registry.npmjs.org\"], or `npx -y PKG` once), or remove %s to re-seed it", cache, filepath.Dir(cache))
}
