package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"

	"github.com/mcpsandbox/mcpsandbox/internal/generate"
	"github.com/mcpsandbox/mcpsandbox/internal/scheme"
	"github.com/mcpsandbox/mcpsandbox/internal/schemes"
	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/spf13/cobra"
)

// policySource is the --policy / --default pair every command that acts on a policy shares:
// it points at the command's own Options fields.
type policySource struct {
	Path    string
	Default bool
	Scheme  string // whose built-in policy --default means ("" = allowlist)
}

// policyFlags registers the pair on cmd, bound to the command's own Options fields.
func policyFlags(cmd *cobra.Command, path *string, def *bool, what string) {
	usage := "policy file to " + what + " (TOML, version 1)"
	if what == "verify" || what == "explain" { // they take init's policy by themselves (initsPolicy)
		usage = "policy file to " + what + " (TOML, version 1; default: the one init wrote, " + defaultPolicyText() + ", when it exists)"
	}
	cmd.Flags().StringVarP(path, "policy", "p", "", usage)
	cmd.Flags().BoolVar(def, "default", false, "use the built-in allowlist policy (common text tools pinned now, no network)")
}

// defaultPolicyText names the file init writes the policy to by default, as this system spells
// its config directory (generate.Env's ConfigDir).
func defaultPolicyText() string {
	switch runtime.GOOS {
	case "darwin":
		return "~/Library/Application Support/mcpsandbox/policy.toml"
	case "windows":
		return `%APPDATA%\mcpsandbox\policy.toml`
	}
	return "$XDG_CONFIG_HOME/mcpsandbox/policy.toml (~/.config/mcpsandbox/policy.toml)"
}

func sourceOf(path string, def bool) policySource { return policySource{Path: path, Default: def} }

// initsPolicy fills an empty --policy (without --default) with the policy init writes by default,
// when it exists, and says so on w: verify and explain right after init need no flag.
func initsPolicy(path *string, def bool, w io.Writer) {
	if *path != "" || def {
		return
	}
	if p := initsPolicyFile(); p != "" {
		*path = p
		fmt.Fprintf(w, "using %s (the policy init writes; give --policy FILE for another)\n", p)
	}
}

// check says what to give when neither or both are given; optional commands (harness
// --controls, --list) pass required = false.
func (s policySource) check(required bool) error {
	if s.Path != "" && s.Default {
		return errors.New("give --policy FILE or --default, not both")
	}
	if required && s.Path == "" && !s.Default {
		if p := initsPolicyFile(); p != "" && !mutated("policy-missing-wording") {
			return fmt.Errorf("give --policy FILE (the one init wrote: --policy %s), or --default for the built-in allowlist policy", p)
		}
		return errors.New("give --policy FILE (write one with `mcpsandbox init`: its default place holds none yet), or --default for the built-in allowlist policy")
	}
	return nil
}

// initsPolicyFile is the policy init writes by default, when it exists ("" otherwise).
func initsPolicyFile() string {
	env, err := generate.HostEnv("")
	if err != nil {
		return ""
	}
	p := filepath.Join(env.ConfigDir, "mcpsandbox", "policy.toml")
	if _, err := os.Stat(p); err != nil {
		return ""
	}
	return p
}

// load reads --policy, or builds the built-in policy of s.Scheme (allowlist when unset) over
// workspace ("" = a fresh temporary directory, which cleanup removes). It returns the policy's
// registry entry too.
func (s policySource) load(workspace string) (p *policy.Policy, sc *scheme.Scheme, cleanup func(), err error) {
	cleanup = func() {}
	if s.Default {
		name := s.Scheme
		if name == "" {
			name = policy.Schemes[0]
		}
		if sc, err = schemes.Lookup(name); err != nil {
			return nil, nil, cleanup, err
		}
		if err := sc.Runs(); err != nil {
			return nil, nil, cleanup, err
		}
		if sc.Default == nil {
			return nil, nil, cleanup, fmt.Errorf("the %s scheme has no built-in policy: give --policy FILE (write one with `mcpsandbox init --scheme %s`)", name, name)
		}
		if p, cleanup, err = sc.Default(workspace); err != nil {
			return nil, nil, func() {}, err
		}
		return p, sc, cleanup, nil
	}
	if p, err = policy.Load(s.Path); err != nil {
		return nil, nil, cleanup, err
	}
	sc, err = schemes.For(p)
	return p, sc, cleanup, err
}

// loadWithFile is load for commands that start serve on the policy and so need a file to name:
// the built-in policy is written to a private temporary file, removed by cleanup.
func (s policySource) loadWithFile() (p *policy.Policy, sc *scheme.Scheme, file string, cleanup func(), err error) {
	p, sc, cleanup, err = s.load("")
	if err != nil || !s.Default {
		if err == nil {
			file, err = filepath.Abs(s.Path)
		}
		return p, sc, file, cleanup, err
	}
	b, err := policy.Marshal(p)
	if err != nil {
		return nil, nil, "", cleanup, err
	}
	dir, err := os.MkdirTemp("", "mcpsandbox-default-policy-")
	if err != nil {
		return nil, nil, "", cleanup, fmt.Errorf("write the built-in policy to a temporary file: %w", err)
	}
	wsCleanup := cleanup
	cleanup = func() { wsCleanup(); os.RemoveAll(dir) }
	file = filepath.Join(dir, "policy.toml")
	return p, sc, file, cleanup, os.WriteFile(file, b, 0o600)
}
