package pgtest_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/cronactor/cronactor/events/postgres/pgtest"
	"github.com/jackc/pgx/v5"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

func query(t *testing.T, url, sql string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, url)
	if err != nil {
		return "", err
	}
	defer c.Close(context.Background())
	var s string
	err = c.QueryRow(ctx, sql).Scan(&s)
	return s, err
}

func exec(t *testing.T, url, sql string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	if _, err := c.Exec(ctx, sql); err != nil {
		t.Fatal(err)
	}
}

// Each URL is a database of its own, and the server runs with fsync on.
func TestURLIsAFreshDatabase(t *testing.T) {
	a, b := pgtest.URL(t), pgtest.URL(t)
	if a == b {
		t.Fatalf("two tests got the same database %s", a)
	}
	exec(t, a, "CREATE TABLE x (n int)")
	if n, err := query(t, a, "SELECT count(*)::text FROM x"); err != nil || n != "0" {
		t.Fatalf("the new table: %q, %v", n, err)
	}
	if _, err := query(t, b, "SELECT count(*)::text FROM x"); err == nil {
		t.Fatal("a table created in one test's database is seen in another's")
	}
	if os.Getenv("CRONACTOR_POSTGRES") == "" {
		fsync, err := query(t, a, "SHOW fsync")
		if err != nil || fsync != "on" {
			t.Fatalf("fsync = %q, %v; want on", fsync, err)
		}
	}
}

// A server of the test's own stops and restarts, keeping its data.
func TestStopRestartKeepsData(t *testing.T) {
	s := pgtest.Start(t)
	url, err := s.CreateDatabase("keep")
	if err != nil {
		t.Fatal(err)
	}
	exec(t, url, "CREATE TABLE k2 (v text); INSERT INTO k2 VALUES ('kept')")
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := query(t, url, "SELECT 1::text"); err == nil {
		t.Fatal("a stopped server answered")
	}
	if err := s.Restart(); err != nil {
		t.Fatal(err)
	}
	v, err := query(t, url, "SELECT v FROM k2")
	if err != nil || v != "kept" {
		t.Fatalf("after restart: %q, %v; want kept", v, err)
	}
}
