package generate

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"
)

// ClientPlan is the client configs one init will change: one FileChange per file (two scopes
// that share a file, such as claude-code and claude-code:user, are one change), and the targets
// asked for, in order.
type ClientPlan struct {
	Changes []FileChange
	Targets []Target
	// Beside says how to add the entry beside a different server of its name ("" = --name):
	// init --policy names its entries by the policy's name key, and refuses --name (trial32 F15).
	Beside string
	// Rename says how to give the entry another name, in advice ("" = another --name): under
	// init --policy the policy's name key, in the wizard a run with --name (trial33 F4).
	Rename string
}

// rename is the advice's way to give the entry another name.
func (cp *ClientPlan) rename() string {
	if cp.Rename == "" || mutated("init-shadow-advice-name-flag") {
		return "give this one another --name"
	}
	return cp.Rename
}

// Change is the planned change of t's file.
func (cp *ClientPlan) Change(t Target) *FileChange {
	i := slices.IndexFunc(cp.Changes, func(c FileChange) bool { return c.Path == t.Path })
	if i < 0 {
		return nil
	}
	return &cp.Changes[i]
}

// Add plans the entry into t's config. An existing different entry of that name is replaced only
// when replace is set or confirm (given the *ExistsError) says yes; otherwise the error says how
// to go on.
func (cp *ClientPlan) Add(t Target, name string, e ServerEntry, replace bool, confirm func(error) (bool, error)) error {
	prev := cp.Change(t)
	change := func(replace bool) (FileChange, error) {
		if prev != nil {
			return prev.Add(t, name, e, replace)
		}
		return ClientChange(t, name, e, replace)
	}
	c, err := change(replace)
	if errors.Is(err, ErrExists) {
		ok, aerr := confirm(err)
		if aerr != nil {
			return aerr
		}
		if !ok {
			beside := "--name NAME"
			if cp.Beside != "" && !mutated("init-policy-beside-name-flag") {
				beside = cp.Beside
			}
			return fmt.Errorf("%w: pass --force to replace it, or %s to add this one beside it", err, beside)
		}
		c, err = change(true)
	}
	if err != nil {
		return err
	}
	if prev != nil {
		*prev = c
	} else {
		cp.Changes = append(cp.Changes, c)
	}
	cp.Targets = append(cp.Targets, t)
	return nil
}

// Unchanged reports whether no client config would change.
func (cp *ClientPlan) Unchanged() bool {
	for _, c := range cp.Changes {
		if !c.Unchanged() {
			return false
		}
	}
	return true
}

// ProofRun is one environment an entry is proven in: the one a client gives the servers it
// starts (Client.ServerEnv), or init's own when no client is configured.
type ProofRun struct {
	Who string   // the client's name ("" = init's own environment)
	How string   // what that client passes a server, in words
	Env []string // the environment
}

// Install writes the policy, starts the entry exactly as each client would (StartCheck: the
// same command and arguments, with the environment that client gives it, through a proof call
// when there is one), and only when every run answers writes the client configs. If one does not,
// or a client config cannot be written, every file is put back as it was: nothing is
// half-installed. The entry's command reads the policy, so the policy must be in place first.
func Install(ctx context.Context, policy FileChange, clients []FileChange, e ServerEntry, runs []ProofRun, call *ProofCall, timeout time.Duration) ([]WriteResult, []Probe, error) {
	wrote, err := Apply([]FileChange{policy})
	if err != nil {
		return nil, nil, err
	}
	undo := func(err error, what string) error {
		if uerr := UndoAll(wrote); uerr != nil {
			return fmt.Errorf("%w\nputting the policy back failed: %v", err, uerr)
		}
		return fmt.Errorf("%w\n%s", err, what)
	}
	var probes []Probe
	for _, r := range runs {
		probe, err := StartCheck(ctx, e, r.Env, call, timeout)
		if err != nil {
			var se *StartError
			if errors.As(err, &se) {
				se.Run = r
			}
			return nil, nil, undo(err, "nothing was changed: no client config was written and the policy file is as it was")
		}
		probe.Env = r.Who
		probes = append(probes, probe)
	}
	cw, err := Apply(clients)
	if err != nil {
		return nil, nil, undo(err, "the policy file is as it was")
	}
	return append(wrote, cw...), probes, nil
}
