package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// This module does not import the product's (decision record 0012), so it
// cannot use events/postgres/pgtest; this is the same throwaway server,
// cut down: initdb in a temporary directory, the server on a free loopback
// port (as the postgres user when root), one per test binary, stopped by
// TestMain. CRONACTOR_POSTGRES points the tests at a server instead.

var errNoServer = errors.New("no PostgreSQL server binaries (initdb, pg_ctl) found: run .ci/install-postgres, set CRONACTOR_POSTGRES_BIN to their directory, or CRONACTOR_POSTGRES to a server's URL")

var pg struct {
	once sync.Once
	url  string
	err  error
	stop func()
}

func TestMain(m *testing.M) {
	code := m.Run()
	if pg.stop != nil {
		pg.stop()
	}
	os.Exit(code)
}

// postgresURL is a server for t: CRONACTOR_POSTGRES's, or a throwaway one.
// Without server binaries t skips, except in CI or as root, where the
// Postgres tests must run.
func postgresURL(t *testing.T) string {
	t.Helper()
	if u := os.Getenv("CRONACTOR_POSTGRES"); u != "" {
		return u
	}
	pg.once.Do(func() { pg.url, pg.stop, pg.err = startPostgres() })
	if errors.Is(pg.err, errNoServer) && os.Getenv("CI") == "" && os.Geteuid() != 0 {
		t.Skip(pg.err.Error())
	}
	if pg.err != nil {
		t.Fatal(pg.err)
	}
	return pg.url
}

func startPostgres() (string, func(), error) {
	bin, err := postgresBin()
	if err != nil {
		return "", nil, err
	}
	dir, err := os.MkdirTemp("", "cronactor-benchpeers-pg-")
	if err != nil {
		return "", nil, err
	}
	var as []string
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			os.RemoveAll(dir)
			return "", nil, fmt.Errorf("as root the server runs as the postgres user: %w", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			os.RemoveAll(dir)
			return "", nil, err
		}
		as = []string{"runuser", "-u", "postgres", "--"}
	}
	run := func(name string, args ...string) error {
		argv := append(append(as[:len(as):len(as)], filepath.Join(bin, name)), args...)
		out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput()
		if err != nil {
			return fmt.Errorf("%s: %w\n%s", name, err, out)
		}
		return nil
	}
	data := filepath.Join(dir, "data")
	if err := run("initdb", "-D", data, "-U", "postgres", "--auth=trust", "--no-sync", "-E", "UTF8", "--locale=C"); err != nil {
		os.RemoveAll(dir)
		return "", nil, err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		os.RemoveAll(dir)
		return "", nil, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c max_connections=100", port, dir)
	if err := run("pg_ctl", "-D", data, "-l", filepath.Join(dir, "log"), "-w", "-t", "60", "start", "-o", opts); err != nil {
		log, _ := os.ReadFile(filepath.Join(dir, "log"))
		os.RemoveAll(dir)
		return "", nil, fmt.Errorf("%w\n%s", err, log)
	}
	stop := func() {
		_ = run("pg_ctl", "-D", data, "-w", "stop", "-m", "immediate")
		os.RemoveAll(dir)
	}
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port), stop, nil
}

// postgresBin finds initdb and pg_ctl as pgtest does: CRONACTOR_POSTGRES_BIN,
// PATH, then Debian's /usr/lib/postgresql/*/bin, newest first.
func postgresBin() (string, error) {
	isBin := func(d string) bool {
		for _, n := range []string{"initdb", "pg_ctl", "postgres"} {
			if fi, err := os.Stat(filepath.Join(d, n)); err != nil || fi.IsDir() {
				return false
			}
		}
		return true
	}
	if d := os.Getenv("CRONACTOR_POSTGRES_BIN"); d != "" {
		if isBin(d) {
			return d, nil
		}
		return "", fmt.Errorf("%w (CRONACTOR_POSTGRES_BIN=%s)", errNoServer, d)
	}
	if p, err := exec.LookPath("pg_ctl"); err == nil {
		if p, err = filepath.EvalSymlinks(p); err == nil && isBin(filepath.Dir(p)) {
			return filepath.Dir(p), nil
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	major := func(d string) int { v, _ := strconv.Atoi(filepath.Base(filepath.Dir(d))); return v }
	sort.Slice(dirs, func(i, j int) bool { return major(dirs[i]) > major(dirs[j]) })
	for _, d := range dirs {
		if isBin(d) {
			return d, nil
		}
	}
	return "", errNoServer
}

// TestRiverWorksEveryJobOnce runs River on a real Postgres with a small
// wave: every job must run once and complete, and River's schema must be
// gone afterwards.
func TestRiverWorksEveryJobOnce(t *testing.T) {
	url := postgresURL(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const n = 300
	var recorded atomic.Int64
	p := riverPeer(riverOptions{url: url, workers: 8, poll: 50 * time.Millisecond, cooldown: time.Millisecond,
		counted: func(c int) { recorded.Store(int64(c)) }})
	r, err := measure(ctx, p, n)
	if err != nil {
		t.Fatal(err)
	}
	if r.Peer != "river" || r.Jobs != n || r.Label != riverLabel || r.Workers != 8 || !(r.RunsPerS > 0) || !(r.RunsS > 0) ||
		r.LagP99ms < r.LagP50ms || r.Version != "v0.51.2" {
		t.Fatalf("result %+v", r)
	}
	// The count River recorded, not only what the handler saw.
	if got := recorded.Load(); got != n {
		t.Errorf("%d jobs completed in River's table, want %d", got, n)
	}
	left, err := riverSchemas(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 0 {
		t.Errorf("River's schemas left behind: %s", strings.Join(left, ", "))
	}
}

// riverSchemas lists the schemas runRiver creates that exist on url.
func riverSchemas(ctx context.Context, url string) ([]string, error) {
	c, err := pgx.Connect(ctx, url)
	if err != nil {
		return nil, err
	}
	defer c.Close(context.Background())
	rows, err := c.Query(ctx, "SELECT nspname FROM pg_namespace WHERE nspname LIKE 'cronactor_bench_river_%'")
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}
