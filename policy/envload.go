package policy

import (
	"os"
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
	if !mutated("policy-codeloading-env-steering-names") {
		// npm reads npm_config_* in any case (npm help config: "case-insensitive")
		if strings.HasPrefix(strings.ToUpper(name), "NPM_CONFIG_") || steeringPrefixes(name) {
			return true
		}
		if steeringNames[name] {
			return true
		}
	}
	return codeLoadingNames[name]
}

// EnvRefused says whether a policy may not pass the variable name to a sandboxed command or a
// wrapped server (allowlist.env, wrap.env): CodeLoadingEnv's names and, by the shape of their
// name, their families (codeLoadingShape). The .envrc and mise readers keep to CodeLoadingEnv:
// a user's own GOPATH=$PWD or KUBECONFIG there is not a reason to freeze the workspace.
func EnvRefused(name string) bool {
	return CodeLoadingEnv(name) || !mutated("policy-env-names-families") && codeLoadingShape(name)
}

// codeLoadingShape: the families of variables that run a program or load code, by the shape of
// their name rather than one by one (atk41 F12: DOTNET_STARTUP_HOOKS, CORECLR_PROFILER_PATH,
// SUDO_ASKPASS, CC, CXX, R_LIBS_USER, ERL_LIBS, PS4, CLASSPATH, FPATH, JULIA_LOAD_PATH,
// CMAKE_TOOLCHAIN_FILE and KUBECONFIG passed the lists above). A name is split at '_'; it is
// refused when a part ends in what names a program, a hook, a plug-in or a place code is loaded
// from (…ASKPASS, …HOOK(S), …PROFILER, …PRELOAD, …PLUGIN(S), …LIB(S), …PATH, …CONFIG, …CONF,
// …RC, …STARTUP), when its last part says it is a program to run (…_COMMAND, …_CMD, …_EDITOR,
// …_PAGER, …SHELL, …_RSH, …_SSH, …_RUNNER, …_WRAPPER, …_LINKER, …_PROGRAM, …EXECUTABLE,
// …_INTERPRETER, …_TOOLCHAIN), when it starts with a runtime's prefix whose settings load code
// (DOTNET_, CORECLR_, COREHOST_, COR_, COMPLUS_, CMAKE_, ERL_, BASH_FUNC_, CARGO_TARGET_,
// CARGO_BUILD_), or when it is one of the build tools' programs and flags make and configure read
// (CC, CXX, LD, CFLAGS, …) or a prompt bash expands $(…) in (PS0–PS4). Data variables (tokens,
// URLs, ids, LANG, TZ, TERM) pass: wrap.env hands the client's own data variables to the server by
// name, which a list of reviewed names would refuse. What passes is still judged by its value
// (verify's MS116).
func codeLoadingShape(name string) bool {
	n := strings.ToUpper(name)
	if n == "GIT_CONFIG_NOSYSTEM" {
		return false // it takes a config away, never adds one
	}
	if buildNames[n] {
		return true
	}
	for _, p := range []string{"DOTNET_", "CORECLR_", "COREHOST_", "COR_", "COMPLUS_", "CMAKE_", "ERL_", "BASH_FUNC_", "CARGO_TARGET_", "CARGO_BUILD_"} {
		if strings.HasPrefix(n, p) {
			return true
		}
	}
	parts := strings.Split(n, "_")
	for i, w := range parts {
		if strings.HasSuffix(w, "SRC") || dataPart[w] && !mutated("policy-env-data-words") {
			continue // …_SRC is a source, not an rc file; a webhook is a URL (atk42 F5)
		}
		if i+1 < len(parts) && dataQualifier[parts[i+1]] && !mutated("policy-env-data-words") {
			continue // …_STARTUP_TIMEOUT, …_WEBHOOK_URL, …_PLUGIN_ID: a setting of it, not it
		}
		if w == "PATH" && i > 0 && !codePathWord[parts[i-1]] && !mutated("policy-env-data-path") {
			// a data file's or directory's place (the memory server's MEMORY_FILE_PATH, MODEL_PATH,
			// DB_PATH): its value is judged (MS116), the name is not refused; JULIA_LOAD_PATH,
			// GEM_PATH and the one-word CLASSPATH, FPATH, GOPATH are
			continue
		}
		for _, s := range []string{"ASKPASS", "HOOK", "HOOKS", "PROFILER", "PRELOAD", "PLUGIN", "PLUGINS", "LIB", "LIBS", "PATH", "CONFIG", "CONF", "RC", "STARTUP"} {
			if strings.HasSuffix(w, s) {
				return true
			}
		}
	}
	last := parts[len(parts)-1]
	if strings.HasSuffix(last, "SHELL") || strings.HasSuffix(last, "EXECUTABLE") {
		return true
	}
	if len(parts) > 1 {
		switch last {
		case "COMMAND", "CMD", "EDITOR", "PAGER", "RSH", "SSH", "RUNNER", "WRAPPER", "LINKER", "PROGRAM", "INTERPRETER", "TOOLCHAIN":
			return true
		}
	}
	return false
}

// dataPart: words that end like a family's (…HOOK, …PATH, …RC) and name data: a webhook is a
// URL, a file path a data file's place, ARC and NPC are names (atk42 F5: SLACK_WEBHOOK_URL,
// DB_FILEPATH, ARC_API_KEY were refused).
var dataPart = map[string]bool{"WEBHOOK": true, "WEBHOOKS": true, "FILEPATH": true, "DIRPATH": true, "URLPATH": true, "ARC": true, "NPC": true}

// dataQualifier: a part after a family's word that makes the name a setting of it (its
// timeout, URL, secret, id, whether it is on), not the program or place itself.
var dataQualifier = map[string]bool{
	"TIMEOUT": true, "DELAY": true, "MS": true, "SECONDS": true, "SECS": true, "SEC": true, "RETRIES": true, "RETRY": true,
	"URL": true, "URI": true, "SECRET": true, "TOKEN": true, "KEY": true, "ID": true, "IDS": true, "NAME": true,
	"ENABLED": true, "DISABLED": true, "COUNT": true, "LIMIT": true, "MAX": true, "MIN": true, "LEVEL": true, "VERSION": true,
}

// codePathWord: the words before a _PATH that make it a search path for code (or for where a
// runtime's packages are kept), not a data file's place.
var codePathWord = map[string]bool{
	"LOAD": true, "LIBRARY": true, "LIB": true, "MODULE": true, "MODULES": true, "CLASS": true, "PLUGIN": true,
	"PLUGINS": true, "INCLUDE": true, "SITE": true, "SEARCH": true, "BIN": true, "EXEC": true, "GEM": true,
	"DEPOT": true, "PACKAGE": true, "PACKAGES": true, "PKG": true, "EXTENSION": true, "EXTENSIONS": true, "ADDON": true,
	"ADDONS": true, "SCRIPT": true, "SCRIPTS": true, "HOOK": true, "HOOKS": true, "STARTUP": true, "INIT": true,
	"PROFILER": true, "AGENT": true, "NODE": true, "PYTHON": true, "RUBY": true, "PERL": true, "PERL5": true,
	"LUA": true, "TCL": true, "GUILE": true, "JULIA": true, "CPATH": true, "R": true, "SHARED": true, "DLL": true,
	"SO": true, "DYLIB": true, "FRAMEWORK": true, "FALLBACK": true, "PRELOAD": true, "RUNTIME": true, "TOOL": true,
	"TOOLS": true, "COMMAND": true, "PROGRAM": true, "EXECUTABLE": true, "INTERPRETER": true, "SHELL": true, "HELPER": true,
}

// ProgramWordOK says whether value may go in allowlist.env for name although the name is
// refused: a variable whose value is a program a tool starts (PAGER, GIT_PAGER, EDITOR …) set to
// one bare program name (PAGER = "cat", the usual way to stop git paging) is looked up on the
// fixed PATH, never in the working directory, so no file of a call's is run. A word with a '/',
// a '.', an argument or anything a shell reads otherwise stays refused.
func ProgramWordOK(name, value string) bool {
	if mutated("policy-env-program-word") || !programValued(name) || value == "" {
		return false
	}
	for _, r := range value {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '+') {
			return false
		}
	}
	return value[0] != '-'
}

// programValued: the names whose value is a program to start (steeringNames' pagers, editors and
// browser; any …_PAGER, …_EDITOR).
func programValued(name string) bool {
	switch name {
	case "PAGER", "MANPAGER", "EDITOR", "VISUAL", "BROWSER":
		return true
	}
	return strings.HasSuffix(name, "_PAGER") || strings.HasSuffix(name, "_EDITOR")
}

// buildNames: the programs and flags make's implicit rules, configure scripts, setuptools, cgo and
// cargo take from the environment (CC = "sh x.sh" runs x.sh; CFLAGS = "-fplugin=…" loads a
// shared object), and bash's prompts (PS4 is expanded, $(…) and all, at each line under -x).
var buildNames = map[string]bool{
	"CC": true, "CXX": true, "CPP": true, "LD": true, "AR": true, "AS": true, "NM": true, "RANLIB": true, "STRIP": true,
	"OBJCOPY": true, "OBJDUMP": true, "READELF": true, "FC": true, "F77": true, "F90": true, "HOSTCC": true, "HOSTCXX": true,
	"HOSTLD": true, "CC_FOR_BUILD": true, "CXX_FOR_BUILD": true, "CPP_FOR_BUILD": true, "CROSS_COMPILE": true, "MAKE": true,
	"YACC": true, "BISON": true, "LEX": true, "M4": true, "RUSTC": true, "RUSTDOC": true, "CARGO": true,
	"CFLAGS": true, "CXXFLAGS": true, "CPPFLAGS": true, "LDFLAGS": true, "FFLAGS": true, "FCFLAGS": true, "RUSTFLAGS": true,
	"RUSTDOCFLAGS": true, "CARGO_ENCODED_RUSTFLAGS": true, "CGO_CFLAGS": true, "CGO_CPPFLAGS": true, "CGO_CXXFLAGS": true,
	"CGO_FFLAGS": true, "CGO_LDFLAGS": true, "JAVA_HOME": true, "R_HOME": true, "JULIA_PROJECT": true, "JULIA_DEPOT_PATH": true,
	"PS0": true, "PS1": true, "PS2": true, "PS3": true, "PS4": true, "IFS": true,
}

var codeLoadingPrefixes = []string{"LD_", "DYLD_", "GIT_CONFIG", "LUA_INIT", "LUA_PATH", "LUA_CPATH", "R_PROFILE", "R_ENVIRON"}

// steeringPrefixes: GStreamer's plugin variables (GST_PLUGIN_PATH, GST_PLUGIN_PATH_1_0,
// GST_PLUGIN_SYSTEM_PATH_1_0, GST_PLUGIN_SCANNER: shared objects and the program that loads them)
// and bundler's BUNDLE_* settings (BUNDLE_GEMFILE is Ruby code; any BUNDLE_X is a .bundle/config
// key, BUNDLE_PATH, BUNDLE_APP_CONFIG among them).
func steeringPrefixes(name string) bool {
	return strings.HasPrefix(name, "GST_PLUGIN") || strings.HasPrefix(name, "BUNDLE_")
}

// steeringNames are the variables that name a program a tool runs, or a file or directory it
// reads its configuration, repository, modules or bytecode from (atk40b F4: a bare relative
// value of one of them named a file a call writes, and only verify's MS116 stood in the way).
// Reviewed against each program's documentation; a name is here when its value, pointed at a
// call's file, makes the program run or load that file's content or obey its settings.
var steeringNames = map[string]bool{
	// programs tools start: man(1) and git(1) run $PAGER/$MANPAGER; git, crontab, less's v,
	// sudoedit run $VISUAL/$EDITOR; git rebase -i $GIT_SEQUENCE_EDITOR; xdg-open, python's
	// webbrowser $BROWSER; vim and ex run $VIMINIT/$EXINIT as Ex commands (":!cmd")
	"PAGER": true, "MANPAGER": true, "EDITOR": true, "VISUAL": true, "GIT_SEQUENCE_EDITOR": true, "BROWSER": true,
	"VIMINIT": true, "EXINIT": true, "MYVIMRC": true, "VIMRUNTIME": true,
	// git(1) ENVIRONMENT: the repository (its config: core.pager, core.fsmonitor, hooks), its
	// index, objects and work tree
	"GIT_DIR": true, "GIT_WORK_TREE": true, "GIT_INDEX_FILE": true, "GIT_COMMON_DIR": true, "GIT_OBJECT_DIRECTORY": true,
	"GIT_ALTERNATE_OBJECT_DIRECTORIES": true,
	// GNU make: MAKEFILES are read before the makefile (their recipes run); MAKEFLAGS/MFLAGS/
	// GNUMAKEFLAGS take -f, -I, --eval
	"MAKEFILES": true, "MAKEFLAGS": true, "MFLAGS": true, "GNUMAKEFLAGS": true,
	// wget's startup file (use_askpass runs a program), curl's .curlrc under CURL_HOME (output
	// places, config chains), Kerberos's profile (plugin modules are shared objects)
	"WGETRC": true, "CURL_HOME": true, "KRB5_CONFIG": true, "KRB5_KDC_PROFILE": true,
	// GLib/GTK/Qt modules: shared objects loaded from these directories
	"GIO_MODULE_DIR": true, "GIO_EXTRA_MODULES": true, "GTK_PATH": true, "GTK_MODULES": true, "GTK_EXE_PREFIX": true,
	"GDK_PIXBUF_MODULE_FILE": true, "GDK_PIXBUF_MODULEDIR": true, "QT_PLUGIN_PATH": true, "QT_QPA_PLATFORM_PLUGIN_PATH": true,
	// Python (python(1) ENVIRONMENT): cached bytecode is run as the module (PYTHONPYCACHEPREFIX),
	// PYTHONWARNINGS imports the module a category names, PYTHONBREAKPOINT the hook's module,
	// PYTHONPLATLIBDIR chooses the stdlib's directory
	"PYTHONPYCACHEPREFIX": true, "PYTHONWARNINGS": true, "PYTHONBREAKPOINT": true, "PYTHONPLATLIBDIR": true,
	// RubyGems: gems are found (and their code required) under GEM_PATH and GEM_HOME
	"GEM_PATH": true, "GEM_HOME": true, "GEMRC": true,
	// Go: GOENV names the go env file (GOFLAGS=-toolexec), GOROOT the toolchain it runs
	"GOENV": true, "GOROOT": true, "GOTOOLDIR": true,
	// Cargo: $CARGO_HOME/config.toml sets build.rustc-wrapper; RUSTC_WRAPPER runs it directly
	"CARGO_HOME": true, "RUSTC_WRAPPER": true, "RUSTC_WORKSPACE_WRAPPER": true,
}

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

// EnvNamesPath says whether the value of the environment variable name names a place inside
// the workspace ws (a clean absolute path; it and an absolute word are compared as written and
// as their links resolve). Such a variable lets a file a call wrote
// steer the program that reads it (HOME, XDG_CONFIG_HOME, GOFLAGS=-toolexec=./x, GIT_DIR=meta).
//
// Commands run with the workspace as their working directory, so a word is judged as a program
// resolves it from there, not by its spelling (atk40b F4: "tools/pager" passed where
// "./tools/pager" did not). The value is split as programs split it: white space, ':' ';' ','
// lists, and '=' in an option (-toolexec=x). A word is inside when
//   - it is "." or "..", or starts with "./" or "../" (kept from before: a "../" word names
//     the calls' directory's surroundings, and a workspace's parent holds it);
//   - it is absolute and at or below ws;
//   - it is relative with a '/' in it and filepath.Join(ws, word) lands at or below ws;
//   - it is a bare word (no '/') that names an entry the workspace holds now; or, nothing there
//     yet, the variable's name says it takes a path (…DIR, …HOME, …FILE, …RC, …CONFIG, …PREFIX:
//     pathName), since a call can make that entry later. Other bare words (LANG=C, TERM=xterm,
//     PAGER=less: a program found on PATH, not in the working directory) are words, not places,
//     and so is the value after '=' in an option (-mod=vendor) unless a '/' or a leading '.'
//     makes it a path.
//
// TZ's relative words are read below the zoneinfo directory (TZDIR), not the working directory.
func EnvNamesPath(name, value, ws string) bool {
	ws = filepath.Clean(ws)
	if ws == "/" || ws == "." || !filepath.IsAbs(ws) {
		return false
	}
	under := func(p, dir string) bool { return p == dir || strings.HasPrefix(p, dir+"/") }
	// The workspace may be written through a link (~/proj -> /data/proj) and a value by the
	// other spelling: both are compared as they resolve too (review41 #12).
	one := mutated("verify-ms116-one-spelling")
	wsReal := RealPath(ws)
	inside := func(p string) bool {
		return under(p, ws) || !one && (under(p, wsReal) || under(RealPath(p), wsReal))
	}
	old := mutated("verify-ms116-relative-words")
	word := func(w string, bare bool) bool {
		switch {
		case w == "." || w == ".." || strings.HasPrefix(w, "./") || strings.HasPrefix(w, "../"):
			return true
		case filepath.IsAbs(w):
			return inside(filepath.Clean(w))
		case old || name == "TZ":
			return false
		case strings.Contains(w, "/"):
			return inside(filepath.Join(ws, w))
		case !bare:
			return false
		}
		if _, err := os.Lstat(filepath.Join(ws, w)); err == nil {
			return true
		}
		return pathName(name) || !mutated("verify-ms116-bare-script-words") && scriptWord(w)
	}
	runner := false // the previous words were a runner and its options: this one is its script
	for _, f := range strings.FieldsFunc(value, func(r rune) bool {
		return r == ' ' || r == '\t' || r == ',' || r == ':' || r == ';'
	}) {
		if runner && !strings.HasPrefix(f, "-") && !strings.Contains(f, "=") && !old && name != "TZ" && !mutated("verify-ms116-bare-script-words") {
			// CC = "sh x.sh", SUDO_ASKPASS = "python3 helper": the runner opens its script from the
			// working directory, a call's file once the call makes it (atk41 F12)
			if !filepath.IsAbs(f) || inside(filepath.Clean(f)) {
				return true
			}
		}
		runner = runnerWord(f) || runner && (strings.HasPrefix(f, "-") && f != "-c" && f != "-e" && f != "-m" || strings.Contains(f, "="))
		opt, val, isOpt := strings.Cut(f, "=")
		if isOpt {
			if opt != "" && word(opt, !strings.HasPrefix(opt, "-")) {
				return true
			}
			for _, v := range strings.Split(val, "=") {
				if v != "" && word(v, false) {
					return true
				}
			}
			continue
		}
		if word(f, true) {
			return true
		}
	}
	return false
}

// runnerWord says whether w is a program that runs the script its next word names: a shell or
// an interpreter (by base name, a version suffix allowed: python3.12).
func runnerWord(w string) bool {
	b := strings.TrimRight(filepath.Base(w), "0123456789.")
	switch b {
	case "sh", "bash", "dash", "zsh", "ksh", "mksh", "fish", "python", "pypy", "node", "nodejs", "deno", "bun", "perl", "ruby",
		"php", "lua", "luajit", "Rscript", "tclsh", "wish", "awk", "gawk", "julia", "guile", "exec", "source", "env", "xargs", "nohup", "uv", "uvx", "npx", "pipx":
		return true
	}
	return false
}

// scriptWord says whether a bare word is a file name by its extension: a script, a library, a
// module or a configuration a program opens from its working directory (x.sh, helper.py,
// evil.so, tool.jar, build.mk). Words with other dots (C.UTF-8, 127.0.0.1, proxy.example)
// are not.
func scriptWord(w string) bool {
	i := strings.LastIndexByte(w, '.')
	if i <= 0 || i == len(w)-1 {
		return false
	}
	switch strings.ToLower(w[i+1:]) {
	case "sh", "bash", "zsh", "ksh", "fish", "py", "pyc", "pyz", "pth", "js", "mjs", "cjs", "ts", "pl", "pm", "rb", "php", "lua", "tcl",
		"r", "jl", "el", "scm", "vim", "awk", "so", "dylib", "dll", "exe", "bat", "cmd", "ps1", "jar", "class", "wasm", "mk", "cmake",
		"toml", "json", "yaml", "yml", "ini", "conf", "cfg", "rc", "env", "xml", "gitconfig", "specs", "spec", "ld":
		return true
	}
	return false
}

// pathName says whether a variable's name says its value is a path (GIT_DIR, CURL_HOME, WGETRC,
// KRB5_CONFIG, PYTHONPYCACHEPREFIX, MAKEFILES, TMPDIR): a bare word there is a place in the
// working directory even before it exists.
func pathName(name string) bool {
	n := strings.ToUpper(name)
	for _, s := range []string{"DIR", "DIRS", "DIRECTORY", "HOME", "FILE", "FILES", "RC", "CONFIG", "CONF", "PREFIX", "ROOT", "CACHE", "PROFILE", "GEMFILE", "PATH"} {
		if strings.HasSuffix(n, s) {
			return true
		}
	}
	return false
}
