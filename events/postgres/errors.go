package postgres

import (
	"errors"

	"github.com/cronactor/cronactor/events"
	"io"
	"net"
	"strings"
)

func isNetErr(err error) bool {
	var opErr *net.OpError
	return errors.As(err, &opErr) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, net.ErrClosed) || strings.Contains(err.Error(), "conn closed")
}

// unavailableError is ErrUnavailable: one value, matching the events
// condition it is an instance of.
type unavailableError struct{}

func (unavailableError) Error() string { return "postgres: server unavailable" }

func (unavailableError) Is(target error) bool {
	return target == events.ErrUnreachable || target == events.ErrUnwritable
}
