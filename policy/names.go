package policy

import "strings"

// The shapes of names a policy holds, for every scheme's validation. Plain byte checks, not
// regular expressions: a bounded repeat such as {0,63} compiles to 63 copies of its class, and
// these were a third of the policy package's share of every start (TestNameChecksMatchTheirPatterns
// holds them to the patterns they replace).

func alnum(c byte) bool { return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' }

// nameOf: a letter or digit, then at most 63 of letters, digits or extra.
func nameOf(s, extra string) bool {
	if len(s) == 0 || len(s) > 64 || !alnum(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if c := s[i]; !alnum(c) && strings.IndexByte(extra, c) < 0 {
			return false
		}
	}
	return true
}

// ValidName reports whether s can be a server name, a runtime or a user name: letters, digits,
// '-', '_' or '.', at most 64, not starting with a punctuation mark.
func ValidName(s string) bool { return nameOf(s, "_.-") }

// ValidCommandName reports whether s can name an allowlisted command (also '+').
func ValidCommandName(s string) bool { return nameOf(s, "_.+-") }

// ValidEnvName reports whether s is an environment variable's name.
func ValidEnvName(s string) bool {
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !alnum(c) && c != '_' {
			return false
		}
	}
	return true
}

// ValidSHA256 reports whether s is a sha256 as 64 lowercase hex digits.
func ValidSHA256(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// ValidUIDGID reports whether s is "uid:gid" in numbers.
func ValidUIDGID(s string) bool {
	u, g, ok := strings.Cut(s, ":")
	return ok && digits(u) && digits(g)
}

func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// GlobMatches reports whether the glob g (CompileGlob's syntax) matches name; an invalid glob
// matches nothing.
func GlobMatches(g, name string) bool {
	re, err := CompileGlob(g)
	return err == nil && re.MatchString(name)
}
