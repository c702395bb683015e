package kinds_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/cronactor/cronactor/actors/worker"
	"github.com/cronactor/cronactor/actors/worker/kinds"
	"github.com/google/uuid"
)

// An http task's failure is permanent for a 4xx answer but 408 and 429,
// retryable for every other error status.
func TestHTTPStatusClassification(t *testing.T) {
	for _, tc := range []struct {
		status    int
		permanent bool
	}{
		{400, true}, {401, true}, {403, true}, {404, true}, {410, true}, {422, true}, {499, true},
		{408, false}, {429, false},
		{500, false}, {502, false}, {503, false}, {504, false},
		{304, false}, // not followed, not an answer the request was wrong
	} {
		t.Run(fmt.Sprint(tc.status), func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(tc.status)
				io.WriteString(w, "no")
			}))
			defer srv.Close()
			_, err := kinds.HTTP(srv.Client()).Handle(context.Background(), run(`{"url":"`+srv.URL+`"}`, "", time.Now().Add(time.Minute)))
			if !errors.Is(err, kinds.ErrHTTPStatus) {
				t.Fatalf("err = %v", err)
			}
			if got := worker.IsPermanent(err); got != tc.permanent {
				t.Fatalf("%d: permanent = %v, want %v (err %v)", tc.status, got, tc.permanent, err)
			}
			if kinds.PermanentStatus(tc.status) != tc.permanent {
				t.Fatalf("PermanentStatus(%d) disagrees with the handler", tc.status)
			}
		})
	}
}

// A refused connection and a client timeout are retryable.
func TestHTTPConnectionErrorsAndTimeoutsAreRetryable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there any more
	_, err = kinds.HTTP(nil).Handle(context.Background(), run(`{"url":"http://`+addr+`/"}`, "", time.Now().Add(time.Minute)))
	if err == nil || worker.IsPermanent(err) || errors.Is(err, kinds.ErrHTTPStatus) {
		t.Fatalf("connection refused: err = %v, permanent %v", err, worker.IsPermanent(err))
	}

	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	client := srv.Client()
	client.Timeout = 50 * time.Millisecond
	_, err = kinds.HTTP(client).Handle(context.Background(), run(`{"url":"`+srv.URL+`"}`, "", time.Now().Add(time.Minute)))
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() || worker.IsPermanent(err) {
		t.Fatalf("client timeout: err = %v, permanent %v", err, worker.IsPermanent(err))
	}
}

// A payload the kind cannot run, and a kind the daemon has disabled, fail
// for good.
func TestBadPayloadAndDisabledArePermanent(t *testing.T) {
	for _, h := range []worker.Handler{kinds.HTTP(nil), kinds.Exec()} {
		if _, err := h.Handle(context.Background(), run(`{}`, "", time.Now())); !worker.IsPermanent(err) {
			t.Errorf("bad payload: err = %v, not permanent", err)
		}
	}
	_, err := kinds.HTTP(nil).Handle(context.Background(), run(`{"url":"http://a b"}`, "", time.Now()))
	if !errors.Is(err, kinds.ErrBadPayload) || !worker.IsPermanent(err) {
		t.Errorf("unparsable url: err = %v", err)
	}
	_, err = kinds.Disabled("start the daemon with --allow-exec").Handle(context.Background(), run(`{}`, "", time.Now()))
	if !errors.Is(err, kinds.ErrDisabled) || !worker.IsPermanent(err) {
		t.Errorf("disabled: err = %v", err)
	}
}

// The endpoint learns the run's attempt, the run it retries and its
// trigger.
func TestHTTPPostsAttemptRetryOfAndTrigger(t *testing.T) {
	var got []map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var m map[string]any
		json.NewDecoder(r.Body).Decode(&m)
		got = append(got, m)
	}))
	defer srv.Close()
	prev := uuid.New()
	first := worker.NewRun(worker.Run{TaskID: uuid.New(), RunID: uuid.New(), Number: 1, Payload: json.RawMessage(`{"url":"` + srv.URL + `"}`),
		Deadline: time.Now().Add(time.Minute), Attempt: 1, Trigger: "manual"}, nil)
	retry := worker.NewRun(worker.Run{TaskID: uuid.New(), RunID: uuid.New(), Number: 2, Payload: json.RawMessage(`{"url":"` + srv.URL + `"}`),
		Deadline: time.Now().Add(time.Minute), Attempt: 2, RetryOf: prev}, nil)
	for _, r := range []*worker.Run{first, retry} {
		if _, err := kinds.HTTP(srv.Client()).Handle(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
	if len(got) != 2 {
		t.Fatalf("%d requests", len(got))
	}
	if got[0]["attempt"] != 1.0 || got[0]["trigger"] != "manual" || got[0]["retry_of"] != nil {
		t.Errorf("first: %v", got[0])
	}
	if got[1]["attempt"] != 2.0 || got[1]["retry_of"] != prev.String() || got[1]["trigger"] != nil {
		t.Errorf("retry: %v", got[1])
	}
}

func TestPermanentExit(t *testing.T) {
	for code := -1; code < 256; code++ {
		want := code >= 64 && code <= 78 && code != 75
		if got := kinds.PermanentExit(code); got != want {
			t.Errorf("PermanentExit(%d) = %v", code, got)
		}
	}
}
