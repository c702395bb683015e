package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// benchSchema creates a schema of this run's own in the database at
// connURL and returns a URL whose connections work in it (search_path),
// and the function that drops it with everything the run wrote. The
// Postgres store's tables are unqualified, so a fresh schema is a fresh
// store: the scheduler recovers no task of an earlier run.
func benchSchema(ctx context.Context, connURL string) (string, func(), error) {
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", nil, err
	}
	name := "cronactor_bench_" + hex.EncodeToString(b[:])
	if err := execOnce(ctx, connURL, "CREATE SCHEMA "+pgx.Identifier{name}.Sanitize()); err != nil {
		return "", nil, fmt.Errorf("bench: create schema %s: %w", name, err)
	}
	drop := func() {
		dctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_ = execOnce(dctx, connURL, "DROP SCHEMA "+pgx.Identifier{name}.Sanitize()+" CASCADE")
	}
	return withSearchPath(connURL, name), drop, nil
}

// withSearchPath adds search_path=schema to a libpq URL or key=value
// connection string (pgx sends it as a run-time parameter).
func withSearchPath(connURL, schema string) string {
	u, err := url.Parse(connURL)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return strings.TrimSpace(connURL) + " search_path=" + schema
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

func execOnce(ctx context.Context, connURL, sql string) error {
	c, err := pgx.Connect(ctx, connURL)
	if err != nil {
		return err
	}
	defer c.Close(context.WithoutCancel(ctx))
	_, err = c.Exec(ctx, sql)
	return err
}
