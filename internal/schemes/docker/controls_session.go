package docker

import (
	"context"
	"fmt"
	"strconv"
	"time"

	dksec "github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/section"

	"github.com/docker/docker/api/types/container"
	"github.com/mcpsandbox/mcpsandbox/internal/harness"
	"github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/engine"
	sd "github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/sandbox"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// The session detectors' controls. Each runs its scenario under the control policy turned into
// a session policy (two sessions at most), since the scenarios are n/a without one.
func sessionPolicy(p *policy.Policy, _ *harness.Arena) error {
	dksec.Of(p).Reuse, dksec.Of(p).MaxSessions = "session", 2
	return nil
}

func sessionControls() []harness.Control {
	return []harness.Control{
		{Detector: "session_leak", Scenario: "session-python-variables", Kind: "staged",
			Weakness: "session b's probe run in session a's own interpreter, as an interpreter the sessions shared would run it: its output comes back as b's",
			Mutate:   sessionPolicy, Inject: probeInOwnSession},
		{Detector: "session_process", Scenario: "session-processes", Kind: "staged",
			Weakness: "the harness SIGKILLs, from the host, the process session a left running, as a session that could signal it would",
			Mutate:   sessionPolicy,
			Inject: func(a *harness.Arena) {
				if a.KillSessionProcesses() == 0 {
					a.StageOutput("control: no process carrying the session secret to kill")
				}
			}},
		{Detector: "session_cap", Scenario: "session-cap", Kind: "expectation",
			Weakness: "the cap held to one session fewer than docker.max_sessions = 2 lets serve open: the session the policy allows is over it",
			Mutate:   sessionPolicy, Tighten: func(e *harness.Expect) { e.Sessions-- }},
		{Detector: "session_sandboxes", Scenario: "session-serve-killed", Kind: "staged",
			Weakness: "a container labelled with the killed serve's pid started by the harness, as a session container nothing stopped would be",
			Mutate:   sessionPolicy, Inject: stageLabelledContainer},
	}
}

// probeInOwnSession runs session-python-variables' b probe in session a and stages its output.
func probeInOwnSession(a *harness.Arena) {
	all, err := harness.Load()
	if err != nil {
		a.StageOutput("control: " + err.Error())
		return
	}
	for _, s := range all {
		if steps, _ := s.StepsFor(offer); s.ID == "session-python-variables" && len(steps) > 1 {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			out, err := a.CallInSession(ctx, steps[0].Session, steps[1].Tool, steps[1].Arguments)
			if err != nil {
				out += "\ncontrol: " + err.Error()
			}
			a.StageOutput(out)
		}
	}
}

// stageLabelledContainer starts a container labelled with the killed serve's pid (running
// sleep for a minute) and removes it when the arena closes.
func stageLabelledContainer(a *harness.Arena) {
	if err := startLabelled(a); err != nil {
		a.StageOutput("control could not stage a labelled container: " + err.Error())
	}
}

func startLabelled(a *harness.Arena) error {
	p, err := policy.Load(a.PolicyPath())
	if err != nil {
		return err
	}
	eng, err := engine.New()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, err := eng.API.ContainerCreate(ctx, &container.Config{Image: dksec.Of(p).Image, Cmd: []string{"sleep", "60"},
		Labels: map[string]string{sd.LabelApp: "1", sd.LabelPID: strconv.Itoa(a.ServerPID())}},
		&container.HostConfig{AutoRemove: true, NetworkMode: "none"}, nil, nil, "")
	if err != nil {
		eng.Close()
		return fmt.Errorf("create: %w", err)
	}
	a.OnClose(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		eng.API.ContainerRemove(ctx, c.ID, container.RemoveOptions{Force: true})
		eng.Close()
	})
	if err := eng.API.ContainerStart(ctx, c.ID, container.StartOptions{}); err != nil {
		return fmt.Errorf("start: %w", err)
	}
	return nil
}
