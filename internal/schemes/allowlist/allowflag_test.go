package allowlist

import (
	"slices"
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/internal/generate"
	alsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/allowlist/section"
	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/spf13/pflag"
)

// --allow is comma-separated or repeated: a second --allow adds to the first (it used to
// replace it, silently leaving the first command out of the policy).
func TestAllowFlagRepeated(t *testing.T) {
	var a Answers
	fl := pflag.NewFlagSet("init", pflag.ContinueOnError)
	a.Flags(fl)
	if err := fl.Parse([]string{"--allow", "wc", "--allow", "sort,grep", "--allow", ""}); err != nil {
		t.Fatal(err)
	}
	if want := []string{"wc", "sort", "grep"}; !slices.Equal(a.Allow, want) {
		t.Fatalf("--allow wc --allow sort,grep = %q, want %q", a.Allow, want)
	}
}

// The wizard keeps the commands in the order they had (a re-run's policy, the flags): a re-run
// that keeps the same commands changes nothing. Its menu lists them in its own order, and a
// policy init wrote with --allow wc,sort,grep was shown as every command removed and added
// (-commands wc, sort, grep / +commands grep, sort, wc) and replaced; the flags' init then said
// the policy "already exists". New ones go after them; dropped ones go. Catches wizard-command-order.
func TestWizardKeepsTheCommandsOrder(t *testing.T) {
	a := &generate.Answers{Scheme: "allowlist", Wizards: map[string]*generate.Wizard{"allowlist": wizard}}
	opts := commandOptions(a)
	var menu []string
	for _, n := range []string{"wc", "sort", "grep"} {
		if slices.Contains(opts, n) {
			menu = append(menu, n)
		}
	}
	if len(menu) < 2 {
		t.Skip("fewer than two of wc, sort, grep found on this host's fixed PATH")
	}
	was := append(slices.Clone(menu), "/opt/x/tool") // a command the menu does not offer
	Own(a).Allow = slices.Clone(was)
	var picked []string // as the menu returns them: in its order
	for _, o := range opts {
		if slices.Contains(menu, o) {
			picked = append(picked, o)
		}
	}
	for _, q := range questions {
		switch {
		case q.Flag == "allow" && q.Kind == generate.MultiSelect:
			q.Set(a, picked)
		case q.Flag == "allow" && q.Kind == generate.Input:
			q.Set(a, "/opt/x/tool")
		}
	}
	if !slices.Equal(Own(a).Allow, was) {
		t.Fatalf("the same commands picked again: %q, want %q (their order kept)", Own(a).Allow, was)
	}
	for _, q := range questions {
		switch {
		case q.Flag == "allow" && q.Kind == generate.MultiSelect:
			q.Set(a, picked[1:])
		case q.Flag == "allow" && q.Kind == generate.Input:
			q.Set(a, "/opt/x/tool,/opt/y/new")
		}
	}
	want := append(slices.DeleteFunc(slices.Clone(was), func(n string) bool { return n == picked[0] }), "/opt/y/new")
	if !slices.Equal(Own(a).Allow, want) {
		t.Fatalf("one dropped, one added: %q, want %q", Own(a).Allow, want)
	}
}

// Every --allow name that cannot be pinned is named in one refusal, with a note on an
// interpreter among the names: a new user's trial fixed one name per run of init, and saw the
// interpreter's warning only after the last.
func TestAllowNamesEveryMissingCommandAtOnce(t *testing.T) {
	w := &Answers{Workspace: t.TempDir(), Allow: []string{"wc", "frobnicate-mcpsandbox", "bash", "zork-mcpsandbox"}}
	err := w.Apply(&generate.Answers{}, policy.Default(Scheme.Name), policy.Network{Mode: policy.NetNone}, false)
	if err == nil {
		t.Fatal("two missing commands allowed")
	}
	for _, want := range []string{"allow frobnicate-mcpsandbox:", "allow zork-mcpsandbox:", "note: bash runs any code"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the refusal lacks %q:\n%v", want, err)
		}
	}
	// one command by its path and by its name is said as the flag's mistake, not the policy's
	// ("allowlist.commands[1].name: allowlisted twice": trial33 F13)
	w = &Answers{Workspace: t.TempDir(), Allow: []string{"/usr/bin/wc", "wc"}}
	err = w.Apply(&generate.Answers{}, policy.Default(Scheme.Name), policy.Network{Mode: policy.NetNone}, false)
	if err == nil || !strings.Contains(err.Error(), `allow wc: the command "wc" again (as /usr/bin/wc): give each command once`) {
		t.Errorf("wc twice: %v", err)
	}
}

// The interpreters' question speaks of one or of several, and says what no does (trial32 F21:
// "python3, /usr/bin/env runs"; no dropped them with nothing said).
func TestInterpretersQuestionSaysWhatNoDoes(t *testing.T) {
	for _, c := range []struct {
		allow []string
		want  string
	}{
		{[]string{"wc", "python3"}, "python3 runs any code it is given: the allowlist would pin nothing. The docker scheme is the safe way to run code. No takes it out of the commands. Keep python3 anyway?"},
		{[]string{"python3", "wc", "/usr/bin/env"}, "python3, /usr/bin/env run any code they are given: the allowlist would pin nothing. The docker scheme is the safe way to run code. No takes them out of the commands. Keep python3, /usr/bin/env anyway?"},
	} {
		a := &generate.Answers{Scheme: "allowlist", Wizards: map[string]*generate.Wizard{"allowlist": wizard}}
		Own(a).Allow = c.allow
		var got string
		for _, q := range questions {
			if q.Flag == "allow" && q.Kind == generate.Confirm {
				got = q.Message(a)
				q.Set(a, false)
			}
		}
		if got != c.want {
			t.Errorf("%q: %q\nwant %q", c.allow, got, c.want)
		}
		if slices.ContainsFunc(Own(a).Allow, func(n string) bool { return n != "wc" }) {
			t.Errorf("%q, no: %q left, want wc alone", c.allow, Own(a).Allow)
		}
	}
}

// trial37 F13: "python, node runs any code it is given: allowlisting it means ...": two
// interpreters take the plural, as the wizard's question does.
func TestInterpreterWarningGrammar(t *testing.T) {
	p := policy.Default(alsec.Name)
	alsec.Of(p).Commands = []policy.Command{{Name: "python"}, {Name: "node"}}
	w := (&Answers{}).Warnings(p)
	if len(w) != 1 || !strings.HasPrefix(w[0], "python, node run any code they are given: allowlisting them means arbitrary code in the workspace (they can plant") {
		t.Fatalf("two: %q", w)
	}
	alsec.Of(p).Commands = alsec.Of(p).Commands[:1]
	w = (&Answers{}).Warnings(p)
	if len(w) != 1 || !strings.HasPrefix(w[0], "python runs any code it is given: allowlisting it means arbitrary code in the workspace (it can plant") {
		t.Fatalf("one: %q", w)
	}
}
