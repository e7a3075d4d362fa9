package generate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mcpsandbox/mcpsandbox/internal/shellword"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// init runs in four steps: NewPlan (what would change), Plan.Preview (show it), a confirmation
// (the caller's: it is terminal IO), Plan.Write (write it all or nothing). Plan.Report then says
// what was done.

// PlanOptions are init's answers once flags and the wizard have given them.
type PlanOptions struct {
	Answers   Answers
	Env       Env
	Clients   []string // client specs, ID or ID:SCOPE
	PolicyOut string   // where the policy goes; ~ expands to Env.Home
	BaseFrom  string   // the policy file the answers started from ("" = none)
	Binary    string   // the mcpsandbox binary the entries run, absolute
	Force     bool     // replace an existing policy or server entry without asking
	Print     bool     // the client entries are printed, not written
	// Confirm asks a yes/no question, "no" the default; it answers false when nobody can be asked.
	Confirm func(msg string) (bool, error)
	Log     io.Writer // warnings
	// Proof is the scheme's trivial tool call for a policy (nil, or nil returned: none).
	Proof func(*policy.Policy) *ProofCall
	// ServerEnv names the variables serve needs from the client's environment for a policy
	// (the e2b key): entries name them in each client's syntax; an item NAME=value the entries
	// set to that value (the docker engine's address) (nil: none).
	ServerEnv func(*policy.Policy) []string
	// ClientsOnly: the clients reach a server already answering at the HTTP URL, which runs its
	// own policy: init writes only the client entries (no policy, no stdio check).
	ClientsOnly bool
	// UsePolicy: the entries run serve with the policy already at PolicyOut, which stays as it
	// is (init --policy FILE): nothing of it is rebuilt, re-pinned or rewritten.
	UsePolicy bool
	// Carry are the words of this init's flags that init --policy takes as they are (--print,
	// --project DIR, --command PATH, --verify): the refusal to replace a policy names the
	// command with them, so that pasting it does what this one asked (trial32 F1).
	Carry []string
	// Wizard: the answers came from the wizard, whose advice names its choices, not flags.
	Wizard bool
	// Portable: the entries run `mcpsandbox serve --project` (NewPortableEntry), with no machine
	// path, for project files a team commits; PolicyOut is this user's policy for the checkout.
	Portable bool
}

// Plan is every file one init will change, and the entries it will write.
type Plan struct {
	Policy      *policy.Policy
	PolicyPath  string      // absolute
	Entry       ServerEntry // the stdio entry init starts to check
	ClientEntry ServerEntry // the entry the clients get: Entry, or an HTTP one
	PolicyFile  FileChange
	Clients     ClientPlan
	Snippets    []string // with Print: each client's entry, for stdout
	GenericFor  string   // with Print and no client: which clients read the printed entry, for stderr
	Proof       *ProofCall
	// Shared are the other entries that run serve with this policy file, when init changes
	// it: they change with it.
	Shared []PolicyUser
	// Shadows: servers of the same name in other scopes of a client written (Shadowing).
	Shadows []string
	// SameEntry: clients asked for twice under two scopes that are one entry here (planClients).
	SameEntry []string
	// Off: a client keeps the server's name switched off outside the entry (claudeOff).
	Off          []string
	shadowsShown bool     // Preview showed them
	targets      []Target // every client asked for, printed or written
	project      string
	home         string
	print        bool
	name         string // the server's name in the client configs
	only         bool   // ClientsOnly
	wizard       bool   // PlanOptions.Wizard
	asIs         bool   // UsePolicy: the policy file is used as it is, no answers made it
	// prepare makes what the scheme needs on the host before the write (its workspace).
	prepare func(p *policy.Policy, log io.Writer) (created string, err error)
}

// NewPlan builds the policy from the answers and plans every file change. An existing different
// policy or server entry is replaced only with Force or when Confirm says yes.
func NewPlan(o PlanOptions) (*Plan, error) {
	if o.ClientsOnly {
		return newClientsPlan(o)
	}
	if o.UsePolicy {
		return newUsePolicyPlan(o)
	}
	p, err := BuildPolicy(o.Answers)
	if err != nil {
		return nil, err
	}
	if p.Audit.Path == "" && !mutated("init-audit-path-env") {
		// "" is resolved by each serve in its client's environment, and clients pass different
		// ones (Codex passes no XDG_STATE_HOME; a desktop session's launcher may set its own): one
		// policy would audit to two logs, one of them where audit verify never looks (trial32 F10).
		p.Audit.Path = policy.DefaultAuditPath(o.Env.Home)
	}
	own := o.Answers.Own()
	if w, ok := own.(Warner); ok {
		for _, s := range w.Warnings(p) {
			fmt.Fprintf(o.Log, "warning: %s\n", s)
		}
	}
	pl := &Plan{Policy: p, print: o.Print, project: o.Env.Project, home: o.Env.Home, name: p.Name, wizard: o.Wizard}
	if pr, ok := own.(Preparer); ok {
		pl.prepare = pr.Prepare
	}
	if pl.PolicyPath, err = filepath.Abs(ExpandHome(o.PolicyOut, o.Env.Home)); err != nil {
		return nil, err
	}
	if err := checkOwnFiles(p, pl.PolicyPath); err != nil {
		return nil, err
	}
	if err := pl.entries(o); err != nil {
		return nil, err
	}
	if err := pl.planPolicy(o); err != nil {
		return nil, err
	}
	if err := pl.planClients(o); err != nil {
		return nil, err
	}
	if pl.PolicyFile.Existed && !pl.PolicyFile.Unchanged() && !mutated("init-shared-policy-silent") {
		pl.Shared = pl.othersUsing(o.Env)
	}
	return pl, nil
}

// checkOwnFiles is serve's rule for its own files (MS406, MS407), judged before init writes or
// advises anything: a policy written into the workspace init makes (and, as root, gives to the
// sandbox's uid) was refused only at the entry's trial, first for its owner, whose fix led to a
// second wrong one before this rule's (trial32 F6).
func checkOwnFiles(p *policy.Policy, policyFile string) error {
	if mutated("init-own-files-late") {
		return nil
	}
	if err := policy.CheckOwnFiles(p.WorkspaceDir(), policyFile, p.Audit.Path); err != nil {
		return err
	}
	if key, dirs := p.ReadDirs(); len(dirs) > 0 {
		return policy.CheckAuditNotReadIn(dirs, key, p.Audit.Path)
	}
	return nil
}

// CheckPolicyOut judges where the wizard is told to write the policy (out) by serve's rule for its
// own files, against the policy the answers so far build: at its question, not after the preview.
func CheckPolicyOut(a Answers, out string, env Env) error {
	p, err := BuildPolicy(a)
	if err != nil {
		return nil // the answers' own problem: the plan names it
	}
	path, err := filepath.Abs(ExpandHome(strings.TrimSpace(out), env.Home))
	if err != nil {
		return err
	}
	if p.Audit.Path == "" {
		p.Audit.Path = policy.DefaultAuditPath(env.Home)
	}
	return checkOwnFiles(p, path)
}

// othersUsing lists the entries using the policy file, less those this plan writes.
func (pl *Plan) othersUsing(env Env) []PolicyUser {
	var out []PolicyUser
	for _, u := range PolicyUsers(pl.PolicyPath, env) {
		mine := slices.ContainsFunc(pl.targets, func(t Target) bool {
			kp := t.Client.KeyPath
			return t.Path == u.Path && u.Name == pl.name && (len(kp) < 2 && len(u.Where) == 0 || len(kp) >= 2 && slices.Equal(kp[:len(kp)-1], u.Where))
		})
		if !mine {
			out = append(out, u)
		}
	}
	return out
}

// SharedWith says which other entries change with the policy file, and how to leave them be.
func (pl *Plan) SharedWith(w io.Writer) {
	if len(pl.Shared) == 0 {
		return
	}
	fmt.Fprintf(w, "\n%s is also used by these entries; they change with it:\n", pl.PolicyPath)
	for _, u := range pl.Shared {
		fmt.Fprintf(w, "  %s\n", u)
	}
	fmt.Fprintln(w, "(project files in other directories, another project's .mcp.json or .cursor/mcp.json, are not searched)")
	fmt.Fprintln(w, "To leave them as they are, write this policy to a file of its own (--policy-out, or the wizard's \"Write the policy to\").")
}

// newClientsPlan plans only the client entries of a server already answering at the HTTP URL.
func newClientsPlan(o PlanOptions) (*Plan, error) {
	if o.Answers.HTTPURL == "" {
		return nil, errors.New("only the clients of a running serve --http can be configured without a policy: give --http URL")
	}
	pl := &Plan{print: o.Print, project: o.Env.Project, home: o.Env.Home, name: o.Answers.Name, only: true, wizard: o.Wizard, PolicyFile: FileChange{Existed: true}}
	if pl.name == "" {
		pl.name = "sandbox"
	}
	var err error
	if pl.ClientEntry, err = clientEntry(o.Answers, ServerEntry{}); err != nil {
		return nil, err
	}
	return pl, pl.planClients(o)
}

// entries sets the stdio entry running pl.Policy from pl.PolicyPath (with the variables and the
// trial call its scheme needs) and the entry the clients get.
func (pl *Plan) entries(o PlanOptions) error {
	pl.Entry = NewServerEntry(o.Binary, pl.PolicyPath)
	if o.Portable && !mutated("init-portable-absolute") {
		pl.Entry = NewPortableEntry(o.Env.Project)
	}
	if o.ServerEnv != nil {
		for _, v := range o.ServerEnv(pl.Policy) {
			if strings.Contains(v, "=") {
				pl.Entry.Set = append(pl.Entry.Set, v)
			} else {
				pl.Entry.Env = append(pl.Entry.Env, v)
			}
		}
	}
	if pl.Entry.Portable && len(pl.Entry.Set) > 0 {
		return fmt.Errorf("--portable: the entries of this policy set %s, a value of this machine, which a committed file cannot hold for every teammate: "+
			"leave --portable out (each member then runs init in their own clone)", strings.Join(pl.Entry.Set, ", "))
	}
	if o.Proof != nil {
		pl.Proof = o.Proof(pl.Policy)
	}
	var err error
	pl.ClientEntry, err = clientEntry(o.Answers, pl.Entry)
	return err
}

// newUsePolicyPlan plans the client entries of the policy at o.PolicyOut as it is: the file is
// read and loaded (a policy that does not load says where and why), never written.
func newUsePolicyPlan(o PlanOptions) (*Plan, error) {
	path, err := filepath.Abs(ExpandHome(o.PolicyOut, o.Env.Home))
	if err != nil {
		return nil, err
	}
	raw, err := ReadConfigFile(path)
	if err != nil {
		return nil, fmt.Errorf("--policy %s: %w (give the policy file the entries should run; init without --policy writes a new one)", path, err)
	}
	p, err := policy.Parse(path, raw)
	if err != nil {
		return nil, err
	}
	pl := &Plan{Policy: p, PolicyPath: path, print: o.Print, project: o.Env.Project, home: o.Env.Home, name: p.Name, asIs: true,
		PolicyFile: FileChange{Label: "policy", Path: path, Old: raw, New: raw, Existed: true, Mode: 0o644}}
	if mutated("init-policy-rewritten") { // rendered anew from what it loaded
		if pl.PolicyFile.New, err = RenderPolicy(p, path); err != nil {
			return nil, err
		}
	}
	if err := pl.entries(o); err != nil {
		return nil, err
	}
	return pl, pl.planClients(o)
}

// clientEntry is the entry the clients get: the stdio one, or with an HTTP URL that of a running
// `serve --http` and the name of the variable holding its token.
func clientEntry(a Answers, stdio ServerEntry) (ServerEntry, error) {
	if a.HTTPURL == "" {
		if a.TokenEnv != "" {
			return stdio, errors.New("--token-env goes with --http URL: a stdio entry needs no token")
		}
		return stdio, nil
	}
	u, err := CheckHTTPURL(a.HTTPURL)
	if err != nil {
		return stdio, err
	}
	e := NewHTTPEntry(u, a.TokenEnv)
	return e, CheckHTTPEntry(e)
}

// PolicyExistsError: the policy file init would write is there, different, and was not to be
// replaced (no --force, or the user said no).
type PolicyExistsError struct {
	Path   string
	advice string
}

func (e *PolicyExistsError) Error() string {
	return fmt.Sprintf("%s already exists: pass --force to replace it (it is backed up first) or --policy-out PATH%s", e.Path, e.advice)
}

// planPolicy plans the policy file; replacing a different one needs Force or a yes, except when
// the wizard started from this very file (it has shown the change and asks before writing).
func (pl *Plan) planPolicy(o PlanOptions) error {
	pc, err := PolicyChange(pl.Policy, pl.PolicyPath)
	if err != nil {
		return err
	}
	pl.PolicyFile = pc
	fromBase := o.Answers.Base != nil && o.BaseFrom == pl.PolicyPath
	lost := ""
	if len(pc.Lost) > 0 && !fromBase && !mutated("init-force-lost-silent") {
		lost = "; replacing it changes or drops these settings of it: " + strings.Join(pc.Lost, "; ")
	}
	if pc.Existed && !pc.Unchanged() && !o.Force && !fromBase {
		ok, err := o.Confirm(fmt.Sprintf("%s exists%s. Replace it (the old one is kept as a backup)?", pl.PolicyPath, lost))
		if err != nil {
			return err
		}
		if !ok {
			return &PolicyExistsError{Path: pl.PolicyPath, advice: lost + initPolicyAdvice(pl.PolicyPath, o)}
		}
	} else if lost != "" && o.Log != nil {
		// --force: said before the write, with where the old values stay and how to keep them
		// (the flags build a new policy; the wizard starts from the one there)
		fmt.Fprintf(o.Log, "warning: %s is replaced (--force)%s. The old file is kept as a backup; to keep them, set them again in the new file, or run mcpsandbox init (the wizard), which starts from the policy there\n", pl.PolicyPath, lost)
	}
	return nil
}

// planClients plans each client's config change, or with Print its snippet.
func (pl *Plan) planClients(o PlanOptions) error {
	replace := func(err error) (bool, error) { return o.Confirm(fmt.Sprintf("%s. Replace it?", err)) }
	if o.UsePolicy {
		pl.Clients.Beside = fmt.Sprintf("set name = \"…\" in %s (init --policy names the entry by the policy's name key)", shellword.Quote(pl.PolicyPath))
		pl.Clients.Rename = "give this one another name: " + pl.Clients.Beside
	} else if o.Wizard {
		pl.Clients.Rename = "give this one another name: run init again as mcpsandbox init --name NAME (the wizard asks the rest)"
	}
	for _, spec := range o.Clients {
		t, err := ResolveTarget(spec, o.Env)
		if err != nil {
			return err
		}
		if err := t.Client.CheckHTTP(pl.ClientEntry); err != nil {
			return err
		}
		if i := slices.IndexFunc(pl.targets, func(p Target) bool { return p.Client.ID == t.Client.ID && p.Scope != t.Scope && sameEntryPlace(p, t) }); i >= 0 && !mutated("init-same-entry-twice") {
			// cursor and cursor:project (gemini and gemini:project) when the project is the home
			// directory: one file, one entry, which the client reads once (trial27, #4: the
			// report named it twice, as two places).
			p := pl.targets[i]
			pl.SameEntry = append(pl.SameEntry, fmt.Sprintf("%s: %s:%s and %s:%s are the same entry here, %s (the project directory is the home directory): written once",
				t.Client.Name, p.Client.ID, p.Scope, t.Client.ID, t.Scope, p.Where()))
			continue
		}
		pl.targets = append(pl.targets, t)
		if off := claudeOff(t, pl.name, o.Env); off != "" && !slices.Contains(pl.Off, off) {
			pl.Off = append(pl.Off, off)
		}
		if o.Print {
			pl.Snippets = append(pl.Snippets, fmt.Sprintf("# %s (%s): %s\n%s", t.Client.Name, t.Scope, t.Where(), Snippet(t.Client, pl.name, pl.ClientEntry.For(t.Client))))
			if _, err := ClientChange(t, pl.name, pl.ClientEntry.For(t.Client), false); errors.Is(err, ErrExists) && !mutated("init-print-conflict-silent") {
				// pasted there, it makes two servers of one name, of which the client keeps one (trial32 F16)
				fmt.Fprintf(o.Log, "note: %s: pasting the entry there makes two servers named %q (the client keeps one of them): replace that one, or give this one another name\n", err, pl.name)
			}
			continue
		}
		if err := pl.Clients.Add(t, pl.name, pl.ClientEntry.For(t.Client), o.Force, replace); err != nil {
			return err
		}
	}
	if o.Print && len(o.Clients) == 0 {
		if g, ok := genericSnippet(pl.name, pl.ClientEntry); ok {
			pl.Snippets = append(pl.Snippets, g)
			pl.GenericFor = genericSnippetFor(pl.name, pl.ClientEntry, pl.Entry.Env)
		}
	}
	pl.Shadows = pl.Clients.Shadowing(pl.name, pl.ClientEntry, o.Env)
	return nil
}

// genericSnippet is the entry as an "mcpServers" JSON object, the form most clients and the MCP
// Inspector (--config) read: what --print gives when no client is named, in the first catalogue
// client's syntax that writes that form and can hold the entry (an HTTP one needs a client with
// HTTP entries). It is the JSON alone, no comment line: `init --print --yes > servers.json` is a
// file the Inspector's --config and a client read as it is (JSON has no comments; the Inspector
// refused the file at its "#"); what it is for is said on stderr (genericSnippetFor).
func genericSnippet(name string, e ServerEntry) (string, bool) {
	if e.URL != "" && !mutated("init-print-http-cursor-form") {
		return Snippet(inspectorHTTP, name, e), true
	}
	for _, c := range Clients() {
		if c.Format == "json" && c.Key == "mcpServers" && len(c.Keys) == 0 && c.CheckHTTP(e) == nil {
			if mutated("init-print-generic-comment") {
				return fmt.Sprintf("# %s\n%s", genericSnippetFor(name, e, nil), Snippet(c, name, e)), true
			}
			return Snippet(c, name, e), true
		}
	}
	return "", false
}

// genericSnippetFor says which clients read the entry --print gives when no client is named, for
// stderr: "" when there is no such entry. vars are the variables serve needs from the client's
// environment (the e2b key): the printed entry names none, and the MCP Inspector passes a stdio
// server only HOME, PATH, SHELL and TERM, so its command line must give each with -e.
func genericSnippetFor(name string, e ServerEntry, vars []string) string {
	if e.URL != "" && !mutated("init-print-http-cursor-form") {
		return InspectorHTTPFor(name, e)
	}
	for _, c := range Clients() {
		if c.Format == "json" && c.Key == "mcpServers" && len(c.Keys) == 0 && c.CheckHTTP(e) == nil {
			if e.URL == "" && len(vars) > 0 && !mutated("init-print-generic-env") {
				flags := make([]string, len(vars))
				for i, v := range vars {
					flags[i] = fmt.Sprintf("-e %s=\"$%s\"", v, v)
				}
				return fmt.Sprintf("any client that reads an \"mcpServers\" JSON object and passes a server its own environment, which must hold %s "+
					"(as %s does; the MCP Inspector passes only HOME, PATH, SHELL and TERM: --config FILE --server %s %s)",
					strings.Join(vars, ", "), c.Name, name, strings.Join(flags, " "))
			}
			return fmt.Sprintf("any client that reads an \"mcpServers\" JSON object (as %s does; the MCP Inspector: --config FILE --server %s)", c.Name, name)
		}
	}
	return ""
}

// inspectorHTTP is the MCP Inspector's form of an HTTP entry, what --print gives for one when no
// client is named: the Inspector takes an entry without "type" for a command to start, and sends
// its headers as written (it expands no variable), so the entry holds no header and the token
// goes on the Inspector's command line (InspectorHTTPFor) (trial33 F2: the Cursor form printed
// before, with no type and ${env:VAR}, failed there both ways).
var inspectorHTTP = Client{Name: "the MCP Inspector", Format: "json", Key: "mcpServers", HTTP: &HTTPFormat{URLKey: "url", Type: "streamable-http"}}

// InspectorHTTPFor says, for stderr, what the entry --print gives for an HTTP server with no
// client named is for: the MCP Inspector, and its command line with the token's header.
func InspectorHTTPFor(name string, e ServerEntry) string {
	// @2: an older Inspector's CLI (0.x, which npx may have cached) starts every --config entry as a command
	line := fmt.Sprintf("npx -y @modelcontextprotocol/inspector@2 --cli --config servers.json --server %s", name)
	if e.TokenEnv == "" {
		return fmt.Sprintf("the MCP Inspector: %s --method tools/list", line)
	}
	return fmt.Sprintf("the MCP Inspector, with the token on its command line from your shell's $%s "+
		"(the Inspector expands no variable in its file, and init writes no token): %s --header \"Authorization: Bearer $%s\" --method tools/list",
		e.TokenEnv, line, e.TokenEnv)
}

// Unchanged reports whether writing would change no file.
func (pl *Plan) Unchanged() bool { return pl.PolicyFile.Unchanged() && pl.Clients.Unchanged() }

// Preview shows every file the plan changes: a diff for an existing one, the text of a new one.
func (pl *Plan) Preview(w io.Writer) {
	fmt.Fprintln(w, "\nThese files will change:")
	changes := pl.Clients.Changes
	if !pl.only {
		changes = append([]FileChange{pl.PolicyFile}, changes...)
	}
	policyChanges := pl.PolicyFile.Existed && !pl.PolicyFile.Unchanged()
	for i, c := range changes {
		fmt.Fprintln(w)
		if policyChanges && c.Unchanged() && (pl.only || i > 0) && !mutated("init-preview-entry-unchanged") {
			// the entry's text stays, the server behind it does not (trial30 F7)
			fmt.Fprintf(w, "%s: %s (entry unchanged: it runs %s, which changes above%s)\n", c.Label, c.Path, pl.PolicyPath, schemeMove(pl.PolicyFile))
			continue
		}
		fmt.Fprint(w, c.Preview())
	}
	pl.SharedWith(w)
	for _, n := range pl.SameEntry {
		fmt.Fprintf(w, "\nnote: %s\n", n)
	}
	pl.reportShadows(w)
	pl.shadowsShown = true
}

// schemeMove says ", from the allowlist scheme to docker" when a policy file's change moves it
// to another scheme, else "".
func schemeMove(c FileChange) string {
	re := regexp.MustCompile(`(?m)^scheme\s*=\s*"([^"]*)"`)
	from, to := re.FindSubmatch(c.Old), re.FindSubmatch(c.New)
	if from == nil || to == nil || bytes.Equal(from[1], to[1]) {
		return ""
	}
	return fmt.Sprintf(", from the %s scheme to %s", from[1], to[1])
}

// reportShadows warns of the same server name in another scope of a client written.
func (pl *Plan) reportShadows(w io.Writer) {
	for _, s := range pl.Shadows {
		fmt.Fprintf(w, "\nwarning: %s\n", s)
	}
}

// Written is what Plan.Write did.
type Written struct {
	Files     []WriteResult
	Probes    []Probe // the stdio entry's start checks, one per client environment
	HTTPProbe *Probe  // the server at the HTTP entry's URL, when one answered there
	HTTPDown  string  // why nothing answered at the HTTP entry's URL ("" = it answered, or no HTTP entry)
}

// HTTPCheckTimeout bounds the check of a server already running at an HTTP entry's URL.
const HTTPCheckTimeout = 20 * time.Second

// Write checks the HTTP entry's server when one runs there already (a refused token or a server
// that does not speak MCP stops it before anything is written), makes what the scheme needs on
// the host (its Preparer: a workspace), and installs the policy and client configs (Install: all or nothing; a workspace it created is
// removed again on failure). env is the environment the entries start in; timeout bounds the
// start check; log gets what it created.
func (pl *Plan) Write(ctx context.Context, env []string, timeout time.Duration, log io.Writer) (*Written, error) {
	res := &Written{}
	if pl.only && pl.print && !mutated("init-http-print-stdio-trial") {
		// the clients of a running serve --http, printed: no policy, no stdio entry to start,
		// nothing to write (init checked the server before planning) (trial32 F22)
		return res, nil
	}
	if pl.ClientEntry.URL != "" && !pl.print {
		hp, err := HTTPCheck(ctx, pl.ClientEntry, env, HTTPCheckTimeout)
		switch {
		case pl.only && err != nil:
			return nil, fmt.Errorf("%w; nothing was written", err)
		case pl.only:
			res.HTTPProbe = &hp
			res.Files, err = Apply(pl.Clients.Changes)
			return res, err
		case errors.Is(err, ErrNotRunning):
			res.HTTPDown = err.Error()
		case err != nil:
			return nil, fmt.Errorf("%w; nothing was written", err)
		default:
			res.HTTPProbe = &hp
		}
	}
	var created string
	var err error
	if pl.prepare != nil {
		if created, err = pl.prepare(pl.Policy, log); err != nil {
			return nil, err
		}
	}
	if res.Files, res.Probes, err = Install(ctx, pl.PolicyFile, pl.Clients.Changes, pl.Entry, pl.ProofRuns(env), pl.Proof, timeout); err != nil {
		if created != "" {
			os.Remove(created) // only if still empty
		}
		return nil, err
	}
	return res, nil
}

// ProofRuns are the environments the entry must work in: each configured client's (as it
// starts a stdio server, from env: the one it runs in), one run per distinct environment; with
// no client, or an HTTP entry (the clients start no server), init's own.
func (pl *Plan) ProofRuns(env []string) []ProofRun {
	if len(pl.targets) == 0 || pl.ClientEntry.URL != "" {
		return []ProofRun{{Env: env}}
	}
	var runs []ProofRun
	var who [][]string
	seen := map[string]int{}
	for _, t := range pl.targets {
		e := t.Client.ServerEnv(env, pl.Entry)
		k := strings.Join(e, "\x00")
		if i, ok := seen[k]; ok {
			if !slices.Contains(who[i], t.Client.Name) {
				who[i] = append(who[i], t.Client.Name)
			}
			continue
		}
		seen[k] = len(runs)
		runs = append(runs, ProofRun{How: t.Client.describeInherit(), Env: e})
		who = append(who, []string{t.Client.Name})
	}
	for i := range runs {
		runs[i].Who = englishList(who[i])
	}
	return runs
}

// englishList joins names as a sentence does: "A", "A and B", "A, B and C".
func englishList(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// Report says what Write did: each file written, what each client needs to know, the start
// check, how the HTTP entry was checked and is served, or that nothing changed.
func (pl *Plan) Report(w io.Writer, res *Written) {
	for _, r := range res.Files {
		fmt.Fprintln(w, DescribeWrite(r))
	}
	if pc := pl.PolicyFile; !pl.only && pc.Existed && pc.Unchanged() && len(res.Files) > 0 {
		// said, not left to guess: the entries written run the policy that was there (trial27);
		// with --policy no answers made it (trial30 F5)
		if pl.asIs {
			fmt.Fprintf(w, "using %s as it is (the entries run it; init did not change it)\n", pl.PolicyPath)
		} else {
			fmt.Fprintf(w, "kept %s: the policy these answers make is the one already there\n", pl.PolicyPath)
		}
	}
	if pc := pl.PolicyFile; len(pc.LostComments) > 0 && !pc.Unchanged() {
		fmt.Fprintf(w, "  not kept in %s: your comments inside values, %s (the policy is written anew; the backup has them)\n", pc.Path, quoteAll(pc.LostComments))
	}
	for _, t := range pl.Clients.Targets {
		// the entry the client gets (trial35 F13: the stdio one was asked, so an HTTP entry's
		// project note said the file holds this machine's absolute paths)
		written := pl.ClientEntry
		if mutated("init-http-note-of-stdio") {
			written = pl.Entry
		}
		if about := t.AboutFor(written); about != "" && !pl.Clients.Change(t).Unchanged() && !pl.alreadyThere(t) {
			fmt.Fprintf(w, "  %s: %s\n", t.Client.Name, about)
		}
	}
	for _, c := range pl.Clients.Changes {
		if len(c.Kept) > 0 && !c.Unchanged() {
			fmt.Fprintf(w, "  kept in the entry %q of %s: %s (your own settings of it; init replaced only how the client starts or reaches the server)\n",
				pl.name, c.Path, strings.Join(c.Kept, ", "))
		}
		if c.Off && !c.Unchanged() {
			fmt.Fprintf(w, "  the entry %q of %s is switched off (disabled, or enabled = false, kept from the entry it replaced): the client will not start it until you switch it on there\n",
				pl.name, c.Path)
		}
		if len(c.Trust) > 0 && !c.Unchanged() {
			fmt.Fprintf(w, "  the entry %q of %s keeps %s from the entry it replaced: the trust you gave that server now goes to this one "+
				"(the client may run its tools without asking you); remove it there to be asked\n", pl.name, c.Path, strings.Join(c.Trust, ", "))
		}
		if len(c.LostComments) > 0 && !c.Unchanged() {
			fmt.Fprintf(w, "  not kept with the old entry %q of %s: your comments in it, %s (the entry is written anew; the backup has them)\n",
				pl.name, c.Path, quoteAll(c.LostComments))
		}
		if len(c.Dropped) > 0 && !c.Unchanged() {
			fmt.Fprintf(w, "  replaced in the old entry %q of %s: %s (how it started or reached its server; the old values are in the backup)\n",
				pl.name, c.Path, strings.Join(c.Dropped, ", "))
		}
	}
	for _, p := range res.Probes {
		fmt.Fprintln(w, describeProbe(p))
	}
	var tools []string
	for _, p := range append(slices.Clip(res.Probes), derefProbe(res.HTTPProbe)...) {
		for _, tool := range p.Tools {
			if !slices.Contains(tools, tool) {
				tools = append(tools, tool)
			}
		}
	}
	for _, c := range pl.Clients.Changes {
		if out := toolsLeftOut(c.AllowedTools, tools); len(out) > 0 && !c.Unchanged() {
			fmt.Fprintf(w, "  the entry %q of %s keeps a list of the only tools the client offers (includeTools or enabled_tools, from the entry it replaced: [%s]): it leaves out this server's %s, edit it there\n",
				pl.name, c.Path, strings.Join(c.AllowedTools, ", "), strings.Join(out, ", "))
		}
	}
	pl.reportNotes(w)
	if !pl.shadowsShown {
		pl.reportShadows(w)
	}
	if pl.ClientEntry.URL != "" {
		pl.reportHTTP(w, res)
	}
	if pl.Unchanged() && !pl.print {
		what := "the policy " + pl.PolicyPath
		if pl.only {
			what = "the server at " + pl.ClientEntry.URL
		}
		fmt.Fprintf(w, "already configured, nothing changed: %s\n", what)
		for _, t := range pl.Clients.Targets {
			fmt.Fprintf(w, "  and %s (%s) in %s\n", t.Client.Name, t.Scope, t.Where())
		}
	} else if !pl.print {
		// some clients changed and some not: each client named is accounted for, not only the
		// ones written (trial48 F1: of three clients, two already set up went unmentioned)
		var same []string
		for _, t := range pl.Clients.Targets {
			if pl.alreadyThere(t) && !mutated("init-report-unchanged-clients-silent") {
				same = append(same, fmt.Sprintf("%s (%s) in %s", t.Client.Name, t.Scope, t.Where()))
			}
		}
		for i, s := range same {
			if i == 0 {
				fmt.Fprintf(w, "already configured, nothing changed: %s\n", s)
			} else {
				fmt.Fprintf(w, "  and %s\n", s)
			}
		}
	}
}

// alreadyThere reports whether t's config holds this very entry already and keeps it as it is:
// its file is unchanged, or changes only elsewhere (another scope of a file two scopes share).
// An entry of another name that runs this server (SameAs) is not: reportNotes says that one.
func (pl *Plan) alreadyThere(t Target) bool {
	c := pl.Clients.Change(t)
	if c == nil || !c.Existed {
		return false
	}
	old, ok := rawEntry(t, c.Old, pl.name)
	cur, ok2 := rawEntry(t, c.New, pl.name)
	if ok && ok2 {
		return bytes.Equal(old, cur)
	}
	return c.Unchanged() && c.SameAs == ""
}

// describeProbe is one "checked" line: what was proven, with whose environment.
func describeProbe(p Probe) string {
	s := "checked: the entry starts and answers MCP"
	if p.Called != "" {
		s += ", and runs a call (" + p.Called + "),"
	}
	s += fmt.Sprintf(" in %d ms", p.Elapsed.Milliseconds())
	if p.Env != "" {
		verb := " gives it"
		if strings.Contains(p.Env, " and ") { // several clients (englishList)
			verb = " give it"
		}
		s += " with the environment " + p.Env + verb
	}
	return s + ", with the tools " + p.ToolList()
}

// reportNotes says what each client still needs of the user: a variable its entry cannot
// name, a step of its own before it starts the server.
func (pl *Plan) reportNotes(w io.Writer) {
	for _, n := range pl.SameEntry {
		fmt.Fprintf(w, "  %s\n", n)
	}
	for _, c := range pl.Clients.Changes {
		if c.SameAs != "" {
			fmt.Fprintf(w, "  already configured as %q in %s: it runs this very server, so nothing was added under %q "+
				"(a second entry would give the client every tool twice); to have it under %q, remove %q there first\n",
				c.SameAs, c.Path, pl.name, pl.name, c.SameAs)
		}
	}
	for _, n := range pl.Off {
		fmt.Fprintf(w, "  note: %s\n", n)
	}
	said := map[string]bool{} // two scopes of one client (gemini and gemini:project) need its step once
	say := func(name, note string) {
		if line := fmt.Sprintf("  %s: %s\n", name, note); !said[line] {
			said[line] = true
			fmt.Fprint(w, line)
		}
	}
	for _, t := range pl.targets {
		if n := t.Client.EnvNote(pl.Entry.Env); n != "" && pl.ClientEntry.URL == "" {
			say(t.Client.Name, n)
		}
		// Gemini CLI's folder trust holds for its HTTP entries too (trial33 F1)
		if pl.ClientEntry.URL != "" && mutated("init-http-after-silent") {
			continue
		}
		if t.Client.After != "" && !trustsFolder(ExpandHome(t.Client.AfterDone, pl.home), pl.project) {
			say(t.Client.Name, strings.ReplaceAll(t.Client.After, "{project}", pl.project))
		}
	}
}

// trustsFolder says whether the trusted-folders file at path (Gemini CLI's: a JSON object of
// path -> TRUST_FOLDER, TRUST_PARENT or DO_NOT_TRUST) trusts dir: a TRUST_FOLDER at dir or above
// it, or a TRUST_PARENT naming a folder whose parent is, and no DO_NOT_TRUST at dir. No file, a
// file that does not read as such an object: not trusted (the note is said).
func trustsFolder(path, dir string) bool {
	if path == "" || dir == "" || mutated("init-trust-note-always") {
		return false
	}
	b, err := ReadConfigFile(path)
	if err != nil {
		return false
	}
	var rules map[string]string
	if json.Unmarshal(b, &rules) != nil {
		return false
	}
	within := func(d, root string) bool {
		rel, err := filepath.Rel(root, d)
		return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
	}
	trusted := false
	for p, v := range rules {
		p = filepath.Clean(p)
		switch v {
		case "DO_NOT_TRUST":
			if p == filepath.Clean(dir) {
				return false
			}
		case "TRUST_FOLDER":
			trusted = trusted || within(dir, p)
		case "TRUST_PARENT":
			trusted = trusted || within(dir, filepath.Dir(p))
		}
	}
	return trusted
}

// reportHTTP tells how the HTTP entry was checked, and what to start so clients can reach it.
func (pl *Plan) reportHTTP(w io.Writer, res *Written) {
	e := pl.ClientEntry
	if p := res.HTTPProbe; p != nil {
		fmt.Fprintf(w, "checked: the server at %s answers MCP in %d ms, with the tools %s\n", e.URL, p.Elapsed.Milliseconds(), p.ToolList())
		if !pl.only {
			how := "without --scheme init configures only the clients"
			if pl.wizard {
				how = "for its clients alone, run init again and choose that first"
			}
			fmt.Fprintf(w, "note: it runs the policy it was started with; %s takes effect where serve is started with it (%s)\n", pl.PolicyPath, how)
		}
	} else if res.HTTPDown != "" {
		why := strings.TrimPrefix(res.HTTPDown, ErrNotRunning.Error()) // " (addr: why)"
		fmt.Fprintf(w, "note: nothing answers at %s yet%s; the client entries point there\n", e.URL, why)
	}
	token := ""
	if e.TokenEnv != "" {
		// named even when it is serve's own variable: run where it is not set, that line started
		// a serve that checks no token, and the clients' token hid it (trial36 F3)
		token = "MCPSANDBOX_TOKEN=\"$" + e.TokenEnv + "\" "
	}
	host := strings.TrimPrefix(strings.TrimPrefix(e.URL, "http://"), "https://")
	host, _, _ = strings.Cut(host, "/")
	if pl.only && pl.wizard {
		fmt.Fprintln(w, "it runs the policy it was started with: init wrote no policy")
	} else if pl.only {
		fmt.Fprintln(w, "it runs the policy it was started with: init wrote no policy (give --scheme to write one)")
	} else {
		fmt.Fprintf(w, "serve it with: %smcpsandbox serve --policy %s --http %s\n", token, pl.PolicyPath, host)
	}
	if e.TokenEnv != "" && pl.only && !mutated("init-http-running-token-wording") {
		// that serve runs already, maybe on another machine, with a token of its own: "where
		// serve starts" was this init's advice for a serve it wrote the policy of (trial40 F10)
		fmt.Fprintf(w, "your clients read the token from $%s: set it where they start (the configs hold only its name) to the token the server at %s was started with\n", e.TokenEnv, e.URL)
	} else if e.TokenEnv != "" {
		fmt.Fprintf(w, "your clients read the token from $%s: set it where they start (the configs hold only its name), and where serve starts: without it serve checks no token and every local process can call it\n", e.TokenEnv)
	}
}

// DescribeWrite is one "wrote" line: the link written through, the backup, the owner kept.
func DescribeWrite(r WriteResult) string {
	s := "wrote " + r.Path
	if r.Linked() {
		s += " (through the link, to " + r.Target + ")"
	}
	if r.Backup != "" {
		s += "; the old file is at " + r.Backup
	}
	if r.Owner != "" {
		s += "; owner " + r.Owner + " kept"
	}
	return s
}

// initPolicyAdvice is the refusal's way to give clients the policy already at path as it is, when
// it is one: init --policy with the same clients (trial22: a second setup for one more client
// read as needing --force, which replaces the hand-edited policy), and the flags of this init
// that apply to it (o.Carry): where the entries go, whether they are only printed, what they run.
func initPolicyAdvice(path string, o PlanOptions) string {
	if len(o.Clients) == 0 && !o.Print || mutated("init-policy-refusal-advice") {
		return ""
	}
	carry := o.Carry
	if mutated("init-policy-advice-flags") {
		carry = nil
	}
	cmd := InitPolicyCommand(path, o.Clients, carry)
	if cmd == "" {
		return ""
	}
	what := "to add these clients to that policy as it is"
	if len(o.Clients) == 0 {
		what = "to print the entry of that policy as it is"
	}
	return "; or, " + what + ": " + cmd
}

// InitPolicyCommand is the init command that gives clients the policy at path as it is (the
// words of carry added: --print, --project ...), or "" when no policy loads from there.
func InitPolicyCommand(path string, clients, carry []string) string {
	if _, err := policy.Load(path); path == "" || err != nil {
		return ""
	}
	cmd := "mcpsandbox init --policy " + shellword.Quote(path)
	for _, c := range clients {
		cmd += " --client " + shellword.Quote(c)
	}
	for _, w := range carry {
		cmd += " " + w
	}
	return cmd + " --yes"
}

func derefProbe(p *Probe) []Probe {
	if p == nil {
		return nil
	}
	return []Probe{*p}
}

// quoteAll is each of ss quoted, comma-separated, at most five and a count of the rest.
func quoteAll(ss []string) string {
	var q []string
	for i, s := range ss {
		if i == 5 {
			q = append(q, fmt.Sprintf("and %d more", len(ss)-5))
			break
		}
		q = append(q, strconv.Quote(s))
	}
	return strings.Join(q, ", ")
}
