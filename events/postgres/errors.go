package postgres

import (
	"errors"
	"io"
	"net"
	"strings"
)

func isNetErr(err error) bool {
	var opErr *net.OpError
	return errors.As(err, &opErr) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, net.ErrClosed) || strings.Contains(err.Error(), "conn closed")
}

// redact removes the connection string (which may hold a password) from a
// message.
func redact(msg, connString string) string {
	if connString == "" {
		return msg
	}
	return strings.ReplaceAll(msg, connString, "<connection string>")
}
