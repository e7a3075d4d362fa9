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
