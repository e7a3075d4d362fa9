package sandbox

import (
	"slices"
	"strings"
	"testing"
)

func TestGetoptModels(t *testing.T) {
	for _, c := range []struct {
		prog string
		args []string
		want []string // "kind:value", kinds r w n u p s
	}{
		{"sort", []string{"-t/", "-k2", "f"}, []string{"n:/", "n:2", "r:f"}},
		{"sort", []string{"-t", "/", "f"}, []string{"n:/", "r:f"}},
		{"sort", []string{"-rno.git/x", "f"}, []string{"w:.git/x", "r:f"}},
		{"sort", []string{"-rn", "-o", "out", "f"}, []string{"w:out", "r:f"}},
		{"sort", []string{"--out=o", "--temp", "d", "--", "-o"}, []string{"w:o", "w:d", "r:-o"}},
		{"sort", []string{"-bo", "x"}, []string{"w:x"}},
		{"sort", []string{"f", "-ox"}, []string{"w:x", "r:f"}}, // permutation
		{"uniq", []string{"-c", "in", "out"}, []string{"r:in", "w:out"}},
		{"uniq", []string{"-f1", "-s", "2", "in", "-"}, []string{"n:1", "n:2", "r:in", "n:-"}},
		{"grep", []string{"-e", ".git", "f"}, []string{"n:.git", "r:f"}},
		{"grep", []string{".git", "f"}, []string{"n:.git", "r:f"}},
		{"grep", []string{"-f", "pats", "f"}, []string{"r:pats", "r:f"}},
		{"grep", []string{"-ipats", "f"}, []string{"n:pats", "r:f"}}, // -i then -p? no: -p unknown
		{"tr", []string{"a-z", "A-Z"}, []string{"n:a-z", "n:A-Z"}},
		{"split", []string{"-l1", "in", ".husky/pre-"}, []string{"n:1", "r:in", "p:.husky/pre-"}},
		{"split", []string{"--additional-suffix=rc", "in", ".npm"}, []string{"s:rc", "r:in", "p:.npm"}},
		{"tail", []string{"--follow", "f"}, []string{"r:f"}},
		{"tail", []string{"--follow=name", "f"}, []string{"n:name", "r:f"}},
	} {
		uses, err := models[c.prog].parse(c.args, false)
		var got []string
		for _, u := range uses {
			got = append(got, string("nrwpsu"[u.kind])+":"+u.value)
		}
		if c.prog == "grep" && c.args[0] == "-ipats" {
			if err == nil {
				t.Errorf("grep -ipats: -p is not a grep option, want an error, got %v", got)
			}
			continue
		}
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("%s %q: got %v %v, want %v", c.prog, c.args, got, err, c.want)
		}
	}
	if _, err := models["sort"].parse([]string{"--s=x"}, false); err == nil || !strings.Contains(err.Error(), "ambiguous") {
		t.Errorf("ambiguous --s accepted: %v", err)
	}
	if _, err := models["sort"].parse([]string{"-Q"}, false); err == nil {
		t.Error("unknown -Q accepted")
	}
	// POSIXLY_CORRECT: options stop at the first operand.
	uses, _ := models["sort"].parse([]string{"f", "-ox"}, true)
	if len(uses) != 2 || uses[1].value != "-ox" || uses[1].kind != kRead {
		t.Errorf("posix parse: %+v", uses)
	}
}

// A program with no model: every argument, every text glued behind single-letter flags and
// every "=value" may be a file it writes; "-", "--" and "" name nothing.
func TestConservativeUses(t *testing.T) {
	uses := conservativeUses([]string{"f", "-", "--", "", "--out=o", "-xo/p", "-k=v"})
	got := map[string]int{}
	for _, u := range uses {
		if u.kind != kUnknown {
			t.Errorf("%+v: want kUnknown", u)
		}
		got[u.value] = u.index
	}
	for v, i := range map[string]int{"f": 1, "--out=o": 5, "o": 5, "-xo/p": 6, "o/p": 6, "/p": 6, "-k=v": 7, "v": 7, "=v": 7} {
		if got[v] != i {
			t.Errorf("%q: argument %d, want %d (uses %+v)", v, got[v], i, uses)
		}
	}
	for _, v := range []string{"-", "--", ""} {
		if _, ok := got[v]; ok {
			t.Errorf("%q judged as a file name", v)
		}
	}
}
