//go:build unix

package httpapi_test

import (
	"net"
	"syscall"
)

// smallWindowDialer dials with a 4 KiB receive buffer, so a client that
// stops reading stalls the server's writes soon.
func smallWindowDialer() (*net.Dialer, bool) {
	return &net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		return c.Control(func(fd uintptr) { syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
	}}, true
}
