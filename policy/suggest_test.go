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
		// init's flag names and shortened keys (trial30 F9)
		{"version = 1\n[limits]\nmax_output = \"1MiB\"\n", "did you mean limits.max_output_bytes?"},
		{"version = 1\n[limits]\nmax-output = \"1MiB\"\n", "did you mean limits.max_output_bytes?"},
		{"version = 1\n[limits]\nworkspace-quota = \"1MiB\"\n", "did you mean limits.workspace_quota?"},
		// nothing close: the general advice, no guess, pointing at the keys, not init's flags
		{"version = 1\n[limits]\nbananas = 3\n", "remove it or check its spelling against README.md's policy reference"},
		{"version = 1\n[limits]\nmax = 3\n", "remove it or check its spelling"},
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
	src := "version = 1\nscheme = \"allowlist\"\n[limits]\ntimeout = 5\nmax_concurrent = \"four\"\n[allowlist]\nnetwork = 3\n"
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
