package allowlist

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mcpsandbox/mcpsandbox/internal/generate"
	alsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/allowlist/section"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// commandOptions: the common tools found here.
func commandOptions(*generate.Answers) []string { return generate.AvailableTools() }

func interpretersIn(allow []string) []string {
	var out []string
	for _, n := range allow {
		if policy.IsInterpreter(filepath.Base(n)) {
			out = append(out, n)
		}
	}
	return out
}

// keptInterpreters: the re-run's policy (its answers are the defaults) already allowlists every
// interpreter now chosen, so keeping them is its answer; Enter through a re-run dropped python3
// (trial36 F11). A first run, or an interpreter new to the policy, defaults to No.
func keptInterpreters(a *generate.Answers) bool {
	if a.Base == nil || a.Base.Scheme != alsec.Name || mutated("init-wizard-drops-kept-interpreter") {
		return false
	}
	in := interpretersIn(Own(a).Allow)
	for _, n := range in {
		if !slices.ContainsFunc(alsec.Of(a.Base).Commands, func(c policy.Command) bool {
			return (c.Name == n || c.Path == n) && (policy.IsInterpreter(c.Name) || policy.IsInterpreter(filepath.Base(c.Path)))
		}) {
			return false
		}
	}
	return len(in) > 0
}

// keepOrder is next in the order the commands had in was (a re-run's policy, the flags), those
// new to it after them: a re-run that keeps the same commands changes nothing in the file (the
// menu's order had the preview show every command removed and added, and the policy replaced).
func keepOrder(was, next []string) []string {
	if mutated("wizard-command-order") {
		return next
	}
	var out []string
	for _, n := range append(slices.Clone(was), next...) {
		if slices.Contains(next, n) && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// Questions: the workspace, the commands (the common ones found here, then any others), a
// confirmation for an interpreter, and the network.
func (w *Answers) Questions() []generate.Question { return questions }

var questions = append([]generate.Question{
	{Flag: "workspace", Kind: generate.Input, Message: generate.Msg("Workspace (the commands' working directory, the only place they may write):"),
		Default: func(a *generate.Answers, e generate.Env) any {
			if ws := Own(a).Workspace; ws != "" {
				return ws
			}
			return filepath.Join(e.Home, "ai-workspace")
		},
		Validate: func(_ *generate.Answers, v string, e generate.Env) error {
			return generate.CheckWorkspace(generate.WorkspacePath(v, e.Home), e.Home)
		},
		Set: func(a *generate.Answers, v any) { Own(a).Workspace = v.(string) }},
	{Flag: "allow", Kind: generate.MultiSelect, Message: generate.Msg("Commands to allow (each is pinned by path and sha256):"), Options: commandOptions,
		Describe: func(v string) string {
			if policy.IsInterpreter(v) {
				return "runs any code: arbitrary code execution"
			}
			return ""
		},
		Default: func(a *generate.Answers, _ generate.Env) any {
			opts := commandOptions(a)
			var d []string
			for _, n := range Own(a).Allow {
				if slices.Contains(opts, n) {
					d = append(d, n)
				}
			}
			return d
		},
		Set: func(a *generate.Answers, v any) { // the chosen ones, then those the list does not offer
			w, opts := Own(a), commandOptions(a)
			extra := slices.DeleteFunc(slices.Clone(w.Allow), func(n string) bool { return slices.Contains(opts, n) })
			w.Allow = keepOrder(w.Allow, append(slices.Clone(v.([]string)), extra...))
		}, PageSize: 12},
	{Flag: "allow", Kind: generate.Input, Message: generate.Msg("More commands (names or absolute paths, comma-separated; empty for none):"),
		Default: func(a *generate.Answers, _ generate.Env) any {
			opts := commandOptions(a)
			return strings.Join(slices.DeleteFunc(slices.Clone(Own(a).Allow), func(n string) bool { return slices.Contains(opts, n) }), ",")
		},
		Validate: func(_ *generate.Answers, v string, _ generate.Env) error {
			for _, n := range generate.SplitList(v) {
				if _, err := generate.Pin(n); err != nil {
					return err
				}
			}
			return nil
		},
		Set: func(a *generate.Answers, v any) {
			w, opts := Own(a), commandOptions(a)
			kept := slices.DeleteFunc(slices.Clone(w.Allow), func(n string) bool { return !slices.Contains(opts, n) })
			w.Allow = keepOrder(w.Allow, append(kept, generate.SplitList(v.(string))...))
		}},
	{Flag: "allow", Kind: generate.Confirm,
		When: func(a *generate.Answers) bool { return len(interpretersIn(Own(a).Allow)) > 0 },
		Message: func(a *generate.Answers) string {
			in := interpretersIn(Own(a).Allow)
			i, runs, it := strings.Join(in, ", "), "runs any code it is given", "it"
			if len(in) > 1 {
				runs, it = "run any code they are given", "them"
			}
			return fmt.Sprintf("%s %s: the allowlist would pin nothing. The docker scheme is the safe way to run code. No takes %s out of the commands. Keep %s anyway?", i, runs, it, i)
		},
		Default: func(a *generate.Answers, _ generate.Env) any { return keptInterpreters(a) },
		Set: func(a *generate.Answers, v any) {
			if !v.(bool) {
				w := Own(a)
				i := interpretersIn(w.Allow)
				w.Allow = slices.DeleteFunc(w.Allow, func(n string) bool { return slices.Contains(i, n) })
			}
		}},
}, generate.NetQuestions("commands", "every host: TCP, UDP, DNS and unix sockets on the host (verify flags it, MS107)")...)
