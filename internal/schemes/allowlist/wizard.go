package allowlist

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	alsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/allowlist/section"

	"github.com/mcpsandbox/mcpsandbox/internal/generate"
	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/spf13/pflag"
)

// wizard is the allowlist's part of init.
var wizard = &generate.Wizard{
	Blurb: "pinned host binaries, kernel-confined. Isolation: strong for tools, none for code. Flexibility: low. Setup: none. Cost: free, a few ms a call",
	New:   func() generate.SchemeAnswers { return &Answers{} },
}

// Answers are the allowlist's own answers in init.
type Answers struct {
	Workspace string
	Allow     []string // names on the fixed PATH, or absolute paths
	// raised says what Apply raised limits.memory to, and why ("" = nothing), for Warnings.
	raised string
}

// Own is the allowlist's answers among a's (a fresh, unkept one when a offers no allowlist).
func Own(a *generate.Answers) *Answers {
	if w, ok := a.OwnOf(alsec.Name).(*Answers); ok {
		return w
	}
	return &Answers{}
}

// allowFlag is --allow: comma-separated names or paths ("" = none given), repeatable: each
// --allow adds its commands to those before it (a second --allow used to replace the first).
type allowFlag struct{ dst *[]string }

func (f allowFlag) String() string { return strings.Join(*f.dst, ",") }
func (f allowFlag) Type() string   { return "strings" }
func (f allowFlag) Set(s string) error {
	if mutated("init-allow-repeated") {
		*f.dst = nil
	}
	if s != "" {
		*f.dst = append(*f.dst, strings.Split(s, ",")...)
	}
	return nil
}

// Flags binds --workspace and --allow.
func (w *Answers) Flags(fl *pflag.FlagSet) {
	fl.StringVar(&w.Workspace, "workspace", "", "allowlist: the commands' working directory, the only writable place (created if missing)")
	fl.Var(allowFlag{&w.Allow}, "allow", "allowlist: commands to allow, names or absolute paths, each pinned by sha256; comma-separated or repeated")
	generate.SetFlagRole(fl, "workspace", "workspace", "DIR")
}

// Missing: without the wizard, the workspace and the commands must be given.
func (w *Answers) Missing() []string {
	var m []string
	if w.Workspace == "" {
		m = append(m, "--workspace DIR")
	}
	if len(w.Allow) == 0 {
		m = append(m, "--allow CMD,CMD")
	}
	return m
}

// From reads the workspace, the network's every host and the commands (by name when the name
// pins to the same path here, else by path) back from p.
func (w *Answers) From(a *generate.Answers, p *policy.Policy) {
	w.Workspace = alsec.Of(p).Workspace
	a.Network = alsec.Of(p).Net().Mode == policy.NetAll
	for _, c := range alsec.Of(p).Commands {
		if pc, err := generate.Pin(c.Name); err == nil && pc.Path == c.Path {
			w.Allow = append(w.Allow, c.Name)
		} else {
			w.Allow = append(w.Allow, c.Path)
		}
	}
}

// Prefill: the workspace from d; the commands from the base, or on a first run the default
// commands found here.
func (w *Answers) Prefill(ds generate.SchemeAnswers, given func(string) bool, base bool) {
	d := ds.(*Answers)
	generate.PrefillString(given, "workspace", &w.Workspace, d.Workspace)
	if given("allow") || len(w.Allow) > 0 {
		return
	}
	if base {
		w.Allow = d.Allow
		return
	}
	for _, n := range generate.DefaultCommands {
		if slices.Contains(generate.AvailableTools(), n) {
			w.Allow = append(w.Allow, n)
		}
	}
}

// Apply sets the workspace, the network and the commands, each pinned by sha256; a command the
// base already held at the same path keeps its deny_args and options.
func (w *Answers) Apply(_ *generate.Answers, p *policy.Policy, net policy.Network, fromBase bool) error {
	var base map[string]policy.Command
	if fromBase {
		base = map[string]policy.Command{}
		for _, c := range alsec.Of(p).Commands {
			base[c.Name] = c
		}
		alsec.Of(p).Commands = nil
	}
	home, _ := os.UserHomeDir()
	ws := generate.WorkspacePath(w.Workspace, home)
	if err := generate.CheckWorkspace(ws, home); err != nil {
		return err
	}
	alsec.Of(p).Workspace = filepath.Clean(ws)
	alsec.Of(p).SetNet(net)
	if len(w.Allow) == 0 {
		return fmt.Errorf("allow at least one command (e.g. --allow %s)", strings.Join(generate.DefaultCommands[:4], ","))
	}
	// every name that cannot be pinned is said at once, and an interpreter among the names with
	// them: one run of init tells all (a new user's trial fixed one name per run)
	seen, named := map[string]bool{}, map[string]string{}
	var bad []error
	var interp []string
	for _, n := range w.Allow {
		n = strings.TrimSpace(n)
		if n == "" || seen[n] {
			continue
		}
		seen[n] = true
		if policy.IsInterpreter(n) {
			interp = append(interp, n)
		}
		c, err := generate.Pin(n)
		if err != nil {
			bad = append(bad, fmt.Errorf("allow %s: %w", n, err))
			continue
		}
		if first, ok := named[c.Name]; ok { // "/usr/bin/wc" and "wc": one command, given twice
			bad = append(bad, fmt.Errorf("allow %s: the command %q again (as %s): give each command once", n, c.Name, first))
			continue
		}
		named[c.Name] = n
		if b, ok := base[c.Name]; ok && b.Path == c.Path { // keep its deny_args and options; the pin is renewed
			c.DenyArgs, c.AllowOutsidePaths = b.DenyArgs, b.AllowOutsidePaths
		}
		alsec.Of(p).Commands = append(alsec.Of(p).Commands, c)
	}
	if len(bad) > 0 && len(interp) > 0 {
		runs, it, an := runsAnyCode(interp)
		bad = append(bad, fmt.Errorf("note: %s %s (%s): init will warn of %s once the names above are fixed", strings.Join(interp, ", "), runs, an, it))
	}
	w.raised = ""
	if len(bad) == 0 {
		w.raiseMemory(p)
	}
	return errors.Join(bad...)
}

// raiseMemory sets limits.memory to what the commands need to start, where it is less: under less,
// a runtime that reserves address space (Go, node, the JVM) dies before it runs anything
// (trial37 F1). A bound all the same: each process of a call gets it.
func (w *Answers) raiseMemory(p *policy.Policy) {
	if mutated("init-memory-not-raised") {
		return
	}
	var need policy.Size
	var who []string
	for _, c := range alsec.Of(p).Commands {
		if n, what := addressSpaceNeed(c); n > p.Limits.Memory {
			need = max(need, n)
			who = append(who, fmt.Sprintf("%s (%s)", c.Name, what))
		}
	}
	if need == 0 {
		return
	}
	w.raised = fmt.Sprintf("limits.memory is %s, raised from %s: under %s, %s could not start. limits.memory is address space, not RSS (RLIMIT_AS, for each process of a call), "+
		"and runtimes reserve far more than they use", need, p.Limits.Memory, p.Limits.Memory, strings.Join(who, "; "))
	p.Limits.Memory = need
}

// Network: every host, only the listed hosts, or none; not both.
func (w *Answers) Network(a *generate.Answers, hosts []string) (policy.Network, error) {
	switch {
	case len(hosts) > 0 && a.Network:
		return policy.Network{}, errors.New("network: every host (--network) and only the listed hosts (--network-hosts) conflict: give one of them")
	case len(hosts) > 0:
		return policy.NetworkHosts(hosts...)
	case a.Network:
		return policy.Network{Mode: policy.NetAll}, nil
	}
	return policy.Network{Mode: policy.NetNone}, nil
}

// AllHosts is --network.
func (w *Answers) AllHosts(a *generate.Answers) bool { return a.Network }

// SetAllHosts sets --network.
func (w *Answers) SetAllHosts(a *generate.Answers, all bool) { a.Network = all }

// Warnings: an interpreter allowlisted runs any code; limits.memory raised for a runtime that
// reserves address space; a toolchain whose builds and tests start programs a call may not.
func (w *Answers) Warnings(p *policy.Policy) []string {
	var out []string
	if interp := Interpreters(p); len(interp) > 0 {
		runs, it, _ := runsAnyCode(interp)
		they := "it can"
		if it == "them" {
			they = "they can"
		}
		out = append(out, fmt.Sprintf("%s %s: allowlisting %s means arbitrary code in the workspace (%s plant git hooks there, run any script). The docker scheme is the safe way to run code.", strings.Join(interp, ", "), runs, it, they))
	}
	if w.raised != "" {
		out = append(out, w.raised)
	}
	if t := toolchainWarning(alsec.Of(p).Commands); t != "" {
		out = append(out, t)
	}
	return out
}

// runsAnyCode is the verb phrase, pronoun and noun for one interpreter or several ("python,
// node runs any code it is given" read wrong: trial37 F13).
func runsAnyCode(names []string) (runs, it, an string) {
	if len(names) > 1 {
		return "run any code they are given", "them", "interpreters"
	}
	return "runs any code it is given", "it", "an interpreter"
}

// Interpreters lists the allowed names that run arbitrary code.
func Interpreters(p *policy.Policy) []string {
	var out []string
	for _, c := range alsec.Of(p).Commands {
		if policy.IsInterpreter(c.Name) || policy.IsInterpreter(filepath.Base(c.Path)) {
			out = append(out, c.Name)
		}
	}
	return out
}

// Prepare creates the workspace if missing, and says which it created (so a failed init can
// remove it again). When root creates it, commands will run as nobody, so nobody gets to write
// it.
func (w *Answers) Prepare(p *policy.Policy, log io.Writer) (string, error) {
	ws := alsec.Of(p).Workspace
	if st, err := os.Stat(ws); err == nil {
		if os.Geteuid() == 0 && alsec.Of(p).User == "" && ownerUID(st) == 0 && !nobodyWrites(st) && !mutated("init-workspace-unwritable-silent") {
			fmt.Fprintf(log, "note: under root, commands run as nobody (65534), and the workspace %s (owner uid %d, mode %v) is not theirs to write: "+
				"they can read it, but writes there fail, a command's and write_file's alike (the file tools act as that user). To let them write it: chown -R 65534:65534 %s, or set allowlist.user\n",
				ws, ownerUID(st), st.Mode().Perm(), ws)
		}
		if unwritableToMe(ws) && !mutated("init-workspace-unwritable-silent") {
			// a serve that is not root runs the commands and the file tools as its own user (trial33 F9)
			fmt.Fprintf(log, "note: commands and the file tools run as you (uid %d), and the workspace %s (owner uid %d, mode %v) is not yours to write: "+
				"they can read it, but every write there fails. Use a directory of yours (mkdir -p ~/ai-workspace), or have its owner let you write it\n",
				os.Geteuid(), ws, ownerUID(st), st.Mode().Perm())
		}
		return "", nil
	}
	if err := os.MkdirAll(ws, 0o755); err != nil {
		return "", fmt.Errorf("create the workspace %s: %w", ws, err)
	}
	if os.Geteuid() == 0 && alsec.Of(p).User == "" {
		if err := os.Chown(ws, 65534, 65534); err != nil {
			return ws, fmt.Errorf("hand the workspace to nobody (commands run as 65534 under root): %w", err)
		}
	}
	fmt.Fprintf(log, "created the workspace %s\n", ws)
	return ws, nil
}

// nobodyWrites says whether uid 65534 (not in the directory's group) may create files in the
// directory st describes.
func nobodyWrites(st os.FileInfo) bool {
	m := st.Mode().Perm()
	if ownerUID(st) == 65534 {
		return m&0o300 == 0o300
	}
	return m&0o003 == 0o003
}
