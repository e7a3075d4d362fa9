package generate

import (
	"io"

	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/spf13/pflag"
)

// Wizard is a scheme's part of init: what the wizard says about it, and its own answers (bound
// to init's flags, asked by its questions, turned into its policy section). Each scheme's entry
// holds its own (scheme.Scheme.Wizard; nil: init does not offer the scheme); this package
// knows none of them and asks the answers' Wizards.
type Wizard struct {
	Blurb string // one line, shown beside the scheme's choice
	Needs string // what must be in place first; "" = nothing
	// New makes the scheme's own answers, empty.
	New func() SchemeAnswers
}

// flagRoleKey is the pflag annotation naming what a scheme's init flag sets in words every
// scheme shares, and its value's placeholder (SetFlagRole).
const flagRoleKey = "mcpsandbox-init-role"

// SetFlagRole says that the scheme's flag name sets role ("workspace", "image", "reuse": words
// the schemes share) with a value shown as arg: given with another scheme, init names that
// scheme's flag of the same role instead.
func SetFlagRole(fl *pflag.FlagSet, name, role, arg string) {
	if err := fl.SetAnnotation(name, flagRoleKey, []string{role, arg}); err != nil {
		panic(err) // a flag the scheme did not bind: a build-time mistake
	}
}

// FlagRole is the role and placeholder SetFlagRole gave f ("" when none).
func FlagRole(f *pflag.Flag) (role, arg string) {
	if v := f.Annotations[flagRoleKey]; len(v) == 2 {
		return v[0], v[1]
	}
	return "", ""
}

// SchemeAnswers are one scheme's own answers. Optional parts are further interfaces: NetAnswers
// (the scheme's network), Preparer (what init makes on the host before writing), Warner.
type SchemeAnswers interface {
	// Flags binds init's flags of the scheme to these answers.
	Flags(fl *pflag.FlagSet)
	// Questions are the scheme's own questions, in order; they reach these answers through
	// the Answers they are given (Answers.Own).
	Questions() []Question
	// Missing lists the flags a run without the wizard lacks, as "--flag VALUE".
	Missing() []string
	// From reads the scheme's section of p back into these answers (a re-run starts from it);
	// a holds the common answers read so far.
	From(a *Answers, p *policy.Policy)
	// Prefill fills what neither a flag (given) nor an existing policy said from d, the answers
	// From the scheme's default policy, or with base from the policy a re-run starts from.
	Prefill(d SchemeAnswers, given func(flag string) bool, base bool)
	// Apply sets the scheme's section of p: a holds the common answers, net the network they
	// give (NetAnswers.Network), fromBase says p is the policy a re-run started from.
	Apply(a *Answers, p *policy.Policy, net policy.Network, fromBase bool) error
}

// NetAnswers are the answers of a scheme whose section has a `network` the wizard asks for.
type NetAnswers interface {
	// Network is the `network` value the answers give (hosts: the host list, expanded and checked).
	Network(a *Answers, hosts []string) (policy.Network, error)
	// AllHosts reports whether the answers give every host (the wizard's NetChoiceAll).
	AllHosts(a *Answers) bool
	// SetAllHosts records the wizard's choice of every host, or of less.
	SetAllHosts(a *Answers, all bool)
}

// Preparer is a scheme's answers that make something on the host before init writes (its
// workspace); created is what it made, for removal if the write fails ("" = nothing).
type Preparer interface {
	Prepare(p *policy.Policy, log io.Writer) (created string, err error)
}

// Warner is a scheme's answers that warn about the policy they built before init writes it.
type Warner interface {
	Warnings(p *policy.Policy) []string
}

// Own is the own answers of the answers' scheme (nil when no wizard offers it).
func (a *Answers) Own() SchemeAnswers { return a.OwnOf(a.Scheme) }

// OwnOf is the named scheme's own answers, made by its Wizard on first use and kept (nil when
// a.Wizards has none for it).
func (a *Answers) OwnOf(scheme string) SchemeAnswers {
	if s, ok := a.schemes[scheme]; ok {
		return s
	}
	w := a.Wizards[scheme]
	if w == nil || w.New == nil {
		return nil
	}
	if a.schemes == nil {
		a.schemes = map[string]SchemeAnswers{}
	}
	s := w.New()
	a.schemes[scheme] = s
	return s
}
