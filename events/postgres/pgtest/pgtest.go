// Package pgtest starts throwaway PostgreSQL servers for tests: a temporary
// directory, initdb, and pg_ctl on a free loopback port with the unix socket
// inside that directory, fsync on (durability is what the tests of a store
// test). As root the server runs as the postgres user (runuser), since
// PostgreSQL refuses to run as root.
//
// One shared server serves a test binary (started on first use; Main stops
// it), and every test gets a fresh database on it (URL), so tests stay fast
// and independent. A test that stops and restarts its server takes a server
// of its own (Start). When CRONACTOR_POSTGRES is set, URL creates its
// databases on that server instead and starts nothing.
//
// Server binaries are looked up in CRONACTOR_POSTGRES_BIN, on PATH, then in
// /usr/lib/postgresql/*/bin (Debian's layout; .ci/install-postgres installs
// them). Without them a test skips, except in CI (CI set) or as root, where
// it fails: there the tests must run.
//
// Concurrency: URL and Start are safe for concurrent use.
package pgtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
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

// ErrNoServer: no server binaries were found.
var ErrNoServer = errors.New("pgtest: no PostgreSQL server binaries (initdb, pg_ctl) found: run .ci/install-postgres, set CRONACTOR_POSTGRES_BIN to their directory, or CRONACTOR_POSTGRES to a server's URL")

// Server is a throwaway PostgreSQL server in a temporary directory.
type Server struct {
	bin     string // directory of initdb and pg_ctl
	dir     string // temporary directory: data, socket, log
	port    int
	asUser  string // "postgres" when running as root
	mu      sync.Mutex
	running bool
}

// Main runs the tests of a package that uses URL, then stops the shared
// server: call it from TestMain as os.Exit(pgtest.Main(m)).
func Main(m *testing.M) int {
	code := m.Run()
	if shared.srv != nil {
		if err := shared.srv.remove(); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
	}
	return code
}

var shared struct {
	once sync.Once
	srv  *Server
	err  error
}

var dbSeq atomic.Int64

// URL returns the URL of a fresh, empty database for t, on the shared
// server (started on first use) or on CRONACTOR_POSTGRES's; the database is
// dropped when t ends.
func URL(t testing.TB) string {
	t.Helper()
	url, drop, err := Database()
	if err != nil {
		skipOrFail(t, err)
	}
	t.Cleanup(func() {
		if err := drop(); err != nil {
			t.Logf("%v", err)
		}
	})
	return url
}

// Database is URL for code that has no testing.TB (runnable examples): the
// URL of a fresh, empty database, and the function that drops it. Without
// server binaries the error matches ErrNoServer.
func Database() (url string, drop func() error, err error) {
	base := os.Getenv("CRONACTOR_POSTGRES")
	if base == "" {
		shared.once.Do(func() { shared.srv, shared.err = start() })
		if shared.err != nil {
			return "", nil, shared.err
		}
		base = shared.srv.URL("postgres")
	}
	name := fmt.Sprintf("crtest_%d_%d", os.Getpid(), dbSeq.Add(1))
	if err := exec1(base, "CREATE DATABASE "+name); err != nil {
		return "", nil, fmt.Errorf("pgtest: create database %s: %w", name, err)
	}
	drop = func() error {
		if err := exec1(base, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			return fmt.Errorf("pgtest: drop database %s: %w", name, err)
		}
		return nil
	}
	return withDatabase(base, name), drop, nil
}

// Start starts a server of t's own, removed when t ends: for tests that
// stop and restart it. It ignores CRONACTOR_POSTGRES.
func Start(t testing.TB) *Server {
	t.Helper()
	s, err := start()
	if err != nil {
		skipOrFail(t, err)
	}
	t.Cleanup(func() {
		if err := s.remove(); err != nil {
			t.Log(err)
		}
	})
	return s
}

func skipOrFail(t testing.TB, err error) {
	t.Helper()
	if errors.Is(err, ErrNoServer) && os.Getenv("CI") == "" && os.Geteuid() != 0 {
		t.Skip(err.Error())
	}
	if errors.Is(err, ErrNoServer) {
		t.Fatal(err.Error() + " — the Postgres tests must run in CI and as root")
	}
	t.Fatal(err)
}

// URL returns the URL of database db on s (over TCP on loopback).
func (s *Server) URL(db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", s.port, db)
}

// Stop stops the server at once (pg_ctl stop -m immediate: as a crash
// would, so what survives is what was made durable).
func (s *Server) Stop() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.running {
		return nil
	}
	if err := s.ctl("stop", "-m", "immediate", "-w"); err != nil {
		return err
	}
	s.running = false
	return nil
}

// Restart starts a stopped server again on the same port and data.
func (s *Server) Restart() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.running {
		return nil
	}
	return s.startLocked()
}

// TerminateBackends ends every connection to database db but the one it
// uses itself (pg_terminate_backend, as an operator or a connection
// pooler's failover would) and returns how many it ended.
func (s *Server) TerminateBackends(db string) (int, error) {
	return TerminateBackends(s.URL("postgres"), db)
}

// TerminateBackends is Server.TerminateBackends on the server at adminURL,
// through a role allowed to end other roles' connections (a superuser, or
// a member of pg_signal_backend).
func TerminateBackends(adminURL, db string) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		return 0, fmt.Errorf("pgtest: terminate backends of %s: %w", db, err)
	}
	defer c.Close(context.Background())
	var n int
	err = c.QueryRow(ctx, `SELECT count(*) FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity
		WHERE datname = $1 AND pid <> pg_backend_pid()) AS t`, db).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("pgtest: terminate backends of %s: %w", db, err)
	}
	return n, nil
}

// CreateDatabase creates database name on s and returns its URL.
func (s *Server) CreateDatabase(name string) (string, error) {
	if err := exec1(s.URL("postgres"), "CREATE DATABASE "+name); err != nil {
		return "", fmt.Errorf("pgtest: create database %s: %w", name, err)
	}
	return s.URL(name), nil
}

func start() (*Server, error) {
	bin, err := findBin()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "cronactor-pg-")
	if err != nil {
		return nil, fmt.Errorf("pgtest: %w", err)
	}
	s := &Server{bin: bin, dir: dir}
	if os.Geteuid() == 0 {
		s.asUser = "postgres"
		u, err := user.Lookup("postgres")
		if err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("pgtest: running as root needs a postgres user to run the server as: %w", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("pgtest: %w", err)
		}
	}
	if err := s.run("initdb", "-D", s.data(), "-U", "postgres", "--auth=trust", "--no-sync", "-E", "UTF8", "--locale=C"); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	// A port picked free may be taken before the server binds it: try a few.
	for i := 0; ; i++ {
		s.port, err = freePort()
		if err == nil {
			err = s.startLocked()
		}
		if err == nil {
			return s, nil
		}
		if i == 4 {
			os.RemoveAll(dir)
			return nil, err
		}
	}
}

func (s *Server) data() string { return filepath.Join(s.dir, "data") }

func (s *Server) startLocked() error {
	opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=on -c max_connections=200 -c shared_buffers=32MB", s.port, s.dir)
	if err := s.ctl("start", "-w", "-t", "60", "-l", filepath.Join(s.dir, "log"), "-o", opts); err != nil {
		log, _ := os.ReadFile(filepath.Join(s.dir, "log"))
		return fmt.Errorf("%w\nserver log:\n%s", err, tail(string(log), 2000))
	}
	s.running = true
	return nil
}

func (s *Server) remove() error {
	err := s.Stop()
	if rerr := os.RemoveAll(s.dir); err == nil {
		err = rerr
	}
	return err
}

func (s *Server) ctl(args ...string) error {
	return s.run("pg_ctl", append([]string{"-D", s.data()}, args...)...)
}

// run runs one of the server's binaries, as the postgres user when root.
func (s *Server) run(name string, args ...string) error {
	path := filepath.Join(s.bin, name)
	var cmd *exec.Cmd
	if s.asUser != "" {
		cmd = exec.Command("runuser", append([]string{"-u", s.asUser, "--", path}, args...)...)
	} else {
		cmd = exec.Command(path, args...)
	}
	cmd.Dir = s.dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("pgtest: %s %s: %w\n%s", name, strings.Join(args, " "), err, tail(string(out), 2000))
	}
	return nil
}

func findBin() (string, error) {
	if d := os.Getenv("CRONACTOR_POSTGRES_BIN"); d != "" {
		if isBin(d) {
			return d, nil
		}
		return "", fmt.Errorf("%w (CRONACTOR_POSTGRES_BIN=%s has no initdb and pg_ctl)", ErrNoServer, d)
	}
	if p, err := exec.LookPath("pg_ctl"); err == nil {
		if p, err = filepath.EvalSymlinks(p); err == nil && isBin(filepath.Dir(p)) {
			return filepath.Dir(p), nil
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	// Newest major version first.
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	for _, d := range dirs {
		if isBin(d) {
			return d, nil
		}
	}
	return "", ErrNoServer
}

func version(binDir string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return v
}

func isBin(d string) bool {
	for _, n := range []string{"initdb", "pg_ctl", "postgres"} {
		if fi, err := os.Stat(filepath.Join(d, n)); err != nil || fi.IsDir() {
			return false
		}
	}
	return true
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("pgtest: free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func exec1(connURL, sql string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, connURL)
	if err != nil {
		return err
	}
	defer c.Close(context.Background())
	_, err = c.Exec(ctx, sql)
	return err
}

// withDatabase replaces the database of a URL.
func withDatabase(connURL, db string) string {
	u, err := url.Parse(connURL)
	if err != nil || u.Scheme == "" {
		// A key=value connection string.
		return connURL + " dbname=" + db
	}
	u.Path = "/" + db
	return u.String()
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}
