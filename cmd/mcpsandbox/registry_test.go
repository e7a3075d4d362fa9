package main

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/internal/generate"
	"github.com/mcpsandbox/mcpsandbox/internal/scheme"
	"github.com/mcpsandbox/mcpsandbox/internal/schemes"
	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/spf13/pflag"
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

// toyAnswers are the toy scheme's own answers in init: one flag, required without the wizard.
type toyAnswers struct{ size string }

func (t *toyAnswers) Flags(fl *pflag.FlagSet)        { fl.StringVar(&t.size, "toy-size", "", "toy: its size") }
func (t *toyAnswers) Questions() []generate.Question { return nil }
func (t *toyAnswers) Missing() []string {
	if t.size == "" {
		return []string{"--toy-size N"}
	}
	return nil
}
func (t *toyAnswers) From(*generate.Answers, *policy.Policy)                  {}
func (t *toyAnswers) Prefill(generate.SchemeAnswers, func(string) bool, bool) {}
func (t *toyAnswers) Apply(*generate.Answers, *policy.Policy, policy.Network, bool) error {
	return nil
}

// A scheme is offered by init through its entry alone: a toy registered in this test gets its
// flags on init and its missing ones reported, and is among the schemes offered; an entry
// without a Wizard (as wrap's) is registered but not offered, and adds no flag. cmd names
// neither.
func TestInitOffersTheRegistrysWizards(t *testing.T) {
	all := slices.Clone(schemes.All)
	t.Cleanup(func() { schemes.All = all })
	schemes.All = append(schemes.All,
		&scheme.Scheme{Name: "toy", Wizard: &generate.Wizard{Blurb: "a toy", New: func() generate.SchemeAnswers { return &toyAnswers{} }}},
		&scheme.Scheme{Name: "quiet"})
	if off := schemes.Offered(); !slices.Contains(off, "toy") || slices.Contains(off, "quiet") {
		t.Fatalf("offered %v: want toy, not quiet", off)
	}
	var got *InitOptions
	f := &Factory{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}}
	cmd := NewCmdInit(f, func(_ context.Context, o *InitOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"--scheme", "toy", "--toy-size", "3"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if own, ok := got.A.Own().(*toyAnswers); !ok || own.size != "3" {
		t.Fatalf("the toy's flag did not reach its answers: %#v", got.A.Own())
	}
	got.A.Own().(*toyAnswers).size = ""
	if m := missingFlags(got); !slices.Contains(m, "--toy-size N") {
		t.Errorf("missing flags %v lack the toy's", m)
	}
}
