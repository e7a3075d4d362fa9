package sandbox

import (
	"fmt"
	"strings"
)

// argKind is what a command does with one argument string.
type argKind uint8

const (
	kNone    argKind = iota // not a file name: a pattern, a number, a separator, a set
	kRead                   // a file or directory it reads
	kWrite                  // a file it writes, or a directory it creates files in
	kPrefix                 // the prefix of file names it generates (split, csplit)
	kSuffix                 // text appended to the names it generates
	kUnknown                // may be read or written: judged as a write
)

// argUse is one string a command will use, and how.
type argUse struct {
	index int // 1-based argument number, for messages
	value string
	kind  argKind
}

// longOpt is one GNU long option: whether it takes a value (0 no, 1 required, 2 optional), what
// the value is, and whether it supplies grep-style patterns (so the first operand is a file).
type longOpt struct {
	arg     uint8
	kind    argKind
	pattern bool
}

// optModel is how one program parses its command line (GNU getopt_long with permutation): the
// short option string ("o:" required value, "o::" optional value glued to the option), the long
// options, and what its operands are.
type optModel struct {
	short      string
	shortKinds map[byte]argKind // kind of short options' values; absent = kNone
	long       map[string]longOpt
	operands   []argKind // kind of operand i; the last entry repeats
	// patternFirst: the first operand is a pattern unless a pattern option was given (grep).
	patternFirst bool
	patternShort string // short options that supply patterns
	// generated: the names this program writes are prefix + generated + suffix, from the
	// operand or option values of kind kPrefix / kSuffix; defaultPrefix when none is given.
	defaultPrefix string
	// suffixFormat: the kSuffix value is a printf format (csplit -b), so it may produce anything.
	suffixFormat bool
	// listsOnly: a directory operand's entries are listed, never opened (ls -R); other programs
	// may read every file below a directory they are given (grep -r, diff -r).
	listsOnly bool
}

// shortSpec returns 0 (flag), 1 (required value), 2 (optional value), or -1 (unknown option).
func (m *optModel) shortSpec(c byte) int {
	if c == ':' || c == '-' || c == '+' {
		return -1
	}
	s := strings.TrimLeft(m.short, "+-")
	i := strings.IndexByte(s, c)
	if i < 0 {
		return -1
	}
	switch {
	case strings.HasPrefix(s[i+1:], "::"):
		return 2
	case strings.HasPrefix(s[i+1:], ":"):
		return 1
	}
	return 0
}

// lookupLong finds a long option by its exact name or an unambiguous prefix, as getopt_long does.
func (m *optModel) lookupLong(name string) (string, longOpt, error) {
	if o, ok := m.long[name]; ok {
		return name, o, nil
	}
	var hits []string
	for n := range m.long {
		if strings.HasPrefix(n, name) {
			hits = append(hits, n)
		}
	}
	switch {
	case len(hits) == 1:
		return hits[0], m.long[hits[0]], nil
	case len(hits) > 1:
		// getopt accepts an ambiguous prefix only when every candidate is the same option; the
		// models never rely on that, so it cannot be modelled: refuse.
		return "", longOpt{}, fmt.Errorf("--%s is ambiguous (%s)", name, strings.Join(hits, ", "))
	}
	return "", longOpt{}, fmt.Errorf("--%s is not an option this program is known to accept", name)
}

// parse splits args the way the program's getopt will, and says what each used string is.
// posix stops option parsing at the first operand (POSIXLY_CORRECT).
func (m *optModel) parse(args []string, posix bool) ([]argUse, error) {
	var uses, operands []argUse
	sawPattern := false
	opt := func(i int, v string, k argKind) { uses = append(uses, argUse{i + 1, v, k}) }
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			for j := i + 1; j < len(args); j++ {
				operands = append(operands, argUse{index: j + 1, value: args[j]})
			}
			i = len(args)
		case a == "-" || !strings.HasPrefix(a, "-"):
			operands = append(operands, argUse{index: i + 1, value: a})
			if posix {
				for j := i + 1; j < len(args); j++ {
					operands = append(operands, argUse{index: j + 1, value: args[j]})
				}
				i = len(args)
			}
		case strings.HasPrefix(a, "--"):
			name, val, hasEq := strings.Cut(a[2:], "=")
			_, lo, err := m.lookupLong(name)
			if err != nil {
				return nil, fmt.Errorf("argument %d: %w", i+1, err)
			}
			sawPattern = sawPattern || lo.pattern
			switch {
			case lo.arg == 1 && hasEq, lo.arg == 2 && hasEq:
				opt(i, val, lo.kind)
			case lo.arg == 1:
				if i+1 >= len(args) {
					return uses, nil // getopt fails: "requires an argument"; nothing runs on a path
				}
				i++
				opt(i, args[i], lo.kind)
			}
		default: // a cluster of short options: -abc, -ovalue, -ab value
			for j := 1; j < len(a); j++ {
				c := a[j]
				spec := m.shortSpec(c)
				if spec < 0 {
					return nil, fmt.Errorf("argument %d: -%c in %q is not an option this program is known to accept", i+1, c, a)
				}
				if strings.IndexByte(m.patternShort, c) >= 0 {
					sawPattern = true
				}
				if spec == 0 {
					continue
				}
				if j+1 < len(a) {
					opt(i, a[j+1:], m.shortKinds[c])
				} else if spec == 1 && i+1 < len(args) {
					i++
					opt(i, args[i], m.shortKinds[c])
				}
				break
			}
		}
	}
	for n, o := range operands {
		k := kUnknown
		if len(m.operands) > 0 {
			k = m.operands[min(n, len(m.operands)-1)]
		}
		if m.patternFirst && !sawPattern {
			k = m.operands[min(max(n-1, 0), len(m.operands)-1)]
			if n == 0 {
				k = kNone
			}
		}
		if o.value == "-" && k != kPrefix {
			k = kNone // standard input or output
		}
		o.kind = k
		uses = append(uses, o)
	}
	return uses, nil
}

// conservativeUses is how an argument list is judged for a program with no model: every
// argument, every text glued behind any number of single-letter flags, and every "=value" may be
// a file it writes.
func conservativeUses(args []string) []argUse {
	var uses []argUse
	for i, a := range args {
		add := func(v string) { uses = append(uses, argUse{i + 1, v, kUnknown}) }
		switch {
		case a == "" || a == "-" || a == "--":
		case strings.HasPrefix(a, "--"):
			if _, v, ok := strings.Cut(a, "="); ok {
				add(v)
			}
			add(a)
		case strings.HasPrefix(a, "-"):
			add(a)
			for j := 2; j < len(a); j++ {
				add(a[j:])
			}
			if _, v, ok := strings.Cut(a, "="); ok {
				add(v)
			}
		default:
			add(a)
		}
	}
	return uses
}

func flags(names ...string) map[string]longOpt {
	m := map[string]longOpt{"help": {}, "version": {}}
	for _, n := range names {
		m[n] = longOpt{}
	}
	return m
}

func with(m map[string]longOpt, more map[string]longOpt) map[string]longOpt {
	for k, v := range more {
		m[k] = v
	}
	return m
}

var (
	req     = longOpt{arg: 1}
	opt     = longOpt{arg: 2}
	reqRead = longOpt{arg: 1, kind: kRead}
	reqOut  = longOpt{arg: 1, kind: kWrite}
)

// models are the option grammars of the programs allowlisted by default and of other common
// text tools, from GNU coreutils 9 / grep 3 / diffutils 3 (Debian 12). A program is matched by
// the base name of the binary its path resolves to, never by the name the policy gives it.
var models = map[string]*optModel{
	"wc": {short: "clLmw", operands: []argKind{kRead},
		long: with(flags("bytes", "chars", "lines", "max-line-length", "words"),
			map[string]longOpt{"files0-from": reqRead, "total": req})},
	"sort": {short: "-bcCdfghik:mMno:rRsS:t:T:uVy:z", operands: []argKind{kRead},
		shortKinds: map[byte]argKind{'o': kWrite, 'T': kWrite},
		long: with(flags("ignore-leading-blanks", "debug", "dictionary-order", "general-numeric-sort",
			"human-numeric-sort", "ignore-case", "ignore-nonprinting", "merge", "month-sort", "numeric-sort",
			"random-sort", "reverse", "stable", "unique", "version-sort", "zero-terminated"),
			map[string]longOpt{"check": opt, "compress-program": reqRead, "files0-from": reqRead,
				"field-separator": req, "key": req, "output": reqOut, "parallel": req, "random-source": reqRead,
				"sort": req, "buffer-size": req, "temporary-directory": reqOut})},
	"uniq": {short: "-0123456789Dcdf:is:uw:z", operands: []argKind{kRead, kWrite, kUnknown},
		long: with(flags("count", "ignore-case", "repeated", "unique", "zero-terminated"),
			map[string]longOpt{"all-repeated": opt, "group": opt, "skip-fields": req, "skip-chars": req, "check-chars": req})},
	"cat": {short: "benstuvAET", operands: []argKind{kRead},
		long: flags("number-nonblank", "number", "squeeze-blank", "show-nonprinting", "show-ends", "show-tabs", "show-all")},
	"head": {short: "c:n:qvz0123456789", operands: []argKind{kRead},
		long: with(flags("quiet", "silent", "verbose", "zero-terminated"), map[string]longOpt{"bytes": req, "lines": req})},
	"tail": {short: "c:n:fFqs:vz0123456789", operands: []argKind{kRead},
		long: with(flags("quiet", "silent", "retry", "verbose", "zero-terminated"),
			map[string]longOpt{"bytes": req, "follow": opt, "lines": req, "max-unchanged-stats": req, "pid": req, "sleep-interval": req})},
	"cut": {short: "b:c:d:f:nsz", operands: []argKind{kRead},
		long: with(flags("only-delimited", "complement", "zero-terminated"),
			map[string]longOpt{"bytes": req, "characters": req, "delimiter": req, "fields": req, "output-delimiter": req})},
	"tr": {short: "+AcCdst", operands: []argKind{kNone},
		long: flags("complement", "delete", "squeeze-repeats", "truncate-set1")},
	"grep": {short: "0123456789A:B:C:D:EFGHIPTUVX:abcd:e:f:hiLlm:noqRrsuvwxyZz", operands: []argKind{kRead},
		shortKinds:   map[byte]argKind{'f': kRead},
		patternFirst: true, patternShort: "ef",
		long: with(flags("basic-regexp", "extended-regexp", "fixed-strings", "fixed-regexp", "perl-regexp",
			"ignore-case", "no-ignore-case", "word-regexp", "line-regexp", "null-data", "no-messages", "invert-match",
			"byte-offset", "line-number", "no-line-number", "line-buffered", "with-filename", "no-filename", "only-matching",
			"quiet", "silent", "text", "recursive", "dereference-recursive", "files-without-match", "files-with-matches",
			"count", "initial-tab", "null", "binary"),
			map[string]longOpt{"after-context": req, "before-context": req, "context": req, "regexp": {arg: 1, pattern: true},
				"file": {arg: 1, kind: kRead, pattern: true}, "label": req, "binary-files": req, "devices": req,
				"directories": req, "exclude": req, "exclude-from": reqRead, "exclude-dir": req, "include": req,
				"max-count": req, "color": opt, "colour": opt})},
	"diff": {short: "0123456789abBcC:dD:eEfF:hHiI:lL:nNpPqrsS:tTuU:vwW:x:X:yZ", operands: []argKind{kRead},
		shortKinds: map[byte]argKind{'X': kRead},
		long: with(flags("normal", "brief", "report-identical-files", "expand-tabs", "initial-tab", "suppress-blank-empty",
			"ignore-case", "ignore-tab-expansion", "ignore-trailing-space", "ignore-space-change", "ignore-all-space",
			"ignore-blank-lines", "strip-trailing-cr", "text", "minimal", "speed-large-files", "left-column",
			"suppress-common-lines", "side-by-side", "ed", "rcs", "show-c-function", "paginate", "new-file",
			"unidirectional-new-file", "recursive", "no-dereference", "ignore-file-name-case", "no-ignore-file-name-case"),
			map[string]longOpt{"context": opt, "unified": opt, "show-function-line": req, "label": req, "width": req,
				"tabsize": req, "ifdef": req, "old-group-format": req, "new-group-format": req, "unchanged-group-format": req,
				"changed-group-format": req, "line-format": req, "old-line-format": req, "new-line-format": req,
				"unchanged-line-format": req, "from-file": reqRead, "to-file": reqRead, "exclude": req,
				"exclude-from": reqRead, "starting-file": req, "ignore-matching-lines": req, "horizon-lines": req,
				"color": opt, "palette": req, "GTYPE-group-format": req, "LTYPE-line-format": req, "color-palette": req})},
	"ls": {listsOnly: true, short: "abcdfghiklmnopqrstuvw:xABCDFGHI:LNQRST:UXZ1", operands: []argKind{kRead},
		long: with(flags("all", "author", "escape", "directory", "dired", "classify", "file-type",
			"full-time", "group-directories-first", "no-group", "human-readable", "si", "dereference-command-line",
			"dereference-command-line-symlink-to-dir", "inode", "dereference", "numeric-uid-gid", "literal",
			"hide-control-chars", "show-control-chars", "quote-name", "recursive", "reverse", "size", "zero", "context"),
			map[string]longOpt{"block-size": req, "color": opt, "format": req, "hide": req, "hyperlink": opt,
				"indicator-style": req, "ignore": req, "ignore-backups": {}, "quoting-style": req, "sort": req, "time": req,
				"time-style": req, "tabsize": req, "width": req, "almost-all": {}})},
	"comm": {short: "123z", operands: []argKind{kRead},
		long: with(flags("check-order", "nocheck-order", "total", "zero-terminated"), map[string]longOpt{"output-delimiter": req})},
	"nl": {short: "b:d:f:h:i:l:n:ps:v:w:", operands: []argKind{kRead},
		long: with(flags("no-renumber"), map[string]longOpt{"body-numbering": req, "section-delimiter": req,
			"footer-numbering": req, "header-numbering": req, "line-increment": req, "join-blank-lines": req,
			"number-format": req, "number-separator": req, "starting-line-number": req, "number-width": req})},
	"tac": {short: "brs:", operands: []argKind{kRead},
		long: with(flags("before", "regex"), map[string]longOpt{"separator": req})},
	"fold": {short: "bsw:0123456789", operands: []argKind{kRead},
		long: with(flags("bytes", "spaces"), map[string]longOpt{"width": req})},
	"paste": {short: "d:sz", operands: []argKind{kRead},
		long: with(flags("serial", "zero-terminated"), map[string]longOpt{"delimiters": req})},
	"sha256sum": {short: "bctwz", operands: []argKind{kRead},
		long: flags("binary", "check", "tag", "text", "ignore-missing", "quiet", "status", "strict", "warn", "zero")},
	"md5sum": {short: "bctwz", operands: []argKind{kRead},
		long: flags("binary", "check", "tag", "text", "ignore-missing", "quiet", "status", "strict", "warn", "zero")},
	"tee": {short: "aip", operands: []argKind{kWrite},
		long: with(flags("append", "ignore-interrupts"), map[string]longOpt{"output-error": opt})},
	"split": {short: "0123456789C:a:b:del:n:t:ux", operands: []argKind{kRead, kPrefix, kUnknown},
		defaultPrefix: "x",
		long: with(flags("elide-empty-files", "unbuffered", "verbose"),
			map[string]longOpt{"suffix-length": req, "additional-suffix": {arg: 1, kind: kSuffix}, "bytes": req,
				"line-bytes": req, "lines": req, "number": req, "numeric-suffixes": opt, "hex-suffixes": opt,
				"filter": {arg: 1, kind: kUnknown}, "separator": req})},
	"csplit": {short: "b:f:kn:qsz", operands: []argKind{kRead, kNone},
		shortKinds: map[byte]argKind{'f': kPrefix, 'b': kSuffix}, defaultPrefix: "xx", suffixFormat: true,
		long: with(flags("keep-files", "quiet", "silent", "elide-empty-files", "suppress-matched"),
			map[string]longOpt{"suffix-format": {arg: 1, kind: kSuffix}, "prefix": {arg: 1, kind: kPrefix}, "digits": req})},
	"base64": {short: "diw:", operands: []argKind{kRead},
		long: with(flags("decode", "ignore-garbage"), map[string]longOpt{"wrap": req})},
}
