package main

import (
	"errors"
	"io"
	"strings"
	"testing"
)

func envOf(m map[string]string) *cliEnv {
	return &cliEnv{stdout: io.Discard, stderr: io.Discard, getenv: func(k string) string { return m[k] }}
}

func TestServeFlags(t *testing.T) {
	c, err := parseServeFlags(envOf(nil), nil)
	if err != nil || c.data != "./cronactor-data" || c.listen != "127.0.0.1:7070" || c.tick.String() != "1s" || c.store != "embedded" {
		t.Fatalf("defaults: %+v %v", c, err)
	}
	c, err = parseServeFlags(envOf(map[string]string{"CRONACTOR_TICK": "250ms", "CRONACTOR_DATA": "/x"}), []string{"--data", "/y"})
	if err != nil || c.tick.String() != "250ms" || c.data != "/y" {
		t.Fatalf("env then flags: %+v %v", c, err)
	}
	// The Postgres URL from each source.
	for _, src := range []struct {
		env  map[string]string
		args []string
	}{
		{map[string]string{"CRONACTOR_STORE": "postgres", "CRONACTOR_POSTGRES": "postgres://db/x"}, nil},
		{nil, []string{"--store", "postgres", "--postgres", "postgres://db/x"}},
	} {
		c, err = parseServeFlags(envOf(src.env), src.args)
		if err != nil || c.store != "postgres" || c.pgURL != "postgres://db/x" {
			t.Fatalf("postgres from %v %v: %+v %v", src.env, src.args, c, err)
		}
	}
	bad := []struct {
		args []string
		env  map[string]string
		want string
	}{
		{[]string{"--listen", "0.0.0.0:7070"}, nil, "without --token"},
		{[]string{"--store", "sqlite"}, nil, "--store"},
		{[]string{"--store", "esdb"}, nil, "--esdb"},
		{[]string{"--store", "postgres"}, nil, "--postgres URL (or CRONACTOR_POSTGRES)"},
		{[]string{"--tick", "0s"}, nil, "--tick"},
		{[]string{"--workers", "0"}, nil, "--workers"},
		{[]string{"--log-format", "xml"}, nil, "--log-format"},
		{[]string{"--listen", "nonsense"}, nil, "--listen"},
		{nil, map[string]string{"CRONACTOR_TICK": "soon"}, "CRONACTOR_TICK"},
		{[]string{"extra"}, nil, "no arguments"},
	}
	for _, b := range bad {
		_, err := parseServeFlags(envOf(b.env), b.args)
		if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), b.want) {
			t.Errorf("%v %v: err = %v, want a usage error mentioning %q", b.args, b.env, err, b.want)
		}
	}
	for _, ok := range [][]string{{"--listen", "0.0.0.0:7070", "--token", "t"}, {"--listen", "0.0.0.0:7070", "--insecure"}, {"--listen", "localhost:1"}, {"--listen", "[::1]:1"}} {
		if _, err := parseServeFlags(envOf(nil), ok); err != nil {
			t.Errorf("%v: %v", ok, err)
		}
	}
}
