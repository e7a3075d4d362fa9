package policy

// ReachAsForTest judges what is reachable as uid with groups gids for one test.
func ReachAsForTest(uid int, gids []int) (restore func()) {
	old := Unreachable
	Unreachable = func(p string) string { return unreachableAs(p, uid, gids) }
	return func() { Unreachable = old }
}
