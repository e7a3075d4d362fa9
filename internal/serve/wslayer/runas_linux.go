package wslayer

import (
	"path/filepath"
	"slices"
	"strings"
)

// A file a runtime is told to run is its program whatever its name (attack round atk45a F5):
// the follower read a file as Python or JavaScript only by its extension or shebang, so
// `python3 tools/serve`, `node tools/boot.txt` and `python3 - < tools/boot.txt` ran a program
// the follower read as a shell script's words. The command line's runtime says how the file is
// read: its script (the first word its getopt takes for one) as that runtime's program from
// the file's directory, a file `<` feeds a runtime reading its standard input as that runtime's
// inline code from the working directory (Python's sys.path[0], node's base).

// runSpec is how a runtime runs a file: lang's program, from cwd when the file is its standard
// input ("" when it is its script).
type runSpec struct{ lang, cwd string }

// stdinFileMark starts the inline code standing for the file a `<` feeds a runtime (stdinOf):
// runInline reads the file.
const stdinFileMark = "\x01stdin-file:"

// scriptArgs are the indexes in args (a runtime's words after it) of the script lang's runtime
// runs, as its getopt reads them; none when it runs none (code, a module, its standard input,
// help). After an option the tables do not know (a newer runtime's), its value and the script
// cannot be told apart: the next word is taken as both, its value and a possible script, and the
// script after it is taken too (the wider reading: a value that is a file is read as a program,
// which protects more, never less).
func scriptArgs(lang string, args []string) []int {
	var out []int
	for i := 0; i < len(args); i++ {
		w := args[i]
		switch {
		case w == "--" && i+1 < len(args):
			return append(out, i+1)
		case w == "-" || w == "--":
			return out
		case !strings.HasPrefix(w, "-") && !(lang == "sh" && strings.HasPrefix(w, "+")):
			return append(out, i)
		}
		values, stop, known := optWords(lang, w)
		switch {
		case stop:
			return out
		case !known && i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") && !mutated("workspace-runtime-option-unknown"):
			out = append(out, i+1)
			i++
		default:
			i += values
		}
	}
	return out
}

// runScripts maps the index of each of words that a runtime word before it runs as its script
// to the runtime's language (`python3 -u tools/serve`, `node --require x tools/boot.txt`).
func runScripts(words []string) map[int]string {
	if mutated("workspace-program-by-runtime") {
		return nil
	}
	var out map[int]string
	for i, w := range words {
		lang := runtimeLang(w)
		if lang == "" {
			continue
		}
		from := i + 1
		if from < len(words) && configArgsKey[words[from]] {
			from++ // a config's "command": "python3", "args": ["tools/serve"]: its strings, keys too
		}
		end := min(len(words), from+maxLaterOpts) // a runtime's options: bounded (O(words))
		for _, j := range scriptArgs(lang, words[from:end]) {
			if out == nil {
				out = map[int]string{}
			}
			out[from+j] = lang
		}
	}
	return out
}

// configArgsKey are the keys a config's command's arguments follow its command under.
var configArgsKey = map[string]bool{"args": true, "arguments": true}

// runAsFile records that p is run as spec's program, and has it read so (again, when it was
// read by its name already).
func (f *follower) runAsFile(p, by string, spec runSpec, depth int) {
	if spec.lang == "" || slices.Contains(f.runAs[p], spec) {
		return
	}
	if f.runAs == nil {
		f.runAs = map[string][]runSpec{}
	}
	f.runAs[p] = append(f.runAs[p], spec)
	delete(f.seen, p)
	f.todo = append(f.todo, todoFile{p, by, depth})
}

// runsAs: p is run as lang's script.
func (f *follower) runsAs(p, lang string) bool {
	return slices.Contains(f.runAs[p], runSpec{lang, ""})
}

// stdinFile protects the file a `<` feeds a runtime reading its program there (file, as the
// statement spells it, from each of dirs) and reads it as lang's inline code from there.
func (f *follower) stdinFile(by string, dirs []string, lang, file string) {
	for _, d := range dirs {
		p := f.g.wsSpelled(absFrom(d, file))
		if !strings.HasPrefix(p, f.g.ws+"/") {
			continue
		}
		f.add(p, by) // there or not: the call's write would be the program
		if regular(p) {
			f.runAsFile(p, by, runSpec{lang, d}, 1)
		}
	}
}

// readRunAs reads the file t (its text; rdir its directory as the runtime runs it) as each
// runtime that runs it does, when its name does not say so.
func (f *follower) readRunAs(t todoFile, rdir, text string) {
	ext := filepath.Ext(t.path)
	for _, s := range f.runAs[t.path] {
		switch {
		case s.cwd != "" && s.lang == "sh":
			f.shellProgram(t, s.cwd, text)
		case s.cwd != "":
			f.runInline(t.by, []string{s.cwd}, inlineProg{s.lang, text}, 0)
		case s.lang == "py" && ext != ".py" && !shebang(text, "python"):
			f.pyImports(t, rdir, text)
		case s.lang == "js" && !slices.Contains(jsExts[1:], ext) && !shebang(text, "node"):
			f.jsProgram(t, rdir, text)
		}
	}
}
