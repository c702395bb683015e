//go:build !unix

package httpapi_test

import "net"

func smallWindowDialer() (*net.Dialer, bool) { return nil, false }
