package sandbox

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/mcpsandbox/mcpsandbox/executor"
	allowlist "github.com/mcpsandbox/mcpsandbox/internal/schemes/allowlist/sandbox"
	wrapsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/wrap/section"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// CheckExecutor is what `serve --check` (and so explain and verify) measure for a wrap policy:
// the allowlist executor the server would start under, probed with this binary standing in for
// the server. It has no tools: serving a wrap policy is its relay (Run). Its layers are the
// ones a server started as Run starts it gets (allowlist's ServerLayers), and a row for
// wrap.write; a call's rows (a pinned, sha256-checked binary, a protect list, a transactional
// workspace) are not a wrapped server's (trial49 F1).
func CheckExecutor(p *policy.Policy, log *slog.Logger) (executor.Executor, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("find the mcpsandbox binary: %w", err)
	}
	if self, err = filepath.EvalSymlinks(self); err != nil {
		return nil, err
	}
	home, err := os.MkdirTemp("", "mcpsandbox-wrap-check-")
	if err != nil {
		return nil, err
	}
	callRows := mutated("wrap-check-call-rows")
	ex, err := newExecutor(p, home, self, Options{Logger: log}, false, !callRows)
	if err != nil {
		os.RemoveAll(home)
		return nil, err
	}
	return &checkExecutor{ex: ex, home: home, pol: p, self: self, callRows: callRows}, nil
}

type checkExecutor struct {
	ex       *allowlist.Executor
	home     string
	pol      *policy.Policy
	self     string
	callRows bool // the mutant: a call's rows, as before trial49 F1
}

func (c *checkExecutor) Tools() []executor.Tool { return nil }
func (c *checkExecutor) Ready() error           { return c.ex.Ready() }
func (c *checkExecutor) Close() error           { err := c.ex.Close(); os.RemoveAll(c.home); return err }

// Layers are the rows of a server started as Run starts it (the program's own runtime
// directories, known only once wrap resolves it, aside), then wrap.write's.
func (c *checkExecutor) Layers() []executor.Layer {
	if c.callRows {
		return c.ex.Layers()
	}
	w := wrapsec.Of(c.pol)
	reads, readFiles, err := splitReads(w.Read)
	if err != nil {
		reads = w.Read // wrap refuses to start then; the rows name what the policy says
	}
	o := allowlist.ServerOptions{
		Binary: c.self, Argv: []string{c.self}, Env: serverEnv(c.pol, &program{}, c.home), Dir: c.home,
		ReadDirs: reads, ReadFiles: readFiles, RWDirs: append([]string{c.home}, w.Write...),
		DirQuota: uint64(c.pol.Limits.WorkspaceQuota),
	}
	ls := c.ex.ServerLayers(o, "wrap.env", w.Env)
	return append(ls, writeLayer(w.Write))
}

// writeLayer is wrap.write's row: what the server writes there lands on the host as it
// writes it. It is not a layer in force (Off: the policy opens the directories).
func writeLayer(dirs []string) executor.Layer {
	if len(dirs) == 0 {
		return executor.Layer{Name: LayerWrapWrite, NotNeeded: true,
			Detail: "wrap.write is empty: the server writes only its private HOME and /tmp, both gone when it ends"}
	}
	return executor.Layer{Name: LayerWrapWrite, Off: executor.OffByPolicy,
		Detail: "written directly: no transactional layer, no protect list: what the server writes in " + strings.Join(dirs, ", ") +
			" lands on the host as it writes it (git hooks, .envrc and tool configuration included), with nothing checked or undone; " +
			"keep only data there, and do not run what the server leaves"}
}

// WorkspaceUnwritable implements executor.WorkspaceChecker for wrap.write: each directory the
// wrapped server's uid cannot write (verify's MS505), with the fix, as serve says of the
// allowlist workspace (trial49 F4).
func (c *checkExecutor) WorkspaceUnwritable() (why, fix string) {
	return WriteDirsUnwritable(wrapsec.Of(c.pol).Write)
}

// WriteDirsUnwritable is WriteDirNote for each of dirs, joined ("": the server can write them all).
func WriteDirsUnwritable(dirs []string) (why, fix string) {
	if mutated("wrap-write-unwritable-unsaid") {
		return "", ""
	}
	var whys, fixes []string
	for _, d := range dirs {
		if n, f := WriteDirNote(d); n != "" {
			whys, fixes = append(whys, n), append(fixes, f)
		}
	}
	return strings.Join(whys, "; "), strings.Join(fixes, "; ")
}
