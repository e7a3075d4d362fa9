package allowlist

import (
	"debug/elf"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	sa "github.com/mcpsandbox/mcpsandbox/internal/schemes/allowlist/sandbox"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// addressSpaceNeed is the limits.memory a command needs to start, for a runtime known to
// reserve far more address space than it uses (limits.memory is RLIMIT_AS): a Go program (its
// .go.buildinfo section; trial37 F1: the default 256MiB stopped every Go binary), node (V8), a
// Java launcher (it links libjli). 0 for any other.
func addressSpaceNeed(c policy.Command) (policy.Size, string) {
	real, err := filepath.EvalSymlinks(c.Path)
	if err != nil {
		real = c.Path
	}
	base := filepath.Base(real)
	f, err := elf.Open(real)
	if err != nil {
		return 0, ""
	}
	defer f.Close()
	if f.Section(".go.buildinfo") != nil {
		return sa.GoMemory, "a Go program: its runtime reserves about 700MiB at start"
	}
	libs, _ := f.ImportedLibraries()
	has := func(prefix string) bool {
		return slices.ContainsFunc(libs, func(l string) bool { return strings.HasPrefix(l, prefix) })
	}
	switch {
	case base == "node" || base == "nodejs" || has("libnode.so"):
		return sa.NodeMemory, "V8 reserves about 700MiB at start"
	case has("libjli.so"):
		return sa.JavaMemory, "a Java launcher: the JVM reserves its heap, code cache and class space at start"
	}
	return 0, ""
}

// programStarters are toolchains whose common work starts other programs (a compiler driver's
// passes, a test binary, a script's shell), which a call may not execute (trial37 F3: go test's
// "fork/exec …/compile: permission denied", npm's "spawn sh EACCES").
var programStarters = map[string]string{
	"go":     "go build and go test run the compiler, the linker and the test binary",
	"cargo":  "cargo build and cargo test run rustc, the linker and the test binary",
	"rustc":  "rustc runs the linker (cc)",
	"npm":    "npm test and npm run start their scripts through sh",
	"npx":    "npx starts the package's program",
	"pnpm":   "pnpm test and pnpm run start their scripts through sh",
	"yarn":   "yarn test and yarn run start their scripts through sh",
	"make":   "make runs each recipe through sh",
	"gmake":  "make runs each recipe through sh",
	"cmake":  "cmake runs the compiler and the build tool",
	"ninja":  "ninja runs each build step's program",
	"gcc":    "the compiler driver runs cc1, as and ld",
	"g++":    "the compiler driver runs cc1plus, as and ld",
	"cc":     "the compiler driver runs cc1, as and ld",
	"c++":    "the compiler driver runs cc1plus, as and ld",
	"clang":  "the compiler driver runs the assembler and ld",
	"mvn":    "a Maven build starts the JVM's forks and plugins' programs",
	"gradle": "a Gradle build starts its daemon, test JVMs and plugins' programs",
	"dotnet": "dotnet build and dotnet test start the compiler server and the test host",
	"bazel":  "bazel starts its server and every action's program",
	"meson":  "meson runs the compiler and ninja",
}

// versionSuffix and triplet are what a toolchain's file name adds to its name: gcc-12,
// x86_64-linux-gnu-gcc-12, clang++-16.
var (
	versionSuffix = regexp.MustCompile(`-[0-9][0-9.]*$`)
	triplet       = regexp.MustCompile(`^[a-z0-9_]+(-[a-z0-9_]+)?-linux-gnu[a-z]*-`)
)

// startsPrograms says what a known program-starting toolchain starts ("" for any other command),
// judged by its name, its path's name and the name of the file that path leads to.
func startsPrograms(c policy.Command) string {
	names := []string{c.Name, filepath.Base(c.Path)}
	if r, err := filepath.EvalSymlinks(c.Path); err == nil {
		names = append(names, filepath.Base(r))
	}
	for _, n := range names {
		n = triplet.ReplaceAllString(versionSuffix.ReplaceAllString(n, ""), "")
		if n == "clang++" {
			n = "clang"
		}
		if what, ok := programStarters[n]; ok {
			return what
		}
	}
	return ""
}

// toolchainWarning says, for the commands that start other programs, that their builds and tests
// fail under this scheme and where they work ("" = none of them).
func toolchainWarning(cs []policy.Command) string {
	var which []string
	for _, c := range cs {
		if what := startsPrograms(c); what != "" {
			which = append(which, fmt.Sprintf("%s (%s)", c.Name, what))
		}
	}
	if len(which) == 0 || mutated("init-toolchain-unsaid") {
		return ""
	}
	return fmt.Sprintf("%s: the allowlist scheme lets a call execute only its pinned binary, so those runs fail (fork/exec … permission denied, spawn … EACCES). "+
		"For builds and tests, use the docker scheme with an image that has the toolchain (mcpsandbox init --scheme docker --image IMAGE); "+
		"here, an allowlisted python runs python -m unittest and pytest, and node runs node --test",
		strings.Join(which, "; "))
}
