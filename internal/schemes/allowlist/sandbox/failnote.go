package sandbox

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/mcpsandbox/mcpsandbox/policy"
)

// What a failed call's stderr says that this scheme's own limits caused: the program's words
// never name them (trial37 F1, F3: Go's "failed to reserve page summary memory" under the
// default memory, go test's "fork/exec …/compile: permission denied"), so the result adds a note
// naming the rule and the fix. The stderr is the program's: a note it provokes only says what
// the policy is, which the caller may know anyway.

// addressSpaceSigns are runtimes' words for a reservation or allocation the address-space limit
// refused (Go, V8 and its WebAssembly, the JVM, C++, Rust, Python, the C library's ENOMEM).
var addressSpaceSigns = []string{
	"failed to reserve page summary memory",
	"runtime: out of memory",
	"fatal error: out of memory",
	"Failed to reserve virtual memory",
	"Fatal process out of memory",
	"Fatal process OOM",
	"Cannot allocate Wasm memory",
	"Could not reserve enough space",
	"Could not allocate compressed class space",
	"insufficient memory for the Java Runtime Environment",
	"std::bad_alloc",
	"memory allocation of",
	"MemoryError",
	"Cannot allocate memory",
}

// AddressSpaceFailure reports whether stderr carries a known failure to reserve or allocate
// address space.
func AddressSpaceFailure(stderr string) bool {
	for _, s := range addressSpaceSigns {
		if strings.Contains(stderr, s) {
			return true
		}
	}
	return false
}

// execRefusedSigns are the words of a program whose exec of another program was refused
// (EACCES: Landlock lets a call execute only its pinned binary): Go, node and npm, make, Python's
// subprocess, cargo.
var execRefusedSigns = []*regexp.Regexp{
	regexp.MustCompile(`fork/exec [^\n]*: permission denied`),
	regexp.MustCompile(`spawn [^\n]*EACCES`),
	regexp.MustCompile(`(?s)syscall:? '?spawn.*EACCES|EACCES.*syscall:? '?spawn`),
	regexp.MustCompile(`execvp?e?:? [^\n]*(Permission denied|EACCES)`),
	regexp.MustCompile(`(?s)in _execute_child\b.*PermissionError`),
	regexp.MustCompile(`(?s)\bos\.(exec|spawn|posix_spawn)\w*\(.*PermissionError`),
	regexp.MustCompile(`(?s)could not execute process.*Permission denied`),
}

// ExecRefused reports whether stderr says an exec of another program was refused.
func ExecRefused(stderr string) bool {
	for _, re := range execRefusedSigns {
		if re.MatchString(stderr) {
			return true
		}
	}
	return false
}

// runtimeFatalSigns are a runtime's words for dying before it ran anything (Go's runtime, V8,
// the JVM): a command that says them did not start.
var runtimeFatalSigns = []*regexp.Regexp{
	regexp.MustCompile(`(?m)^fatal error: [\s\S]*(runtime stack:|goroutine \d+ \[)`),
	regexp.MustCompile(`(?m)^# Fatal (process|error)`),
	regexp.MustCompile(`Error occurred during initialization of VM`),
}

// RuntimeFatal reports whether stderr carries a runtime's fatal error at start.
func RuntimeFatal(stderr string) bool {
	for _, re := range runtimeFatalSigns {
		if re.MatchString(stderr) {
			return true
		}
	}
	return AddressSpaceFailure(stderr)
}

// MemoryNote says what limits.memory is and how to raise it.
func MemoryNote(memory policy.Size) string {
	return fmt.Sprintf("limits.memory is %s (address space, not RSS: RLIMIT_AS): raise it. Runtimes reserve far more address space than they use: "+
		"a Go program needs about %s, node %s, the JVM %s (WebAssembly in node, as fetch() uses, about 12GiB, or run node with --disable-wasm-trap-handler); "+
		"set memory in the policy's [limits] and restart serve", memory, GoMemory, NodeMemory, JavaMemory)
}

// ExecNote names the rule an exec of another program broke.
const ExecNote = "a program this call started tried to execute another program, which the allowlist scheme refuses " +
	"(a call may execute only its pinned binary and its ELF interpreter: Landlock). " +
	"Compilers and test runners that start programs (go build/test, npm test, make, cargo) need the docker scheme, with an image that has them " +
	"(mcpsandbox init --scheme docker --image IMAGE)"

// FailureNotes are the notes the result of a call that exited with status code gets.
func FailureNotes(stderr string, code int, memory policy.Size) []string {
	if code == 0 {
		return nil
	}
	var out []string
	if AddressSpaceFailure(stderr) {
		out = append(out, MemoryNote(memory))
	}
	if ExecRefused(stderr) {
		out = append(out, ExecNote)
	}
	return out
}

// What a runtime that reserves address space at start needs of limits.memory (measured with
// prlimit --as: Go 1.26's runtime fails at 512MiB and starts at 768MiB; node 20 at 768MiB;
// OpenJDK 17's java -version fails at 2GiB), with room above its start for its work.
const (
	GoMemory   = policy.Size(1 << 30)
	NodeMemory = policy.Size(2 << 30)
	JavaMemory = policy.Size(4 << 30)
)
