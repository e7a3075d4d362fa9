package generate

import (
	"slices"
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/policy"
)

// Host words as --network-hosts and the wizard take them: presets expand, every host comes back
// canonical and once, every bad word is named with its fix.
func TestExpandHosts(t *testing.T) {
	cases := []struct {
		words []string
		want  []string // nil with errs set: refused
		errs  []string // each must appear in the error
	}{
		{[]string{"pypi"}, []string{"pypi.org", "files.pythonhosted.org"}, nil},
		{[]string{"PyPI", "npm", "github"}, []string{"pypi.org", "files.pythonhosted.org", "registry.npmjs.org", "github.com", "codeload.github.com", "objects.githubusercontent.com"}, nil},
		{[]string{"pypi.org", "pypi", " API.Example.com.:443 ", "*.example.com", "203.0.113.7", "[2001:db8::1]:8443"},
			[]string{"pypi.org", "files.pythonhosted.org", "api.example.com:443", "*.example.com", "203.0.113.7", "[2001:db8::1]:8443"}, nil},
		{[]string{"https://pypi.org/simple"}, nil, []string{`"https://pypi.org/simple" is a URL`, `e.g. "pypi.org"`}},
		{[]string{"pypi.org/simple"}, nil, []string{"has a path", `"pypi.org"`}},
		{[]string{"pip"}, nil, []string{`"pip" is neither a preset nor a full host name: did you mean the preset pypi?`}},
		{[]string{"pypy"}, nil, []string{`did you mean the preset pypi?`}},
		{[]string{"intranet"}, nil, []string{`"intranet" is neither a preset (pypi, npm, github) nor a full host name`}},
		{[]string{"localhost"}, nil, []string{`"localhost" is this machine's loopback, which calls never reach`}},
		{[]string{"*"}, nil, []string{"allows every host"}},
		{[]string{"*.com"}, nil, []string{"too broad"}},
		{[]string{"127.0.0.1"}, nil, []string{"loopback", "always refuses"}},
		{[]string{"169.254.169.254"}, nil, []string{"cloud metadata"}},
		{[]string{"10.*.*.*"}, nil, []string{"exact literals"}},
		{[]string{"pypi.org:0"}, nil, []string{"1..65535"}},
		{[]string{""}, nil, []string{"empty host"}},
		// every bad word, not just the first; the good ones do not hide them
		{[]string{"ok.example.com", "http://a.example.com", "b", "192.168.1.1"}, nil, []string{`"http://a.example.com" is a URL`, `"b" is neither`, "private (192.168.0.0/16)"}},
	}
	for _, c := range cases {
		got, err := ExpandHosts(c.words)
		if c.errs != nil {
			if err == nil {
				t.Errorf("%q: accepted as %q", c.words, got)
				continue
			}
			for _, e := range c.errs {
				if !strings.Contains(err.Error(), e) {
					t.Errorf("%q: error %q lacks %q", c.words, err, e)
				}
			}
			continue
		}
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("%q = %q, %v; want %q", c.words, got, err, c.want)
		}
		// What init accepts, the policy accepts, as written.
		if _, err := policy.NetworkHosts(got...); err != nil {
			t.Errorf("%q: the policy refuses what init accepted: %v", c.words, err)
		}
	}
}
