package main

import "github.com/mcpsandbox/mcpsandbox/internal/mutant"

// mutated: a mechanism switched off by `make mutants`; the constant false in a release build.
func mutated(name string) bool { return mutant.On(name) }
