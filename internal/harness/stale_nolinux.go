//go:build !linux

package harness

// processStart: no portable start time here, so arenas are not marked and no stale one is
// removed (a run killed outright leaves its directories; Close removes them otherwise).
func processStart(pid int) (string, bool) { return "", false }

func ownedByMe(path string) bool { return false }

// runPlace: no pid namespace to name here (arenas are not marked).
func runPlace() (ns, boot string) { return "", "" }

// makeRemovable changes no mode here: a path-walking chmod could be redirected by a link
// another user swaps in (atk36b F1), and only Linux offers the descriptor walk that is not. A
// directory a sandbox left read-only stays behind.
func makeRemovable(dir string) {}
