package postgres_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cronactor/cronactor/events/postgres"
)

func TestOptionsValidate(t *testing.T) {
	if err := (postgres.Options{}).Validate(); err != nil {
		t.Fatalf("zero Options: %v", err)
	}
	for _, c := range []struct {
		o     postgres.Options
		field string
	}{
		{postgres.Options{MaxConns: 1}, "MaxConns"},
		{postgres.Options{MaxConns: 1001}, "MaxConns"},
		{postgres.Options{MaxBatchEvents: -1}, "MaxBatchEvents"},
		{postgres.Options{PollInterval: time.Millisecond}, "PollInterval"},
		{postgres.Options{OpTimeout: time.Hour}, "OpTimeout"},
	} {
		err := c.o.Validate()
		if !errors.Is(err, postgres.ErrOptions) || !strings.Contains(err.Error(), c.field) {
			t.Errorf("%+v: %v, want ErrOptions naming %s", c.o, err, c.field)
		}
		if _, err := postgres.Open(context.Background(), "postgres://127.0.0.1:1/x", c.o); !errors.Is(err, postgres.ErrOptions) {
			t.Errorf("Open with %+v: %v, want ErrOptions", c.o, err)
		}
	}
}

// A connection string the driver cannot parse is refused without its
// password: pgx masks it when it quotes the string, which the store relies
// on (this fails should a pgx release stop doing so).
func TestOpenBadConnString(t *testing.T) {
	_, err := postgres.Open(context.Background(), "postgres://user:s3cret@host:notaport/db", postgres.Options{})
	if err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Fatalf("bad connection string: %v", err)
	}
}
