package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// opensslConfigs are where OpenSSL looks for its configuration: Debian's and Ubuntu's own file,
// and OPENSSLDIR's name for it (/usr/lib/ssl/openssl.cnf, a link there; elsewhere a file of its
// own). Node and other programs linked against OpenSSL open it at start and refuse to run
// without it (trial37 F2: `--allow node` could run no JavaScript). A variable for the tests.
var opensslConfigs = []string{"/etc/ssl/openssl.cnf", "/usr/lib/ssl/openssl.cnf"}

// opensslPrivate is the directory of the host's TLS private keys: a configuration path that
// leads into it is never read.
var opensslPrivate = "/etc/ssl/private"

// opensslConfigFiles are the files opensslConfigs resolve to that every call may read, as it
// reads the system's libraries: each a regular file (never a directory: only the file is
// opened), never one under opensslPrivate. It holds no secret: it names algorithms and
// providers. Resolved once, when serve starts.
func opensslConfigFiles() []string {
	if mutated("allowlist-openssl-conf-unread") {
		return nil
	}
	var out []string
	for _, p := range opensslConfigs {
		r, err := filepath.EvalSymlinks(p)
		if err != nil {
			continue
		}
		st, err := os.Stat(r)
		if err != nil || !st.Mode().IsRegular() {
			continue
		}
		if under(r, opensslPrivate) && !mutated("allowlist-openssl-conf-private") {
			continue
		}
		if !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	return out
}

// under reports whether p is dir or below it (both clean and absolute).
func under(p, dir string) bool {
	if r, err := filepath.EvalSymlinks(dir); err == nil {
		dir = r
	}
	return p == dir || strings.HasPrefix(p, strings.TrimSuffix(dir, "/")+"/")
}
