package main

import (
	"fmt"
	"io"

	"github.com/mcpsandbox/mcpsandbox/internal/schemes"
	"github.com/mcpsandbox/mcpsandbox/internal/verify"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// printWriteDirNotes says, for a policy init --wrap wrote or kept, which of its wrap.write
// directories the server's uid cannot write (as root: nobody, 65534), with the fix: verify's
// MS505. Its start check passes, and every write there fails EACCES (trial35 F2).
func printWriteDirNotes(w io.Writer, policyFile string) {
	p, err := policy.Load(policyFile)
	if err != nil {
		return
	}
	sc, err := schemes.For(p)
	if err != nil {
		return
	}
	for _, f := range verify.Audit(p, policyFile, sc.Audit) {
		if f.Rule == "MS505" {
			fmt.Fprintf(w, "  note: %s; fix: %s\n", f.Message, f.Fix)
		}
	}
}
