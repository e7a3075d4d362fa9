package main

import (
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/internal/generate"
)

// init's help lists every client id, in its text and in --client's usage; the list is made when
// the help is shown, not when the commands are built (every command, serve's start above all,
// would decode the client catalogue for nothing).
func TestInitHelpListsClientsLate(t *testing.T) {
	root := NewCmdRoot(&Factory{In: strings.NewReader(""), Out: &strings.Builder{}, ErrOut: &strings.Builder{}})
	ic, _, err := root.Find([]string{"init"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(ic.Long, clientIDsMark) {
		t.Error("init's client list was made when the commands were built")
	}
	ids := generate.ClientIDs()
	for _, args := range [][]string{{"init", "--help"}, {"help", "init"}} {
		out, _, err := runCLI(args...)
		if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		if strings.Contains(out, clientIDsMark) {
			t.Errorf("%v shows the placeholder: %s", args, out)
		}
		list := strings.Join(ids, ", ")
		if !strings.Contains(out, "Clients: "+list) || !strings.Contains(out, "(repeatable): "+list) {
			t.Errorf("%v does not list the clients %s:\n%s", args, list, out)
		}
	}
}
