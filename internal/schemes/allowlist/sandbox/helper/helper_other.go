//go:build !linux

package helper

import (
	"fmt"
	"os"
)

// Main is never reached off Linux (serve refuses the allowlist scheme there first); if it is, it
// says why and exits.
func Main() {
	fmt.Fprintln(os.Stderr, "mcpsandbox: the exec helper runs only on Linux")
	os.Exit(126)
}
