//go:build !linux

package harness

// processStart: no portable start time here, so arenas are not marked and no stale one is
// removed (a run killed outright leaves its directories; Close removes them otherwise).
func processStart(pid int) (string, bool) { return "", false }

func ownedByMe(path string) bool { return false }
