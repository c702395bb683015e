package esdb_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/events/esdb"
)

// lockedBuffer is a bytes.Buffer the store's goroutines may log to while
// the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// closedPort returns a loopback address nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// TestUnreachableServerLogsOneLinePerAttempt is issue 38 item 12: against
// an address where nothing listens (no server, not even the test double),
// with many callers retrying at once — tasks appending, the view reading,
// a subscription — the store logs one WARN line per connection attempt,
// with its number and backoff, the attempts spaced by the shared backoff;
// the client library's own lines are DEBUG. Its WriteStatus says at once,
// without dialling, that the server is unreachable.
func TestUnreachableServerLogsOneLinePerAttempt(t *testing.T) {
	logs := &lockedBuffer{}
	s, err := esdb.Open(context.Background(), "esdb://"+closedPort(t)+"?tls=false&maxDiscoverAttempts=1&discoveryInterval=10", esdb.Options{
		Logger:     slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		MinBackoff: 100 * time.Millisecond, MaxBackoff: 800 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if st := s.WriteStatus(); st.Err != nil {
		t.Fatalf("WriteStatus before any attempt = %v, want none", st.Err)
	}

	const span = 4 * time.Second
	ctx, cancel := context.WithTimeout(context.Background(), span)
	defer cancel()
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				stream := events.TaskStream([16]byte{byte(i)})
				if i%2 == 0 {
					_, _ = s.ReadStream(ctx, stream, 0, 0)
				} else {
					_, _ = s.Append(ctx, stream, events.AnyVersion, proposal(t, "TaskCreated", i))
				}
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		_ = s.Subscribe(ctx, events.Start, func(events.Recorded) error { return nil })
	}()

	// The first failed attempt shows in WriteStatus within a second.
	deadline := time.Now().Add(time.Second)
	for s.WriteStatus().Err == nil && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond) // polling the state, as a health check does
	}
	st := s.WriteStatus()
	if !errors.Is(st.Err, events.ErrUnreachable) || st.Condition() != "unreachable" || st.RestartNeeded {
		t.Fatalf("WriteStatus 1 s after the first call = %+v, want unreachable", st)
	}
	wg.Wait()

	text := logs.String()
	attemptLine := regexp.MustCompile(`^time=(\S+) level=WARN msg="esdb server unreachable" generation=\d+ attempt=(\d+) backoff=(\S+) error=`)
	var attempts []int
	var last time.Time
	var lastBackoff time.Duration
	for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
		if strings.Contains(line, "level=DEBUG") {
			continue
		}
		m := attemptLine.FindStringSubmatch(line)
		if m == nil {
			t.Errorf("a line other than one per attempt at WARN: %s", line)
			continue
		}
		at, err := time.Parse(time.RFC3339Nano, m[1])
		if err != nil {
			t.Fatal(err)
		}
		n, _ := strconv.Atoi(m[2])
		attempts = append(attempts, n)
		if want := min(100*time.Millisecond<<(n-1), 800*time.Millisecond).String(); m[3] != want {
			t.Errorf("attempt %d logged backoff %s, want %s", n, m[3], want)
		}
		// Each attempt waited out the previous one's backoff, whichever
		// caller made it (slog's times are to the millisecond).
		if !last.IsZero() && at.Sub(last) < lastBackoff-time.Millisecond {
			t.Errorf("attempt %d failed %s after attempt %d, which set a backoff of %s", n, at.Sub(last), n-1, lastBackoff)
		}
		last, lastBackoff = at, min(100*time.Millisecond<<(n-1), 800*time.Millisecond)
	}
	// The client gives up a discovery at once (maxDiscoverAttempts=1):
	// the backoffs do the waiting. 100+200+400+800+800+800+800 ms: at most
	// 8 attempts fit in 4 s; at least 4 did.
	if len(attempts) < 4 || len(attempts) > 8 {
		t.Errorf("%d attempts logged in %s, want 4 to 8:\n%s", len(attempts), span, text)
	}
	for i, n := range attempts {
		if n != i+1 {
			t.Errorf("attempts logged %v, want 1, 2, 3, … once each", attempts)
			break
		}
	}
	if !strings.Contains(text, `msg="esdb client: `) {
		t.Errorf("no client library line at DEBUG: the test does not see them")
	}
	t.Logf("%d attempt lines, %d lines in all (DEBUG included) in %s", len(attempts), strings.Count(text, "\n"), span)
}

// While a first attempt to connect has had no answer for half a second —
// the client's default discovery of an absent server takes a second or
// more before it fails — WriteStatus already says the server is
// unreachable: a health check answers within a second of the start.
func TestWriteStatusDuringAFirstAttempt(t *testing.T) {
	s, err := esdb.Open(context.Background(), "esdb://"+closedPort(t)+"?tls=false", esdb.Options{Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = s.ReadStream(ctx, events.TaskStream([16]byte{1}), 0, 0)
	}()
	start := time.Now()
	for s.WriteStatus().Err == nil && time.Since(start) < time.Second {
		time.Sleep(10 * time.Millisecond) // polling the state, as a health check does
	}
	st := s.WriteStatus()
	if !errors.Is(st.Err, events.ErrUnreachable) {
		t.Fatalf("WriteStatus 1 s into the first attempt = %+v, want unreachable", st)
	}
	t.Logf("after %s: %v", time.Since(start).Round(time.Millisecond), st.Err)
	cancel()
	<-done
}
