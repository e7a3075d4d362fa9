package sandbox

import (
	"fmt"

	"github.com/docker/docker/api/types/system"
	"github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/engine"
)

// RuntimeError is why serve refuses the policy's docker.runtime on this engine at start: what is
// wrong and what to do. Its text is serve's refusal; verify's docker runtime row shows the parts.
type RuntimeError struct{ Problem, Fix string }

func (e *RuntimeError) Error() string { return e.Problem + ": " + e.Fix }

// CheckRuntime is serve's start check of docker.runtime (runtime; "" = the engine's default)
// against the engine's info: the engine has it, and, when docker.network lists hosts (egress), it
// is not gVisor without --host-uds=open, which would refuse every container the proxy's socket.
// nil, or a *RuntimeError.
func CheckRuntime(eng *engine.Client, info system.Info, runtime string, egress bool) error {
	if what, fix := eng.RuntimeMissing(info, runtime); what != "" {
		return &RuntimeError{Problem: "docker.runtime: " + what, Fix: fix + `, or set runtime = "" for the engine's default`}
	}
	name := runtimeName(info, runtime)
	if rt, ok := info.Runtimes[name]; ok && egress && isGVisor(name, rt.Path) && !hostUDSOpen(rt.Args) {
		return &RuntimeError{
			Problem: fmt.Sprintf("docker.network lists hosts, which containers reach through serve's egress proxy on a unix socket, "+
				"but docker.runtime %q is gVisor (runsc), which refuses host unix sockets unless its runtimeArgs in daemon.json include --host-uds=open", name),
			Fix: `add that there, or use runtime runc or crun, or docker.network = "none"`}
	}
	return nil
}

// runtimeName is the runtime containers run on: docker.runtime, or the engine's default.
func runtimeName(info system.Info, runtime string) string {
	if runtime == "" {
		return info.DefaultRuntime
	}
	return runtime
}
