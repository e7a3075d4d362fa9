package policy

import (
	"path/filepath"
	"strings"
)

// CodeLoadingEnv says whether the variable name makes a program load or run code, or read a
// configuration that does, from where the value says: a policy may not pass it to a sandboxed
// command or a wrapped server (the variable would let a file a call wrote steer a pinned
// program). Once a short list (LD_*, PYTHONPATH, NODE_OPTIONS, BASH_ENV, …); glibc's GCONV_PATH
// ran a call's gconv module inside a pinned iconv, with verify saying PASS (attack round atk40,
// F7): the list now holds every loader of the runtimes and tools a policy commonly pins.
func CodeLoadingEnv(name string) bool {
	if mutated("policy-env-loaders-short") {
		return strings.HasPrefix(name, "LD_") || strings.HasPrefix(name, "DYLD_") || name == "PYTHONPATH" ||
			name == "PYTHONSTARTUP" || name == "NODE_OPTIONS" || name == "BASH_ENV" || name == "ENV"
	}
	if name == "GIT_CONFIG_NOSYSTEM" {
		return false // it takes a config away, never adds one
	}
	for _, p := range codeLoadingPrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return codeLoadingNames[name]
}

var codeLoadingPrefixes = []string{"LD_", "DYLD_", "GIT_CONFIG", "LUA_INIT", "LUA_PATH", "LUA_CPATH", "R_PROFILE", "R_ENVIRON"}

var codeLoadingNames = map[string]bool{
	// shells
	"BASH_ENV": true, "ENV": true, "ZDOTDIR": true, "PROMPT_COMMAND": true, "SHELLOPTS": true, "BASHOPTS": true,
	// C library
	"GCONV_PATH": true, "GLIBC_TUNABLES": true, "LOCPATH": true, "NLSPATH": true, "HOSTALIASES": true, "MALLOC_CHECK_": true,
	// OpenSSL (engines and providers are shared objects)
	"OPENSSL_CONF": true, "OPENSSL_ENGINES": true, "OPENSSL_MODULES": true,
	// Python, Node, Perl, Ruby, Java, PHP, Tcl
	"PYTHONPATH": true, "PYTHONSTARTUP": true, "PYTHONHOME": true, "PYTHONUSERBASE": true, "PYTHONEXECUTABLE": true,
	"NODE_OPTIONS": true, "NODE_PATH": true, "NODE_REPL_EXTERNAL_MODULE": true,
	"PERL5OPT": true, "PERL5LIB": true, "PERLLIB": true, "PERL5DB": true,
	"RUBYOPT": true, "RUBYLIB": true,
	"JAVA_TOOL_OPTIONS": true, "_JAVA_OPTIONS": true, "JDK_JAVA_OPTIONS": true,
	"PHPRC": true, "PHP_INI_SCAN_DIR": true, "TCLLIBPATH": true,
	// git and the programs tools start
	"GIT_EXEC_PATH": true, "GIT_SSH": true, "GIT_SSH_COMMAND": true, "GIT_ASKPASS": true, "SSH_ASKPASS": true,
	"GIT_EXTERNAL_DIFF": true, "GIT_PAGER": true, "GIT_EDITOR": true, "GIT_TEMPLATE_DIR": true, "GIT_PROXY_COMMAND": true,
	"TAR_OPTIONS": true, "LESSOPEN": true, "LESSCLOSE": true,
}

// EnvNamesPath says whether an environment value names a place inside the workspace ws (a
// resolved or clean absolute path): a word of it (split at white space, '=', ',', ':', ';') that
// is ".", starts with "./" or "../", or is an absolute path at or below ws. Such a variable lets
// a file a call wrote steer the program that reads it (HOME, XDG_CONFIG_HOME, GOFLAGS=-toolexec=./x).
func EnvNamesPath(value, ws string) bool {
	ws = filepath.Clean(ws)
	for _, w := range strings.FieldsFunc(value, func(r rune) bool {
		return r == ' ' || r == '\t' || r == '=' || r == ',' || r == ':' || r == ';'
	}) {
		switch {
		case w == "." || w == ".." || strings.HasPrefix(w, "./") || strings.HasPrefix(w, "../"):
			return true
		case filepath.IsAbs(w) && ws != "/" && ws != "." && (filepath.Clean(w) == ws || strings.HasPrefix(filepath.Clean(w), ws+"/")):
			return true
		}
	}
	return false
}
