//go:build unix

package policy

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/mcpsandbox/mcpsandbox/internal/linkwalk"
	"github.com/mcpsandbox/mcpsandbox/internal/writable"
)

// CheckFileSafe refuses a policy file that someone other than its reader or root could have
// written, as ssh refuses a loose key: the file must be owned by root or the current user and
// writable by no one else, and no directory above it may let others replace it.
func CheckFileSafe(path string) error {
	return checkOwned(path, "policy file", "the policy file", "allow themselves any command")
}

// CheckBinarySafe is CheckFileSafe for the binary client entries run (init --command): one
// another user may replace runs as whoever starts the client (trial30 F18).
func CheckBinarySafe(path string) error {
	return checkOwned(path, "the binary", "the binary", "replace what your clients run")
}

// CheckTokenFileSafe is CheckFileSafe for serve --http's --token-file: whoever may write it, or
// replace it through a directory above it, chooses the token that lets clients in (atk33 F9).
func CheckTokenFileSafe(path string) error {
	return checkOwned(path, "token file", "the token file", "choose the token serve lets clients in with")
}

// CheckAuditPlaceSafe is CheckFileSafe for the audit log: whoever may write it, or replace or
// delete it through a directory above it, erases the record of calls unseen (the log follows its
// path: a deleted one is begun again there, a fresh chain that reads intact; atk35 F5).
func CheckAuditPlaceSafe(path string) error {
	if mutated("audit-place-unchecked") {
		return nil
	}
	return checkOwned(path, "audit log", "the audit log", "erase or rewrite the record of every call unseen")
}

// checkOwned checks the file and, as ssh's StrictModes does, every directory up to /, of the
// path as given, of every link it passes through and of where it resolves: each must be owned by
// root or the user and writable by no one else, unless sticky (/tmp). Another user who may write
// any of them can rename the directory below it and put one of their own in its place (attack
// round atk32, F8: a world-writable grandparent passed, as only the file and its directory were
// looked at), or re-point a link in it (atk33 F3: the directory holding the second link of a
// chain was on neither walk).
func checkOwned(path, kind, ref, harm string) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return fmt.Errorf("%s %s: %w", kind, path, err)
	}
	resolved, links, err := resolveSteps(abs)
	if err != nil {
		return fmt.Errorf("%s %s: %w", kind, path, err)
	}
	seen := map[string]bool{}
	walk := func(top, name, via string) error {
		for p, up := top, 0; !seen[p]; p, up = filepath.Dir(p), up+1 {
			seen[p] = true
			if up > 1 && mutated("policy-own-ancestors") {
				break
			}
			what := name + via
			switch {
			case up == 1:
				what = "the directory " + p + " holding " + name + via
			case up > 1:
				what = "the directory " + p + " above " + name + via
			}
			if up == 0 && name == ref {
				what = kind + " " + path + via
			}
			if err := checkOwnedOne(p, what, harm, up > 0); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(abs, ref, ""); err != nil {
		return err
	}
	for _, l := range links {
		if mutated("policy-own-link-chain") {
			break
		}
		if err := walk(l, "the link "+l, fmt.Sprintf(" (%s resolves through it)", path)); err != nil {
			return err
		}
	}
	via := ""
	if resolved != abs {
		via = fmt.Sprintf(" (%s resolves to %s)", path, resolved)
	}
	return walk(resolved, ref, via)
}

// euid is whom the checks act for; a variable for the tests (which run as root).
var euid = os.Geteuid

// maxLinkHops is how many links one resolution may follow, as Linux's own limit (ELOOP).
const maxLinkHops = 40

// resolveSteps resolves abs one name at a time, as the kernel does, and returns where it ends and
// every link it followed, each named under the real directory holding it.
func resolveSteps(abs string) (string, []string, error) {
	var links []string
	w := linkwalk.New(abs)
	for next, ok := w.Next(); ok; next, ok = w.Next() {
		st, err := os.Lstat(next)
		if err != nil {
			return "", nil, err
		}
		if st.Mode()&os.ModeSymlink == 0 {
			w.Enter(next)
			continue
		}
		if len(links) == maxLinkHops {
			return "", nil, fmt.Errorf("%s: more than %d links to follow: %w", abs, maxLinkHops, syscall.ELOOP)
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", nil, err
		}
		links = append(links, next)
		w.Follow(target)
	}
	return w.Dir(), links, nil
}

// checkOwnedOne checks one name on the path: its owner and, unless it is a link (whose mode
// means nothing) or a sticky directory, who may write it, by its mode and its ACL (atk35 F2).
func checkOwnedOne(p, what, harm string, dir bool) error {
	st, err := os.Lstat(p)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	me := uint32(euid())
	mode := st.Mode()
	if sys.Uid != 0 && sys.Uid != me {
		return withFix(fmt.Sprintf("%s is owned by uid %d, not by you (uid %d) or root: whoever owns it could %s", what, sys.Uid, me, harm), fmt.Sprintf("chown %d %s", me, p))
	}
	if dir && mode.IsDir() && mode&os.ModeSticky != 0 {
		return nil
	}
	// The user's private group (umask 002 on Debian and Ubuntu) is the user alone (trial33 F15).
	w, err := writable.ByOthers(p, st, me)
	switch {
	case err != nil:
		return fmt.Errorf("%s: %w", what, err)
	case w != nil:
		return withFix(fmt.Sprintf("%s is %s: %s could %s", what, w.Who(), w.They(), harm), w.Fix)
	}
	return nil
}
