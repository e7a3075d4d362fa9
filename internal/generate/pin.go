// Package generate turns answers (wizard, flags, built-in defaults) into policies and client configs.
package generate

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/mcpsandbox/mcpsandbox/policy"
)

// SearchPATH is where commands are looked up when pinned by name: the same fixed PATH commands
// run with, never the caller's PATH (which may hold shims or a user-writable directory).
var SearchPATH = []string{"/usr/local/bin", "/usr/bin", "/bin"}

// onUserPATH is where the caller's PATH finds the program name (absolute), or "": a hint only,
// never pinned without the user giving it.
func onUserPATH(name string) string {
	for _, dir := range filepath.SplitList(os.Getenv("PATH")) {
		if !filepath.IsAbs(dir) {
			continue // "" and "." are the current directory: not a place serve would look
		}
		c := filepath.Join(dir, name)
		if st, err := os.Stat(c); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return c
		}
	}
	return ""
}

// DefaultDenyArgs are options of common tools that read or write files named inside an option,
// or run other programs. The kernel confines them anyway; refusing them early gives a clear message.
var DefaultDenyArgs = map[string][]string{
	"wc":   {"--files0-from*"},
	"sort": {"--compress-program*", "--files0-from*"},
	"du":   {"--files0-from*"},
	"tar":  {"--to-command*", "--use-compress-program*", "-I*", "--checkpoint-action*", "--info-script*", "--new-volume-script*", "-F*"},
	"find": {"-exec", "-execdir", "-ok", "-okdir", "-fprint*", "-fls", "-delete"},
	"grep": {"--file*", "-f*"},
}

// DefaultCommands is the built-in allowlist: text tools that cannot run other programs.
var DefaultCommands = []string{"cat", "cut", "diff", "grep", "head", "ls", "sort", "tail", "tr", "uniq", "wc"}

// Pin resolves a command name (or absolute path) to its real path and sha256 (a venv's python
// keeps its own path: policy.VenvOf).
func Pin(name string) (policy.Command, error) {
	p := name
	switch {
	case filepath.IsAbs(name):
	case strings.ContainsAny(name, "/"+string(filepath.Separator)) && !mutated("init-pin-relative"):
		// A relative path ("./wc", "bin/tool") names a file from here, as a shell would run
		// it; searching the fixed PATH for it would pin another program of the same name.
		abs, err := filepath.Abs(name)
		if err != nil {
			return policy.Command{}, fmt.Errorf("resolve %s from the current directory: %w: give its absolute path", name, err)
		}
		p = abs
	default:
		p = ""
		for _, dir := range SearchPATH {
			c := filepath.Join(dir, name)
			if st, err := os.Stat(c); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
				p = c
				break
			}
		}
		if p == "" {
			if mine := onUserPATH(name); mine != "" && !mutated("init-allow-user-path-unsaid") {
				// serve's PATH is fixed; the user's shell finds it elsewhere (trial37 F13: go
				// in /usr/local/go/bin): that path is the one to give
				return policy.Command{}, fmt.Errorf("%q is not in serve's PATH (%s); your PATH has %s: --allow %s", name, strings.Join(SearchPATH, ":"), mine, mine)
			}
			return policy.Command{}, fmt.Errorf("%q is not in serve's PATH (%s) nor in yours: install it or give its absolute path", name, strings.Join(SearchPATH, ":"))
		}
	}
	if n := filepath.Base(name); !policy.ValidCommandName(n) {
		// said here, as the --allow it came from, not as the policy's commands[0].name later
		return policy.Command{}, fmt.Errorf("its name %q is what clients ask for, and may hold only letters, digits and '._+-': allow a symbolic link to it under such a name (e.g. ln -s %q ~/bin/NAME, then --allow ~/bin/NAME)", n, p)
	}
	real, err := filepath.EvalSymlinks(p)
	if errors.Is(err, fs.ErrNotExist) {
		return policy.Command{}, fmt.Errorf("%s does not exist: give the absolute path of an installed program, or its name in %s", p, strings.Join(SearchPATH, ":"))
	}
	if err != nil {
		return policy.Command{}, fmt.Errorf("resolve %s: %w", p, err)
	}
	if err := checkELF(real); err != nil {
		return policy.Command{}, err
	}
	sum, err := HashFile(real)
	if err != nil {
		return policy.Command{}, err
	}
	path := real
	if p != real && policy.VenvOf(p) != "" && !mutated("pin-venv") {
		// A venv's python (a link to its base interpreter): kept as the link, so serve starts
		// it by that path and Python finds its venv; the file pinned is still what it links to.
		path = p
	}
	return policy.Command{Name: filepath.Base(name), Path: path, SHA256: sum, DenyArgs: DefaultDenyArgs[filepath.Base(name)]}, nil
}

// checkELF refuses what serve would refuse at its start (the allowlist's pin): a file that is
// not an ELF binary, such as a script (npm's bin links are), so init says so before anything is
// written instead of its proof failing with serve's start-up log. Linux only: serve runs the
// allowlist there alone.
func checkELF(path string) error {
	if runtime.GOOS != "linux" || mutated("init-pin-elf") {
		return nil
	}
	return CheckELF(path)
}

// CheckELF says what path is when it is not an ELF binary (a script: serve refuses to pin it, and
// does not start), nil when it is one or cannot be read (its own finding).
func CheckELF(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("open %s: %w", path, err)
	}
	defer f.Close()
	head := make([]byte, 4)
	n, _ := io.ReadFull(f, head)
	if string(head[:n]) == "\x7fELF" {
		return nil
	}
	what := "is not an ELF binary"
	if n >= 2 && string(head[:2]) == "#!" {
		what = "is a script (it starts with #!), not an ELF binary"
	}
	return fmt.Errorf("%s %s: a script cannot be pinned safely: allowlist its interpreter's real binary instead, or use the docker scheme to run code", path, what)
}

// HashFile is the hex sha256 of a file's contents.
func HashFile(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("hash %s: %w", path, err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("hash %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// PinDefaults pins the default commands present on this host, now (the allowlist's built-in
// policy allows them); an error when none is found.
func PinDefaults() ([]policy.Command, error) {
	var cs []policy.Command
	for _, n := range DefaultCommands {
		c, err := Pin(n)
		if err != nil {
			continue // a missing tool is simply not offered
		}
		cs = append(cs, c)
	}
	if len(cs) == 0 {
		return nil, fmt.Errorf("none of %s found in %s", strings.Join(DefaultCommands, ", "), strings.Join(SearchPATH, ":"))
	}
	return cs, nil
}
