package main

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// freeAddr returns a loopback address nothing listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// TestServeWithUnreachableEventStoreDB is issue 38 item 12, on the daemon
// (in-process) against an EventStoreDB address where nothing listens: while
// it starts — its store retrying — /healthz answers at once, 503 with
// status "starting" and the store unreachable, within a second or so of
// the start; and the log has, besides the start-up lines, one line per
// connection attempt (the client library's own lines are DEBUG).
func TestServeWithUnreachableEventStoreDB(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the daemon in-process")
	}
	logs := &lineWriter{}
	env := &cliEnv{stdout: logs, stderr: logs, getenv: func(string) string { return "" }}
	listen := freeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	start := time.Now()
	go func() {
		done <- dispatch(ctx, env, []string{"serve", "--store", "esdb", "--esdb", "esdb://" + freeAddr(t) + "?tls=false",
			"--listen", listen, "--log-format", "json"})
	}()

	type health struct {
		Status string `json:"status"`
		Phase  string `json:"phase"`
		Store  struct {
			Writable  bool   `json:"writable"`
			Condition string `json:"condition"`
			Message   string `json:"message"`
		} `json:"store"`
	}
	client := &http.Client{Timeout: time.Second} // each answer within 1 s
	var h health
	var took time.Duration
	for {
		if time.Since(start) > 3*time.Second {
			t.Fatalf("no /healthz naming the unreachable store within 3 s; last %+v\n%s", h, logs.String())
		}
		resp, err := client.Get("http://" + listen + "/healthz")
		if err != nil {
			if strings.Contains(err.Error(), "Timeout") || strings.Contains(err.Error(), "deadline") {
				t.Fatalf("/healthz did not answer within 1 s: %v", err)
			}
			time.Sleep(10 * time.Millisecond) // not listening yet
			continue
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusServiceUnavailable {
			t.Fatalf("/healthz while starting: %d %s", resp.StatusCode, body)
		}
		h = health{}
		if err := json.Unmarshal(body, &h); err != nil {
			t.Fatalf("/healthz: %v: %s", err, body)
		}
		if h.Status != "starting" || h.Phase == "" {
			t.Fatalf("/healthz while starting: %s", body)
		}
		if h.Store.Condition == "unreachable" {
			took = time.Since(start)
			if h.Store.Writable || !strings.Contains(h.Store.Message, "cannot be reached") {
				t.Fatalf("/healthz with the store unreachable: %s", body)
			}
			break
		}
		time.Sleep(20 * time.Millisecond) // polling, as a probe does
	}
	resp, err := client.Get("http://" + listen + "/v1/tasks")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("an API call while starting: %s, Retry-After %q", resp.Status, resp.Header.Get("Retry-After"))
	}

	// A few seconds of the connection loop, then stop it.
	const span = 4 * time.Second
	time.Sleep(time.Until(start.Add(span))) // the real connection loop runs meanwhile: nothing to wait on
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not stop")
	}
	attempts, others := 0, []string{}
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var l struct {
			Msg, Level string
		}
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			continue // the error serve ended with, as text
		}
		switch {
		case l.Msg == "esdb server unreachable" && l.Level == "WARN" && strings.Contains(line, `"backoff":`):
			attempts++
		case l.Msg == "start-up phase done" || l.Msg == "tracing off":
		case l.Msg == "cronactor stopped on an error" && strings.Contains(line, "context canceled"): // the stop
		default:
			others = append(others, line)
		}
	}
	t.Logf("/healthz named the unreachable store %s after the start; %d attempt lines in %s", took.Round(time.Millisecond), attempts, span)
	if attempts < 2 || attempts > 8 {
		t.Errorf("%d connection attempts logged in %s, want 2 to 8:\n%s", attempts, span, logs.String())
	}
	if len(others) > 0 {
		t.Errorf("lines besides the start-up and one per attempt:\n%s", strings.Join(others, "\n"))
	}
}
