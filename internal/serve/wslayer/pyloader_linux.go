package wslayer

import (
	"path/filepath"
	"strconv"
	"strings"

	"github.com/mcpsandbox/mcpsandbox/internal/lazy"
)

// Python loads a file by more names than import_module, __import__ and runpy (attack round
// atk39b, F3): importlib.util.spec_from_file_location with exec_module (the usual plugin
// loader), `import_module as load`, exec(open(…).read()), getattr(importlib, …), a sys.path
// changed before a plain import; none was seen, and a call's rewrite of what they load ran on
// the host. Now any mention of a loader (importlib but its import_module and reload, runpy but
// run_module and run_path, exec, eval, compile, __import__ but called, the loaders and specs
// of importlib, imp, pkgutil, zipimport, builtins, sys.executable, a sys.path or
// site.addsitedir change) that pyDynamic does not resolve protects the program's directory
// whole; one whose line may lead out of it ("..", the working directory, the environment, the
// home, an absolute path; for sys.path a directory up) leaves every change not otherwise judged
// unapplied (runCut), as at the workspace's root.

var (
	pyLoaderWord = lazy.Regexp(`\b(importlib|import_module|__import__|run_module|run_path|runpy|exec|eval|compile|execfile|` +
		`SourceFileLoader|SourcelessFileLoader|ExtensionFileLoader|spec_from_file_location|spec_from_loader|module_from_spec|` +
		`exec_module|load_module|load_source|imp|pkgutil|zipimport|builtins|__builtins__|__loader__|addsitedir|` +
		`sys\s*\.\s*(?:path|executable|meta_path|path_hooks|modules))\b`)
	// the forms pyDynamic resolves, and imports that only name them
	pyLoaderOK = lazy.Regexp(`^(?:importlib\s*\.\s*(?:import_module|reload)\s*\(|runpy\s*\.\s*(?:run_module|run_path)\s*\(|` +
		`(?:import_module|__import__|run_module|run_path)\s*\()`)
	// import importlib, runpy; from importlib import import_module: only naming them
	pyImportLine  = lazy.Regexp(`^[ \t]*(?:import[ \t]+[\w.]+(?:[ \t]*,[ \t]*[\w.]+)*|from[ \t]+(?:importlib|runpy)[ \t]+import[ \t]+[\w, \t]+)[ \t]*$`)
	pyNameOnly    = lazy.Regexp(`^(?:importlib|runpy|import_module|reload|run_module|run_path)[ \t]*(?:,|\r?\n|$)|^(?:importlib|runpy)[ \t]+import[ \t]`)
	pySysPathRead = lazy.Regexp(`^sys\s*\.\s*path\s*(?:\[[^\]\n]*\]\s*(?:[^=\s]|==|$)|[)\],:;]|\s*(?:==|!=|$)|\s+(?:if|else|for|in|and|or)\b)`)
	pyUp          = lazy.Regexp(`\.\.|getcwd|cwd\(|environ|getenv|expanduser|home|parents|argv|['"]/`)
)

// pyCode is a Python text with its comments blanked and its strings' contents blanked (their
// quotes kept): a loader named in a comment or a docstring loads nothing by itself.
func pyCode(text string) string {
	b := []byte(text)
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case c == '#':
			for ; i < len(b) && b[i] != '\n'; i++ {
				b[i] = ' '
			}
		case c == '\'' || c == '"':
			q := string(b[i : i+1])
			if i+2 < len(b) && b[i+1] == c && b[i+2] == c {
				q = string(b[i : i+3])
			}
			j := i + len(q)
			for ; j < len(b) && !strings.HasPrefix(string(b[j:min(j+3, len(b))]), q); j++ {
				if b[j] == '\\' && j+1 < len(b) {
					b[j] = ' '
					j++
				} else if len(q) == 1 && b[j] == '\n' {
					break
				}
				if b[j] != '\n' {
					b[j] = ' '
				}
			}
			i = j + len(q) - 1
		}
	}
	return string(b)
}

// pyLoaders judges each mention of a loader in a Python program the follower reads.
func (f *follower) pyLoaders(t todoFile, dir, text string) {
	if mutated("workspace-follow-py-loader") {
		return
	}
	code := pyCode(text)
	for _, loc := range pyLoaderWord().FindAllStringIndex(code, -1) {
		if f.g.runCut != "" {
			return
		}
		w, rest := code[loc[0]:loc[1]], code[loc[0]:]
		ls := strings.LastIndexByte(code[:loc[0]], '\n') + 1
		le := strings.IndexByte(rest, '\n')
		if le < 0 {
			le = len(rest)
		}
		line := code[ls : loc[0]+le]
		before := strings.TrimRight(code[ls:loc[0]], " \t")
		switch {
		case pyLoaderOK().MatchString(rest):
			continue // pyDynamic judges the call
		case pyImportLine().MatchString(line) && pyNameOnly().MatchString(rest):
			continue // import importlib: its uses are judged
		case strings.HasSuffix(before, "."):
			if w == "exec" || w == "eval" || w == "compile" || w == "imp" || w == "builtins" {
				continue // re.compile, cursor.exec: methods of their own
			}
		case strings.HasSuffix(before, "def") || strings.HasSuffix(before, "class"):
			continue
		case strings.HasPrefix(w, "sys") && strings.HasSuffix(w, "modules"),
			strings.HasPrefix(w, "sys") && strings.HasSuffix(w, "path") && pySysPathRead().MatchString(rest):
			continue // sys.modules, sys.path read: nothing loads by them
		}
		// sys.path changed: a plain import may load from where it points; any loader whose line
		// may lead out of the directory
		orig := text[loc[0]:min(len(text), loc[0]+le)] // the strings too: '..'
		up := pyUp().MatchString(orig) || strings.Count(orig, "dirname")+strings.Count(orig, ".parent") >= 2
		rel, _ := filepath.Rel(f.g.ws, t.path)
		why := w + ", a loader the check does not resolve (" + strings.Join(strings.Fields(clip(orig)), " ") + ")"
		if dir == f.g.ws || up && !mutated("workspace-follow-computed-outside") {
			if f.g.runCut == "" {
				f.g.runCut = "a program (" + strconv.Quote(filepath.ToSlash(rel)) + ") that uses " + why
			}
			return
		}
		f.add(dir, t.by)
	}
}
