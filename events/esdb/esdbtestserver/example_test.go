package esdbtestserver_test

import (
	"fmt"
	"strings"

	"github.com/cronactor/cronactor/events/esdb/esdbtestserver"
)

// A test starts the double, hands its URL to the code under test, and
// stops and starts it to simulate the server going away and coming back.
// Events survive Stop.
func ExampleServer() {
	srv, err := esdbtestserver.New()
	if err != nil {
		panic(err)
	}
	if err := srv.Start(); err != nil {
		panic(err)
	}
	srv.AppendRaw("task-1", "TaskCreated", []byte(`{}`), nil)
	url := srv.URL("maxDiscoverAttempts=2")
	fmt.Println(strings.HasPrefix(url, "esdb://127.0.0.1:"), strings.HasSuffix(url, "?tls=false&maxDiscoverAttempts=2"))

	srv.Stop()
	if err := srv.Start(); err != nil {
		panic(err)
	}
	defer srv.Stop()
	fmt.Println(srv.Len(), "event after a restart")
	// Output:
	// true true
	// 1 event after a restart
}
