package policy

// FixError is a refusal of serve's whose fix is one concrete step (chmod o-w FILE, move the
// policy out of the workspace). Serve shows the two as one message (Error); verify shows the
// problem and the fix on a line of its own, once, apart (trial32 F9: it showed both fixes).
type FixError struct {
	Problem string // what is wrong, without the fix
	Fix     string // what to do
	text    string // the whole refusal, as serve words it
}

func (e *FixError) Error() string { return e.text }

// withFix is a FixError worded "PROBLEM (fix: FIX)".
func withFix(problem, fix string) error {
	return &FixError{Problem: problem, Fix: fix, text: problem + " (fix: " + fix + ")"}
}

// refusedWithFix is a FixError worded "PROBLEM. This is refused: FIX".
func refusedWithFix(problem, fix string) error {
	return &FixError{Problem: problem, Fix: fix, text: problem + ". This is refused: " + fix}
}
