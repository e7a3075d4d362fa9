// Command mutants builds mcpsandbox with every enforcement mechanism switchable (-tags mutant),
// switches each off in turn, runs the tests and harness scenarios that claim to catch it, and
// writes the table mutant -> what caught it. It exits 1 when a mutant survives.
//
//	go run ./mutants                       # all of mutants/mutants.toml, table to docs/mutants.md
//	go run ./mutants -only seccomp,pidns   # some
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
)

func main() {
	table := flag.String("table", "mutants/mutants.toml", "the mutant table")
	out := flag.String("o", "docs/mutants.md", "write the markdown table here (\"\" = stdout only)")
	jsonOut := flag.String("json", "", "also write the report as JSON to this file")
	// 4 on 2 CPUs: a catcher mostly waits (a deadline, the engine, a terminal); the whole table
	// took 421 s at 4 against 727 s at 2 on the CI machine, every verdict the same
	jobs := flag.Int("j", 4, "catchers run at once")
	only := flag.String("only", "", "comma-separated mutant names to run (default all)")
	quiet := flag.Bool("q", false, "do not log each catcher's result")
	all := flag.Bool("all", false, "run every catcher of each mutant (default: stop at the first that catches it)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	o := Options{Repo: ".", Table: *table, Jobs: *jobs, Log: os.Stderr, All: *all}
	if *quiet {
		o.Log = nil
	}
	if *only != "" {
		o.Only = strings.Split(*only, ",")
	}
	if wd, err := os.Getwd(); err == nil {
		o.Repo = wd
	}
	rep, err := Run(ctx, o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "mutants:", err)
		os.Exit(2)
	}
	md := rep.Markdown()
	if *out != "" && len(o.Only) == 0 {
		if err := os.WriteFile(*out, []byte(md), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "mutants:", err)
			os.Exit(2)
		}
	}
	fmt.Print(md)
	if *jsonOut != "" {
		b, _ := rep.JSON()
		if err := os.WriteFile(*jsonOut, b, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "mutants:", err)
			os.Exit(2)
		}
	}
	if len(rep.Survived) > 0 {
		fmt.Fprintf(os.Stderr, "mutants: %d survived: %s (write a test that attacks what each one switches off, and name it in %s)\n",
			len(rep.Survived), strings.Join(rep.Survived, ", "), *table)
		os.Exit(1)
	}
}
