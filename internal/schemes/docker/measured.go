package docker

import (
	"context"
	"errors"
	"time"

	dksec "github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/section"

	"github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/engine"
	sd "github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/sandbox"
	"github.com/mcpsandbox/mcpsandbox/internal/verify"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// measured are verify's rows for the policy as serve checks it when it starts: its image, and
// its runtime.
func measured(ctx context.Context, self, policyPath string) []verify.Check {
	return append(measuredImage(ctx, self, policyPath), measuredRuntime(ctx, policyPath)...)
}

// measuredRuntime is verify's row for the policy's docker.runtime, checked as serve checks it at
// start (sd.CheckRuntime): a runtime the engine lacks (a hand-edited "kata", a typo), or gVisor
// without --host-uds=open under a host list, stops serve, so every call fails the same way. The
// row then blocks the harness (81 scenarios, each an ERROR with the same message) and says how to
// go on. No row when the engine cannot be asked: the docker engine and image rows say why.
func measuredRuntime(ctx context.Context, policyPath string) []verify.Check {
	p, err := policy.Load(policyPath)
	if err != nil {
		return nil
	}
	cl, err := engine.New()
	if err != nil {
		return nil
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	info, err := cl.Info(ctx)
	if err != nil {
		return nil
	}
	name := dksec.Of(p).Runtime
	c := verify.Check{Name: "docker runtime", OK: true, Value: name + ": the engine has it"}
	if name == "" {
		c.Value = info.DefaultRuntime + ": the engine's default (docker.runtime is empty)"
	}
	var re *sd.RuntimeError
	if err := sd.CheckRuntime(cl, info, name, dksec.Of(p).Net().Mode == policy.NetHosts); errors.As(err, &re) && !mutated("verify-runtime-blocks") {
		c.OK, c.Blocks = false, true
		c.Value, c.Advice = re.Problem+" (serve would stop at start the same way)", re.Fix
	}
	return []verify.Check{c}
}
