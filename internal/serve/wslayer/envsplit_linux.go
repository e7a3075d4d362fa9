package wslayer

import (
	"path/filepath"
	"slices"
	"strings"
)

// GNU env's -S (--split-string) splits its string by env's own rules, not a shell's (atk45a
// F6): `\_` outside quotes separates words and inside double quotes is a blank, `\t` `\n` `\r`
// `\f` `\v` are those bytes, `\c` ends the string, `#` starting a word starts a comment, single
// quotes keep all but `\\` and `\'`, `${NAME}` is the environment's (unknown here: kept, an
// unresolved `$`). Split at blanks by the shell reader, `env -S 'python3\_-c\_"import\_app.main"'`
// was one word and no program: env ran app.main, writable.

// envSplit is the string s split as `env -S s` does; ok false when env refuses it (it then runs
// nothing).
func envSplit(s string) (words []string, ok bool) {
	var (
		word   strings.Builder
		inWord bool
		quote  byte
	)
	end := func() {
		if inWord {
			words = append(words, word.String())
		}
		word.Reset()
		inWord = false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote == '\'' && c == '\\' && i+1 < len(s) && (s[i+1] == '\\' || s[i+1] == '\''):
			i++
			word.WriteByte(s[i])
		case quote != 0 && c == quote:
			quote = 0
		case quote == '\'':
			word.WriteByte(c)
		case c == '\\':
			if i+1 >= len(s) {
				return nil, false
			}
			i++
			switch e := s[i]; {
			case e == '_' && quote == 0:
				end()
				continue
			case e == 'c' && quote == 0:
				end()
				return words, true
			case e == '_':
				word.WriteByte(' ') // in double quotes: a blank
			case strings.IndexByte(`"'\#$`, e) >= 0:
				word.WriteByte(e)
			case strings.IndexByte("tnrfv", e) >= 0:
				word.WriteByte("\t\n\r\f\v"[strings.IndexByte("tnrfv", e)])
			default:
				return nil, false // env: invalid sequence
			}
		case c == '$':
			name, _, closed := strings.Cut(s[i+1:], "}")
			if !strings.HasPrefix(name, "{") || !closed {
				return nil, false // env: only ${VARNAME} expansion is supported
			}
			word.WriteString("$" + name + "}") // the environment's: not known
			i += len(name) + 1
		case quote == 0 && (c == '\'' || c == '"'):
			quote = c
		case quote == 0 && strings.IndexByte(" \t\n\r\f\v", c) >= 0:
			end()
			continue
		case quote == 0 && c == '#' && !inWord:
			return words, true
		default:
			word.WriteByte(c)
		}
		inWord = true
	}
	end()
	return words, quote == 0
}

// envSplitArgs are the words env runs for each `env … -S STRING` in args (a statement's words
// or a config's strings): the string split by envSplit, after env's options (a cluster ending in
// S takes the rest as its string, -iS'…'; --split-string=, or any prefix of it, --s=). loose:
// args are a config's strings, in no order ("args" may come before "command": "env"): with env
// among them, every -S option is env's.
func envSplitArgs(args []string, loose bool) [][]string {
	if mutated("workspace-inline-env-split") {
		return nil
	}
	isEnv := func(w string) bool { return filepath.Base(strings.Trim(w, `"'`)) == "env" }
	var out [][]string
	if loose && slices.ContainsFunc(args, isEnv) {
		for j, w := range args {
			val, has, split := envSplitOpt(strings.Trim(w, `"'`))
			if split && !has && j+1 < len(args) {
				val, has = args[j+1], true
			}
			if words, ok := envSplit(val); ok && has && split {
				out = append(out, words)
			}
		}
		return out
	}
	for k := 0; k < len(args); k++ {
		if !isEnv(args[k]) {
			continue
		}
		for j := k + 1; j < len(args); j++ {
			w := args[j]
			val, has, split := envSplitOpt(w)
			switch {
			case split && !has && j+1 < len(args):
				val, has = args[j+1], true
				j++
			case !split && (w == "-u" || w == "-C" || w == "--unset" || w == "--chdir"):
				j++ // the option's value
				continue
			case !split && (strings.HasPrefix(w, "-") || strings.Contains(w, "=")):
				continue
			case !split:
				j = len(args) // env's command: its own words
				continue
			}
			if words, ok := envSplit(val); ok && has {
				out = append(out, append(words, args[j+1:]...)) // then env's other words
			}
			j = len(args)
		}
	}
	return out
}

// envSplitOpt: w is env's -S option (split), with its string in the same word (has: val).
func envSplitOpt(w string) (val string, has, split bool) {
	if long, ok := strings.CutPrefix(w, "--s"); ok {
		name, v, eq := strings.Cut(long, "=")
		if !strings.HasPrefix("plit-string", name) {
			return "", false, false
		}
		return v, eq, true
	}
	if len(w) < 2 || w[0] != '-' || w[1] == '-' {
		return "", false, false
	}
	i := 1
	for i < len(w) && strings.IndexByte("0iv", w[i]) >= 0 {
		i++ // options that take no value, before S in one cluster
	}
	if i < len(w) && w[i] == 'S' {
		return w[i+1:], i+1 < len(w), true
	}
	return "", false, false
}

// envSplitProgs is the inline code of what each `env -S` of args runs (stmtInlineAt's).
func envSplitProgs(args []string, depth int, loose bool) []inlineProg {
	var progs []inlineProg
	for _, words := range envSplitArgs(args, loose) {
		p, _ := stmtInlineAt(words, nil, depth+1)
		progs = append(progs, p...)
	}
	return progs
}

// envSplitWords are the words each `env -S` of words runs, as env splits them: judged as the
// command line's own (`env -S 'python3\_app/main.py'` names app/main.py); words may be a
// config's, in no order (loose).
func envSplitWords(words []string) []string {
	var out []string
	for _, w := range envSplitArgs(words, true) {
		out = append(out, w...)
	}
	return out
}
