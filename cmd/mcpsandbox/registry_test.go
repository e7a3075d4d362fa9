package main

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/generate"
	"github.com/mcpsandbox/mcpsandbox/scheme"
	"github.com/mcpsandbox/mcpsandbox/schemes"
)

// init's host needs come from the scheme's registry entry: a scheme registered in this test
// only is asked, with the answers and the prompt, and its refusal stops init; cmd names it
// nowhere.
func TestInitAsksTheRegistryForNeeds(t *testing.T) {
	all := slices.Clone(schemes.All)
	t.Cleanup(func() { schemes.All = all })
	var asked *generate.Answers
	schemes.All = append(schemes.All, &scheme.Scheme{Name: "toy", Executor: nil, Unavailable: "a toy",
		Needs: func(_ context.Context, a *generate.Answers, pr scheme.Prompt) error {
			asked = a
			if pr.Out == nil || pr.Confirm == nil {
				t.Error("the prompt has no writer or no confirm")
			}
			return errors.New("the toy scheme needs a toy")
		}})
	var out bytes.Buffer
	o := &InitOptions{IO: &Factory{Out: &out, ErrOut: &out}, A: generate.Answers{Scheme: "toy"}}
	err := checkNeeds(context.Background(), o, &asker{f: o.IO})
	if asked != &o.A || err == nil || err.Error() != "the toy scheme needs a toy" {
		t.Fatalf("checkNeeds = %v (answers passed: %v)", err, asked == &o.A)
	}
	// without needs, the registry's word on whether serve runs it decides
	schemes.All[len(schemes.All)-1].Needs = nil
	err = checkNeeds(context.Background(), o, &asker{f: o.IO})
	if err == nil || !strings.Contains(err.Error(), "the toy scheme cannot run in this build") {
		t.Fatalf("checkNeeds without needs = %v", err)
	}
}
