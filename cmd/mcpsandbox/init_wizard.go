package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	"github.com/AlecAivazis/survey/v2"
	"github.com/AlecAivazis/survey/v2/terminal"
	"github.com/mcpsandbox/mcpsandbox/internal/generate"
	"github.com/mcpsandbox/mcpsandbox/internal/scheme"
	"github.com/mcpsandbox/mcpsandbox/internal/schemes"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// asker asks on the terminal when there is one, and answers "no" otherwise (flags decide).
type asker struct {
	f  *Factory
	on bool
}

func (a *asker) opts() survey.AskOpt {
	return survey.WithStdio(a.f.In.(terminal.FileReader), a.f.Out.(terminal.FileWriter), a.f.ErrOut)
}

func (a *asker) confirm(msg string, def bool) (bool, error) {
	if !a.on {
		return false, nil
	}
	v := def
	err := survey.AskOne(&survey.Confirm{Message: msg, Default: def}, &v, a.opts())
	return v, interrupted(err)
}

// errCancelled: the user pressed Ctrl-C.
var errCancelled = errors.New("cancelled: nothing written")

func interrupted(err error) error {
	if errors.Is(err, terminal.InterruptErr) {
		return errCancelled
	}
	return err
}

// question asks one generate.Question, unless its flag was given or it does not apply.
func (a *asker) question(q generate.Question, ans *generate.Answers, env generate.Env, given func(string) bool) error {
	if q.Flag != "" && given(q.Flag) || slices.ContainsFunc(q.Flags, given) || q.When != nil && !q.When(ans) {
		return nil
	}
	var def any
	if q.Default != nil {
		def = q.Default(ans, env)
	}
	describe := func(v string, _ int) string {
		if q.Describe == nil {
			return ""
		}
		return q.Describe(v)
	}
	opts := []survey.AskOpt{a.opts()}
	var err error
	switch q.Kind {
	case generate.Input:
		s, _ := def.(string)
		if q.Validate != nil {
			opts = append(opts, survey.WithValidator(func(v any) error { return q.Validate(ans, v.(string), env) }))
		}
		err = survey.AskOne(&survey.Input{Message: q.Message(ans), Default: s}, &s, opts...)
		def = s
	case generate.Confirm:
		b, _ := def.(bool)
		err = survey.AskOne(&survey.Confirm{Message: q.Message(ans), Default: b}, &b, opts...)
		def = b
	case generate.Select:
		s, _ := def.(string)
		p := &survey.Select{Message: q.Message(ans), Options: q.Options(ans), Description: describe, PageSize: q.PageSize}
		if s != "" {
			p.Default = s
		}
		err = survey.AskOne(p, &s, opts...)
		def = s
	case generate.MultiSelect:
		d, _ := def.([]string)
		var got []string
		err = survey.AskOne(&survey.MultiSelect{Message: q.Message(ans), Options: q.Options(ans), Default: d, Description: describe, PageSize: q.PageSize}, &got, opts...)
		def = got
	}
	if err != nil {
		return interrupted(err)
	}
	q.Set(ans, def)
	return nil
}

// runWizard asks what the flags left open: the scheme, its questions (its Wizard's),
// what it needs (checked before anything is written), the limits, the clients, the policy path.
// A re-run starts from the policy already there.
func runWizard(ctx context.Context, o *InitOptions, env generate.Env, ask *asker) error {
	a := &o.A
	if running, err := askRunning(o, env, ask); err != nil || running {
		if err != nil {
			return err
		}
		return wizardClientsOfRunning(ctx, o, env, ask)
	}
	from, _ := filepath.Abs(generate.ExpandHome(o.PolicyOut, env.Home))
	if old, err := policy.Load(from); err == nil {
		a.Base, o.baseFrom = old, from
		fmt.Fprintf(o.IO.Out, "Starting from your policy at %s: its answers are the defaults.\n", o.PolicyOut)
	} else if !errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintf(o.IO.ErrOut, "note: %v\n  starting from the defaults instead\n", err)
	}
	def := ""
	if a.Base != nil {
		def = a.Base.Scheme
	}
	if err := askScheme(o, env, ask, def); err != nil {
		return err
	}
	return wizardAnswers(ctx, o, env, ask)
}

// wizardAnswers asks what follows the scheme: its own questions (what it needs checked), the
// limits, how clients reach serve, the clients, the policy's path. Each question's default is
// its answer so far, so asked again (changeAnswers) Enter keeps it.
func wizardAnswers(ctx context.Context, o *InitOptions, env generate.Env, ask *asker) error {
	a := &o.A
	if err := schemeAnswers(ctx, o, env, ask); err != nil {
		return err
	}
	for _, q := range generate.LimitQuestions {
		if err := ask.question(q, a, env, o.set); err != nil {
			return err
		}
	}
	for _, q := range generate.TransportQuestions {
		if err := ask.question(q, a, env, o.set); err != nil {
			return err
		}
	}
	if err := askClients(o, env, ask); err != nil {
		return err
	}
	if !o.set("policy-out") {
		q := generate.Question{Kind: generate.Input, Message: func(*generate.Answers) string { return "Write the policy to:" },
			Default:  func(*generate.Answers, generate.Env) any { return o.PolicyOut },
			Validate: func(a *generate.Answers, v string, e generate.Env) error { return generate.CheckPolicyOut(*a, v, e) },
			Set:      func(_ *generate.Answers, v any) { o.PolicyOut = v.(string) }}
		if err := ask.question(q, a, env, o.set); err != nil {
			return err
		}
	}
	return nil
}

// askScheme asks the scheme (def preselected when offered), unless --scheme gave it, checks the
// network flags against it, says what it needs, and fills its answers' defaults.
func askScheme(o *InitOptions, env generate.Env, ask *asker, def string) error {
	if err := schemeQuestion(o, env, ask, def, &o.A.Scheme); err != nil {
		return err
	}
	return schemeChosen(o)
}

// schemeQuestion asks which scheme into *pick, def preselected when offered, unless --scheme gave it.
func schemeQuestion(o *InitOptions, env generate.Env, ask *asker, def string, pick *string) error {
	a := &o.A
	if o.set("scheme") {
		return nil
	}
	offered := schemes.Offered()
	if !slices.Contains(offered, def) {
		def = offered[0]
	}
	q := generate.Question{Kind: generate.Select, Message: func(*generate.Answers) string { return "Which sandbox scheme?" },
		Options:  func(*generate.Answers) []string { return offered },
		Describe: func(v string) string { return a.Wizards[v].Blurb },
		Default:  func(*generate.Answers, generate.Env) any { return def },
		Set:      func(_ *generate.Answers, v any) { *pick = v.(string) }}
	return ask.question(q, a, env, o.set)
}

// changeAnswers goes over the answers again from the preview, each one the default (flags given
// stay given): the scheme (another one starts from its defaults, as "Choose another scheme" does;
// the same one keeps every answer), then the rest (wizardAnswers); for the clients of a running
// server, its URL, the token's variable and the clients.
func changeAnswers(ctx context.Context, o *InitOptions, env generate.Env, ask *asker) error {
	if o.clients {
		return wizardClientsOfRunning(ctx, o, env, ask)
	}
	a := &o.A
	pick := a.Scheme
	if err := schemeQuestion(o, env, ask, a.Scheme, &pick); err != nil {
		return err
	}
	if pick != a.Scheme {
		if !o.set("network") && !o.set("network-hosts") {
			a.Network, a.Hosts = false, nil // the old scheme's network answer: the new one asks its own
		}
		a.Scheme = pick
		if err := schemeChosen(o); err != nil {
			return err
		}
	}
	return wizardAnswers(ctx, o, env, ask)
}

// schemeChosen checks the network flags against the scheme chosen, says what it needs, and fills
// its answers' defaults.
func schemeChosen(o *InitOptions) error {
	a := &o.A
	if err := netFlags(o); err != nil { // the scheme is known now
		return err
	}
	if w := a.Wizards[a.Scheme]; w != nil && w.Needs != "" {
		fmt.Fprintf(o.IO.Out, "The %s scheme needs %s. init checks this before writing anything.\n", a.Scheme, w.Needs)
	}
	a.Prefill(o.set)
	return nil
}

// The choices when what the scheme needs is missing: the answers given so far stay.
const (
	needsRetry  = "Try again (after fixing it, e.g. in another terminal)"
	needsChange = "Change my answers for this scheme (yours are the defaults)"
	needsOther  = "Choose another scheme (your other answers are kept)"
	needsQuit   = "Quit (nothing is written)"
)

// needsChoices are the choices after err, a failed check of what the scheme needs: try again
// (not when it cannot help), change the scheme's answers (when it asked some), choose another
// scheme (unless --scheme chose it; first when trying again cannot or seldom helps), quit.
func needsChoices(o *InitOptions, qs []generate.Question, err error) []string {
	choices := []string{needsRetry}
	if slices.ContainsFunc(qs, func(q generate.Question) bool { return q.Flag == "" || !o.set(q.Flag) }) {
		choices = append(choices, needsChange)
	}
	restart, unlikely := (*scheme.RestartError)(nil), (*scheme.RetryUnlikelyError)(nil)
	if errors.As(err, &restart) && !mutated("wizard-retry-env") {
		choices = choices[1:] // a retry sees the same environment: it cannot succeed
	}
	if !o.set("scheme") && !mutated("wizard-needs-no-other-scheme") {
		// the way on for a user whose scheme cannot run here: another, every other answer kept (trial33 F10)
		if restart != nil || errors.As(err, &unlikely) {
			choices = append([]string{needsOther}, choices...)
		} else {
			choices = append(choices, needsOther)
		}
	}
	return append(choices, needsQuit)
}

// schemeAnswers asks the scheme's questions and checks what it needs (checkNeeds). When the
// check fails (no engine, a pull that failed, no key), nothing already answered is lost: the
// wizard says what is wrong and offers to try again, to change the scheme's answers (each one
// given is the default), or to quit.
func schemeAnswers(ctx context.Context, o *InitOptions, env generate.Env, ask *asker) error {
	a := &o.A
	questions := func() []generate.Question {
		if own := a.Own(); own != nil {
			return own.Questions()
		}
		return nil
	}
	qs := questions()
	for next := 0; ; { // next: the first of qs not yet asked this round
		var err error
		for ; next < len(qs) && err == nil; next++ {
			if err := ask.question(qs[next], a, env, o.set); err != nil {
				return err
			}
			// checked as soon as what it reads is answered, not questions later (trial37 F14)
			if qs[next].ThenNeeds && !mutated("wizard-needs-checked-late") {
				err = checkNeeds(ctx, o, ask)
			}
		}
		if err == nil {
			err = checkNeeds(ctx, o, ask)
		}
		if err == nil || errors.Is(err, errCancelled) || mutated("wizard-needs-exit") {
			return err
		}
		fmt.Fprintf(o.IO.Out, "\n%s\n", strings.TrimSuffix(strings.TrimSuffix(err.Error(), " Nothing was written"), "."))
		pick, qerr := whatNow(o, env, ask, needsChoices(o, qs, err))
		if qerr != nil {
			return qerr
		}
		switch pick {
		case needsQuit:
			return err
		case needsOther:
			old := a.Scheme
			if !o.set("network") && !o.set("network-hosts") {
				a.Network, a.Hosts = false, nil // the old scheme's network answer: the new one asks its own
			}
			if qerr := askScheme(o, env, ask, nextScheme(old)); qerr != nil {
				return qerr
			}
			qs, next = questions(), 0
		case needsChange:
			next = 0
		}
		// needsRetry: the questions after the check, if any, are still to ask
	}
}

// nextScheme is the scheme preselected when the user leaves old: the first other one offered.
func nextScheme(old string) string {
	for _, s := range schemes.Offered() {
		if s != old {
			return s
		}
	}
	return old
}

// newPlan plans every write. In the wizard, a client config that already has a different server
// of the name, whose replacement was declined, asks for another name to add this one under
// (every answer kept; empty quits) instead of ending init with the flags' advice (--force,
// --name) and every answer lost.
func newPlan(o *InitOptions, popts generate.PlanOptions, wiz bool, ask *asker, env generate.Env) (*generate.Plan, error) {
	for {
		plan, err := generate.NewPlan(popts)
		var there *generate.PolicyExistsError
		if wiz && errors.As(err, &there) && !mutated("wizard-policy-kept-exit") {
			// "No" to replacing a policy (a hand-edited one, say) asks for another path, as a kept
			// server name asks for another name, instead of ending with flags' advice (trial32 F20)
			out, aerr := askPolicyOut(popts.Answers, there.Path, ask, env)
			if aerr != nil {
				return nil, aerr
			}
			popts.PolicyOut, o.PolicyOut = out, out
			continue
		}
		var taken *generate.ExistsError
		if !wiz || !errors.As(err, &taken) || mutated("wizard-name-taken-exit") {
			return plan, err
		}
		name := ""
		q := generate.Question{Kind: generate.Input,
			Message: func(*generate.Answers) string {
				return fmt.Sprintf("Add this server beside %q under another name (e.g. %s-2; empty: quit, nothing written):", taken.Name, taken.Name)
			},
			Validate: func(_ *generate.Answers, v string, _ generate.Env) error {
				if v = strings.TrimSpace(v); v != "" && !policy.ValidName(v) {
					return fmt.Errorf("%q is not a valid server name: use letters, digits, '-', '_' or '.', at most 64 characters", v)
				}
				return nil
			},
			Set: func(_ *generate.Answers, v any) { name = strings.TrimSpace(v.(string)) }}
		if aerr := ask.question(q, &popts.Answers, env, func(string) bool { return false }); aerr != nil {
			return nil, aerr
		}
		if name == "" { // the flags' advice (--force, --name) is not the wizard's words
			return nil, fmt.Errorf("%w: you kept it and gave no other name, so nothing was written (run init again: "+
				"answer yes to replace it, or give this one another name)", taken)
		}
		popts.Answers.Name, o.A.Name = name, name
	}
}

// askPolicyOut asks where else to write the policy, the file at kept being left as it is; an empty
// answer quits with nothing written.
func askPolicyOut(a generate.Answers, kept string, ask *asker, env generate.Env) (string, error) {
	out := ""
	q := generate.Question{Kind: generate.Input,
		Message: func(*generate.Answers) string {
			return fmt.Sprintf("Keeping %s as it is. Write the new policy to (another file; empty: quit, nothing written):", kept)
		},
		Validate: func(a *generate.Answers, v string, e generate.Env) error {
			if v = strings.TrimSpace(v); v == "" {
				return nil
			}
			return generate.CheckPolicyOut(*a, v, e)
		},
		Set: func(_ *generate.Answers, v any) { out = strings.TrimSpace(v.(string)) }}
	if err := ask.question(q, &a, env, func(string) bool { return false }); err != nil {
		return "", err
	}
	if out == "" {
		return "", fmt.Errorf("%s is kept as it is and no other file was given, so nothing was written (run init again and give another path, "+
			"or answer yes to replace it: the old one is kept as a backup)", kept)
	}
	return out, nil
}

// httpClients are the ids whose config can reach a server at a URL, and for the others' clients
// what to do instead (each client once).
func httpClients(ids []string, env generate.Env) (ok, notes []string) {
	seen := map[string]bool{}
	for _, id := range ids {
		t, err := generate.ResolveTarget(id, env)
		if err != nil || t.Client.HTTP != nil {
			ok = append(ok, id)
			continue
		}
		if !seen[t.Client.ID] {
			seen[t.Client.ID] = true
			notes = append(notes, t.Client.Name+" ("+t.Client.NoHTTP+")")
		}
	}
	return ok, notes
}

// askClients asks which clients to configure; for a URL, only those whose config can reach one.
func askClients(o *InitOptions, env generate.Env, ask *asker) error {
	if o.set("client") {
		return nil
	}
	a := &o.A
	detected := generate.Detect(env)
	ids := generate.ClientIDs()
	if a.HTTPURL != "" && !mutated("wizard-http-offers-stdio-clients") {
		// a client whose config only starts local servers is not offered for a URL: taken
		// (Claude Desktop, preselected when found), it ended the wizard (trial32 F23)
		var notes []string
		ids, notes = httpClients(ids, env)
		detected = slices.DeleteFunc(detected, func(id string) bool { return !slices.Contains(ids, id) })
		for _, n := range notes {
			fmt.Fprintf(o.IO.Out, "Not offered for %s: %s\n", a.HTTPURL, n)
		}
	}
	q := generate.Question{Kind: generate.MultiSelect,
		Message: func(*generate.Answers) string {
			return "Configure which clients? (detected ones are preselected; none = you add the entry by hand)"
		},
		Options: func(*generate.Answers) []string { return ids },
		Describe: func(v string) string {
			if t, err := generate.ResolveTarget(v, env); err == nil {
				return t.Where()
			}
			return ""
		},
		Default: func(*generate.Answers, generate.Env) any {
			if o.clientsAsked { // asked again from the preview: the clients picked
				return slices.DeleteFunc(slices.Clone(o.Clients), func(id string) bool { return !slices.Contains(ids, id) })
			}
			return detected
		},
		Set: func(_ *generate.Answers, v any) { o.Clients, o.clientsAsked = v.([]string), true }, PageSize: 14}
	return ask.question(q, a, env, o.set)
}

// What the wizard does: asked first, for a policy's questions mean nothing to the clients of a
// server already running (it runs the policy it was started with) (trial32 F24).
const (
	initWritesPolicy = "Write a policy and configure clients to run it (they start serve, or reach the serve --http you start with it)"
	initRunning      = "Configure the clients of an mcpsandbox serve --http already running at a URL (it runs its own policy: none is written)"
)

// askRunning asks whether init writes a policy or configures the clients of a running server
// only (true); --scheme says the former, --http without it makes the latter the default.
func askRunning(o *InitOptions, env generate.Env, ask *asker) (bool, error) {
	if o.set("scheme") {
		return false, nil
	}
	pick := initWritesPolicy
	if o.set("http") {
		pick = initRunning
	}
	q := generate.Question{Kind: generate.Select, Message: func(*generate.Answers) string { return "What should init do?" },
		Options: func(*generate.Answers) []string { return []string{initWritesPolicy, initRunning} },
		Default: func(*generate.Answers, generate.Env) any { return pick },
		Set:     func(_ *generate.Answers, v any) { pick = v.(string) }}
	if err := ask.question(q, &o.A, env, o.set); err != nil {
		return false, err
	}
	return pick == initRunning, nil
}

// The choices when nothing answers at the URL, or it refused the token: every answer stays.
const (
	runningRetry  = "Try again (after starting it, e.g. in another terminal)"
	runningChange = "Change the URL or the token's variable (yours are the defaults)"
)

// wizardClientsOfRunning asks the URL of the running server and its token's variable, checks
// that it answers (as init --http without --scheme does), then asks only the clients that can
// reach a URL. The plan then writes their entries alone: no policy, no verify, no serve to start.
func wizardClientsOfRunning(ctx context.Context, o *InitOptions, env generate.Env, ask *asker) error {
	url := generate.TransportQuestions[0]
	url.Message = func(*generate.Answers) string {
		return "URL of the running mcpsandbox serve --http (e.g. http://127.0.0.1:8765/mcp):"
	}
	url.Validate = func(_ *generate.Answers, v string, _ generate.Env) error {
		if strings.TrimSpace(v) == "" {
			return errors.New("give the URL the server answers at (serve --http HOST:PORT serves http://HOST:PORT/mcp)")
		}
		_, err := generate.CheckHTTPURL(v)
		return err
	}
	given := o.set
	for answered := false; !answered; {
		for _, q := range []generate.Question{url, generate.TransportQuestions[1]} {
			if err := ask.question(q, &o.A, env, given); err != nil {
				return err
			}
		}
		for pick := runningRetry; pick == runningRetry; {
			u, _, err := runningAt(ctx, o)
			if answered = err == nil; answered {
				break
			}
			fmt.Fprintf(o.IO.Out, "\n%s: %v\n", u, err)
			choices := []string{runningRetry, needsQuit}
			if !o.set("http") || !o.set("token-env") {
				choices = []string{runningRetry, runningChange, needsQuit}
			}
			if unsetToken(o.IO.Out, err) && !mutated("wizard-token-unset-loop") {
				// trying again cannot help, and flags given are answers to change (trial33 F16)
				choices, given = []string{runningChange, needsQuit}, func(string) bool { return false }
			}
			var qerr error
			if pick, qerr = whatNow(o, env, ask, choices); qerr != nil {
				return qerr
			}
			if pick == needsQuit {
				return fmt.Errorf("%s: %w; nothing was written", u, err)
			}
		}
	}
	o.clients = true
	return askClients(o, env, ask)
}

// unsetToken says whether err is the token's variable unset in init's environment, and if so
// what to do, in the wizard's words: an export elsewhere never reaches this init.
func unsetToken(w io.Writer, err error) bool {
	var unset *generate.TokenUnsetError
	if !errors.As(err, &unset) {
		return false
	}
	fmt.Fprintf(w, "$%s is not set in the environment init runs in (one exported in another terminal never reaches it): "+
		"give the variable that holds the token here, or quit, export %s=… and run init again\n", unset.Var, unset.Var)
	return true
}

// askTransport asks the URL and the token's variable again, whether or not flags gave them.
func askTransport(o *InitOptions, env generate.Env, ask *asker, qs []generate.Question) error {
	for _, q := range qs {
		if err := ask.question(q, &o.A, env, func(string) bool { return false }); err != nil {
			return err
		}
	}
	return nil
}

// whatNow asks what to do after a failed check, the first choice the default.
func whatNow(o *InitOptions, env generate.Env, ask *asker, choices []string) (string, error) {
	pick := choices[len(choices)-1]
	q := generate.Question{Kind: generate.Select, Message: func(*generate.Answers) string { return "What now?" },
		Options: func(*generate.Answers) []string { return choices },
		Default: func(*generate.Answers, generate.Env) any { return choices[0] },
		Set:     func(_ *generate.Answers, v any) { pick = v.(string) }}
	err := ask.question(q, &o.A, env, o.set)
	return pick, err
}
