// Command soak runs the bounded soak test of `make soak` against a j17 binary: mixed traffic,
// SIGKILL restarts, and a check after each restart that no acknowledged write was lost. It
// prints the totals and exits 1 on any loss, 130 when interrupted.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/j17-go/j17/soak"
)

func main() {
	os.Exit(run())
}

func run() int {
	var c soak.Config
	flag.StringVar(&c.J17, "j17", "bin/j17", "the j17 `binary` to soak")
	flag.DurationVar(&c.Duration, "time", 10*time.Minute, "how long to run")
	flag.DurationVar(&c.KillEvery, "kill-every", time.Minute, "SIGKILL and restart the server this often, 0 = never")
	flag.IntVar(&c.Workers, "workers", 8, "concurrent clients")
	flag.IntVar(&c.Rate, "rate", 1000, "operations per second of all workers together, 0 = as fast as the server answers")
	flag.Uint64Var(&c.Seed, "seed", 1, "seed of the operation mix and the ids")
	flag.Parse()
	c.Out = os.Stdout
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	fmt.Printf("soak: %s for %s, SIGKILL every %s, %d workers, at most %d operations/s\n", c.J17, c.Duration, c.KillEvery, c.Workers, c.Rate)
	t, err := soak.Run(ctx, c)
	fmt.Printf("soak: %s\n", t)
	switch {
	case errors.Is(err, context.Canceled):
		fmt.Println("soak: interrupted")
		return 130
	case err != nil:
		fmt.Fprintf(os.Stderr, "soak: FAILED: %v\n", err)
		if t.Dir != "" {
			fmt.Fprintf(os.Stderr, "soak: the data directory and the server log are kept in %s\n", t.Dir)
		}
		return 1
	}
	fmt.Println("soak: ok, no acknowledged write lost")
	return 0
}
