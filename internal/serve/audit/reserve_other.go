//go:build !linux

package audit

import "os"

// reserveSpace holds no room where fallocate is Linux's: appends go on as before, and the Log
// says so (ReserveNote).
func reserveSpace(*os.File, int64, int64) error { return errNoFallocate }

// spaceFor tells nothing here.
func spaceFor(*os.File, int64) error { return nil }
