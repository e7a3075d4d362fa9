package docker

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	dksec "github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/section"

	"github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/engine"
	sd "github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/sandbox"
	"github.com/mcpsandbox/mcpsandbox/internal/verify"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// onlyDocker begins the engine check's advice in verify's host rows, which every scheme shows.
const onlyDocker = "the docker scheme needs it (the other schemes do not)"

// DockerEngine asks the engine the environment names for its version, runtimes and security
// options: what the docker scheme can rely on here.
func DockerEngine(ctx context.Context) verify.Check {
	c, _ := engineCheck(ctx)
	return c
}

// engineCheck is DockerEngine's row, and the error when the engine did not answer: a socket
// that refuses this user (engine.Denied) is told apart from no engine at all, whose advice
// (start or install Docker) would send a user outside the docker group the wrong way.
func engineCheck(ctx context.Context) (verify.Check, error) {
	c := verify.Check{Name: "docker engine"}
	cl, err := engine.New()
	if err != nil {
		c.Value, c.Advice = err.Error(), onlyDocker
		return c, err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	v, err := cl.Version(ctx)
	switch {
	case engine.Denied(err):
		c.Value = "permission denied at " + cl.Where()
		c.Advice = onlyDocker + ": " + engine.DeniedAdvice(cl.Host)
		return c, err
	case err != nil:
		c.Value = "not reachable at " + cl.Where()
		c.Advice = onlyDocker + ": " + engine.StartAdvice(cl.Source)
		return c, err
	}
	c.OK = true
	c.Value = fmt.Sprintf("%s (API %s, client negotiated %s) at %s", v.Version, v.APIVersion, cl.API.ClientVersion(), cl.Where())
	info, err := cl.Info(ctx)
	if err != nil {
		return c, nil
	}
	var rts []string
	for name := range info.Runtimes {
		rts = append(rts, name)
	}
	sort.Strings(rts)
	c.Value += fmt.Sprintf("; runtimes %s (default %s); security %s; cgroups v%s",
		strings.Join(rts, ", "), info.DefaultRuntime, strings.Join(info.SecurityOptions, ", "), info.CgroupVersion)
	var missing []string
	if !info.MemoryLimit {
		missing = append(missing, "memory limits")
	}
	if !info.SwapLimit {
		missing = append(missing, "swap limits")
	}
	if !info.PidsLimit {
		missing = append(missing, "pids limits")
	}
	if !info.CPUCfsQuota {
		missing = append(missing, "CPU quota")
	}
	seccomp := false
	for _, o := range info.SecurityOptions {
		seccomp = seccomp || strings.Contains(o, "name=seccomp")
	}
	if !seccomp {
		missing = append(missing, "seccomp")
	}
	if len(missing) > 0 {
		c.OK = false
		c.Advice = "this engine cannot enforce " + strings.Join(missing, ", ") +
			": enable the cgroup controllers (cgroup_enable=memory swapaccount=1 on the kernel command line) and seccomp, or use another engine"
	} else if _, ok := info.Runtimes["runsc"]; !ok {
		c.Advice = "containers share the host kernel; a VM-grade runtime (gVisor runsc, Kata) narrows that: install it and set docker.runtime"
	}
	return c, nil
}

// measuredImage is verify's row for the policy's image, doing what serve does when it starts: a
// missing image is pulled, and when that fails serve stops, so every call fails the same way. The
// row then blocks the harness (80 scenarios, each an ERROR with the same message) and says how
// to go on.
func measuredImage(ctx context.Context, _, policyPath string) []verify.Check {
	p, err := policy.Load(policyPath)
	if err != nil {
		return nil
	}
	rows := []verify.Check{imageRow(ctx, dksec.Of(p).Image)}
	if name := dksec.Of(p).NetworkName(); name != "none" && rows[0].OK {
		// what serve's start checks: a network the engine lacks fails every call (trial34 F1)
		c := verify.Check{Name: "docker network", OK: true, Value: name + " is in the engine"}
		cl, err := engine.New()
		if err == nil {
			defer cl.Close()
			nctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			err = sd.CheckNetwork(nctx, cl, name)
		}
		if err != nil {
			c.OK, c.Blocks, c.Value, c.Advice = false, true, err.Error(), "fix docker.network, then run verify again"
		}
		rows = append(rows, c)
	}
	return rows
}

// imageRow is measuredImage's row for the image img.
func imageRow(ctx context.Context, img string) verify.Check {
	c := verify.Check{Name: "docker image", Blocks: !mutated("verify-image-blocks")}
	have, err := imagePresent(ctx, img)
	switch {
	case engine.Denied(err):
		// the engine runs; this user may not use it (trial33 F13: the advice was to start it)
		c.Value = fmt.Sprintf("%s: the engine refused this user: %v", img, err)
		c.Advice = "give this user the engine (see the docker engine row), then run verify again"
	case err != nil:
		c.Value = fmt.Sprintf("%s: the engine could not be asked for it: %v", img, err)
		c.Advice = "start the engine (see the docker engine row), then run verify again"
	case have:
		c.OK, c.Value, c.Blocks = true, img+" is in the engine", false
	default:
		pctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
		defer cancel()
		if err := pullImage(pctx, nil, img, io.Discard); err != nil {
			c.Value = fmt.Sprintf("%s is not in the engine, and pulling it failed (serve would stop at start the same way): %v", img, err)
			c.Advice = engine.MissingImageAdvice(img)
			if has := localImages(ctx, img); has != "" { // a misspelt name's right one is often there (trial34 F9)
				c.Advice += "; the engine has " + has
			}
			break
		}
		c.OK, c.Value, c.Blocks = true, img+" was not in the engine: pulled now, as serve does when it starts", false
	}
	return c
}
