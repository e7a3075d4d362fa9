package generate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/mcpsandbox/mcpsandbox/internal/xdg"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// FileChange is one file init will write, with its old and new contents for the preview.
type FileChange struct {
	Label   string
	Path    string
	Old     []byte
	New     []byte
	Existed bool
	Mode    fs.FileMode
	// Summary, when set, previews the file in a few lines (a policy), with OldSummary for a diff.
	Summary, OldSummary []string
	// BackupDir is where the old file's backup goes ("" = beside it): a project's files are
	// backed up outside the project, so a backup is never committed with it.
	BackupDir string
	// Kept names the user's own keys init carried into its entry from the one it replaced
	// (--force or a yes: Gemini CLI's timeout and trust, say), for the report.
	Kept []string
	// Dropped names the keys of the replaced entry that went with it (how it started or
	// reached its server: env, cwd, headers), for the report: only the backup has them.
	Dropped []string
	// LostComments are the comments of the replaced entry that went with it (the entry is
	// rewritten whole), for the report: only the backup has them.
	LostComments []string
	// Off: a kept key switches init's entry off ("disabled": true, Codex's enabled = false): the
	// client will not start it until the user switches it on, which the report says.
	Off bool
	// AllowedTools: a kept key lists the only tools the client offers of init's server (Gemini
	// CLI's includeTools, Codex's enabled_tools; nil = none): the report names the server's
	// tools it leaves out.
	AllowedTools []string
	// Trust names the kept keys that say how far the client trusts the server (Gemini CLI's
	// trust, autoApprove, Codex's approval modes), with their values: given to the
	// server init replaced, they now apply to init's, which the report says.
	Trust []string
	// DeferPrune leaves the file's older backups in place until PruneBackups is called for the
	// write: a write that may be taken back must not push out backups first.
	DeferPrune bool
	// Lost are the settings of the old policy file that the new one changes or drops
	// (LostSettings), said before a replacement (--force, a yes, the refusal).
	Lost []string
	// SameAs names an entry of another name in the file that runs this very server (the same
	// command and arguments, or URL): nothing is added beside it, which the report says.
	SameAs string
}

// Unchanged reports whether writing would change nothing.
func (c FileChange) Unchanged() bool { return c.Existed && bytes.Equal(c.Old, c.New) }

// Preview is a diff for an existing file, the whole text for a new one.
func (c FileChange) Preview() string {
	switch {
	case c.Unchanged():
		return fmt.Sprintf("%s: %s (unchanged)\n", c.Label, c.Path)
	case c.Existed && c.Summary != nil && c.OldSummary != nil && !slices.Equal(c.Summary, c.OldSummary):
		return fmt.Sprintf("%s: %s (changed; the old file is kept as a backup)\n%s", c.Label, c.Path,
			diffBody(Diff(c.Path, strings.Join(c.OldSummary, "\n")+"\n", strings.Join(c.Summary, "\n")+"\n")))
	case c.Existed:
		return fmt.Sprintf("%s: %s (changed; the old file is kept as a backup)\n%s", c.Label, c.Path, Diff(c.Path, string(c.Old), string(c.New)))
	case c.Summary != nil:
		return fmt.Sprintf("%s: %s (new file, %d lines, commented)\n%s", c.Label, c.Path, strings.Count(string(c.New), "\n"),
			indentText(strings.Join(c.Summary, "\n")+"\n"))
	}
	return fmt.Sprintf("%s: %s (new file)\n%s", c.Label, c.Path, indentText(string(c.New)))
}

// diffBody drops a diff's file headers and hunk markers: a summary's lines speak for themselves.
func diffBody(d string) string {
	var out strings.Builder
	for _, l := range strings.SplitAfter(d, "\n") {
		if l == "" || strings.HasPrefix(l, "--- ") || strings.HasPrefix(l, "+++ ") || strings.HasPrefix(l, "@@") {
			continue
		}
		out.WriteString("  " + l)
	}
	return out.String()
}

func indentText(s string) string {
	lines := strings.SplitAfter(s, "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = "    " + l
		}
	}
	return strings.Join(lines, "")
}

// PolicyChange renders the commented policy for path.
func PolicyChange(p *policy.Policy, path string) (FileChange, error) {
	b, err := RenderPolicy(p, path)
	if err != nil {
		return FileChange{}, err
	}
	c := FileChange{Label: "policy", Path: path, New: b, Mode: 0o644, Summary: Summary(p)}
	if old, err := ReadConfigFile(path); err == nil {
		c.Old, c.Existed = old, true
		if op, err := policy.Parse(path, old); err == nil {
			c.OldSummary = Summary(op)
			c.New, c.LostComments = keptText(p, op, path, old, b)
			if was, err := RenderPolicy(op, path); err == nil && !bytes.Equal(c.Old, c.New) {
				// both rendered: a default the old file spelt out is not a change
				c.Lost = LostSettingsSpelt(was, b, old)
			}
		} else {
			c.Summary = nil // an old file that does not load: show the text diff
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return c, fmt.Errorf("read %s: %w", path, err)
	}
	return c, nil
}

// keptText is what a policy file that loads (as op) becomes: as it is when it is already the policy
// (a re-run to add a client rewrites nothing of it), else the rendered one with the old file's
// own comments carried to their keys (trial33 F8); lost are the comments that found no place.
func keptText(p, op *policy.Policy, path string, old, rendered []byte) (text []byte, lost []string) {
	if op.Hash() == p.Hash() && !mutated("init-policy-rewritten-same") {
		return old, nil
	}
	oldRendered, err := RenderPolicy(op, path)
	if err != nil {
		oldRendered = nil
	}
	carried, lost := carryComments(old, oldRendered, rendered)
	if back, err := policy.Parse(path, carried); err != nil || back.Hash() != p.Hash() {
		// a comment put where it changed the meaning: never written
		return rendered, lostComments("toml", old, rendered)
	}
	return carried, lost
}

// ProjectBackupDir is where backups of files inside a project go: $XDG_STATE_HOME/mcpsandbox/
// backups (or ~/.local/state/…), outside any project tree.
func ProjectBackupDir() (string, error) {
	dir := xdg.Dir("XDG_STATE_HOME")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("find where to keep backups of project files: %w (set XDG_STATE_HOME)", err)
		}
		dir = filepath.Join(home, ".local", "state")
	}
	return filepath.Join(dir, "mcpsandbox", "backups"), nil
}

// ConfigError is a client config init will not touch because it does not parse.
type ConfigError struct {
	Path string
	Err  error
}

func (e *ConfigError) Error() string {
	var se *SyntaxError
	if errors.As(e.Err, &se) {
		return fmt.Sprintf("%s:%d:%d: %s; the file is left untouched: fix it (or move it aside) and run init again", e.Path, se.Line, se.Col, se.Msg)
	}
	return fmt.Sprintf("%s: %v; the file is left untouched", e.Path, e.Err)
}

func (e *ConfigError) Unwrap() error { return e.Err }

// ClientChange merges the server entry into the target's config. An existing entry of the same
// name is an ErrExists unless replace is set.
func ClientChange(t Target, name string, e ServerEntry, replace bool) (FileChange, error) {
	// A config init makes is the user's alone, as the clients make theirs (Claude Code's
	// ~/.claude.json is 0600): it comes to hold servers' env values (tokens), accounts and
	// history, and clients keep the mode they find (trial32 F13). One that exists keeps its own.
	c := FileChange{Label: t.Client.Name + " (" + t.Scope + ")", Path: t.Path, Mode: 0o600}
	if mutated("init-new-config-world-readable") {
		c.Mode = 0o644
	}
	if t.Scope == "project" && !mutated("init-project-backup-beside") {
		dir, err := ProjectBackupDir()
		if err != nil {
			return c, err
		}
		c.BackupDir = dir
	}
	old, err := ReadConfigFile(t.Path)
	switch {
	case err == nil:
		c.Old, c.Existed = old, true
	case errors.Is(err, fs.ErrNotExist):
	default:
		return c, fmt.Errorf("read %s: %w", t.Path, err)
	}
	return c.Add(t, name, e, replace)
}

// Add merges one more entry into a change already planned for the same file (two scopes that
// share a file, such as claude-code and claude-code:user in ~/.claude.json).
func (c FileChange) Add(t Target, name string, e ServerEntry, replace bool) (FileChange, error) {
	cur := c.Old
	if c.New != nil {
		cur = c.New
		c.Label += ", " + t.Scope
	}
	if e.Portable {
		if err := portableOthers(t, cur, name, e); err != nil {
			return c, err
		}
	}
	merged, err := Merge(t.Client, cur, name, e, replace)
	if errors.Is(err, ErrExists) {
		// The very same entry (init run twice) is no conflict: nothing to change. The same value
		// written differently is the same entry too: a client that saves its whole config
		// re-renders it (Claude Code puts each of args' items on a line of its own), and the file
		// is then left as the client wrote it.
		// Keys the user added to it (Gemini CLI's "timeout" or "trust", Codex's
		// startup_timeout_sec) leave it the same entry too: replacing it would drop them.
		if same, err := Merge(t.Client, cur, name, e, true); err == nil && (bytes.Equal(same, cur) || sameValue(t.Client.Format, cur, same) ||
			sameWithExtras(t.Client, name, cur, same)) && sameRun(t, cur, name, e) {
			c.New = cur
			return c, nil
		}
		return c, &ExistsError{Path: t.Path, Name: name, Differs: differs(t, cur, name, e)}
	}
	if err != nil {
		return c, &ConfigError{Path: t.Path, Err: err}
	}
	// --force (given for the policy, say) replaces no entry that is already this one: the
	// user's keys in it stay, and so does the client's layout
	if replace && !bytes.Equal(merged, cur) && len(cur) > 0 && (sameValue(t.Client.Format, cur, merged) || sameWithExtras(t.Client, name, cur, merged)) && sameRun(t, cur, name, e) {
		c.New = cur
		return c, nil
	}
	if other := sameServerAs(t, cur, merged, name); other != "" && !mutated("init-same-server-twice") {
		// added by hand (claude mcp add) or by an init under another name: a second entry
		// would start a second serve, and the client would list every tool twice (trial33 F3)
		c.New, c.SameAs = cur, other
		return c, nil
	}
	c.New = merged
	if replace && len(cur) > 0 {
		kept, dropped := keptAndDropped(t, cur, merged, name)
		c.Kept, c.Dropped = append(c.Kept, kept...), append(c.Dropped, dropped...)
		if !mutated("init-force-comments-silent") {
			c.LostComments = append(c.LostComments, lostComments(t.Client.Format, cur, merged)...)
		}
		c.Off = c.Off || len(kept) > 0 && switchedOff(t, merged, name)
		c.Trust = append(c.Trust, trustKept(t, merged, name, kept)...)
		if len(kept) > 0 && c.AllowedTools == nil {
			c.AllowedTools = allowedTools(t, merged, name)
		}
	}
	return c, nil
}

// sameServerAs is the name of an entry in cur, other than name, that starts or reaches the very
// server merged's entry name does (the same command and arguments, or the same URL); "" if none,
// or if cur has an entry of that name already (a replacement).
func sameServerAs(t Target, cur, merged []byte, name string) string {
	if len(cur) == 0 {
		return ""
	}
	if _, had := rawEntry(t, cur, name); had {
		return ""
	}
	after, err := listEntries(t, merged)
	if err != nil {
		return ""
	}
	i := slices.IndexFunc(after, func(w WrapServer) bool { return w.Name == name })
	if i < 0 {
		return ""
	}
	ours := entryDoc(t, merged, after[i].Name)
	before, err := listEntries(t, cur)
	if err != nil || ours == nil {
		return ""
	}
	for _, w := range before {
		// every key that decides what runs or how, not only command and args (atk39b F1)
		if theirs := entryDoc(t, cur, w.Name); w.Name != name && theirs != nil && len(runDiff(theirs, ours)) == 0 {
			return w.Name
		}
	}
	return ""
}

// portableOthers refuses, for an entry of init --portable, any other entry of cur that runs
// mcpsandbox otherwise than init's own does (atk39b F1): in a file the team commits, an entry
// of another name with init's command and args and an env PATH, a cwd or an envFile of its own
// starts whatever that finds, and init would have called it "this very server".
func portableOthers(t Target, cur []byte, name string, e ServerEntry) error {
	if mutated("init-portable-same-transport") || len(cur) == 0 {
		return nil
	}
	ours := entryDoc(t, mustMerge(t, name, e), name)
	list, err := listEntries(t, cur)
	if err != nil || ours == nil {
		return nil // judged where the file is merged
	}
	for _, w := range list {
		if w.Name == name || !runsMcpsandbox(w.Command) {
			continue
		}
		theirs := entryDoc(t, cur, w.Name)
		if theirs == nil {
			continue
		}
		if d := runDiff(theirs, ours); len(d) > 0 {
			verb := "differs"
			if len(d) > 1 {
				verb = "differ"
			}
			return fmt.Errorf("%s: the entry %q runs mcpsandbox, but not as init --portable writes it: its %s %s (%s): "+
				"in a file a team commits that may start another program than mcpsandbox, or serve another policy. "+
				"Remove %q from the file (or make it exactly init's entry, %s), then run init again",
				t.Path, w.Name, strings.Join(d, ", "), verb, showDiff(d, theirs, ours), w.Name, showEntry(ours))
		}
	}
	return nil
}

// showDiff says, for each key of d, its value in theirs and in ours.
func showDiff(d []string, theirs, ours map[string]any) string {
	show := func(m map[string]any, k string) string {
		v, ok := m[k]
		if !ok {
			return "none"
		}
		b, err := json.Marshal(v)
		if err != nil {
			return fmt.Sprint(v)
		}
		if r := []rune(string(b)); len(r) > 120 {
			return string(r[:120]) + "…"
		}
		return string(b)
	}
	var out []string
	for _, k := range d {
		out = append(out, fmt.Sprintf("%s: %s there, %s in init's", k, show(theirs, k), show(ours, k)))
	}
	return strings.Join(out, "; ")
}

// sameRun reports whether entry name of cur runs e as init writes it: a key the carry over
// takes for the user's (one init does not know) may change what runs (atk39b F1).
func sameRun(t Target, cur []byte, name string, e ServerEntry) bool {
	theirs, ours := entryDoc(t, cur, name), entryDoc(t, mustMerge(t, name, e), name)
	return theirs != nil && ours != nil && len(runDiff(theirs, ours)) == 0
}

// mustMerge is entry e alone in a file of t's client (nil: it cannot be written there).
func mustMerge(t Target, name string, e ServerEntry) []byte {
	b, err := Merge(t.Client, nil, name, e, false)
	if err != nil {
		return nil
	}
	return b
}

// showEntry is a decoded entry as JSON, for a message.
func showEntry(m map[string]any) string {
	b, err := json.Marshal(m)
	if err != nil {
		return fmt.Sprint(m)
	}
	return string(b)
}

// ExistsError: the config already has a different server of that name.
type ExistsError struct {
	Path, Name string
	Differs    string // how: "it runs X; this one runs Y" ("" = not said)
}

func (e *ExistsError) Error() string {
	if e.Differs != "" {
		return fmt.Sprintf("%s already has a different server named %q (%s)", e.Path, e.Name, e.Differs)
	}
	return fmt.Sprintf("%s already has a different server named %q", e.Path, e.Name)
}

// differs says what the server of that name in cur runs, against the entry e (trial32 F15b: a
// conflict whose only difference was the binary's path read as another server altogether).
func differs(t Target, cur []byte, name string, e ServerEntry) string {
	list, err := listEntries(t, cur)
	if err != nil || mutated("init-conflict-unsaid") {
		return ""
	}
	i := slices.IndexFunc(list, func(w WrapServer) bool { return w.Name == name })
	if i < 0 {
		return ""
	}
	theirs, ours := list[i].String(), e.String()
	if e.URL != "" {
		ours = e.URL
	}
	if theirs == ours {
		if d := runDiff(entryDoc(t, cur, name), entryDoc(t, mustMerge(t, name, e), name)); len(d) > 0 {
			return "the same command, with another " + strings.Join(d, ", ") + ": compare them in the file"
		}
		return "the same command, with other settings: compare them in the file"
	}
	clip := func(s string) string {
		if r := []rune(s); len(r) > 200 {
			return string(r[:200]) + "…"
		}
		return s
	}
	return "it runs " + clip(theirs) + "; this one runs " + clip(ours)
}

func (e *ExistsError) Is(target error) bool { return target == ErrExists }

// Snippet is the entry as a client's config holds it, for --print.
func Snippet(c Client, name string, e ServerEntry) string {
	b, _ := Merge(c, nil, name, e, false)
	return string(b)
}

// Apply writes every change, in order, or none: when one fails, those already written are put
// back exactly as they were (Undo) and the error says so.
func Apply(cs []FileChange) ([]WriteResult, error) {
	var done []WriteResult
	for _, c := range cs {
		if c.Unchanged() {
			continue
		}
		err := c.stillAsRead()
		var r WriteResult
		if err == nil {
			r, err = writeFileBackedUp(c.Path, c.New, c.Mode, c.BackupDir, !c.DeferPrune, readAs{checked: true, existed: c.Existed, old: c.Old})
		}
		var ro *ReadOnlyError
		if c.Label == "policy" && errors.As(err, &ro) && !mutated("init-readonly-fix-unsaid") {
			ro.Alt = "give the policy another place (--policy-out PATH): --print does not write a client's config, but the policy is still written"
		}
		if err != nil {
			if uerr := UndoAll(done); uerr != nil {
				return nil, fmt.Errorf("%w; and putting back the files written before it failed: %v", err, uerr)
			}
			if len(done) > 0 {
				err = fmt.Errorf("%w (the %d file(s) written before it were put back as they were)", err, len(done))
			}
			return nil, err
		}
		done = append(done, r)
	}
	return done, nil
}

// stillAsRead refuses to write over a file that changed since it was read (a client such as
// Claude Code rewrites ~/.claude.json while it runs; the wizard may wait minutes for a yes):
// writing would drop that change.
func (c FileChange) stillAsRead() error {
	now, err := ReadConfigFile(c.Path)
	switch {
	case err == nil && c.Existed && bytes.Equal(now, c.Old):
		return nil
	case errors.Is(err, fs.ErrNotExist) && !c.Existed:
		return nil
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("read %s again before writing: %w", c.Path, err)
	}
	return errChanged(c.Path)
}

// UndoAll puts back every written file, last first.
func UndoAll(rs []WriteResult) error {
	var errs []error
	for i := len(rs) - 1; i >= 0; i-- {
		if err := Undo(rs[i]); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// sameWithExtras reports whether the config cur differs from same (cur with the entry name
// replaced by init's) only by keys cur's entry holds beside every key and value of init's: the
// user's own settings of the server init wrote.
func sameWithExtras(c Client, name string, cur, same []byte) bool {
	if mutated("init-same-entry-extra-keys") {
		return false
	}
	decode := func(b []byte) (map[string]any, bool) {
		var doc map[string]any
		if c.Format == "toml" {
			_, err := decodeTOML(b, &doc)
			return doc, err == nil
		}
		return doc, decodeJSONC(bytes.TrimPrefix(b, []byte("\uFEFF")), &doc) == nil
	}
	a, ok1 := decode(cur)
	b, ok2 := decode(same)
	if !ok1 || !ok2 {
		return false
	}
	servers := func(doc map[string]any) map[string]any {
		for _, k := range c.keyPath() {
			doc, _ = doc[k].(map[string]any)
		}
		return doc
	}
	sa, sb := servers(a), servers(b)
	ea, _ := sa[name].(map[string]any)
	eb, _ := sb[name].(map[string]any)
	if ea == nil || eb == nil {
		return false
	}
	for k, v := range eb {
		if !reflect.DeepEqual(ea[k], v) {
			return false
		}
	}
	if len(ea) == len(eb) {
		return false // no key of the user's: the same value, which sameValue judges
	}
	// the keys only the file's entry has must be settings of the client (a timeout, trust),
	// not an env, cwd or envFile that changes what init's command runs (atk39b F1)
	if len(runDiff(ea, eb)) > 0 {
		return false
	}
	sa[name] = eb
	return reflect.DeepEqual(a, b)
}

// sameValue reports whether two whole config texts hold the same value (JSON/JSONC or TOML),
// whatever their layout: replacing an entry with one of the same value changes nothing.
func sameValue(format string, a, b []byte) bool {
	if mutated("init-same-entry-rerendered") {
		return false
	}
	return sameEntry(format, a, b)
}
