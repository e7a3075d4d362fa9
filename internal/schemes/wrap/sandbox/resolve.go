package sandbox

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	allowlist "github.com/mcpsandbox/mcpsandbox/internal/schemes/allowlist/sandbox"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// program is the wrapped command as the kernel will run it, and what it needs to read.
type program struct {
	Binary   string   // the file executed: the command, or a script's interpreter (symlinks resolved)
	Argv     []string // argv as executed (a script's interpreter first)
	ExecDirs []string // its install dirs: read and execute
	ReadDirs []string // read only (the npm cache)
	PathDirs []string // put first on the server's PATH (where the command and its interpreter live)
	Env      []string // variables the runtime needs (npm's offline mode)
	// ReadFiles are single files read only: a narrowed install's pyvenv.cfg (a venv under a
	// home's dot directory)
	ReadFiles []string
	Node      bool   // a node program: npm gets a private cache
	NPMFrom   string // the client's npm cache, to seed the private one
	home      string // the client's home: an install dir in its dot directories is narrowed
}

// systemPrefixes are readable (and executable) for every server anyway: an install dir under
// one is not listed again.
var systemPrefixes = []string{"/usr", "/bin", "/sbin", "/lib", "/lib64"}

// resolveProgram finds argv[0] on the client's PATH, follows symlinks and a script's #! line,
// and lists the install dirs the server must read. home is the client's real home (the npm
// cache lives there); pathEnv the client's PATH.
func resolveProgram(argv []string, pathEnv, home string, offline bool) (*program, error) {
	if len(argv) == 0 || argv[0] == "" {
		return nil, errors.New("no command to wrap: give it after `--` (mcpsandbox wrap --policy FILE -- npx -y SERVER) or in [wrap].command")
	}
	invoked, err := lookPath(argv[0], pathEnv)
	if err != nil {
		return nil, err
	}
	real, err := filepath.EvalSymlinks(invoked)
	if err != nil {
		return nil, fmt.Errorf("wrapped command %s: %w", invoked, err)
	}
	pr := &program{Binary: real, Argv: slices.Clone(argv), home: home}
	pr.addInstall(invoked, real)
	script := invoked
	for range 4 { // as the kernel: an interpreter may itself be a script, 4 levels deep
		interp, err := pr.interpreter(pr.Binary, pathEnv)
		if err != nil {
			return nil, err
		}
		if interp == nil {
			break
		}
		pr.Binary = interp.real
		pr.Argv = slices.Concat([]string{interp.path}, interp.args, []string{script}, pr.Argv[1:])
		script = interp.path
	}
	if isNode(pr.Binary) {
		pr.npm(home, offline)
	}
	return pr, nil
}

type interpreter struct {
	path, real string
	args       []string
}

// interpreter is the #! interpreter of file (nil when it is not a script), resolved.
func (pr *program) interpreter(file, pathEnv string) (*interpreter, error) {
	interp, arg, err := shebang(file)
	if err != nil || interp == "" {
		return nil, err
	}
	if filepath.Base(interp) == "env" && arg != "" {
		interp, arg = envProgram(arg)
		if interp, err = lookPath(interp, pathEnv); err != nil {
			return nil, fmt.Errorf("the #! line of %s: %w", file, err)
		}
	}
	real, err := filepath.EvalSymlinks(interp)
	if err != nil {
		return nil, fmt.Errorf("the #! line of %s names %s: %w", file, interp, err)
	}
	pr.addInstall(interp, real)
	return &interpreter{path: interp, real: real, args: splitArg(arg)}, nil
}

// addInstall lists the install dir of a program and of its resolved file (prefix/bin/.. for a
// program in a bin dir, else the file's own dir), outside the system dirs, and puts the invoked
// program's dir on PATH. A dir everybody shares (/tmp, /home, a home) is never listed whole.
func (pr *program) addInstall(invoked, real string) {
	if d := filepath.Dir(invoked); !slices.Contains(pr.PathDirs, d) {
		pr.PathDirs = append(pr.PathDirs, d)
	}
	for _, p := range []string{invoked, real} {
		dir := filepath.Dir(p)
		if filepath.Base(dir) == "bin" && !userShared(filepath.Dir(dir)) {
			dir = filepath.Dir(dir)
		}
		if shared(dir) || underSystem(dir) || slices.Contains(pr.ExecDirs, dir) {
			continue
		}
		if pr.home != "" && filepath.Dir(dir) == pr.home && allowlist.ExposedSecrets(dir, pr.home) != "" && !mutated("wrap-install-secrets") {
			pr.narrowed(dir, p, real)
			continue
		}
		pr.ExecDirs = append(pr.ExecDirs, dir)
	}
	if tree := nodeModulesTree(real, pr.home); tree != "" && !slices.Contains(pr.ExecDirs, tree) && !mutated("wrap-node-modules-tree") {
		pr.ExecDirs = append(pr.ExecDirs, tree)
	}
}

// nodeModulesTree is the node_modules tree a program's file lies in (a project's
// ./node_modules/.bin/srv -> ../srv/dist/index.js: npm hoists the package's dependencies beside
// it, where node looks for them), outside the system and shared dirs and a home's dot
// directories (narrowed does those: ~/.bun/install/global/node_modules); "" when there is none.
func nodeModulesTree(real, home string) string {
	i := strings.Index(real, "/node_modules/")
	if i <= 0 {
		return ""
	}
	tree := real[:i+len("/node_modules")]
	if shared(filepath.Dir(tree)) || underSystem(tree) || allowlist.ExposedSecrets(tree, home) != "" {
		return "" // /tmp/node_modules is anybody's; a system install reads its dir anyway
	}
	return tree
}

// narrowed lists, for an install dir that is a home's dot directory (~/.cargo for
// ~/.cargo/bin/srv, where cargo keeps credentials.toml; ~/.bun, ~/.deno, a venv at ~/.venv),
// only what a program runs from: its bin dir and runtime subdirs (lib, lib64, libexec, share)
// that exist, a venv's pyvenv.cfg, and the node_modules tree a node program lies in (bun's
// ~/.bun/install/global/node_modules: packages and their dependencies); a program directly in
// such a dir gets its own file. The rest of the dot directory (tokens, caches, a user's config)
// stays unreadable, as the allowlist narrows a pinned binary's prefix. A deeper install dir
// (~/.nvm/versions/node/v22, ~/.venvs/x) is an install's own and is listed whole.
func (pr *program) narrowed(dir, file, real string) {
	add := func(d string) {
		if st, err := os.Stat(d); err == nil && st.IsDir() && !slices.Contains(pr.ExecDirs, d) {
			pr.ExecDirs = append(pr.ExecDirs, d)
		}
	}
	if i := strings.Index(real, "/node_modules/"); i > len(dir) && strings.HasPrefix(real, dir+"/") {
		add(real[:i+len("/node_modules")]) // ~/.bun/bin/x -> ../install/global/node_modules/x/bin/x.js
	}
	if filepath.Dir(file) == dir && filepath.Base(dir) == "bin" { // ~/.local/bin: programs only
		add(dir)
		return
	}
	if filepath.Dir(file) == dir { // not prefix/bin/file: the file alone
		if !slices.Contains(pr.ReadFiles, file) {
			pr.ReadFiles = append(pr.ReadFiles, file)
		}
		return
	}
	add(filepath.Dir(file))
	for _, sub := range []string{"bin", "lib", "lib64", "lib32", "libexec", "share"} {
		add(filepath.Join(dir, sub))
	}
	if cfg := filepath.Join(dir, "pyvenv.cfg"); !slices.Contains(pr.ReadFiles, cfg) {
		if st, err := os.Stat(cfg); err == nil && st.Mode().IsRegular() {
			pr.ReadFiles = append(pr.ReadFiles, cfg)
		}
	}
}

// userShared prefixes hold a user's data beside programs (~/.local/share, ~/.local/state): only
// their bin dir is an install dir.
func userShared(prefix string) bool {
	home, _ := os.UserHomeDir()
	return home != "" && (prefix == filepath.Join(home, ".local") || prefix == home)
}

// shared dirs hold other people's or other programs' files: never an install dir.
func shared(dir string) bool {
	home, _ := os.UserHomeDir()
	switch dir {
	case "/", "/tmp", "/var/tmp", "/home", "/root", "/opt", "/var", "/srv", "/mnt", "/media", "/run", "/dev/shm", home:
		return true
	}
	return false
}

func underSystem(p string) bool {
	for _, s := range systemPrefixes {
		if p == s || strings.HasPrefix(p, s+"/") {
			return true
		}
	}
	return false
}

func isNode(bin string) bool {
	b := filepath.Base(bin)
	return b == "node" || b == "nodejs" || strings.HasPrefix(b, "node-")
}

// npm marks a node program: npx and npm get a private cache (npmcache.go), kept between starts;
// without network npm is told to stay offline instead of failing on the registry.
func (pr *program) npm(home string, offline bool) {
	pr.NPMFrom = os.Getenv("npm_config_cache")
	if pr.NPMFrom == "" && home != "" {
		pr.NPMFrom = filepath.Join(home, ".npm")
	}
	pr.Node = true
	pr.Env = append(pr.Env, "npm_config_update_notifier=false", "npm_config_fund=false", "npm_config_audit=false",
		"npm_config_prefer_offline=true")
	if offline {
		pr.Env = append(pr.Env, "npm_config_offline=true")
	}
}

// lookPath finds a program on PATH (a name with a slash is taken as it is, made absolute).
func lookPath(name, pathEnv string) (string, error) {
	if strings.Contains(name, "/") {
		abs, err := filepath.Abs(name)
		if err != nil {
			return "", err
		}
		if !executable(abs) {
			return "", fmt.Errorf("wrapped command %s is not an executable file", abs)
		}
		return abs, nil
	}
	for _, dir := range filepath.SplitList(pathEnv) {
		if dir == "" || !filepath.IsAbs(dir) {
			continue // a relative PATH entry would depend on the cwd
		}
		if p := filepath.Join(dir, name); executable(p) {
			return p, nil
		}
	}
	return "", fmt.Errorf("wrapped command %q is not on PATH (%s): give its absolute path", name, pathEnv)
}

func executable(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0
}

// shebang reads a script's #! line: its interpreter and the optional argument ("" when the
// file is not a script).
func shebang(path string) (interp, arg string, err error) {
	f, err := os.Open(path)
	if err != nil {
		return "", "", fmt.Errorf("wrapped command %s: %w", path, err)
	}
	defer f.Close()
	line, _ := bufio.NewReaderSize(f, 256).ReadString('\n')
	rest, ok := strings.CutPrefix(line, "#!")
	if !ok {
		return "", "", nil
	}
	if len(line) > 255 {
		line = line[:255]
	}
	rest = strings.TrimSpace(rest)
	interp, arg, _ = strings.Cut(rest, " ")
	if interp == "" || !filepath.IsAbs(interp) {
		return "", "", fmt.Errorf("wrapped command %s: its #! line %q names no absolute interpreter", path, strings.TrimSpace(line))
	}
	return interp, strings.TrimSpace(arg), nil
}

// envProgram splits what follows /usr/bin/env on a #! line: the program, and its arguments
// (with "-S" the rest is split; options of env itself are dropped).
func envProgram(arg string) (prog, rest string) {
	fields := strings.Fields(arg)
	for len(fields) > 0 && strings.HasPrefix(fields[0], "-") {
		fields = fields[1:]
	}
	if len(fields) == 0 {
		return "", ""
	}
	return fields[0], strings.Join(fields[1:], " ")
}

func splitArg(arg string) []string {
	if arg == "" {
		return nil
	}
	return strings.Fields(arg)
}

// FirstStartHint says, for a server a package runner (npx, uvx) starts with no network, what its
// first start needs when the package is not in the cache: its registry's hosts ("" otherwise).
// A server that ended with "ENOTCACHED" on its stderr said so in npm's words only.
func FirstStartHint(command string, net policy.Network, file string) string {
	runner := strings.TrimSuffix(filepath.Base(command), ".cmd")
	hosts := map[string]string{"npx": `["registry.npmjs.org"]`, "uvx": `["pypi.org", "files.pythonhosted.org"]`}[runner]
	if hosts == "" || net.Mode != policy.NetNone {
		return ""
	}
	if file == "" {
		file = "the policy"
	}
	return fmt.Sprintf("; if it could not fetch its package: a server %s has not fetched before (not in your cache either) needs network = %s in %s for its first start", runner, hosts, file)
}
