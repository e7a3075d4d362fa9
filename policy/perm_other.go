//go:build !unix

package policy

// CheckFileSafe checks ownership and modes on Unix only; elsewhere there is nothing to compare.
func CheckFileSafe(path string) error { return nil }

// CheckBinarySafe checks ownership and modes on Unix only.
func CheckBinarySafe(path string) error { return nil }

// CheckTokenFileSafe checks ownership and modes on Unix only.
func CheckTokenFileSafe(path string) error { return nil }

// CheckAuditPlaceSafe: no owners and modes to judge here.
func CheckAuditPlaceSafe(path string) error { return nil }
