package bench

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// Before each run the suite waits for the machine to be quiet: work a system left running after
// its own run would otherwise be measured against the next system. Redis rewrites its AOF in a
// forked child, PostgreSQL checkpoints and vacuums, j17 indexes what it was just given; each can
// take a core for seconds, and a server that needs every core loses more to it than one that uses
// one core. A system's own background work during its run still counts against it; what it
// defers past its run (j17's last index transaction, the end of an AOF rewrite or a checkpoint)
// runs in the wait, for every system alike.
const (
	// quietWindow is how long the processors are watched at a time.
	quietWindow = 250 * time.Millisecond
	// quietMax bounds the wait; a machine busy with something else is measured as it is, and
	// the log says so.
	quietMax = 20 * time.Second
)

// waitQuiet returns once the machine's processors were at least idle (a fraction, iowait not
// counted as idle) over one quietWindow, or after quietMax, and says how long it waited and
// whether the machine got quiet.
func waitQuiet(ctx context.Context, idle float64) (time.Duration, bool) {
	start := time.Now()
	prev, err := cpuTimes()
	if err != nil {
		return 0, false
	}
	for time.Since(start) < quietMax && ctx.Err() == nil {
		time.Sleep(quietWindow)
		cur, err := cpuTimes()
		if err != nil {
			return time.Since(start), false
		}
		if total := cur.total - prev.total; total > 0 && float64(cur.idle-prev.idle)/float64(total) >= idle {
			return time.Since(start), true
		}
		prev = cur
	}
	return time.Since(start), false
}

// jiffies are the machine's processor times from /proc/stat: all of them and the idle part.
type jiffies struct{ total, idle uint64 }

func cpuTimes() (jiffies, error) {
	f, err := os.Open("/proc/stat")
	if err != nil {
		return jiffies{}, err
	}
	defer f.Close()
	line, err := bufio.NewReader(f).ReadString('\n')
	if err != nil {
		return jiffies{}, err
	}
	return parseCPULine(line)
}

// parseCPULine reads the first line of /proc/stat: "cpu user nice system idle iowait irq softirq
// steal ...". Guest times are already part of user and nice, so they are not added again.
func parseCPULine(line string) (jiffies, error) {
	fields := strings.Fields(line)
	if len(fields) < 5 || fields[0] != "cpu" {
		return jiffies{}, fmt.Errorf("bench: /proc/stat begins with %q", line)
	}
	var j jiffies
	for i, f := range fields[1:min(len(fields), 9)] {
		v, err := strconv.ParseUint(f, 10, 64)
		if err != nil {
			return jiffies{}, fmt.Errorf("bench: /proc/stat: %w", err)
		}
		j.total += v
		if i == 3 {
			j.idle = v
		}
	}
	return j, nil
}
