package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Redis is a redis-server with the append-only file on, fsynced per Fsync ("always" or
// "everysec"). Events are stream entries (XADD, XRANGE); a set per type lists the ids, and a
// Lua script compares XLEN with the expected length and appends, which is how Redis-based event
// stores check OCC.
type Redis struct {
	Bin   string
	Dir   string
	Fsync string
	addr  string
	proc  *process
	occSH []byte
}

// occScript appends ARGV[2..] as (type, data) pairs to stream KEYS[1] if its length is ARGV[1]
// (or ARGV[1] is -1), and records the id KEYS[3] in the set KEYS[2].
const occScript = `
local n = redis.call('XLEN', KEYS[1])
if tonumber(ARGV[1]) >= 0 and n ~= tonumber(ARGV[1]) then return redis.error_reply('CONFLICT') end
for i = 2, #ARGV, 2 do redis.call('XADD', KEYS[1], '*', 'type', ARGV[i], 'data', ARGV[i+1]) end
redis.call('SADD', KEYS[2], KEYS[3])
return n`

func (r *Redis) Name() string    { return "redis-" + r.Fsync }
func (r *Redis) DataDir() string { return filepath.Join(r.Dir, "data") }
func (r *Redis) HasCache() bool  { return false }
func (r *Redis) PIDs() []int     { return processTree(r.proc.cmd.Process.Pid) }

func (r *Redis) Start(ctx context.Context) error {
	if err := os.MkdirAll(r.DataDir(), 0o755); err != nil {
		return err
	}
	port, err := freePort()
	if err != nil {
		return err
	}
	r.addr = "127.0.0.1:" + strconv.Itoa(port)
	if _, err := r.exec(ctx); err != nil {
		return err
	}
	c, err := dialRESP(r.addr)
	if err != nil {
		return err
	}
	defer c.Close()
	if _, err := c.do([]byte("SCRIPT"), []byte("LOAD"), []byte(occScript)); err != nil {
		return fmt.Errorf("redis: load script: %w", err)
	}
	r.occSH = []byte(sha1Hex(occScript))
	return nil
}

func (r *Redis) exec(ctx context.Context) (time.Duration, error) {
	t := time.Now()
	_, port, _ := strings.Cut(r.addr, ":")
	p, err := startProcess(filepath.Join(r.Dir, "redis.log"), nil, nil, r.Bin,
		"--port", port, "--bind", "127.0.0.1", "--dir", r.DataDir(), "--save", "",
		"--appendonly", "yes", "--appendfsync", r.Fsync, "--protected-mode", "no", "--daemonize", "no",
		"--maxclients", "1000")
	if err != nil {
		return 0, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	r.proc = p
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	err = waitReady(ctx, func() error {
		if p.exited() {
			return fmt.Errorf("redis-server exited; see %s", filepath.Join(r.Dir, "redis.log"))
		}
		c, err := dialRESP(r.addr)
		if err != nil {
			return err
		}
		defer c.Close()
		_, err = c.do([]byte("PING")) // answers -LOADING until the append-only file is loaded
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	return time.Since(t), nil
}

func (r *Redis) Dial() (Conn, error) {
	c, err := dialRESP(r.addr)
	if err != nil {
		return nil, err
	}
	return &redisConn{c: c, sha: r.occSH}, nil
}

// Reset empties the database (FLUSHALL, which the append-only file records).
func (r *Redis) Reset() error {
	c, err := dialRESP(r.addr)
	if err != nil {
		return err
	}
	defer c.Close()
	_, err = c.do([]byte("FLUSHALL"))
	return err
}

func (r *Redis) Crash() error {
	r.proc.signal(syscall.SIGKILL, 10*time.Second)
	return nil
}

func (r *Redis) Restart(ctx context.Context) (time.Duration, error) { return r.exec(ctx) }

func (r *Redis) Stop() error {
	r.proc.signal(syscall.SIGTERM, 30*time.Second)
	return nil
}

type redisConn struct {
	c    *respConn
	sha  []byte
	args [][]byte
}

func streamKey(typ, id string) []byte { return []byte(typ + ":" + id) }

func (c *redisConn) Append(typ, id string, events []Event, expected int) error {
	c.args = append(c.args[:0], []byte("EVALSHA"), c.sha, []byte("3"), streamKey(typ, id), []byte("ids:"+typ), []byte(id),
		[]byte(strconv.Itoa(expected)))
	for _, e := range events {
		c.args = append(c.args, []byte(e.Type), e.Data)
	}
	_, err := c.c.do(c.args...)
	if err != nil && strings.Contains(err.Error(), "CONFLICT") {
		return ErrConflict
	}
	return err
}

// PlaceOrder is MULTI/EXEC of the order's XADD and one XADD per item's inventory stream.
func (c *redisConn) PlaceOrder(orderID string, skus []string) error {
	c.c.send([]byte("MULTI"))
	items := make([]string, len(skus))
	for i, s := range skus {
		items[i] = `{"sku":"` + s + `","qty":1}`
	}
	c.c.send([]byte("XADD"), streamKey("order", orderID), []byte("*"), []byte("type"), []byte("was_placed"),
		[]byte("data"), []byte(`{"items":[`+strings.Join(items, ",")+`]}`))
	for _, s := range skus {
		c.c.send([]byte("XADD"), streamKey("inventory", s), []byte("*"), []byte("type"), []byte("had_reservation_requested"),
			[]byte("data"), []byte(`{"quantity":1}`))
	}
	c.c.send([]byte("EXEC"))
	if err := c.c.w.Flush(); err != nil {
		return err
	}
	var first error
	for range len(skus) + 3 {
		if _, err := c.c.reply(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

func (c *redisConn) Read(typ, id string, _ bool) error {
	n, err := c.c.do([]byte("XRANGE"), streamKey(typ, id), []byte("-"), []byte("+"))
	if err == nil && n == 0 {
		return errors.New("redis: empty stream")
	}
	return err
}

func (c *redisConn) Length(typ, id string) (int, error) {
	n, err := c.c.do([]byte("XLEN"), streamKey(typ, id))
	return int(n), err
}

func (c *redisConn) List(typ string, limit int) error {
	_, err := c.c.do([]byte("SRANDMEMBER"), []byte("ids:"+typ), []byte(strconv.Itoa(limit)))
	return err
}

func (c *redisConn) Close() error { return c.c.Close() }

// Benchmark runs redis-benchmark's own XADD test, n requests on conns connections, beside our
// generator's figures: a check that the generator is not what limits Redis. redis-benchmark is
// closed-loop, so its latencies carry coordinated omission.
func (r *Redis) Benchmark(conns, n int) (Sample, error) {
	bin := filepath.Join(filepath.Dir(r.Bin), "redis-benchmark")
	_, port, _ := strings.Cut(r.addr, ":")
	out, err := exec.Command(bin, "-h", "127.0.0.1", "-p", port, "-c", strconv.Itoa(conns), "-n", strconv.Itoa(n),
		"-r", "1000000000", "--csv", "XADD", "item:__rand_int__", "*", "type", "was_created", "data", "benchmark-payload").Output()
	if err != nil {
		return nil, fmt.Errorf("redis-benchmark: %w", err)
	}
	return parseBenchmarkCSV(string(out))
}

// parseBenchmarkCSV reads the result line of redis-benchmark --csv: the test, then rps, average,
// min, p50, p95, p99 and max latency in milliseconds.
func parseBenchmarkCSV(out string) (Sample, error) {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	fs := strings.Split(lines[len(lines)-1], ",")
	if len(fs) < 8 {
		return nil, fmt.Errorf("redis-benchmark: unexpected output %q", out)
	}
	num := func(i int) (float64, error) { return strconv.ParseFloat(strings.Trim(fs[len(fs)-8+i], `"`), 64) }
	s := Sample{}
	for i, m := range map[int]string{1: MetricEventsPerSec, 4: MetricP50, 6: MetricP99} {
		v, err := num(i)
		if err != nil {
			return nil, fmt.Errorf("redis-benchmark: %q: %w", out, err)
		}
		s[m] = v
	}
	return s, nil
}
