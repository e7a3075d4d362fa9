package sandbox

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

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

// maxSeed bounds the copy of the client's npm cache.
const maxSeed = 2 << 30

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

// privateNPMCache returns the server's npm cache, making (and seeding) it when missing.
func privateNPMCache(name, client string, uid, gid int) (string, error) {
	dir, err := wrapCacheDir(name)
	if err != nil {
		return "", err
	}
	cache := filepath.Join(dir, "npm")
	if st, err := os.Stat(cache); err == nil && st.IsDir() {
		return cache, nil
	}
	if err := os.MkdirAll(dir, 0o711); err != nil {
		return "", fmt.Errorf("make the server's npm cache: %w", err)
	}
	tmp, err := os.MkdirTemp(dir, "npm-seed-")
	if err != nil {
		return "", fmt.Errorf("make the server's npm cache: %w", err)
	}
	defer os.RemoveAll(tmp)
	if client != "" {
		if err := seedNPM(client, tmp, uid); err != nil {
			return "", fmt.Errorf("seed the server's npm cache from %s: %w", client, err)
		}
	}
	if err := chownTree(tmp, uid, gid); err != nil {
		return "", err
	}
	if err := os.Rename(tmp, cache); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", fmt.Errorf("make the server's npm cache: %w", err)
	}
	return cache, nil
}

// seedNPM copies the index and the npx trees of the client's cache and links its content.
func seedNPM(client, dst string, uid int) error {
	if cacheSize(filepath.Join(client, "_npx")) > maxSeed {
		return nil // too much to copy: npm installs what it needs (with network)
	}
	for _, sub := range []string{filepath.Join("_cacache", "index-v5"), "_npx"} {
		if err := copyTree(filepath.Join(client, sub), filepath.Join(dst, sub)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	content := filepath.Join("_cacache", "content-v2")
	err := linkTree(filepath.Join(client, content), filepath.Join(dst, content), uid)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// NPMContent is the client's npm content store the private cache links to: the server may read
// it (never write).
func NPMContent(client string) string { return filepath.Join(client, "_cacache", "content-v2") }

// linkTree makes dst a tree of directories whose files link to src's (see privateNPMCache).
func linkTree(src, dst string, uid int) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(to, 0o755)
		case !d.Type().IsRegular():
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if hardLinkSafe(info, uid) && os.Link(p, to) == nil {
			return nil
		}
		if os.Geteuid() == 0 && uid != 0 {
			return copyFile(p, to) // the server's uid could not follow a symlink into root's home
		}
		return os.Symlink(p, to)
	})
}

// hardLinkSafe: a hard link lets the server reach the client's file whatever the path, so only
// a file the server's uid cannot write (another owner, not group- or world-writable) is linked.
func hardLinkSafe(info fs.FileInfo, uid int) bool {
	if mutated("wrap-npm-link") {
		return os.Geteuid() == 0
	}
	st, ok := info.Sys().(*syscall.Stat_t)
	return ok && os.Geteuid() == 0 && int(st.Uid) != uid && info.Mode().Perm()&0o022 == 0
}

func cacheSize(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		if n > maxSeed {
			return filepath.SkipAll
		}
		return nil
	})
	return n
}

// copyTree copies regular files, directories and symlinks (as links) from src to dst.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(to, 0o755)
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil || strings.HasPrefix(target, "/") {
				return nil // an absolute link would lead out of the copy: npm rebuilds what it needs
			}
			return os.Symlink(target, to)
		case d.Type().IsRegular():
			return copyFile(p, to)
		}
		return nil
	})
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	st, err := in.Stat()
	if err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, st.Mode().Perm()|0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
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
