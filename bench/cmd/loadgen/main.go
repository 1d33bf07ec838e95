// Command loadgen runs the benchmark suite of j17 against its peers and compares results.
//
//	loadgen run [-quick] [-only REGEXP] [-j17 BIN] [-out DIR] [-markdown FILE] ...
//	loadgen compare OLD.json NEW.json
//
// run starts j17 and the peers on 127.0.0.1, runs every scenario, and writes DIR/results.json,
// the same runs in the Go benchmark format as DIR/results.txt (for benchstat), the markdown report with its charts under bench/charts/, and a progress log on stderr.
// compare prints the change of every metric between two results files.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"

	"github.com/j17-go/j17/bench"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	var err error
	switch os.Args[1] {
	case "run":
		err = run(os.Args[2:])
	case "compare":
		err = compare(os.Args[2:])
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "loadgen:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: loadgen run [flags] | loadgen compare OLD.json NEW.json")
	os.Exit(2)
}

func run(args []string) error {
	fs := flag.NewFlagSet("run", flag.ExitOnError)
	quick := fs.Bool("quick", false, "small sizes and short runs")
	runs := fs.Int("runs", 0, "runs per measurement (0: the mode's default)")
	duration := fs.Duration("duration", 0, "length of each run (0: the mode's default)")
	only := fs.String("only", "", "run only the scenarios whose names match this regexp")
	j17 := fs.String("j17", "bin/j17", "the j17 binary")
	redis := fs.String("redis-server", "redis-server", "the redis-server binary")
	pgBin := fs.String("postgres-bin", "", "directory holding initdb and postgres (default: the newest /usr/lib/postgresql/*/bin)")
	peers := fs.String("peers", "redis,postgres", `comma-separated peers to run, or "none"`)
	out := fs.String("out", "bench/out", "directory of results.json")
	markdown := fs.String("markdown", "", "write the report to this file and its charts under bench/charts/ beside it")
	command := fs.String("command", "", "the command to show in the report (default: this one)")
	commitName := fs.String("commit", "", "the commit the j17 binary was built from (default: the working tree's)")
	workDir := fs.String("work", "", "directory for the systems' data (default: a new temporary directory)")
	_ = fs.Parse(args)

	cfg := bench.DefaultConfig()
	if *quick {
		cfg = bench.QuickConfig()
	}
	if *runs > 0 {
		cfg.Runs = *runs
	}
	if *duration > 0 {
		cfg.Duration = *duration
	}
	if *only != "" {
		re, err := regexp.Compile(*only)
		if err != nil {
			return fmt.Errorf("-only: %w", err)
		}
		cfg.Only = re
	}
	var err error
	if cfg.J17Bin, err = filepath.Abs(*j17); err != nil {
		return err
	}
	cfg.RedisBin = *redis
	if p, err := exec.LookPath(*redis); err == nil {
		cfg.RedisBin = p
	}
	cfg.PostgresBin = *pgBin
	if cfg.PostgresBin == "" {
		dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
		if len(dirs) > 0 {
			cfg.PostgresBin = dirs[len(dirs)-1]
		}
	}
	cfg.Peers = nil
	if *peers != "none" {
		cfg.Peers = strings.Split(*peers, ",")
	}
	cfg.WorkDir = *workDir
	if cfg.WorkDir == "" {
		if cfg.WorkDir, err = os.MkdirTemp("", "j17-bench-"); err != nil {
			return err
		}
	}
	cfg.Command = *command
	if cfg.Command == "" {
		cfg.Command = strings.Join(os.Args, " ")
	}
	cfg.Commit = *commitName
	if cfg.Commit == "" {
		cfg.Commit = commit()
	}
	cfg.Log = os.Stderr

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	start := time.Now()
	rep, err := bench.RunSuite(ctx, cfg)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	results := filepath.Join(*out, "results.json")
	if err := rep.WriteJSON(results); err != nil {
		return err
	}
	txt, err := os.Create(filepath.Join(*out, "results.txt"))
	if err != nil {
		return err
	}
	if err := bench.WriteBenchfmt(txt, rep); err != nil {
		txt.Close()
		return err
	}
	if err := txt.Close(); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "results: %s and results.txt for benchstat (%s)\n", results, time.Since(start).Round(time.Second))
	if *markdown == "" {
		return nil
	}
	root := filepath.Dir(*markdown)
	// The report links only this run's charts; older ones would linger unlinked.
	stale, _ := filepath.Glob(filepath.Join(root, "bench", "charts", "*.png"))
	for _, f := range stale {
		if err := os.Remove(f); err != nil {
			return err
		}
	}
	for _, s := range rep.Scenarios {
		if err := bench.WriteChart(root, s); err != nil {
			return err
		}
	}
	f, err := os.Create(*markdown)
	if err != nil {
		return err
	}
	if err := bench.WriteMarkdown(f, rep, true); err != nil {
		f.Close()
		return err
	}
	fmt.Fprintf(os.Stderr, "report: %s\n", *markdown)
	return f.Close()
}

// commit names the working tree's commit, marked when it has changes.
func commit() string {
	out, err := exec.Command("git", "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return "unknown"
	}
	c := strings.TrimSpace(string(out))
	if st, err := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(st) > 0 {
		c += "-dirty"
	}
	return c
}

func compare(args []string) error {
	if len(args) != 2 {
		usage()
	}
	old, err := bench.ReadReport(args[0])
	if err != nil {
		return err
	}
	cur, err := bench.ReadReport(args[1])
	if err != nil {
		return err
	}
	oldName, newName := "old", "new"
	if old.Commit != "" {
		oldName = old.Commit
	}
	if cur.Commit != "" {
		newName = cur.Commit
	}
	if oldName == newName {
		oldName, newName = "old "+oldName, "new "+newName
	}
	return bench.WriteComparison(os.Stdout, oldName, newName, bench.Compare(old, cur))
}
