//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"

	alsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/allowlist/section"

	"github.com/mcpsandbox/mcpsandbox/internal/schemes/allowlist/sandbox/helper"

	"github.com/mcpsandbox/mcpsandbox/executor"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// maxArgLen is the kernel's limit on one argument string (MAX_ARG_STRLEN, 32 pages).
const maxArgLen = 32*4096 - 1

// denyPattern is a compiled deny_args glob. GNU getopt accepts any unambiguous prefix of a long
// option ("--files0=/etc/passwd" means "--files0-from=..."), so a pattern naming a long option
// also denies its abbreviations.
type denyPattern struct {
	glob     string
	re       *regexp.Regexp
	longName string // "--files0-from" for "--files0-from*"; "" when the pattern is not a long option
}

func compileDeny(g string) (denyPattern, error) {
	re, err := policy.CompileGlob(g)
	if err != nil {
		return denyPattern{}, err
	}
	d := denyPattern{glob: g, re: re}
	if strings.HasPrefix(g, "--") {
		name := g
		if i := strings.IndexAny(g, "*?[="); i >= 0 {
			name = g[:i]
		}
		if len(name) > 2 {
			d.longName = name
		}
	}
	return d, nil
}

func (d denyPattern) match(arg string) bool {
	if d.re.MatchString(arg) {
		return true
	}
	if d.longName == "" || !strings.HasPrefix(arg, "--") {
		return false
	}
	name, _, _ := strings.Cut(arg, "=")
	return len(name) > 3 && strings.HasPrefix(d.longName, name)
}

// checked is what the argument check found that the call itself must enforce.
type checked struct {
	// roBinds are existing workspace paths (resolved) mounted read-only for the call: protected
	// files and directories, and hard-linked files allowed read-only.
	roBinds []string
	// overlay is the call's workspace layer's mount data ("" = none; layer_linux.go).
	overlay string
	// hidden are workspace files (paths from its root) the call's layer hides from it.
	hidden []string
	// mounts is the mount namespace made ahead for the call, with its layer (nil: none;
	// mntns_linux.go): entered if it is what the call's mount list would make.
	mounts *preparedMounts
}

// checkArgs applies deny_args and judges every string the program will use as a file name the
// way the kernel will resolve it. The kernel (Landlock) confines the command to the workspace
// whatever this says; this check is what keeps writes off protected workspace files, off hard
// links, and gives a clear refusal instead of a permission error.
func (e *Executor) checkArgs(pc *pinned, args []string) (*checked, error) {
	if len(args) > maxArgs {
		return nil, executor.Refuse("tool.arguments", "%d arguments; at most %d", len(args), maxArgs)
	}
	total := 0
	for i, a := range args {
		total += len(a)
		if strings.IndexByte(a, 0) >= 0 {
			return nil, executor.Refuse("tool.arguments", "argument %d contains a NUL byte", i+1)
		}
		if len(a) > maxArgLen {
			return nil, executor.Refuse("tool.arguments", "argument %d is %d bytes; the kernel takes at most %d in one argument (write the data to a file in the workspace and pass its name)", i+1, len(a), maxArgLen)
		}
	}
	if total > maxArgsBytes {
		return nil, executor.Refuse("tool.arguments", "arguments total %d bytes; at most %d (write the data to a file in the workspace and pass its name)", total, maxArgsBytes)
	}
	for i, a := range args {
		for _, d := range pc.denyRe {
			if d.match(a) {
				return nil, executor.Refuse("allowlist.commands["+pc.Name+"].deny_args",
					"argument %d %q matches the denied pattern %q", i+1, a, d.glob)
			}
		}
	}
	var uses []argUse
	if pc.model != nil {
		var err error
		_, posix := e.al.Env["POSIXLY_CORRECT"]
		if uses, err = pc.model.parse(args, posix); err != nil {
			return nil, executor.Refuse("allowlist.commands["+pc.Name+"]",
				"%v: the argument check models how %s parses its options and refuses what it cannot model", err, pc.Name)
		}
	} else {
		uses = conservativeUses(args)
	}
	c := &checked{}
	prot := e.protection()
	var prefix, suffix *argUse
	for i := range uses {
		u := &uses[i]
		switch u.kind {
		case kPrefix:
			prefix = u
			continue
		case kSuffix:
			suffix = u
			continue
		}
		if err := e.judge(pc, prot, c, *u); err != nil {
			return nil, err
		}
	}
	if pc.model != nil && pc.model.patternFirst && grepRecursesCwd(args, uses) {
		// grep -r with no file operand searches the working directory: the workspace.
		if err := e.judge(pc, prot, c, argUse{index: 0, value: ".", kind: kRead}); err != nil {
			return nil, err
		}
	}
	if pc.model != nil && pc.model.defaultPrefix != "" {
		p := argUse{value: pc.model.defaultPrefix, kind: kPrefix}
		if prefix != nil {
			p = *prefix
		}
		if suffix != nil && pc.model.suffixFormat {
			suffix = &argUse{index: suffix.index, value: "*", kind: kSuffix}
		}
		if err := e.judgeGenerated(prot, p, suffix); err != nil {
			return nil, err
		}
	}
	return c, nil
}

func outside(i int, a string, why string) error {
	return executor.Refuse("allowlist.workspace",
		"argument %d %q %s (paths must stay inside the workspace; nothing outside it is named here)", i, a, why)
}

// judge checks one string the program will use.
func (e *Executor) judge(pc *pinned, prot *protection, c *checked, u argUse) error {
	if u.value == "" {
		return nil
	}
	r := e.resolve(u.value)
	if u.kind == kNone {
		// Not a file name for this program, as far as the model knows. Should the model be
		// wrong, a hard link is the one thing the kernel would not catch: refuse that still.
		if r.err == nil && r.inside && r.exists && r.multiLink && e.al.HardLinks != alsec.HardLinksReadOnly {
			return hardLinkRefusal(u)
		}
		return nil
	}
	if pc.AllowOutsidePaths && (u.kind == kRead) {
		return nil
	}
	switch {
	case r.err != nil:
		return outside(u.index, u.value, r.err.Error())
	case !r.inside && !mutated("path-args"):
		if pc.AllowOutsidePaths {
			return nil
		}
		return outside(u.index, u.value, "leads outside the workspace")
	}
	write := u.kind != kRead
	if write {
		if name := prot.match(r.path); name != "" && !mutated("protect-names") {
			return protectedRefusal(u, name)
		}
	}
	if r.exists && r.multiLink {
		if write || e.al.HardLinks != alsec.HardLinksReadOnly {
			return hardLinkRefusal(u)
		}
		c.roBinds = append(c.roBinds, r.path)
	}
	// A string judged as a write because the model does not know (kUnknown: every argument of
	// an unmodelled program) may be read as well: cp -r vendor copy reads vendor whole (attack
	// round atk19c).
	reads := !write || u.kind == kUnknown && !mutated("hardlink-walk-unmodelled")
	if r.exists && reads && e.al.HardLinks != alsec.HardLinksReadOnly && (pc.model == nil || !pc.model.listsOnly) && !mutated("hardlink-walk") {
		// A directory a program may read recursively (grep -r, diff -r, any unmodelled
		// program): a hard link below it reaches a file the argument does not name.
		if st, err := os.Stat(r.path); err == nil && st.IsDir() {
			if name, err := e.multiLinkBelow(r.path); err != nil || name != "" {
				return hardLinkBelowRefusal(u, e.rel(name), err)
			}
		}
	}
	return nil
}

// grepRecursesCwd: a recursive option is (or may be) given and no file operand is: grep then
// reads the working directory. A short-option bundle holding r or R counts even when the letter
// is an option's value: a needless check, never a missed one.
func grepRecursesCwd(args []string, uses []argUse) bool {
	for _, u := range uses {
		if u.kind == kRead {
			return false
		}
	}
	for _, a := range args {
		if a == "--" {
			break
		}
		if strings.HasPrefix(a, "--") {
			if n, _, _ := strings.Cut(a[2:], "="); len(n) >= 2 && (strings.HasPrefix("recursive", n) || strings.HasPrefix("dereference-recursive", n)) {
				return true
			}
		} else if strings.HasPrefix(a, "-") && strings.ContainsAny(a, "rR") {
			return true
		}
	}
	return false
}

// maxWalk bounds the files a directory argument's hard-link check looks at.
const maxWalk = 200000

// multiLinkBelow finds a regular file with more than one link below dir (symbolic links are
// judged by their target, as grep -R and diff follow them), or says why it could not look. A
// link to a directory of the workspace is walked too (attack round atk19c: sub/l -> ../vendor
// let grep -R sub read vendor's hard links); each directory once, so a link cycle ends. One
// leading out of the workspace is not: the kernel refuses reading there.
func (e *Executor) multiLinkBelow(dir string) (string, error) {
	found, n := "", 0
	errStop := errors.New("stop")
	seen := map[[2]uint64]bool{}
	var walk func(dir string) error
	walk = func(dir string) error {
		if st, err := os.Stat(dir); err == nil {
			if sys, ok := st.Sys().(*syscall.Stat_t); ok {
				id := [2]uint64{sys.Dev, sys.Ino}
				if seen[id] {
					return nil
				}
				seen[id] = true
			}
		}
		return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil // unreadable to serve: the sandbox's uid will not read it either
			}
			if n++; n > maxWalk {
				return fmt.Errorf("more than %d entries below it", maxWalk)
			}
			if d.IsDir() {
				if p == dir {
					return nil
				}
				if st, err := os.Stat(p); err == nil {
					if sys, ok := st.Sys().(*syscall.Stat_t); ok {
						seen[[2]uint64{sys.Dev, sys.Ino}] = true
					}
				}
				return nil
			}
			st, err := os.Stat(p)
			if err != nil {
				return nil
			}
			if st.IsDir() && d.Type()&fs.ModeSymlink != 0 && !mutated("hardlink-walk-links") {
				if r := e.resolve(p); r.err == nil && r.inside && r.exists {
					return walk(r.path)
				}
				return nil
			}
			if sys, ok := st.Sys().(*syscall.Stat_t); ok && st.Mode().IsRegular() && sys.Nlink > 1 {
				found = p
				return errStop
			}
			return nil
		})
	}
	err := walk(dir)
	if err != nil && err != errStop {
		return "", err
	}
	return found, nil
}

// rel names p relative to the workspace (p is inside it), for messages.
func (e *Executor) rel(p string) string {
	if r, err := filepath.Rel(e.ws, p); err == nil {
		return r
	}
	return "a file"
}

func hardLinkBelowRefusal(u argUse, name string, err error) error {
	if err != nil {
		return executor.Refuse("allowlist.hardlinks",
			"argument %d %q is a directory the program may read through, and it could not be checked for hard links (%v): name the files instead", u.index, u.value, err)
	}
	return executor.Refuse("allowlist.hardlinks",
		"argument %d %q is a directory the program may read through, and %s below it has more than one hard link: another name for it may lie outside the workspace (remove the extra link, copy the file, name the files you mean, or set hardlinks = \"read-only\")", u.index, u.value, name)
}

// judgeGenerated checks the names a program generates from a prefix (and suffix): the prefix's
// directory is resolved as the kernel will, and no name the program could generate may be
// protected.
func (e *Executor) judgeGenerated(prot *protection, p argUse, s *argUse) error {
	if p.value == "-" {
		return nil
	}
	dir, base := filepath.Split(p.value)
	if dir == "" {
		dir = "."
	}
	r := e.resolve(dir)
	switch {
	case r.err != nil:
		return outside(p.index, p.value, r.err.Error())
	case !r.inside && !mutated("path-args") && !mutated("split-prefix-outside"):
		// The directory the names land in, resolved through symlinks (link/part- with link
		// pointing outside): refused naming the argument, never where it leads.
		return outside(p.index, p.value, "leads outside the workspace")
	}
	if name := prot.match(r.path); name != "" && !mutated("protect-names") {
		return protectedRefusal(p, name)
	}
	suffix := ""
	if s != nil {
		suffix = globQuote(s.value)
		if s.value == "*" { // a format that may produce anything
			suffix = "*"
		}
	}
	rel, _ := filepath.Rel(e.ws, r.path)
	pattern := globQuote(base) + genRun + suffix
	if rel != "." {
		pattern = globQuote(rel) + "/" + pattern
	}
	if name := prot.matchPattern(pattern); name != "" && !mutated("protect-names") {
		return protectedRefusal(p, name+" (among the names it generates)")
	}
	return nil
}

func protectedRefusal(u argUse, name string) error {
	return executor.Refuse("allowlist.protect",
		"argument %d %q would write %s: the host runs or obeys it later without anyone asking (hooks, tool config, CI, agent instructions), so commands may not write it (the operator can trim the list with protect = [\"!NAME\"])",
		u.index, u.value, name)
}

func hardLinkRefusal(u argUse) error {
	return executor.Refuse("allowlist.hardlinks",
		"argument %d %q names a file with more than one hard link: another name for it may lie outside the workspace, where the sandbox cannot see (remove the extra link, copy the file, or set hardlinks = \"read-only\")",
		u.index, u.value)
}

// resolution is where a path argument leads, resolved component by component as the kernel
// resolves it: symlinks are followed where they appear, and ".." applies to the directory a
// symlink led to, not to the spelling.
type resolution struct {
	path      string // absolute, every existing component resolved
	exists    bool
	inside    bool // the workspace or below it
	multiLink bool // an existing regular file with more than one link
	err       error
}

const maxSymlinks = 40 // the kernel's MAXSYMLINKS

var errProc = errors.New("goes through /proc or /dev/fd, which name the server's own files")

func (e *Executor) resolve(p string) resolution {
	cur := e.ws
	if filepath.IsAbs(p) {
		cur = "/"
	}
	comps := strings.Split(p, "/")
	links := 0
	var r resolution
	for len(comps) > 0 {
		c := comps[0]
		comps = comps[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, c)
		if next == "/proc" || next == "/dev/fd" || strings.HasPrefix(next, "/proc/") || strings.HasPrefix(next, "/dev/fd/") {
			r.err = errProc
			return r
		}
		st, err := os.Lstat(next)
		if err != nil {
			// Not there (or not reachable): the kernel creates at most this last component, or a
			// tool creates plain directories; either way the rest is taken as written.
			r.path = filepath.Join(append([]string{next}, comps...)...)
			r.inside = within(e.ws, r.path)
			return r
		}
		if st.Mode()&os.ModeSymlink != 0 {
			links++
			if links > maxSymlinks {
				r.err = errors.New("has too many levels of symbolic links")
				return r
			}
			t, err := os.Readlink(next)
			if err != nil {
				r.err = errors.New("is a symbolic link that cannot be read")
				return r
			}
			if filepath.IsAbs(t) {
				cur = "/"
			}
			comps = append(strings.Split(t, "/"), comps...)
			continue
		}
		cur = next
		if !st.IsDir() && slices.ContainsFunc(comps, func(s string) bool { return s != "" && s != "." }) {
			r.path = filepath.Join(append([]string{cur}, comps...)...)
			r.inside = within(e.ws, r.path)
			return r // "not a directory" in the kernel: nothing is opened
		}
	}
	if st, err := os.Lstat(cur); err == nil {
		if sys, ok := st.Sys().(*syscall.Stat_t); ok && st.Mode().IsRegular() && sys.Nlink > 1 {
			r.multiLink = true
		}
	}
	r.path, r.exists, r.inside = cur, true, within(e.ws, cur)
	return r
}

func within(dir, p string) bool { return helper.Within(dir, p) }

// globQuote escapes glob metacharacters so a literal name can be part of a pattern.
func globQuote(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r == '*' || r == '?' || r == '[' || r == rune(genRun[0]) {
			b.WriteByte('[')
			b.WriteRune(r)
			b.WriteByte(']')
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}
