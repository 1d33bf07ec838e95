package main

import (
	"fmt"
	"io"
	"os"
)

// command is one subcommand: it gets the arguments after its name and returns the exit status.
type command struct {
	name, summary string
	run           func(args []string, stdout, stderr io.Writer) int
}

var commands = []command{
	{"serve", "run the HTTP server (j17 serve -h for flags)", cmdServe},
	{"spec", "validate a spec file: j17 spec validate spec.json", cmdSpec},
	{"handler", "run a spec's handlers on sample events: j17 handler test ...", cmdHandler},
	{"events", "check events against a spec: j17 events dry-run|validate ...", cmdEvents},
	{"repair", "truncate damaged logs at their first bad record (server stopped): j17 repair [--data DIR]", cmdRepair},
	{"verify", "verify hash chains and Merkle roots offline: j17 verify [--anchor FILE|JSON] PATH", cmdVerify},
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		for _, c := range commands {
			if c.name == args[0] {
				return c.run(args[1:], stdout, stderr)
			}
		}
		if args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
			usage(stdout)
			return 0
		}
		fmt.Fprintf(stderr, "j17: unknown command %q\n\n", args[0])
	}
	usage(stderr)
	return 2
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: j17 <command> [arguments]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "commands:")
	for _, c := range commands {
		fmt.Fprintf(w, "  %-8s %s\n", c.name, c.summary)
	}
}
