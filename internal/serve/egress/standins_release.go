//go:build !testhooks

package egress

// A release build has no stand-in hook (see standins.go, built with -tags testhooks): New takes
// its Options as given, and serve has nothing to warn about.

func applyStandIns(*Options) {}

// StandInsWarning is "" in a release build: it has no test hook to warn about.
func StandInsWarning() string { return "" }
