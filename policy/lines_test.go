package policy_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/policy"
)

// TestProblemLineInLaterCommand: a mistake in the third [[allowlist.commands]] table (a command
// added by hand, without its sha256; a bad glob in its deny_args) is reported at that table's
// lines, not at the first command's, where the same key is written correctly.
func TestProblemLineInLaterCommand(t *testing.T) {
	const pin = `"0000000000000000000000000000000000000000000000000000000000000000"`
	head := validAllowlist + // wc: lines 13-17
		"\n[[allowlist.commands]]\nname = \"sort\"\npath = \"/usr/bin/sort\"\nsha256 = " + pin + "\n" + // 19-22
		"\n[[allowlist.commands]]\nname = \"sed\"\npath = \"/usr/bin/sed\"\n" // 24-26
	cases := []struct {
		name, tail, key string
		line            int
	}{
		{"missing sha256", "", "allowlist.commands[2].sha256", 24},
		{"bad glob", "sha256 = " + pin + "\ndeny_args = [\"--in-place*\", \"[x\"]\n", "allowlist.commands[2].deny_args[1]", 28},
		{"bad glob, one a line", "sha256 = " + pin + "\ndeny_args = [\n  \"--in-place*\",\n  \"[x\",\n]\n", "allowlist.commands[2].deny_args[1]", 30},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := policy.Parse("p.toml", []byte(head+c.tail))
			var pe *policy.Error
			if !errors.As(err, &pe) {
				t.Fatalf("err = %v, want *policy.Error", err)
			}
			for _, pr := range pe.Problems {
				if pr.Key == c.key {
					if pr.Line != c.line {
						t.Errorf("%s located at line %d, want %d (the sed command's)", pr.Key, pr.Line, c.line)
					}
					return
				}
			}
			t.Errorf("no problem with key %q in:\n%v", c.key, err)
		})
	}
	if strings.Count(head, "[[allowlist.commands]]") != 3 {
		t.Fatal("the policy should hold three commands")
	}
}

// TestTypeErrorLineInLaterCommand: deny_args = "x" (a string, not a list) in the second of three
// commands is one problem, at its line. The decoder names the line where deny_args was written
// last (the third command's, correct there): that line was reported too, as a second problem.
func TestTypeErrorLineInLaterCommand(t *testing.T) {
	const pin = `"0000000000000000000000000000000000000000000000000000000000000000"`
	src := validAllowlist + // wc: lines 13-17, deny_args at 17
		"\n[[allowlist.commands]]\nname = \"sort\"\npath = \"/usr/bin/sort\"\nsha256 = " + pin + "\ndeny_args = \"--compress-program*\"\n" + // 19-23
		"\n[[allowlist.commands]]\nname = \"tail\"\npath = \"/usr/bin/tail\"\nsha256 = " + pin + "\ndeny_args = [\"--pid*\"]\n" // 25-29
	_, err := policy.Parse("p.toml", []byte(src))
	var pe *policy.Error
	if !errors.As(err, &pe) {
		t.Fatalf("err = %v, want *policy.Error", err)
	}
	if len(pe.Problems) != 1 || pe.Problems[0].Line != 23 || !strings.Contains(pe.Problems[0].Msg, "takes a list") {
		t.Errorf("want one problem, at line 23 (sort's deny_args), got:\n%v", err)
	}
}

// TestTypeErrorDoesNotHideOtherProblems: README says every problem in a file is reported at once,
// wrongly typed values included. A wrongly typed value (pids = "lots") stopped the decoder, and
// only the other wrongly typed values and unknown keys were reported: a bad deny_args glob, a
// missing sha256 and an out-of-range limit came out one round later, after the type was fixed
// (trial22). A blanked value is not reported a second time (sha256 = 12 is not also "missing").
func TestTypeErrorDoesNotHideOtherProblems(t *testing.T) {
	src := strings.Replace(validAllowlist, "timeout = \"30s\"", "timeout = \"30s\"\npids = \"lots\"\nmax_concurrent = 100000", 1) + // pids 7, max_concurrent 8
		"\n[[allowlist.commands]]\nname = \"sed\"\npath = \"/usr/bin/sed\"\nsha256 = 12\ndeny_args = [\"--in-place*\", \"[x\"]\n" // 21-25
	_, err := policy.Parse("p.toml", []byte(src))
	var pe *policy.Error
	if !errors.As(err, &pe) {
		t.Fatalf("err = %v, want *policy.Error", err)
	}
	want := map[string]int{
		"limits.pids":                        7,
		"limits.max_concurrent":              8,
		"allowlist.commands[1].sha256":       24,
		"allowlist.commands[1].deny_args[1]": 25,
	}
	got := map[string]int{}
	for _, pr := range pe.Problems {
		got[pr.Key] = pr.Line
	}
	for k, line := range want {
		if l, ok := got[k]; !ok {
			t.Errorf("no problem with key %q", k)
		} else if l != line {
			t.Errorf("%s at line %d, want %d", k, l, line)
		}
	}
	if len(pe.Problems) != len(want) {
		t.Errorf("want %d problems, got %d:\n%v", len(want), len(pe.Problems), err)
	}
}

// A word left unquoted where a value goes gets the quoted value as its fix, not the generic
// "correct the TOML syntax" (trial25).
func TestBareWordFixQuotesIt(t *testing.T) {
	_, err := policy.Parse("p.toml", []byte("version = 1\nscheme  = allowlist\n"))
	var pe *policy.Error
	if !errors.As(err, &pe) || len(pe.Problems) != 1 {
		t.Fatalf("err = %v, want one problem", err)
	}
	if p := pe.Problems[0]; p.Line != 2 || p.Fix != `a text value is quoted: scheme = "allowlist"` {
		t.Errorf("line %d, fix %q", p.Line, p.Fix)
	}
}

// A duration or a size written wrong gets its own "write it like …" as the fix, and the generic
// "correct the TOML syntax" no longer beside it (trial25 #5).
func TestUnitValueFixIsItsOwn(t *testing.T) {
	_, err := policy.Parse("p.toml", []byte("version = 1\nscheme = \"allowlist\"\n[limits]\ntimeout = \"30 seconds\"\nmemory = \"12 parsecs\"\n"))
	var pe *policy.Error
	if !errors.As(err, &pe) {
		t.Fatalf("err = %v", err)
	}
	want := map[string]string{"limits.timeout": `write it like "30s", "2m" or "1m30s"`, "limits.memory": `write it like "256MiB", "64KiB" or a number of bytes`}
	for _, p := range pe.Problems {
		if w, ok := want[p.Key]; ok {
			if p.Fix != w || strings.Contains(p.Msg, "write it like") {
				t.Errorf("%s: msg %q, fix %q (want the fix %q)", p.Key, p.Msg, p.Fix, w)
			}
			delete(want, p.Key)
		}
	}
	if len(want) > 0 {
		t.Errorf("no problem for %v: %v", want, err)
	}
}

// Two of the parser's messages said in the file's words with their fix (trial34): a string whose
// quote is not closed, and a table written twice.
func TestParserWordsSaidPlainly(t *testing.T) {
	for src, want := range map[string][]string{
		"version = 1\nscheme = \"allowlist\"\n[allowlist]\nworkspace = \"/tmp/x\n":        {"p.toml:4", "a string is not closed on its line", "close it with the quote"},
		"version = 1\nscheme = \"docker\"\n[docker]\nimage = \"a\"\n[docker]\npool = 1\n": {"p.toml:5", "docker is written twice", "keep one [docker]"},
	} {
		_, err := policy.Parse("p.toml", []byte(src))
		for _, w := range want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%q: %v, want %q", src, err, w)
			}
		}
	}
}
