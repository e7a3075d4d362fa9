package sandbox

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mcpsandbox/mcpsandbox/executor"
	"github.com/mcpsandbox/mcpsandbox/internal/schemes/allowlist/sandbox/helper"
	"github.com/mcpsandbox/mcpsandbox/policy"
	"golang.org/x/sys/unix"
)

// ServerLayers is what a long-running command started with o (StartServer: a wrapped server)
// gets of Layers' rows, measured by the same probe: the rows of a call that do not apply to it
// are left out (the pinned exec's sha256, the protected paths' read-only mounts and the
// transactional workspace: StartServer has none of them), and the rows whose words are a
// call's (its environment, its Landlock rules, its rlimits, its /tmp) say what o's spec gives.
// `serve --check` printed a call's rows for a wrap policy, so it claimed a protect list and
// checked writes the wrapped server never had (trial49 F1).
func (e *Executor) ServerLayers(o ServerOptions, envFrom string, envKeys []string) []executor.Layer {
	ls := e.Layers()
	s := &Server{}
	spec, err := e.serverSpec(o, s)
	s.cleanup()
	if err != nil {
		return ls
	}
	out := make([]executor.Layer, 0, len(ls))
	for _, l := range ls {
		switch l.Name {
		case LayerPinnedExec, LayerProtectedRO, LayerWorkspace:
			continue
		case LayerCleanEnv:
			l.Detail = serverEnvDetail(spec.Env, envFrom, envKeys)
		case LayerLandlockFS:
			if e.probe.LandlockABI >= 1 {
				rw := slices.Clone(spec.RWDirs)
				for i, d := range rw {
					if d == o.Dir {
						rw[i] = "its working directory " + d
					}
				}
				l.Detail = fmt.Sprintf("ABI %d: write only %s; read the system library dirs%s; execute only from %s (%s)",
					e.probe.LandlockABI, strings.Join(rw, ", "), readNote(o), strings.Join(spec.ExecFiles, ", "), e.measured().saw("open"))
			}
		case LayerLandlockTrunc:
			l.Detail = strings.Replace(l.Detail, "outside the workspace", "outside the directories the server may write", 1)
		case LayerRlimits:
			l.Detail = serverRlimitsDetail(spec.Rlimits) + "; measured: the helper that sets them set a call's on serve's probe (" + rlimitsText(e.probe.Rlimits) + ")"
		case LayerCPUShare:
			l.Detail = fmt.Sprintf("limits.cpus = %g is not enforced for a long-running server (that needs cgroups): it runs at normal priority, with no CPU time limit", e.pol.Limits.CPUs)
		case LayerPrivateTmp:
			if spec.Mounts {
				l.Detail = fmt.Sprintf("the server gets an empty tmpfs of %s on /tmp (TMPDIR=/tmp), gone when it ends", policy.Size(spec.TmpSize))
				if spec.DirTmpfs > 0 {
					l.Detail += fmt.Sprintf("; its working directory %s is a tmpfs of %s (limits.workspace_quota), gone with it", o.Dir, policy.Size(spec.DirTmpfs))
				}
			} else {
				l.Detail = "no mount namespace here: TMPDIR is a directory of the server's own (Landlock-allowed, removed when it ends); /tmp itself stays denied"
			}
		}
		out = append(out, l)
	}
	return out
}

// readNote names what a server may read besides the system's.
func readNote(o ServerOptions) string {
	r := slices.Concat(o.ReadDirs, o.ReadFiles)
	if len(r) == 0 {
		return ""
	}
	return " and " + strings.Join(r, ", ")
}

// serverEnvDetail is the clean environment row of a server: the names its spec passes (values
// are never shown), and those it takes from its client's environment (envFrom: the key).
func serverEnvDetail(env []string, envFrom string, envKeys []string) string {
	var names []string
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(names, k) && !slices.Contains(envKeys, k) {
			names = append(names, k)
		}
	}
	d := "only " + strings.Join(names, ", ")
	if len(envKeys) > 0 {
		d += fmt.Sprintf(", and %s's %s from the client's environment", envFrom, strings.Join(envKeys, ", "))
	}
	return d + "; nothing else of the client's environment"
}

// serverRlimitsDetail says the limits a server's spec sets: no CPU time, it lives as long as
// its client.
func serverRlimitsDetail(lims []helper.Rlimit) string {
	var parts []string
	for _, l := range lims {
		switch l.Resource {
		case unix.RLIMIT_AS:
			parts = append(parts, "address space "+policy.Size(l.Value).String()+" a process (limits.memory)")
		case unix.RLIMIT_FSIZE:
			parts = append(parts, "file size "+policy.Size(l.Value).String())
		case unix.RLIMIT_NOFILE:
			parts = append(parts, fmt.Sprintf("%d open files", l.Value))
		case unix.RLIMIT_CORE:
			parts = append(parts, "no core dumps")
		}
	}
	return "the server gets " + strings.Join(parts, ", ") + "; no CPU time limit (it runs as long as its client: limits.timeout bounds each call's wait for its answer)"
}
