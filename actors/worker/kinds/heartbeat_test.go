package kinds_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/cronactor/cronactor/actors/clock"
	"github.com/cronactor/cronactor/actors/worker"
	"github.com/cronactor/cronactor/actors/worker/kinds"
	"github.com/google/uuid"
)

// counter counts heartbeats and closes reached once it has n.
type counter struct {
	mu      sync.Mutex
	n, want int
	reached chan struct{}
}

func newCounter(want int) *counter { return &counter{want: want, reached: make(chan struct{})} }

func (c *counter) beat() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n++
	if c.n == c.want {
		close(c.reached)
	}
}

// beating is a run whose heartbeats count on c, spaced as under a task with
// a 30ms heartbeat_timeout (one every 10ms while kept alive).
func beating(payload string, c *counter) *worker.Run {
	r := worker.NewRun(worker.Run{TaskID: uuid.New(), RunID: uuid.New(), Number: 1, Payload: json.RawMessage(payload),
		Deadline: time.Now().Add(time.Minute)}, nil)
	return r.HeartbeatTo(clock.Real{}, 30*time.Millisecond, c.beat)
}

// The http kind heartbeats while its request is in flight: the endpoint
// answers only once it has seen three.
func TestHTTPHeartbeatsWhileTheRequestIsInFlight(t *testing.T) {
	c := newCounter(3)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-c.reached:
		case <-time.After(30 * time.Second):
			w.WriteHeader(http.StatusGatewayTimeout)
		}
	}))
	defer srv.Close()
	if _, err := kinds.HTTP(srv.Client()).Handle(context.Background(), beating(`{"url":"`+srv.URL+`"}`, c)); err != nil {
		t.Fatalf("the endpoint saw no three heartbeats: %v", err)
	}
}
