package httpapi_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/cronactor/cronactor/internal/httpapi"
)

// A client that announces a body and never sends it gets a 408 once the
// body timeout passes, instead of holding the connection for ever.
func TestSlowBodyIsCutOff(t *testing.T) {
	srv := httptest.NewServer(httpapi.New(httpapi.Config{BodyTimeout: 200 * time.Millisecond}))
	defer srv.Close()
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// The answer must come long before this guard; it only keeps a broken
	// server from hanging the test.
	_ = conn.SetDeadline(time.Now().Add(20 * time.Second))
	fmt.Fprintf(conn, "POST /v1/tasks HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{")
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer to a body that never arrives: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusRequestTimeout {
		t.Fatalf("status %d, want 408", resp.StatusCode)
	}
	body, _ := io.ReadAll(resp.Body)
	if !strings.Contains(strings.Join(strings.Fields(string(body)), ""), `"field":"body"`) {
		t.Fatalf("body %q does not name the field", body)
	}
}
