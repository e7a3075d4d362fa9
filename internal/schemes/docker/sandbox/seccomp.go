package sandbox

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/mcpsandbox/mcpsandbox/internal/sysdeny"
)

// The container's seccomp profile: Docker's default minus sysdeny's list, the same calls the
// host-exec scheme's helper denies (io_uring_*, bpf, userfaultfd, perf_event_open, keyrings,
// kexec and modules, open_by_handle_at, the mount family, namespaces, ptrace, mknod, …).
//
// Why a complete profile rather than "allow everything but these": an engine applies ONE
// profile per container, and a profile named in SecurityOpt replaces its default instead of
// stacking on it. So the profile keeps the default's shape: everything not listed is refused
// (defaultAction SCMP_ACT_ERRNO, EPERM), which also refuses system calls newer than the list —
// a deny-list profile would let every future kernel interface through. The allow list is the
// default's unconditional one (seccomp_names.go) without the denied calls; the default's
// capability-conditional rules are left out because every container drops all capabilities
// (they would never apply); only the native ABI is allowed (x86-64, arm64: no 32-bit or x32
// entry points, which the default opens too and the helper's filter refuses).
//
// Measured on Docker 20.10.24 (runc 1.1, crun 1.8, kernel 6.18), the default profile let
// io_uring_setup reach the host kernel (EFAULT on its bad arguments) under runc and crun; this
// profile answers EPERM before the kernel looks (TestSeccompProfileDeniesKernelSurface). gVisor
// (runsc) applies no container profile unless started with --oci-seccomp: its own kernel
// answers the program (see seccompLayer).

// Docker's seccomp profile format (the subset serve writes; the engine ignores unknown keys).
type (
	seccompProfile struct {
		DefaultAction string           `json:"defaultAction"`
		ArchMap       []seccompArchMap `json:"archMap"`
		Syscalls      []seccompRule    `json:"syscalls"`
	}
	seccompArchMap struct {
		Arch string   `json:"architecture"`
		Sub  []string `json:"subArchitectures"`
	}
	seccompRule struct {
		Names    []string       `json:"names"`
		Action   string         `json:"action"`
		ErrnoRet *uint          `json:"errnoRet,omitempty"`
		Args     []seccompArg   `json:"args,omitempty"`
		Includes *seccompFilter `json:"includes,omitempty"`
	}
	seccompArg struct {
		Index    uint   `json:"index"`
		Value    uint64 `json:"value"`
		ValueTwo uint64 `json:"valueTwo"`
		Op       string `json:"op"`
	}
	seccompFilter struct {
		Arches []string `json:"arches,omitempty"`
	}
)

const (
	scmpAllow = "SCMP_ACT_ALLOW"
	scmpErrno = "SCMP_ACT_ERRNO"
	// Address families the default profile refuses to socket(2): AF_ALG (38) and AF_VSOCK (40).
	afALG, afVSOCK = 38, 40
	enosys         = 38
	eopnotsupp     = 95
)

// profileDenied reports whether the profile leaves name out: sysdeny's list, and the 64-bit
// time variants of its calls (clock_adjtime64 is clock_adjtime on 32-bit ABIs).
func profileDenied(name string) bool {
	return sysdeny.IsDenied(name) || sysdeny.IsDenied(strings.TrimSuffix(name, "64"))
}

// buildSeccompProfile is the profile serve hands the engine for every container.
func buildSeccompProfile() seccompProfile {
	var allow []string
	for _, n := range engineDefaultAllowed {
		if !profileDenied(n) && (n != "fallocate" || mutated("seccomp-fallocate")) {
			allow = append(allow, n)
		}
	}
	errnoENOSYS, errnoEOPNOTSUPP := uint(enosys), uint(eopnotsupp)
	arg0 := func(op string, v uint64) []seccompArg { return []seccompArg{{Index: 0, Value: v, Op: op}} }
	return seccompProfile{
		DefaultAction: scmpErrno,
		ArchMap: []seccompArchMap{
			{Arch: "SCMP_ARCH_X86_64", Sub: []string{}},
			{Arch: "SCMP_ARCH_AARCH64", Sub: []string{}},
		},
		Syscalls: []seccompRule{
			{Names: allow, Action: scmpAllow},
			{Names: []string{"socket"}, Action: scmpAllow, Args: arg0("SCMP_CMP_LT", afALG)},
			{Names: []string{"socket"}, Action: scmpAllow, Args: arg0("SCMP_CMP_EQ", afALG+1)},
			{Names: []string{"socket"}, Action: scmpAllow, Args: arg0("SCMP_CMP_GT", afVSOCK)},
			// clone without a namespace flag (MASKED_EQ: flags & mask == 0).
			{Names: []string{"clone"}, Action: scmpAllow, Args: []seccompArg{{Index: 0, Value: sysdeny.CloneNamespaceFlags, ValueTwo: 0, Op: "SCMP_CMP_MASKED_EQ"}}},
			// clone3's flags are in memory a filter cannot read: ENOSYS makes libc fall back to clone.
			{Names: []string{"clone3"}, Action: scmpErrno, ErrnoRet: &errnoENOSYS},
			// fallocate takes disk without writing it, far past workspace_quota before its
			// watchdog looks (2.5 GB in 30 ms: attack round atk32, F7); EOPNOTSUPP makes
			// posix_fallocate write instead, as on a file system without it.
			{Names: []string{"fallocate"}, Action: scmpErrno, ErrnoRet: &errnoEOPNOTSUPP},
			{Names: []string{"arch_prctl", "modify_ldt"}, Action: scmpAllow, Includes: &seccompFilter{Arches: []string{"amd64"}}},
			{Names: []string{"arm_fadvise64_64", "arm_sync_file_range", "sync_file_range2", "breakpoint", "cacheflush", "set_tls"},
				Action: scmpAllow, Includes: &seccompFilter{Arches: []string{"arm64"}}},
		},
	}
}

// seccompOpt is the container's security option carrying the profile ("seccomp=" + JSON, as
// the docker CLI sends a --security-opt seccomp=FILE's content).
var seccompOpt = sync.OnceValue(func() string {
	b, err := json.Marshal(buildSeccompProfile())
	if err != nil { // plain structs of strings and numbers: cannot fail
		return "seccomp=" + err.Error()
	}
	return "seccomp=" + string(b)
})

// ownSeccomp says whether the engine recorded serve's profile on the container, unchanged.
func ownSeccomp(containerOpts []string) bool {
	return slices.Contains(containerOpts, seccompOpt())
}

// seccompSummary names what the profile refuses, for the seccomp layer's detail.
func seccompSummary() string {
	return fmt.Sprintf("serve's profile: Docker's default allow list without any of the %d calls the host-exec scheme denies too "+
		"(io_uring_*, bpf, userfaultfd, perf_event_open, keyrings, kexec and modules, open_by_handle_at, mount and namespaces, ptrace, mknod, …) "+
		"refused with EPERM before the kernel sees them; clone with namespace flags refused, clone3 ENOSYS; native ABI only",
		len(sysdeny.Denied)+len(sysdeny.DeniedLegacy))
}
