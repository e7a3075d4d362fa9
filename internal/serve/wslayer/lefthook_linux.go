package wslayer

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"
	"go.yaml.in/yaml/v3"
)

// lefthook's schema (lefthook.dev/configuration) changes what a hook's `run` runs and where,
// beyond the strings the config holds: a command's or a job's `root` is its working directory
// (a group's applies to its jobs), `env` sets its variables, `templates` are {name}s replaced in
// `run`, a script (`scripts:` or a job's `script:`) is a file lefthook runs as `RUNNER
// <source_dir>/<hook>/<name> ARGS` from the source dirs (.lefthook/, .lefthook-local/, or what
// `source_dir`/`source_dir_local` name), `extends` merges other config files in, `rc` is a sh
// file the installed hook sources. Read as strings from the root alone, `root: server/` + `run:
// python3 main.py` left server/main.py writable and the script files, their runners' programs
// and what they load were not read (atk48a F1, F2). lefthookRead builds the command lines
// lefthook hands sh from the repository's root (the config's directory) and the config reader
// judges them as any config's lines; each config of one root is read with the others lefthook
// merges it with (a local config's script in the main one's source_dir).

// lefthookStems are lefthook's main and local config names (without the leading dot, which
// each may have) and lefthookExts the formats it reads (its loader's; lefthook before 1.x read
// viper's, among them these).
var (
	lefthookStems = []string{"lefthook", "lefthook-local"}
	lefthookExts  = []string{".yml", ".yaml", ".json", ".jsonc", ".toml"}
)

// lefthookConfig: name is one of lefthook's config files (main or local, any format).
func lefthookConfig(name string) bool {
	ext := filepath.Ext(name)
	stem := strings.TrimPrefix(strings.TrimSuffix(name, ext), ".")
	return slices.Contains(lefthookExts, ext) && slices.Contains(lefthookStems, stem)
}

// lefthookFiles are the root's paths lefthook looks for its configs at: each stem, with and
// without the dot, in each format, and below .config (lefthook 1.11's config-dir names).
func lefthookFiles() []string {
	var out []string
	for _, stem := range lefthookStems {
		for _, ext := range lefthookExts {
			out = append(out, stem+ext, "."+stem+ext, ".config/"+stem+ext)
		}
	}
	return out
}

// Bounds of the lefthook reader: group nesting and extends hops followed (lefthook has none;
// real configs nest one or two), extends files read per root, and the command lines a run with
// several values for its templates is read as.
const (
	maxLefthookNest    = 16
	maxLefthookExtends = 64
	maxLefthookVariant = 16
)

// lefthookRead is one root's lefthook configs as lefthook merges them.
type lefthookRead struct {
	f         *follower
	by        string // the config the lines are charged to
	root      string // the repository's root: where lefthook runs from
	srcDirs   []string
	templates map[string][]string
	hooks     []lefthookHook
	rc        []string
	read      map[string]bool // config files read (extends)
	// docs are the config files read, by path; ext the files each one's extends matched, in
	// order; mains and locals the root's main and local configs read (merged: views)
	docs          map[string]map[string]any
	ext           map[string][]string
	mains, locals []string
	// budget is what maxConfigLines leaves for the lines built (templated); cut: past it
	budget int
	cut    bool
	built  map[string]bool // the lines templated, each once
}

// lefthookHook is a hook's map of one config file.
type lefthookHook struct {
	name string
	m    map[string]any
}

// lefthook reads the lefthook configs at file's root once, with the configs lefthook merges,
// and judges the command lines it runs.
func (f *follower) lefthook(file string) {
	if !lefthookConfig(filepath.Base(file)) {
		return
	}
	root := filepath.Dir(file)
	if filepath.Base(root) == ".config" {
		root = filepath.Dir(root)
	}
	if f.lefthookRoots[root] {
		return
	}
	if f.lefthookRoots == nil {
		f.lefthookRoots = map[string]bool{}
	}
	f.lefthookRoots[root] = true
	r := &lefthookRead{f: f, by: file, root: root, srcDirs: []string{".lefthook", ".lefthook-local"},
		templates: map[string][]string{}, read: map[string]bool{}, docs: map[string]map[string]any{}, ext: map[string][]string{}}
	for _, rel := range lefthookFiles() {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if regular(p) && f.g.hostConfig(p) {
			r.load(p, 0)
			if strings.Contains(filepath.Base(p), "lefthook-local") {
				r.locals = append(r.locals, p)
			} else {
				r.mains = append(r.mains, p)
			}
		}
	}
	r.views()
	if f.lefthookDocs == nil {
		f.lefthookDocs = map[string]map[string]any{}
	}
	maps.Copy(f.lefthookDocs, r.docs)
	f.configLines(file, r.lines())
}

// load reads the config file p (and what it extends) into r.
func (r *lefthookRead) load(p string, depth int) {
	if r.read[p] || len(r.read) >= maxLefthookExtends {
		return
	}
	r.read[p] = true
	b, _, err := readSmall(p, maxProgramFile)
	if err != nil || len(b) > maxParsedConfig {
		return // the strings reader fails closed for a config longer than it parses
	}
	doc := lefthookDecode(p, b)
	r.docs[p] = doc
	for _, k := range slices.Sorted(maps.Keys(doc)) {
		switch v := doc[k].(type) {
		case string:
			switch k {
			case "source_dir", "source_dir_local":
				r.srcDir(v)
			case "rc":
				r.rc = append(r.rc, v)
			}
		case map[string]any:
			if k == "templates" {
				if !mutated("workspace-lefthook-vars") {
					for n, t := range v {
						if s, ok := t.(string); ok && !slices.Contains(r.templates[n], s) {
							r.templates[n] = append(r.templates[n], s)
						}
					}
				}
				continue
			}
			if v["commands"] != nil || v["scripts"] != nil || v["jobs"] != nil || v["setup"] != nil {
				r.hooks = append(r.hooks, lefthookHook{k, v})
			}
		}
	}
	if depth < maxLefthookNest && !mutated("workspace-lefthook-loads") {
		for _, e := range lefthookStrings(doc["extends"]) {
			r.ext[p] = append(r.ext[p], r.extends(e, depth)...)
		}
	}
}

// srcDir adds a script directory the config names (from the root, as lefthook joins it): the
// directory is protected whole, as .lefthook is by name.
func (r *lefthookRead) srcDir(d string) {
	if mutated("workspace-lefthook-scripts") {
		return
	}
	d = filepath.Clean("/" + d)[1:]
	if d == "" || slices.Contains(r.srcDirs, d) {
		return
	}
	r.srcDirs = append(r.srcDirs, d)
	if p := filepath.Join(r.root, d); p != r.f.g.ws {
		r.f.add(p, r.by)
	}
}

// extends protects and reads the config files the extends entry e names (a path or a glob from
// the root): a glob's fixed directory is protected whole, a name prefix at the root by its
// prefix, as a file the call adds that matches is merged in at the next hook. It returns the
// files read, in lefthook's order.
func (r *lefthookRead) extends(e string, depth int) []string {
	f := r.f
	abs := e
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(r.root, e)
	}
	if !strings.ContainsAny(e, "*?[\\") {
		f.add(abs, r.by)
		if regular(abs) {
			r.load(abs, depth+1)
			return []string{abs}
		}
		return nil
	}
	fixed := e[:strings.IndexAny(e, "*?[\\")]
	if dir, prefix := filepath.Split(fixed); dir != "" {
		if d := filepath.Join(r.root, dir); d != f.g.ws {
			f.add(d, r.by)
		}
	} else {
		f.hookPrefix(r.root, prefix, r.by)
	}
	ms, _ := filepath.Glob(abs)
	var out []string
	for _, m := range ms {
		f.add(m, r.by)
		if regular(m) {
			r.load(m, depth+1)
			out = append(out, m)
		}
	}
	return out
}

// views adds to r's hooks those of the root's configs as lefthook merges them
// (lefthook.dev/configuration/extends): the main config, the files its extends name in order
// (each followed by those it extends), then the local config and its own extends, each over
// what came before (atk49a F2: an extended file's `root: server/` for the main config's `run:
// python3 main.py` of the same command was read apart, and server/main.py stayed writable).
// Each file's hooks are read on their own too (load). A view for each main and local config
// read (lefthook takes the first; which one is the host's), up to maxLefthookVariant.
func (r *lefthookRead) views() {
	if mutated("workspace-lefthook-merge") {
		return
	}
	mains, locals := r.mains, r.locals
	if len(mains) == 0 {
		mains = []string{""}
	}
	if len(locals) == 0 {
		locals = []string{""}
	}
	n := 0
	for _, m := range mains {
		for _, l := range locals {
			if n++; n > maxLefthookVariant {
				return
			}
			var seq []string
			if m != "" {
				seq = r.chain(m, map[string]bool{})
			}
			if l != "" {
				if m != "" && slices.Equal(lefthookStrings(r.docs[m]["extends"]), lefthookStrings(r.docs[l]["extends"])) {
					seq = append(seq, l) // lefthook applies the local extends only when they differ
				} else {
					seq = append(seq, r.chain(l, map[string]bool{})...)
				}
			}
			merged := map[string]any{}
			for _, p := range seq {
				merged = lefthookMerge(merged, r.docs[p])
			}
			for _, k := range slices.Sorted(maps.Keys(merged)) {
				if v, ok := merged[k].(map[string]any); ok && k != "templates" &&
					(v["commands"] != nil || v["scripts"] != nil || v["jobs"] != nil || v["setup"] != nil) {
					r.hooks = append(r.hooks, lefthookHook{k, v})
				}
			}
		}
	}
}

// chain is the config file p and what it extends, in the order lefthook merges them: p, then
// each extended file's chain (its own extends over it).
func (r *lefthookRead) chain(p string, seen map[string]bool) []string {
	if seen[p] || r.docs[p] == nil {
		return nil
	}
	seen[p] = true
	out := []string{p}
	for _, e := range r.ext[p] {
		out = append(out, r.chain(e, seen)...)
	}
	return out
}

// lefthookMerge is dest with src merged over it as lefthook's loader merges configs (koanf's
// maps.Merge: maps key by key, any other value replaced), with lefthook's own rules: a hook's
// jobs merged by name (the others appended), setup appended, a run's {cmd} the run it
// overrides. Neither map is changed.
func lefthookMerge(dest, src map[string]any) map[string]any {
	out := maps.Clone(dest)
	if out == nil {
		out = map[string]any{}
	}
	for k, sv := range src {
		dv := out[k]
		dl, dok := dv.([]any)
		sl, sok := sv.([]any)
		dm, dmok := dv.(map[string]any)
		sm, smok := sv.(map[string]any)
		ds, dsok := dv.(string)
		ss, ssok := sv.(string)
		switch {
		case k == "jobs" && dok && sok:
			out[k] = lefthookJobs(dl, sl)
		case k == "setup" && dok && sok:
			out[k] = slices.Concat(dl, sl)
		case k == "run" && dsok && ssok:
			out[k] = strings.ReplaceAll(ss, "{cmd}", ds)
		case dmok && smok:
			out[k] = lefthookMerge(dm, sm)
		default:
			out[k] = sv
		}
	}
	return out
}

// lefthookJobs are the jobs dest with those of src merged in: one of the same name over it,
// the others appended.
func lefthookJobs(dest, src []any) []any {
	out := slices.Clone(dest)
	at := map[string]int{}
	for i, j := range out {
		if n, ok := lefthookMap(j)["name"].(string); ok {
			at[n] = i
		}
	}
	for _, j := range src {
		m, ok := j.(map[string]any)
		if !ok {
			continue
		}
		if n, ok := m["name"].(string); ok {
			if i, ok := at[n]; ok {
				out[i] = lefthookMerge(lefthookMap(out[i]), m)
				continue
			}
		}
		out = append(out, j)
	}
	return out
}

// lines are the command lines lefthook runs for the hooks read: each command's and job's run
// (and files command) from its root with its env, each script as its runner runs it from each
// source dir, and what the script dirs hold that no entry names (run as files), the rc file sourced.
func (r *lefthookRead) lines() []string {
	var out []string
	r.budget = maxConfigLines - r.f.lines.bytes
	for _, h := range r.hooks {
		for _, n := range slices.Sorted(maps.Keys(lefthookMap(h.m["commands"]))) {
			c := lefthookMap(lefthookMap(h.m["commands"])[n])
			out = append(out, r.job(h.name, c, "", nil, 0)...)
		}
		for _, n := range slices.Sorted(maps.Keys(lefthookMap(h.m["scripts"]))) {
			c := lefthookMap(lefthookMap(h.m["scripts"])[n])
			c["script"] = n
			out = append(out, r.job(h.name, c, "", nil, 0)...)
		}
		for _, k := range []string{"setup", "jobs"} {
			if jobs, ok := h.m[k].([]any); ok {
				for _, j := range jobs {
					out = append(out, r.job(h.name, lefthookMap(j), "", nil, 0)...)
				}
			}
		}
		out = append(out, r.unnamed(h.name)...)
	}
	if r.cut {
		r.f.linesCut()
		return nil
	}
	for _, rc := range r.rc {
		if mutated("workspace-lefthook-loads") {
			break
		}
		out = append(out, "cd -- "+shQuote(r.root)+"\n. "+rc)
	}
	return out
}

// job is the command lines of a command, script or job c of hook (with the root and env of
// the groups around it): a group's jobs each.
func (r *lefthookRead) job(hook string, c map[string]any, root string, env map[string]string, depth int) []string {
	if s, ok := c["root"].(string); ok && s != "" && !mutated("workspace-lefthook-root") {
		root = s // a job's own root, else its group's (lefthook's FirstNonBlank)
	}
	if e := lefthookMap(c["env"]); len(e) > 0 && !mutated("workspace-lefthook-vars") {
		env = maps.Clone(env)
		if env == nil {
			env = map[string]string{}
		}
		for k, v := range e {
			if s, ok := v.(string); ok {
				env[k] = s
			}
		}
	}
	if g := lefthookMap(c["group"]); len(g) > 0 {
		if s, ok := g["root"].(string); ok && s != "" && !mutated("workspace-lefthook-root") {
			root = s
		}
		var out []string
		if jobs, ok := g["jobs"].([]any); ok && depth < maxLefthookNest {
			for _, j := range jobs {
				out = append(out, r.job(hook, lefthookMap(j), root, env, depth+1)...)
			}
		}
		return out
	}
	var cmds []string
	for _, k := range []string{"run", "files"} {
		if s, ok := c[k].(string); ok && s != "" {
			cmds = append(cmds, s)
		}
	}
	for _, k := range []string{"skip", "only"} {
		// a condition's `run: CMD` (skip: [{run: test -f x}]) runs too
		if l, ok := c[k].([]any); ok {
			for _, x := range l {
				if s, ok := lefthookMap(x)["run"].(string); ok && s != "" {
					cmds = append(cmds, s)
				}
			}
		}
	}
	if s, ok := c["script"].(string); ok && s != "" && !mutated("workspace-lefthook-scripts") {
		runner, _ := c["runner"].(string)
		args, _ := c["args"].(string)
		for _, d := range r.srcDirs {
			r.scriptFrom(filepath.Join(r.root, d, hook, s), runner, root)
			cmd := shQuote(filepath.Join(r.root, d, hook, s))
			if runner != "" {
				cmd = runner + " " + cmd
			}
			if args != "" {
				cmd += " " + args
			}
			cmds = append(cmds, cmd)
		}
	}
	var out []string
	for _, cmd := range cmds {
		var b strings.Builder
		for _, k := range slices.Sorted(maps.Keys(env)) {
			if validName(k) {
				b.WriteString("export " + k + "=" + shDouble(env[k]) + "\n")
			}
		}
		b.WriteString("cd -- " + shQuote(filepath.Join(r.root, filepath.Clean("/" + root)[1:])) + "\n")
		out = append(out, r.templated(b.String()+cmd)...)
	}
	return out
}

// scriptFrom has the script p, which runner (or its shebang) runs from the job's root, read from
// there: a started script is read from its own directory and the workspace's root, and
// `root: server` with a script's `python3 main.py` ran server/main.py.
func (r *lefthookRead) scriptFrom(p, runner, root string) {
	dir := filepath.Join(r.root, filepath.Clean("/" + root)[1:])
	if dir == r.f.g.ws || !regular(p) || mutated("workspace-lefthook-root") {
		return
	}
	lang := ""
	if w := strings.Fields(runner); len(w) > 0 {
		lang = runtimeLang(w[0])
	} else if b, _, err := readSmall(p, 512); err == nil {
		switch text := string(b); {
		case shebang(text, "python"):
			lang = "py"
		case shebang(text, "node"), shebang(text, "deno"), shebang(text, "bun"):
			lang = "js"
		default:
			lang = "sh"
		}
	}
	if lang != "" {
		r.f.runAsFile(p, r.by, runSpec{lang, dir}, 1)
	}
}

// unnamed are the files of the hook's script directories no entry names, run as files (lefthook
// before 1.x ran each file there; now it runs those its config names, whose lines job made).
func (r *lefthookRead) unnamed(hook string) []string {
	if mutated("workspace-lefthook-scripts") {
		return nil
	}
	var out []string
	for _, d := range r.srcDirs {
		dir := filepath.Join(r.root, d, hook)
		ents, _ := os.ReadDir(dir)
		for i, e := range ents {
			if i >= maxImporters {
				break
			}
			if e.Type().IsRegular() {
				out = append(out, shQuote(filepath.Join(dir, e.Name())))
			}
		}
	}
	return out
}

// templated is the line s with each of the config's templates ({name}) replaced by each of
// its values, as lefthook's replacer does (a name set twice, in the main and a local config,
// read both ways), up to maxLefthookVariant lines; s itself among them. Each line's length is
// known before it is built and charged to r's budget: past it nothing more is built (cut), as
// configLines' bound would refuse the lines (atk49a F4: 20,000 marks of a 60,000-byte value
// built 1.2 GB before the bound was charged).
func (r *lefthookRead) templated(s string) []string {
	if r.cut || r.built[s] || !r.charge(len(s)) {
		return nil // a line of the merged configs and of a file read apart is read once
	}
	if r.built == nil {
		r.built = map[string]bool{}
	}
	r.built[s] = true
	out := []string{s}
	for _, n := range slices.Sorted(maps.Keys(r.templates)) {
		mark := "{" + n + "}"
		if !strings.Contains(s, mark) {
			continue
		}
		var next []string
		for _, l := range out {
			marks := strings.Count(l, mark)
			for _, v := range r.templates[n] {
				if len(next) >= maxLefthookVariant {
					break
				}
				if !r.charge(len(l) + marks*(len(v)-len(mark))) {
					return nil
				}
				next = append(next, strings.ReplaceAll(l, mark, v))
			}
		}
		out = next
	}
	if len(out) > 0 && out[0] != s {
		out = append(out, s)
	}
	return out
}

// charge takes n bytes of the lines' budget; false (cut) when it does not hold them.
func (r *lefthookRead) charge(n int) bool {
	if mutated("workspace-lefthook-template-bound") {
		return true
	}
	if r.budget -= n; r.budget < 0 {
		r.cut = true
		return false
	}
	return true
}

// hookPrefix protects the names in dir starting with prefix, for the config by (a glob of
// lefthook's extends at the root).
func (f *follower) hookPrefix(dir, prefix, by string) {
	g := f.g
	if g.hookPrefix == nil {
		g.hookPrefix = map[string][]namePrefix{}
	}
	key := fold(g.relOf(dir))
	if len(g.hookPrefix[key]) < maxImporters {
		g.hookPrefix[key] = append(g.hookPrefix[key], namePrefix{fold(prefix), by})
	}
}

// hookPrefixMatch says which hook manager's config merges rel in by a glob, "" when none does.
func (g *gitGuard) hookPrefixMatch(rel string) string {
	return g.prefixMatch(g.hookPrefix, rel, func(by string) string {
		return "a config file the protected " + by + " merges in by a pattern (lefthook's extends): the hooks it names run on the host"
	})
}

// lefthookDecode is the config file p's document (by its format), nil when its parser refuses it.
func lefthookDecode(p string, b []byte) map[string]any {
	var doc any
	switch filepath.Ext(p) {
	case ".json":
		_ = json.Unmarshal(b, &doc)
	case ".jsonc":
		_ = json.Unmarshal(jsonc(b), &doc)
	case ".toml":
		var m map[string]any
		if _, err := toml.Decode(string(b), &m); err == nil {
			doc = lefthookTOML(m)
		}
	default:
		_ = yaml.Unmarshal(b, &doc)
	}
	m, _ := doc.(map[string]any)
	return m
}

// lefthookTOML is v with TOML's arrays of tables as lists of maps, as YAML and JSON give them.
func lefthookTOML(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			v[k] = lefthookTOML(x)
		}
		return v
	case []map[string]any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = lefthookTOML(x)
		}
		return out
	case []any:
		for i, x := range v {
			v[i] = lefthookTOML(x)
		}
	}
	return v
}

// lefthookMap is v as a map, a new empty one when it is none.
func lefthookMap(v any) map[string]any {
	if m, ok := v.(map[string]any); ok {
		return maps.Clone(m)
	}
	return map[string]any{}
}

// lefthookStrings are v's strings: v one, or a list of them.
func lefthookStrings(v any) []string {
	switch v := v.(type) {
	case string:
		return []string{v}
	case []any:
		var out []string
		for _, x := range v {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// shQuote is s as one sh word, quoted.
func shQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// shDouble is s in sh's double quotes: its $ expansions kept, as lefthook's env values are.
func shDouble(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "`", "\\`").Replace(s) + `"`
}

// validName: s is a shell variable's name.
func validName(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isNameByte(s[i], i) {
			return false
		}
	}
	return s != ""
}

// lefthookRoots are the values of the config doc's `root` keys that no other key of it holds
// (a string elsewhere may name a program: it is read as the config's words).
func lefthookRoots(doc map[string]any) map[string]bool {
	if doc == nil || mutated("workspace-lefthook-root-words") {
		return nil
	}
	roots, other := map[string]bool{}, map[string]bool{}
	var walk func(v any, key string, depth int)
	walk = func(v any, key string, depth int) {
		if depth > maxProgramDepth*16 {
			return
		}
		switch v := v.(type) {
		case string:
			if key == "root" {
				roots[v] = true
			} else {
				other[v] = true
			}
		case map[string]any:
			for k, x := range v {
				walk(x, k, depth+1)
			}
		case []any:
			for _, x := range v {
				walk(x, "", depth+1)
			}
		}
	}
	walk(doc, "", 0)
	for v := range roots {
		if other[v] {
			delete(roots, v)
		}
	}
	return roots
}
