//go:build unix

package policy

// ActAsForTest makes the ownership checks judge for uid, as if serve ran as that user.
func ActAsForTest(uid int) (restore func()) {
	old := euid
	euid = func() int { return uid }
	return func() { euid = old }
}
