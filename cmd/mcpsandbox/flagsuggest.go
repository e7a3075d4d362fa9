package main

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// suggestFlag is every command's flag error: an unknown flag gets the nearest the command has
// ("--clinet": did you mean --client?) and the pointer to --help.
func suggestFlag(cmd *cobra.Command, err error) error {
	msg := err.Error()
	if m := badValueRe.FindStringSubmatch(msg); m != nil {
		// pflag's "invalid argument "abc" for "--pids" flag: strconv.ParseInt: parsing …": Go's words
		if parseKinds[m[3]] != "" {
			return fmt.Errorf("--%s %q: give %s (see mcpsandbox %s --help)", m[2], m[1], parseKinds[m[3]], cmd.Name())
		}
	}
	name, ok := strings.CutPrefix(msg, "unknown flag: --")
	if !ok {
		return err
	}
	best, bestD := "", 3
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if d := policy.EditDistance(name, f.Name); d < bestD {
			best, bestD = f.Name, d
		}
	})
	if best != "" && bestD <= 2 {
		return fmt.Errorf("%s: did you mean --%s? (see mcpsandbox %s --help)", msg, best, cmd.Name())
	}
	return fmt.Errorf("%s (see mcpsandbox %s --help)", msg, cmd.Name())
}

// badValueRe matches pflag's error for a value its flag's type does not parse.
var badValueRe = regexp.MustCompile(`^invalid argument "(.*)" for "(?:-\w, )?--([\w-]+)" flag: strconv\.(Parse\w+)`)

// parseKinds says what each strconv parser wanted, in words.
var parseKinds = map[string]string{"ParseInt": "a whole number", "ParseUint": "a whole number", "ParseFloat": "a number", "ParseBool": "true or false"}
