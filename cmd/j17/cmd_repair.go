package main

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/j17-go/j17/wal"
)

// cmdRepair runs `j17 repair [--data DIR]`: for every log under the data directory
// (DATA/<instance>/<env>/log/) it truncates the log at its first bad record, keeping a copy of
// what it cut, and prints what it did. The server must not be running.
func cmdRepair(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("repair", flag.ContinueOnError)
	fs.SetOutput(stderr)
	data := fs.String("data", cmp.Or(os.Getenv("J17_DATA"), "./data"), "data `directory` (env J17_DATA)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: j17 repair [--data DIR]")
		fmt.Fprintln(stderr, "Truncates every log under DIR at its first bad record and keeps a copy of what")
		fmt.Fprintln(stderr, "was cut next to it. Stop the server first.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return 2
	}
	dirs, err := logDirs(*data)
	if err != nil {
		fmt.Fprintf(stderr, "j17 repair: %v\n", err)
		return 1
	}
	if len(dirs) == 0 {
		fmt.Fprintf(stdout, "no logs under %s\n", *data)
		return 0
	}
	status := 0
	for _, dir := range dirs {
		rep, err := wal.Repair(dir)
		switch {
		case err != nil:
			fmt.Fprintf(stderr, "j17 repair: %s: %v\n", dir, err)
			status = 1
		case rep.File == "":
			fmt.Fprintf(stdout, "%s: sound, nothing cut\n", dir)
		default:
			fmt.Fprintf(stdout, "%s: cut %d bytes from %s at offset %d; the cut bytes are kept in %s\n",
				dir, rep.BytesCut, rep.File, rep.Offset, rep.CutFile)
		}
	}
	return status
}

// logDirs returns the log directories under data, DATA/<instance>/<env>/log, in order.
func logDirs(data string) ([]string, error) {
	if _, err := os.Stat(data); err != nil {
		return nil, err
	}
	matches, err := filepath.Glob(filepath.Join(data, "*", "*", "log"))
	if err != nil {
		return nil, err
	}
	var dirs []string
	for _, m := range matches {
		if st, err := os.Stat(m); err == nil && st.IsDir() {
			dirs = append(dirs, m)
		}
	}
	return dirs, nil
}
