package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Postgres is a PostgreSQL cluster made by initdb in a temporary directory, with
// synchronous_commit on. Events go to one table whose unique (stream, version) constraint is
// the OCC check, the way Postgres-based event stores work.
type Postgres struct {
	BinDir string // holds initdb and postgres
	Dir    string
	port   int
	proc   *process
	cred   *syscall.Credential
}

const pgSchema = `CREATE TABLE events (
  id bigserial PRIMARY KEY,
  agg_type text NOT NULL,
  stream text NOT NULL,
  version int NOT NULL,
  type text NOT NULL,
  data jsonb NOT NULL,
  metadata jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (stream, version))`

func (p *Postgres) Name() string    { return "postgres" }
func (p *Postgres) DataDir() string { return filepath.Join(p.Dir, "data") }
func (p *Postgres) HasCache() bool  { return false }
func (p *Postgres) PIDs() []int     { return processTree(p.proc.cmd.Process.Pid) }

func (p *Postgres) Start(ctx context.Context) error {
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			return fmt.Errorf("%w: running as root and no postgres user: %w", ErrUnavailable, err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		p.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	}
	if err := os.MkdirAll(p.DataDir(), 0o700); err != nil {
		return err
	}
	if p.cred != nil {
		if err := os.Chown(p.Dir, int(p.cred.Uid), int(p.cred.Gid)); err != nil {
			return err
		}
		if err := os.Chown(p.DataDir(), int(p.cred.Uid), int(p.cred.Gid)); err != nil {
			return err
		}
	}
	cmd := exec.Command(filepath.Join(p.BinDir, "initdb"), "-D", p.DataDir(), "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-instructions")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: p.cred}
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%w: initdb: %w: %s", ErrUnavailable, err, out)
	}
	port, err := freePort()
	if err != nil {
		return err
	}
	p.port = port
	if _, err := p.exec(ctx); err != nil {
		return err
	}
	c, err := p.connect(ctx)
	if err != nil {
		return err
	}
	defer c.Close(ctx)
	if _, err := c.Exec(ctx, pgSchema); err != nil {
		return fmt.Errorf("postgres: schema: %w", err)
	}
	return nil
}

func (p *Postgres) exec(ctx context.Context) (time.Duration, error) {
	t := time.Now()
	proc, err := startProcess(filepath.Join(p.Dir, "postgres.log"), p.cred, nil, filepath.Join(p.BinDir, "postgres"),
		"-D", p.DataDir(), "-p", strconv.Itoa(p.port), "-c", "listen_addresses=127.0.0.1",
		"-c", "unix_socket_directories="+p.Dir, "-c", "synchronous_commit=on", "-c", "fsync=on",
		"-c", "max_connections=300")
	if err != nil {
		return 0, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	p.proc = proc
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	err = waitReady(ctx, func() error {
		if proc.exited() {
			return fmt.Errorf("postgres exited; see %s", filepath.Join(p.Dir, "postgres.log"))
		}
		c, err := p.connect(ctx)
		if err != nil {
			return err
		}
		return c.Close(ctx)
	})
	if err != nil {
		return 0, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	return time.Since(t), nil
}

func (p *Postgres) connect(ctx context.Context) (*pgx.Conn, error) {
	return pgx.Connect(ctx, fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", p.port))
}

func (p *Postgres) Dial() (Conn, error) {
	c, err := p.connect(context.Background())
	if err != nil {
		return nil, err
	}
	return &pgConn{c: c}, nil
}

// Crash is an immediate shutdown (SIGQUIT): no checkpoint, so the restart replays the WAL.
func (p *Postgres) Crash() error {
	p.proc.signal(syscall.SIGQUIT, 30*time.Second)
	return nil
}

func (p *Postgres) Restart(ctx context.Context) (time.Duration, error) { return p.exec(ctx) }

// Stop is a fast shutdown.
func (p *Postgres) Stop() error {
	p.proc.signal(syscall.SIGINT, 60*time.Second)
	return nil
}

type pgConn struct {
	c    *pgx.Conn
	sql  strings.Builder
	args []any
}

const pgMeta = `{"actor":{"type":"user","id":"00000000-0000-4000-8000-000000000000"}}`

func pgErr(err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "23505" { // unique_violation
		return ErrConflict
	}
	return err
}

// Append inserts the events with versions expected+1...; without an expected length it reads
// the current one in the same statement, and a racing writer gets the unique violation.
func (c *pgConn) Append(typ, id string, events []Event, expected int) error {
	ctx := context.Background()
	stream := typ + "/" + id
	c.sql.Reset()
	c.args = append(c.args[:0], typ, stream)
	base := "$3::int"
	if expected < 0 {
		base = "(SELECT coalesce(max(version), 0) FROM events WHERE stream = $2)"
	} else {
		c.args = append(c.args, expected)
	}
	c.sql.WriteString("INSERT INTO events (agg_type, stream, version, type, data, metadata) VALUES ")
	for i, e := range events {
		if i > 0 {
			c.sql.WriteByte(',')
		}
		n := len(c.args)
		fmt.Fprintf(&c.sql, "($1, $2, %s + %d, $%d, $%d, '%s')", base, i+1, n+1, n+2, pgMeta)
		c.args = append(c.args, e.Type, string(e.Data))
	}
	_, err := c.c.Exec(ctx, c.sql.String(), c.args...)
	return pgErr(err)
}

// PlaceOrder inserts the order event and one event per inventory stream in one statement.
func (c *pgConn) PlaceOrder(orderID string, skus []string) error {
	items := make([]string, len(skus))
	for i, s := range skus {
		items[i] = `{"sku":"` + s + `","qty":1}`
	}
	c.sql.Reset()
	c.sql.WriteString("INSERT INTO events (agg_type, stream, version, type, data, metadata) VALUES ('order', $1, 1, 'was_placed', $2, '" + pgMeta + "')")
	c.args = append(c.args[:0], "order/"+orderID, `{"items":[`+strings.Join(items, ",")+`]}`)
	for _, s := range skus {
		n := len(c.args) + 1
		fmt.Fprintf(&c.sql, ",('inventory', $%d, (SELECT coalesce(max(version), 0) + 1 FROM events WHERE stream = $%d), 'had_reservation_requested', '{\"quantity\":1}', '%s')", n, n, pgMeta)
		c.args = append(c.args, "inventory/"+s)
	}
	_, err := c.c.Exec(context.Background(), c.sql.String(), c.args...)
	return pgErr(err)
}

func (c *pgConn) Read(typ, id string, _ bool) error {
	rows, err := c.c.Query(context.Background(), "SELECT version, type, data FROM events WHERE stream = $1 ORDER BY version", typ+"/"+id)
	if err != nil {
		return err
	}
	n := 0
	for rows.Next() {
		n++
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	if n == 0 {
		return errors.New("postgres: empty stream")
	}
	return nil
}

func (c *pgConn) Length(typ, id string) (int, error) {
	var n int
	err := c.c.QueryRow(context.Background(), "SELECT coalesce(max(version), 0) FROM events WHERE stream = $1", typ+"/"+id).Scan(&n)
	return n, err
}

func (c *pgConn) List(typ string, limit int) error {
	rows, err := c.c.Query(context.Background(), "SELECT stream FROM events WHERE agg_type = $1 AND version = 1 LIMIT $2", typ, limit)
	if err != nil {
		return err
	}
	for rows.Next() {
	}
	rows.Close()
	return rows.Err()
}

func (c *pgConn) Close() error { return c.c.Close(context.Background()) }
