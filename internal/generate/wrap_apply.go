package generate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/mcpsandbox/mcpsandbox/internal/lazy"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// WrapOptions are what init --wrap needs besides the entries.
type WrapOptions struct {
	Scheme    WrapScheme
	Binary    string   // the mcpsandbox binary the wrapped entries run, absolute
	PolicyDir string   // where the policies go (WrapScheme.PolicyDir)
	Parent    []string // the environment the clients run in: the proof starts each entry with what its client gives it
	Timeout   time.Duration
}

// WrapOutcome is what became of one entry.
type WrapOutcome struct {
	Server WrapServer
	Record WrapRecord
	Reused bool   // the policy was one an earlier init --unwrap left, for this entry
	Probe  Probe  // the wrapped entry's start check
	Err    error  // not wrapped (or put back): why
	Hint   string // wrapped: paths its arguments or env name that its policy hides ("" = none)
	// Passed: policies an earlier init --unwrap left under this server's name, written for
	// another entry (another project's server of the same name): not used, each with why.
	Passed []PassedPolicy
}

// WrapEntries rewrites each entry to run through mcpsandbox wrap, one write per config file (backed up,
// atomic, refused if another program changed the file meanwhile): a policy and a record for each,
// then the entry, then the proof — the entry as now written, started as its client would start
// it, must answer MCP initialize and tools/list. An entry whose proof fails is put back as it was
// (a second write of that file) and its policy and record removed; its outcome says why.
func WrapEntries(ctx context.Context, o WrapOptions, servers []WrapServer) ([]WrapOutcome, []WriteResult, error) {
	var outs []WrapOutcome
	var files []WriteResult
	var paths []string
	for _, s := range servers {
		if !slices.Contains(paths, s.Target.Path) {
			paths = append(paths, s.Target.Path)
		}
	}
	for _, p := range paths {
		var group []WrapServer
		for _, s := range servers {
			if s.Target.Path == p {
				group = append(group, s)
			}
		}
		got, w, err := wrapFile(ctx, o, p, group)
		outs, files = append(outs, got...), append(files, w...)
		if err != nil {
			return outs, files, err
		}
	}
	return outs, files, nil
}

// wrapFile wraps the entries of one config file.
func wrapFile(ctx context.Context, o WrapOptions, path string, group []WrapServer) ([]WrapOutcome, []WriteResult, error) {
	src, existed, err := readConfig(path)
	if err != nil || !existed {
		return nil, nil, errors.Join(err, errNoFile(existed, path))
	}
	cur := src
	var outs []WrapOutcome
	for _, s := range group {
		out := WrapOutcome{Server: s}
		cur, out.Err = wrapOne(o, cur, &out)
		outs = append(outs, out)
	}
	if bytes.Equal(cur, src) {
		return outs, nil, nil
	}
	ch := FileChange{Label: group[0].Target.Client.Name, Path: path, Old: src, New: cur, Existed: true, Mode: 0o644, DeferPrune: true}
	if ch.BackupDir, err = backupDirFor(group[0].Target); err == nil {
		var written []WriteResult
		if written, err = Apply([]FileChange{ch}); err == nil {
			outs, written, err = proveWrapped(ctx, o, path, outs, written)
			return outs, settleBackups(path, src, written), err
		}
	}
	for i := range outs { // nothing was written: take back the policies and records
		if outs[i].Err == nil {
			dropWrap(outs[i])
			outs[i].Err = err
		}
	}
	return outs, nil, err
}

// settleBackups: when every entry's proof failed and the file was put back byte for byte, the
// two backed-up writes of this run (the wrapped file, then the one putting it back) changed
// nothing, and their two backups (a copy of the file as it is, and the wrapped state the user
// never had) are removed with them: a failed init --wrap leaves the config and its backups as
// they were (neither write pruned older backups). Otherwise what was written stands, and the
// file's older backups are pruned now.
func settleBackups(path string, src []byte, written []WriteResult) []WriteResult {
	if now, err := ReadConfigFile(path); err != nil || !bytes.Equal(now, src) || mutated("init-wrap-failed-backups") {
		for _, w := range written {
			PruneBackups(w)
		}
		return written
	}
	for _, w := range written {
		if w.Backup != "" {
			os.Remove(w.Backup)
		}
	}
	return nil
}

func errNoFile(existed bool, path string) error {
	if existed {
		return nil
	}
	return fmt.Errorf("%s does not exist: there is no entry to wrap", path)
}

// wrapOne writes the entry's policy and record and returns the config text with the entry
// wrapped (or cur and why not).
func wrapOne(o WrapOptions, cur []byte, out *WrapOutcome) ([]byte, error) {
	s := out.Server
	if s.Skip != "" {
		return cur, errors.New(s.Skip)
	}
	start, end, found, err := locateEntry(s.Target.Client.Format, cur, s.Keys)
	switch {
	case err != nil:
		return cur, &ConfigError{Path: s.Target.Path, Err: err}
	case !found || !bytes.Equal(cur[start:end], s.Raw):
		return cur, fmt.Errorf("%s changed while init was running (another program wrote it): run init --wrap again", s.Target.Path)
	}
	pol, reuse, passed := wrapPolicyPath(o.PolicyDir, s)
	out.Passed = passed
	wrapped, err := wrapEntry(s.Target.Client.Format, s.Raw, o.Binary, o.Scheme.Args(pol, s.Command, s.Args))
	if err == nil && s.Target.Client.Format == "toml" {
		err = s.Target.Client.checkWrapTOML(cur, splice(cur, start, end, string(wrapped)), s.Name, o.Binary, o.Scheme.Args(pol, s.Command, s.Args))
	}
	if err != nil {
		return cur, fmt.Errorf("rewrite %q in %s: %w", s.Name, s.Target.Path, err)
	}
	out.Reused = reuse
	out.Record = WrapRecord{Client: s.Target.Client.ID, Scope: s.Target.Scope, Format: s.Target.Client.Format, Config: s.Target.Path,
		Keys: s.Keys, Name: s.Name, Policy: pol, Original: string(s.Raw), Wrapped: string(wrapped), PolicyCreated: !reuse}
	if !reuse {
		text, err := o.Scheme.RenderPolicy(s, pol)
		if err == nil {
			err = createExclusive(pol, text, 0o644)
		}
		if err != nil {
			return cur, err
		}
	}
	if err := saveRecord(&out.Record); err != nil {
		dropWrap(*out)
		return cur, err
	}
	return splice(cur, start, end, string(wrapped)), nil
}

// wrapEntry rewrites the entry's bytes in the config's format.
func wrapEntry(format string, raw []byte, bin string, args []string) ([]byte, error) {
	if format == "toml" {
		return wrapEntryTOML(raw, bin, args)
	}
	return wrapEntryJSON(raw, bin, args)
}

// dropWrap removes what wrapOne wrote for an entry that ends up not wrapped.
func dropWrap(o WrapOutcome) {
	if o.Record.File != "" {
		os.Remove(o.Record.File)
	}
	if o.Record.PolicyCreated && o.Record.Policy != "" {
		os.Remove(o.Record.Policy)
	}
}

// proveWrapped starts every entry wrapped in the file, as written there, as its client would;
// those that do not answer are put back.
func proveWrapped(ctx context.Context, o WrapOptions, path string, outs []WrapOutcome, written []WriteResult) ([]WrapOutcome, []WriteResult, error) {
	var failed []WrapRecord
	for i := range outs {
		if outs[i].Err != nil {
			continue
		}
		outs[i].Probe, outs[i].Err = proveEntry(ctx, o, outs[i])
		if outs[i].Err != nil {
			failed = append(failed, outs[i].Record)
		}
	}
	for i := range outs {
		if outs[i].Err == nil {
			// started, and may still fail at its first call on a path it cannot see
			outs[i].Hint = strings.TrimSuffix(strings.TrimPrefix(pathArgsHint(outs[i].Server, o.Scheme, outs[i].Record.Policy), " ("), ")")
		}
	}
	if len(failed) == 0 {
		return outs, written, nil
	}
	res, back, err := unwrapFile(path, failed, false, true)
	written = append(written, back...)
	for i := range outs {
		if outs[i].Err == nil || outs[i].Record.File == "" {
			continue
		}
		if j := slices.IndexFunc(res, func(u UnwrapOutcome) bool { return u.Record.File == outs[i].Record.File }); j >= 0 && res[j].Err != nil {
			outs[i].Err = fmt.Errorf("%w; and putting the entry back failed: %v (its original is in %s)", outs[i].Err, res[j].Err, outs[i].Record.File)
			continue
		}
		// The policy stays (the record goes): widened, it is the one the next init --wrap of
		// this server uses.
		os.Remove(outs[i].Record.File)
		// the paths its arguments name first: the likelier cause, which init knows (trial39 F6)
		outs[i].Err = fmt.Errorf("%w\nthe entry was put back as it was; its policy stays: %s%s%s — widen it and run init --wrap %s again, which uses it",
			outs[i].Err, outs[i].Record.Policy, pathArgsHint(outs[i].Server, o.Scheme, outs[i].Record.Policy),
			firstStartHint(outs[i].Server, outs[i].Err, o.Scheme, outs[i].Record.Policy), outs[i].Server.Name)
	}
	return outs, written, err
}

// firstStartHint says what a server started by a package runner needs the first time: its
// registry, unless the client's cache holds it (wrap seeds the server's cache from it). Not
// when the failure already says it: wrap's own hint, in what the server said (the same hint
// twice in a row read as two problems).
// Nor when the policy already lets the server reach them (network = true, or a list naming
// every one): then the registry was not what it lacked.
func firstStartHint(s WrapServer, failure error, scheme WrapScheme, policyFile string) string {
	registry := map[string][]string{"npx": {"registry.npmjs.org"}, "uvx": {"pypi.org", "files.pythonhosted.org"}}[strings.TrimSuffix(filepath.Base(s.Command), ".cmd")]
	if registry == nil {
		return ""
	}
	hosts := `["` + strings.Join(registry, `", "`) + `"]`
	if failure != nil && strings.Contains(failure.Error(), "needs network = "+hosts) && !mutated("init-wrap-hint-twice") {
		return ""
	}
	// wrap refused its policy before the server ran (the audit log in wrap.read, ...): the
	// registry was not what it lacked, and the hint read as the reason (trial36 F1)
	if failure != nil && strings.Contains(failure.Error(), "refusing to wrap: ") && !mutated("init-wrap-hint-refused") {
		return ""
	}
	if policyReaches(policyFile, string(scheme), registry) && !mutated("init-wrap-hint-reached") {
		return ""
	}
	return fmt.Sprintf(" (a server %s has not fetched before needs network = %s for its first start)", filepath.Base(s.Command), hosts)
}

// proveEntry reads the wrapped entry back from the file and starts it with the environment its
// client gives it: MCP initialize and tools/list must answer.
func proveEntry(ctx context.Context, o WrapOptions, out WrapOutcome) (Probe, error) {
	if mutated("init-wrap-no-proof") {
		return Probe{}, nil
	}
	s := out.Server
	src, _, err := readConfig(s.Target.Path)
	if err != nil {
		return Probe{}, err
	}
	list, err := o.Scheme.ListServers(s.Target, src, nil)
	if err != nil {
		return Probe{}, err
	}
	i := slices.IndexFunc(list, func(w WrapServer) bool { return slices.Equal(w.Keys, s.Keys) })
	if i < 0 {
		return Probe{}, fmt.Errorf("%q is gone from %s after writing it", s.Name, s.Target.Path)
	}
	w := list[i]
	// What is started must be the wrapped entry: an entry that answers MCP proves nothing of the
	// sandbox if it is the server's own command still (atk33 F4).
	want := o.Scheme.Args(out.Record.Policy, s.Command, s.Args)
	if (w.Command != o.Binary || !slices.Equal(w.Args, want)) && !mutated("init-wrap-proof-unwrapped") {
		return Probe{}, fmt.Errorf("%q as %s now holds it is not the wrapped entry (it runs %s): edit it by hand", s.Name, s.Target.Path, w)
	}
	e := ServerEntry{Command: w.Command, Args: w.Args}
	p, err := StartCheck(ctx, e, w.ProofEnv(o.Parent), nil, o.Timeout)
	if err != nil {
		var se *StartError
		if errors.As(err, &se) {
			se.Run = ProofRun{Who: s.Target.Client.Name, How: s.Target.Client.describeInherit() + " and the entry's env"}
		}
		return Probe{}, err
	}
	p.Env = s.Target.Client.Name
	return p, nil
}

// envRefs are the variable references clients expand in an entry's env values: ${NAME},
// ${env:NAME} and ${NAME:-default}.
var envRefs = lazy.Regexp(`\$\{(?:env:)?([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}`)

// ProofEnv is the environment the client starts the entry with, when it runs in parent: its own
// inheritance rule, then the entry's env (its references expanded from parent) and, for Codex,
// the variables env_vars names.
func (s WrapServer) ProofEnv(parent []string) []string {
	env := s.Target.Client.ServerEnv(parent, ServerEntry{})
	for _, name := range s.EnvNames {
		v, ok := s.Env[name]
		if ok {
			v = envRefs().ReplaceAllStringFunc(v, func(ref string) string {
				m := envRefs().FindStringSubmatch(ref)
				if val, ok := lookupEnv(parent, m[1]); ok && val != "" {
					return val
				}
				return m[2]
			})
		} else if v, ok = lookupEnv(parent, name); !ok {
			continue
		}
		env = setEnv(env, name, v)
	}
	return env
}

// backupDirFor is where a target's backups go: outside the project for a project's file.
func backupDirFor(t Target) (string, error) {
	if t.Scope == "project" {
		return ProjectBackupDir()
	}
	return "", nil
}

// UnwrapOutcome is what became of one wrapped entry.
type UnwrapOutcome struct {
	Record WrapRecord
	Err    error // not restored: why
}

// Unwrap restores each recorded entry byte for byte, one write per config file (backed up,
// atomic). An entry that changed since init --wrap wrote it is left alone unless force is set;
// one that is gone is reported and its record kept. Restored entries' records are removed; their
// policies stay (a later init --wrap of the same server uses them again).
func Unwrap(recs []WrapRecord, force bool) ([]UnwrapOutcome, []WriteResult, error) {
	var outs []UnwrapOutcome
	var files []WriteResult
	var paths []string
	for _, r := range recs {
		if !slices.Contains(paths, r.Config) {
			paths = append(paths, r.Config)
		}
	}
	for _, p := range paths {
		var group []WrapRecord
		for _, r := range recs {
			if r.Config == p {
				group = append(group, r)
			}
		}
		got, w, err := unwrapFile(p, group, force, false)
		outs, files = append(outs, got...), append(files, w...)
		if err != nil {
			return outs, files, err
		}
		for _, u := range got {
			if u.Err == nil {
				os.Remove(u.Record.File)
			}
		}
	}
	return outs, files, nil
}

// unwrapFile puts the recorded entries of one config back.
func unwrapFile(path string, recs []WrapRecord, force, deferPrune bool) ([]UnwrapOutcome, []WriteResult, error) {
	src, existed, err := readConfig(path)
	if err != nil || !existed {
		return nil, nil, errors.Join(err, errNoFile(existed, path))
	}
	cur := src
	var outs []UnwrapOutcome
	for _, r := range recs {
		u := UnwrapOutcome{Record: r}
		start, end, found, err := locateEntry(r.Format, cur, r.Keys)
		switch {
		case err != nil:
			u.Err = &ConfigError{Path: path, Err: err}
		case !found:
			u.Err = fmt.Errorf("%s is gone: nothing to restore (its original stays in %s)", r, r.File)
		case !sameEntry(r.Format, cur[start:end], []byte(r.Wrapped)) && !force && !mutated("init-unwrap-changed") &&
			(!onlyWrapFlags(r.Format, cur[start:end], []byte(r.Wrapped)) || mutated("init-unwrap-wrap-flags")):
			u.Err = fmt.Errorf("%s changed since init --wrap wrote it (%s): restoring it would drop that change. Look at it, then run init --unwrap --force to restore the original (kept in %s)", r, entryChange(r.Format, cur[start:end], []byte(r.Wrapped)), r.File)
		case r.Format == "toml":
			next := splice(cur, start, end, r.Original)
			if u.Err = (Client{Key: r.Keys[0]}).checkRestoredTOML(cur, next, r.Keys[len(r.Keys)-1], r.Original); u.Err == nil {
				cur = next
			}
		default:
			cur = splice(cur, start, end, r.Original)
		}
		outs = append(outs, u)
	}
	if bytes.Equal(cur, src) {
		return outs, nil, nil
	}
	ch := FileChange{Label: path, Path: path, Old: src, New: cur, Existed: true, Mode: 0o644, DeferPrune: deferPrune}
	if recs[0].Scope == "project" {
		if ch.BackupDir, err = ProjectBackupDir(); err != nil {
			return outs, nil, err
		}
	}
	written, err := Apply([]FileChange{ch})
	if err != nil {
		for i := range outs {
			if outs[i].Err == nil {
				outs[i].Err = err
			}
		}
		return outs, nil, err
	}
	return outs, written, nil
}

// sameEntry reports whether the entry is still the one init --wrap wrote: the same bytes, or the
// same value written differently (Claude Code re-renders all of ~/.claude.json whenever it saves
// it: its own indentation, one array item a line).
func sameEntry(format string, cur, wrapped []byte) bool {
	if bytes.Equal(cur, wrapped) {
		return true
	}
	var a, b any
	if format == "toml" {
		var ma, mb map[string]any
		if _, err := decodeTOML(cur, &ma); err != nil {
			return false
		}
		if _, err := decodeTOML(wrapped, &mb); err != nil {
			return false
		}
		a, b = ma, mb
	} else if decodeJSONC(cur, &a) != nil || decodeJSONC(wrapped, &b) != nil {
		return false
	}
	return reflect.DeepEqual(a, b)
}

// decodeEntry is an entry's value: its members.
func decodeEntry(format string, b []byte) (map[string]any, bool) {
	var m map[string]any
	if format == "toml" {
		if _, err := decodeTOML(b, &m); err != nil {
			return nil, false
		}
		// the entry's tables decode under their keys: its own is the one table in it
		for len(m) == 1 {
			var inner map[string]any
			for _, v := range m {
				inner, _ = v.(map[string]any)
			}
			if inner == nil || inner["command"] != nil || inner["args"] != nil {
				if inner != nil {
					m = inner
				}
				break
			}
			m = inner
		}
		return m, true
	}
	return m, decodeJSONC(b, &m) == nil
}

// wrapArgsCore is a wrapped entry's args without wrap's own flags before "--" other than its
// policy (--explain-denials, --log-level …): [scheme, "--policy", P, "--", command, args…].
func wrapArgsCore(v any) ([]string, bool) {
	l, ok := v.([]any)
	if !ok || len(l) == 0 {
		return nil, false
	}
	var a []string
	for _, x := range l {
		s, ok := x.(string)
		if !ok {
			return nil, false
		}
		a = append(a, s)
	}
	dd := slices.Index(a, "--")
	if dd < 0 {
		return nil, false
	}
	pol := ""
	for i := 1; i < dd; i++ {
		switch {
		case (a[i] == "--policy" || a[i] == "-p") && i+1 < dd:
			pol = a[i+1]
		case strings.HasPrefix(a[i], "--policy="):
			pol = strings.TrimPrefix(a[i], "--policy=")
		}
	}
	return append([]string{a[0], "--policy", pol}, a[dd:]...), true
}

// onlyWrapFlags reports whether the entry differs from the one init --wrap wrote only in wrap's
// own flags before "--" (init's own advice: add --explain-denials): no change to the server, and
// restoring the original drops nothing of the server's (trial36 F4).
func onlyWrapFlags(format string, cur, wrapped []byte) bool {
	a, okA := decodeEntry(format, cur)
	b, okB := decodeEntry(format, wrapped)
	if !okA || !okB {
		return false
	}
	ca, okA := wrapArgsCore(a["args"])
	cb, okB := wrapArgsCore(b["args"])
	if !okA || !okB || !slices.Equal(ca, cb) {
		return false
	}
	a, b = maps.Clone(a), maps.Clone(b)
	delete(a, "args")
	delete(b, "args")
	return reflect.DeepEqual(a, b)
}

// entryChange names what changed in an entry since init --wrap wrote it: its members added,
// removed or changed (command and args shown; other values, env's secrets among them, not).
func entryChange(format string, cur, wrapped []byte) string {
	a, okA := decodeEntry(format, cur)
	b, okB := decodeEntry(format, wrapped)
	if !okA || !okB {
		return "it no longer reads as an entry"
	}
	var says []string
	keys := slices.Collect(maps.Keys(a))
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		va, inA := a[k]
		vb, inB := b[k]
		switch {
		case !inB:
			says = append(says, k+" added")
		case !inA:
			says = append(says, k+" removed")
		case reflect.DeepEqual(va, vb):
		case k == "command" || k == "args":
			says = append(says, k+" now "+jsonText(va)+", was "+jsonText(vb))
		default:
			says = append(says, k+" changed")
		}
	}
	if len(says) == 0 {
		return "its layout only"
	}
	return strings.Join(says, "; ")
}

// policyReaches says whether the wrap policy at path lets its server reach every one of hosts:
// its section's network is true, or a list naming each (exactly as written). A policy that does
// not read says no.
func policyReaches(path, section string, hosts []string) bool {
	var doc map[string]any
	if path == "" || section == "" {
		return false
	}
	src, err := ReadConfigFile(path)
	if err != nil {
		return false
	}
	if _, err := decodeTOML(src, &doc); err != nil {
		return false
	}
	sec, _ := doc[section].(map[string]any)
	switch n := sec["network"].(type) {
	case bool:
		return n
	case []any:
		for _, h := range hosts {
			if !slices.ContainsFunc(n, func(v any) bool { s, _ := v.(string); return strings.EqualFold(s, h) }) {
				return false
			}
		}
		return true
	}
	return false
}

// pathArgsHint names the paths the server's arguments give (an existing absolute path, as
// server-filesystem's directories) that its policy neither lets it read nor write: the sandbox
// hides them, and such a server ends with "Cannot access directory …". "" when none.
func pathArgsHint(s WrapServer, scheme WrapScheme, policyFile string) string {
	if mutated("init-wrap-path-hint") {
		return ""
	}
	var doc map[string]any
	src, err := ReadConfigFile(policyFile)
	if err != nil {
		return ""
	}
	if _, err := decodeTOML(src, &doc); err != nil {
		return ""
	}
	sec, _ := doc[string(scheme)].(map[string]any)
	var open []string
	for _, k := range []string{"read", "write"} {
		l, _ := sec[k].([]any)
		for _, v := range l {
			if p, ok := v.(string); ok {
				open = append(open, filepath.Clean(p))
			}
		}
	}
	var hidden []string
	named := map[string]string{} // a hidden path from the entry's env: its variable (trial34 F2)
	cands := slices.Clone(s.Args)
	for _, k := range slices.Sorted(maps.Keys(s.Env)) {
		if v := s.Env[k]; filepath.IsAbs(v) && !mutated("init-wrap-path-hint-env") {
			cands = append(cands, v)
			named[filepath.Clean(v)] = k
		}
	}
	for _, a := range cands {
		if !filepath.IsAbs(a) || slices.Contains(hidden, filepath.Clean(a)) {
			continue
		}
		if _, err := os.Stat(a); err != nil {
			// a file the server will make (MEMORY_FILE_PATH=~/memory.json): its directory
			if _, err := os.Stat(filepath.Dir(a)); err != nil || named[filepath.Clean(a)] == "" {
				continue
			}
		}
		a = filepath.Clean(a)
		if !slices.ContainsFunc(open, func(o string) bool {
			return a == o || strings.HasPrefix(a, strings.TrimSuffix(o, string(filepath.Separator))+string(filepath.Separator))
		}) {
			hidden = append(hidden, a)
		}
	}
	if len(hidden) == 0 {
		return ""
	}
	// a home (or a directory holding one) is not a path to hand a server: its keys and
	// configuration, the audit log; wrap refuses a read of the log's directory (trial33 F5: the
	// hint said read = [HOME], and wrap then refused it with a fix that did not help)
	var homes, plain, q, own []string
	ownFile := ""
	for _, h := range hidden {
		// what the hint would open: an env value's directory (a file the server makes there,
		// MEMORY_FILE_PATH), or the value itself when it is a directory (HOME_DIR=~/docs); that
		// is what is judged against the homes (trial36 F1: ~/memory.json hinted read = [~])
		open, judged, k := h, h, named[h]
		if fi, err := os.Stat(h); k != "" && (err != nil || !fi.IsDir() || mutated("init-wrap-path-hint-env-home")) {
			open = filepath.Dir(h)
		}
		if !mutated("init-wrap-path-hint-env-home") {
			judged = open
		}
		if reach := policy.HomeReach(policy.RealPath(judged)); reach != "" && !mutated("init-wrap-path-hint-home") {
			if k != "" && open != h {
				// a file directly in a home (or its dot directories): the variable moves
				own, ownFile = append(own, fmt.Sprintf("%s (in %s), whose directory %s", h, k, reach)), filepath.Base(h)
				continue
			}
			homes = append(homes, h+" ("+reach+")")
			continue
		}
		if k != "" {
			plain, q = append(plain, h+" (in "+k+")"), append(q, fmt.Sprintf("%q", open))
			continue
		}
		plain, q = append(plain, h), append(q, fmt.Sprintf("%q", h))
	}
	var says []string
	if len(own) > 0 {
		says = append(says, fmt.Sprintf("its environment names %s: a server is not given a home whole (its keys, its configuration, the audit log); "+
			"point the variable at a file in a directory of its own (e.g. ~/mcp-data/%s/%s), create that directory and add it to write",
			strings.Join(own, ", "), s.Name, ownFile))
	}
	if len(q) > 0 {
		says = append(says, fmt.Sprintf("its arguments or environment name %s, which the sandbox hides from it: add them to read = [%s] to let it read them, or to write to let it change them",
			strings.Join(plain, ", "), strings.Join(q, ", ")))
	}
	if len(homes) > 0 {
		says = append(says, fmt.Sprintf("its arguments or environment name %s: a server is not given a home whole (its keys, its configuration, the audit log); "+
			"point the server's arguments at the project directories it needs, then add those to read or write", strings.Join(homes, ", ")))
	}
	return " (" + strings.Join(says, "; ") + ")"
}

// UnwrappedCommand is what a wrapped entry runs after "--" in its args: the server's own command
// and arguments (nil when its args hold none).
func (s WrapServer) UnwrappedCommand() []string {
	dd := slices.Index(s.Args, "--")
	if !s.Wrapped || dd < 0 || dd+1 >= len(s.Args) {
		return nil
	}
	return s.Args[dd+1:]
}

// UnwrapFromArgs takes wrapped entries whose record is gone (the policy directory removed, a new
// machine with synced dotfiles) out of wrap: command and args become what follows "--" in their
// args; every other member, comment and space stays. Without it such an entry was stuck: wrap
// refused its missing policy, init --wrap said it was wrapped, init --unwrap that nothing was
// (trial36 F2). errs[i] is why servers[i] was not restored.
func UnwrapFromArgs(servers []WrapServer) ([]error, []WriteResult, error) {
	errs := make([]error, len(servers))
	var files []WriteResult
	done := map[string]bool{}
	for _, first := range servers {
		path := first.Target.Path
		if done[path] {
			continue
		}
		done[path] = true
		src, existed, err := readConfig(path)
		if err != nil || !existed {
			return errs, files, errors.Join(err, errNoFile(existed, path))
		}
		cur := src
		for i, s := range servers {
			if s.Target.Path != path {
				continue
			}
			inner := s.UnwrappedCommand()
			if inner == nil {
				errs[i] = fmt.Errorf("%q in %s: its args name no command after \"--\": set its command and args by hand", s.Name, path)
				continue
			}
			start, end, found, err := locateEntry(s.Target.Client.Format, cur, s.Keys)
			switch {
			case err != nil:
				errs[i] = &ConfigError{Path: path, Err: err}
				continue
			case !found || !bytes.Equal(cur[start:end], s.Raw):
				errs[i] = fmt.Errorf("%s changed while init was running (another program wrote it): run init again", path)
				continue
			}
			out, err := wrapEntry(s.Target.Client.Format, s.Raw, inner[0], inner[1:])
			if err == nil && s.Target.Client.Format == "toml" {
				err = s.Target.Client.checkWrapTOML(cur, splice(cur, start, end, string(out)), s.Name, inner[0], inner[1:])
			}
			if err != nil {
				errs[i] = fmt.Errorf("rewrite %q in %s: %w", s.Name, path, err)
				continue
			}
			cur = splice(cur, start, end, string(out))
		}
		if bytes.Equal(cur, src) {
			continue
		}
		ch := FileChange{Label: first.Target.Client.Name, Path: path, Old: src, New: cur, Existed: true, Mode: 0o644}
		if ch.BackupDir, err = backupDirFor(first.Target); err != nil {
			return errs, files, err
		}
		written, err := Apply([]FileChange{ch})
		if err != nil {
			return errs, files, err
		}
		files = append(files, written...)
	}
	return errs, files, nil
}

// Orphaned reports whether a wrapped entry has no record among recs: init --wrap's saved
// original of it is gone.
func (s WrapServer) Orphaned(recs []WrapRecord) bool {
	return s.Wrapped && !slices.ContainsFunc(recs, func(r WrapRecord) bool { return r.Name == s.Name && s.Target.Holds(r) })
}
