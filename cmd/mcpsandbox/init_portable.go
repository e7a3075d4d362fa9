package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mcpsandbox/mcpsandbox/internal/generate"
	"github.com/mcpsandbox/mcpsandbox/internal/projectpolicy"
	"github.com/mcpsandbox/mcpsandbox/internal/shellword"
	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/spf13/pflag"
)

// portableFlagsRefused are the flags init --portable does not take: each would put a machine's
// path or another policy into what the team commits.
var portableFlagsRefused = map[string]string{
	"policy":     "the entries run each user's own policy for their checkout, which init --portable writes",
	"policy-out": "your policy for this checkout has its own place, under your config directory, which serve --project finds",
	"command":    "the entries run `mcpsandbox` by name, found on each user's PATH",
	"http":       "the entries start serve over stdio in each checkout",
}

// portableAnswers readies init --portable (trial38 F1): the policy goes to this user's place
// for the checkout (env.Project), its workspace is the checkout, the entries run `mcpsandbox`
// from PATH, and every client written is one of the project's files.
func portableAnswers(o *InitOptions, env generate.Env) error {
	for _, n := range o.given {
		if why, ok := portableFlagsRefused[n]; ok {
			return fmt.Errorf("--%s does not go with --portable: %s", n, why)
		}
	}
	if !o.Yes {
		return errors.New("--portable takes every answer from flags: add --yes (and the scheme's flags; init --help lists them)")
	}
	for _, spec := range o.Clients {
		t, err := generate.ResolveTarget(spec, env)
		if err != nil {
			return err
		}
		if !strings.HasPrefix(t.Client.Paths[t.Scope], "{project}") {
			return fmt.Errorf("--client %s writes %s, which is not a file of the project: --portable writes the files a team commits (%s)", spec, t.Path, strings.Join(projectScopes(), ", "))
		}
	}
	if o.A.Scheme == "" {
		return errors.New("--portable: give --scheme allowlist|docker (the policy each teammate's init writes for their checkout)")
	}
	ws := workspaceFlag(o)
	if ws == "" {
		return fmt.Errorf("--portable: the %s scheme has no local workspace to be the checkout: use allowlist or docker, or leave --portable out", o.A.Scheme)
	}
	checkout := env.Project
	if f := o.flags.Lookup(ws); f.Changed {
		given, err := filepath.Abs(generate.ExpandHome(f.Value.String(), env.Home))
		if err != nil {
			return err
		}
		if policy.RealPath(given) != policy.RealPath(checkout) {
			return fmt.Errorf("--portable: the workspace is the checkout, %s; --%s %s names another directory: leave --%s out (or run init in that checkout, or give --project DIR)", checkout, ws, f.Value, ws)
		}
	}
	if err := o.flags.Set(ws, checkout); err != nil {
		return err
	}
	if _, err := exec.LookPath(generate.PortableCommand); err != nil {
		return fmt.Errorf("--portable: the entries run `%s` by name, and it is not on your PATH: install it in a directory on PATH (e.g. `CGO_ENABLED=0 go install ./cmd/mcpsandbox`, or put ~/bin on PATH), then run init again", generate.PortableCommand)
	}
	// the entry is looked up on PATH at each start: an entry ahead of the one found that a
	// call could fill (./bin, "", a directory of the checkout) would be found first (atk39b F2)
	if risky, found := projectpolicy.PathAhead(os.Getenv("PATH"), generate.PortableCommand, checkout); len(risky) > 0 {
		return projectpolicy.PathAheadError("--portable", risky, found, "run init again")
	}
	o.Command = generate.PortableCommand // entryBinary checks the one PATH finds as any --command
	o.PolicyOut = projectpolicy.Path(env.ConfigDir, checkout)
	return nil
}

// workspaceFlag is the name of the chosen scheme's flag of the workspace role ("" = none).
func workspaceFlag(o *InitOptions) string {
	var name string
	o.flags.VisitAll(func(f *pflag.Flag) {
		if role, _ := generate.FlagRole(f); role == "workspace" && o.schemeOf[f.Name] == o.A.Scheme {
			name = f.Name
		}
	})
	return name
}

// projectScopes are the clients' scopes whose file is in the project, as --client specs.
func projectScopes() []string {
	var out []string
	for _, c := range generate.Clients() {
		for _, s := range c.Scopes() {
			if strings.HasPrefix(c.Paths[s], "{project}") {
				spec := c.ID
				if s != c.Scope() {
					spec += ":" + s
				}
				out = append(out, spec)
			}
		}
	}
	return out
}

// portableReport says which files may be committed, where this user's policy is, and the one
// command each teammate runs in their clone. It speaks for the entry init wrote or found
// exactly as it writes it, not for the rest of a file (atk39b F1): what else there may start a
// program is named, for the user to review.
func portableReport(w io.Writer, o *InitOptions, plan *generate.Plan) {
	var files []string
	for _, t := range plan.Clients.Targets {
		rel, err := filepath.Rel(plan.Policy.WorkspaceDir(), t.Path)
		if err != nil || strings.HasPrefix(rel, "..") {
			rel = t.Path
		}
		if slices.Contains(files, rel) {
			continue
		}
		files = append(files, rel)
		fmt.Fprintf(w, "portable: %s: its entry %q runs `mcpsandbox serve --project` and holds no machine path; a sandboxed call can never write the file (protected)\n", rel, plan.PortableEntry(t))
		if un := plan.Unchecked(t); len(un) > 0 {
			fmt.Fprintf(w, "  not checked by init: review them before trusting this file: %s\n", strings.Join(un, "; "))
		}
	}
	if len(files) > 0 {
		fmt.Fprintf(w, "portable: init vouches only for its own entry in each: with that, the files may be committed (git add %s)\n", strings.Join(quoteEach(files), " "))
	}
	fmt.Fprintf(w, "your own policy for this checkout: %s (outside the checkout: `mcpsandbox serve --project` finds it; nothing committed changes what it allows)\n", o.PolicyOut)
	fmt.Fprintf(w, "each teammate, with mcpsandbox on their PATH, runs in their own clone:\n  %s\n", teammateCommand(o))
}

func quoteEach(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = shellword.Quote(s)
	}
	return out
}

// teammateCommand is this init as a teammate runs it in their clone: the same answers, less
// what is this machine's (the project directory, the workspace, which is the checkout there).
func teammateCommand(o *InitOptions) string {
	skip := map[string]bool{"portable": true, "project": true, "yes": true, "force": true, "verify": true, workspaceFlag(o): true}
	words := []string{"mcpsandbox", "init", "--portable"}
	o.flags.Visit(func(f *pflag.Flag) {
		if skip[f.Name] {
			return
		}
		if sv, ok := f.Value.(pflag.SliceValue); ok {
			for _, v := range sv.GetSlice() {
				words = append(words, "--"+f.Name, shellword.Quote(v))
			}
			return
		}
		if f.Value.Type() == "bool" {
			words = append(words, "--"+f.Name+"="+f.Value.String())
			return
		}
		words = append(words, "--"+f.Name, shellword.Quote(f.Value.String()))
	})
	return strings.Join(append(words, "--yes"), " ")
}
