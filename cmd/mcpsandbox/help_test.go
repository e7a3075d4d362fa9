package main

import (
	"strings"
	"testing"
	"unicode"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Every flag's value name in --help is one word: pflag takes the first backquoted text of a
// usage string as the value name, so a quoted command (`serve --http`) became one
// (init --http showed "--http serve --http").
func TestFlagValueNames(t *testing.T) {
	root := NewCmdRoot(&Factory{In: strings.NewReader("")})
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.Flags().VisitAll(func(f *pflag.Flag) {
			name, usage := pflag.UnquoteUsage(f)
			if strings.ContainsFunc(name, unicode.IsSpace) || strings.Contains(name, "--") {
				t.Errorf("%s --%s: value name %q (usage %q)", c.CommandPath(), f.Name, name, usage)
			}
		})
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(root)
}

// The help says what --wrap and --unwrap do when given without names (pflag shows them as
// NAMES[=*]), and serve's summary names both of its transports.
func TestHelpWording(t *testing.T) {
	root := NewCmdRoot(&Factory{In: strings.NewReader("")})
	init, _, err := root.Find([]string{"init"})
	if err != nil {
		t.Fatal(err)
	}
	if w := wrapScheme(); w != "" {
		for _, n := range []string{string(w), "un" + string(w)} {
			if u := init.Flags().Lookup(n).Usage; !strings.Contains(u, "--"+n+" alone (shown [=*]: no names)") {
				t.Errorf("init --%s does not say what it does without names: %q", n, u)
			}
		}
	}
	if u := init.Flags().Lookup("http"); u == nil || !strings.Contains(init.Flags().FlagUsages(), "--http URL ") {
		t.Errorf("init --http's value name is not URL:\n%s", init.Flags().FlagUsages())
	}
	serve, _, err := root.Find([]string{"serve"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(serve.Short, "stdio") || !strings.Contains(serve.Short, "HTTP") {
		t.Errorf("serve's summary: %q", serve.Short)
	}
}

// init --http to a URL where nothing answers names the URL first, then what is wrong there:
// not "nothing answers there (…) at URL".
func TestInitHTTPNothingThereWording(t *testing.T) {
	const url = "http://127.0.0.1:9/mcp"
	_, _, err := runCLI("init", "--http", url, "--client", "cursor", "--yes")
	if err == nil || !strings.HasPrefix(err.Error(), url+": nothing answers there (") || strings.Contains(err.Error(), ") at "+url) ||
		!strings.Contains(err.Error(), "start the server first") {
		t.Fatalf("init --http %s: %v", url, err)
	}
}
