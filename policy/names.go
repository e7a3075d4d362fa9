package policy

// The shapes of names a policy holds, for every scheme's validation.

// ValidName reports whether s can be a server name, a runtime or a user name: letters, digits,
// '-', '_' or '.', at most 64.
func ValidName(s string) bool { return nameRe.MatchString(s) }

// ValidCommandName reports whether s can name an allowlisted command (also '+').
func ValidCommandName(s string) bool { return cmdNameRe.MatchString(s) }

// ValidEnvName reports whether s is an environment variable's name.
func ValidEnvName(s string) bool { return envNameRe.MatchString(s) }

// ValidSHA256 reports whether s is a sha256 as 64 lowercase hex digits.
func ValidSHA256(s string) bool { return hexRe.MatchString(s) }

// ValidUIDGID reports whether s is "uid:gid" in numbers.
func ValidUIDGID(s string) bool { return userRe.MatchString(s) }

// GlobMatches reports whether the glob g (CompileGlob's syntax) matches name; an invalid glob
// matches nothing.
func GlobMatches(g, name string) bool {
	re, err := CompileGlob(g)
	return err == nil && re.MatchString(name)
}
