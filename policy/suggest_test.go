package policy

import (
	"strings"
	"testing"
)

func TestUnknownKeySuggestsTheNearKey(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"version = 1\nscheme = \"allowlist\"\n[allowlist]\nworkspace = \"/srv/ws\"\ncomands = []\n", "policy.toml:5: allowlist.comands: unknown key (fix: did you mean allowlist.commands? (or remove it))"},
		{"version = 1\n[limits]\ntimeuot = \"5s\"\n", "did you mean limits.timeout?"},
		{"version = 1\n[allowlst]\nnetwork = false\n", "did you mean allowlist?"},
		{"version = 1\n[[allowlist.commands]]\nname = \"wc\"\npaht = \"/usr/bin/wc\"\n", "did you mean allowlist.commands.path?"},
		// nothing close: the general advice, no guess
		{"version = 1\n[limits]\nbananas = 3\n", "remove it or check its spelling"},
	} {
		_, err := Parse("policy.toml", []byte(c.src))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q:\n got %v\nwant it to contain %q", c.src, err, c.want)
		}
	}
	if s := suggestKey("allowlist.env.FOOO"); s != "" {
		t.Errorf("a key inside a map is never unknown, got suggestion %q", s)
	}
}

func TestEveryWrongTypeIsReported(t *testing.T) {
	src := "version = 1\nscheme = \"allowlist\"\n[limits]\ntimeout = 5\nmax_concurrent = \"four\"\n[allowlist]\nnetwork = \"yes\"\n"
	_, err := Parse("p.toml", []byte(src))
	if err == nil {
		t.Fatal("three wrongly typed values were accepted")
	}
	for _, want := range []string{"p.toml:5: limits.max_concurrent", "p.toml:7: allowlist.network"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("missing %q in:\n%v", want, err)
		}
	}
	if !strings.Contains(err.Error(), "p.toml:4") {
		t.Logf("note: timeout = 5 is %v", err)
	}
}
