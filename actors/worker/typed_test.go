package worker_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/cronactor/cronactor/actors/task/rules"
	"github.com/cronactor/cronactor/actors/worker"
)

type mailbox struct {
	Mailbox string `json:"mailbox"`
	UID     int    `json:"uid"`
	Limits  struct {
		Max int `json:"max"`
	} `json:"limits"`
}

func (m mailbox) Validate() error {
	switch {
	case m.Mailbox == "":
		return &rules.FieldError{Field: "payload.mailbox", Message: "is required"}
	case m.UID < 0:
		return errors.New("uid must not be negative")
	}
	return nil
}

// ptrValidated validates with a pointer receiver.
type ptrValidated struct {
	N int `json:"n"`
}

func (p *ptrValidated) Validate() error {
	if p.N == 0 {
		return errors.New("n is required")
	}
	return nil
}

func TestTypedDecodesValidatesAndNamesTheField(t *testing.T) {
	for _, c := range []struct {
		name, payload string
		field, msg    string // "" field: accepted
	}{
		{"good", `{"mailbox":"inbox","uid":3,"extra":1}`, "", ""},
		{"wrong type", `{"mailbox":"inbox","uid":"3"}`, "payload.uid", "a JSON string cannot be read as int"},
		{"nested", `{"mailbox":"inbox","limits":{"max":true}}`, "payload.limits.max", "a JSON bool cannot be read as int"},
		{"not an object", `[1]`, "payload", "a JSON array cannot be read as worker_test.mailbox"},
		{"not JSON", `{"mailbox":`, "payload", "not valid JSON"},
		{"absent", ``, "payload.mailbox", "is required"},
		{"validate names the field", `{"uid":1}`, "payload.mailbox", "is required"},
		{"validate's plain error", `{"mailbox":"x","uid":-1}`, "payload", "uid must not be negative"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var got *mailbox
			h := worker.Typed(func(ctx context.Context, r *worker.Run, m mailbox) (json.RawMessage, error) {
				got = &m
				return nil, nil
			})
			_, err := h.Handle(context.Background(), worker.NewRun(worker.Run{Payload: json.RawMessage(c.payload)}, nil))
			verr := h.(worker.PayloadValidator).ValidatePayload(json.RawMessage(c.payload))
			if c.field == "" {
				if err != nil || verr != nil || got == nil || got.Mailbox != "inbox" || got.UID != 3 {
					t.Fatalf("Handle: %v, ValidatePayload: %v, args %+v", err, verr, got)
				}
				return
			}
			if got != nil {
				t.Fatalf("the function ran with %+v", *got)
			}
			var pe *worker.PayloadError
			if !errors.As(err, &pe) || !worker.IsPermanent(err) || !errors.Is(err, worker.ErrPayload) {
				t.Fatalf("Handle: %v (%T), want a permanent *PayloadError", err, err)
			}
			if pe.Field != c.field || !strings.Contains(pe.Message, c.msg) {
				t.Fatalf("Handle: field %q message %q, want %q containing %q", pe.Field, pe.Message, c.field, c.msg)
			}
			var fe *rules.FieldError
			if !errors.As(verr, &fe) || fe.Field != c.field || !strings.Contains(fe.Message, c.msg) {
				t.Fatalf("ValidatePayload: %v, want a FieldError for %q containing %q", verr, c.field, c.msg)
			}
		})
	}
}

func TestTypedValidatesWithAPointerReceiver(t *testing.T) {
	h := worker.Typed(func(ctx context.Context, r *worker.Run, p ptrValidated) (json.RawMessage, error) { return nil, nil })
	v := h.(worker.PayloadValidator)
	if err := v.ValidatePayload(json.RawMessage(`{"n":1}`)); err != nil {
		t.Fatal(err)
	}
	if err := v.ValidatePayload(json.RawMessage(`{}`)); err == nil || !strings.Contains(err.Error(), "n is required") {
		t.Fatalf("ValidatePayload({}): %v", err)
	}
}

// The function's own errors pass through unmarked.
func TestTypedPassesTheFunctionsResult(t *testing.T) {
	boom := errors.New("boom")
	h := worker.Typed(func(ctx context.Context, r *worker.Run, n int) (json.RawMessage, error) {
		return json.RawMessage(`{"n":1}`), boom
	})
	cp, err := h.Handle(context.Background(), worker.NewRun(worker.Run{Payload: json.RawMessage(`7`)}, nil))
	if !errors.Is(err, boom) || worker.IsPermanent(err) || string(cp) != `{"n":1}` {
		t.Fatalf("got %s, %v", cp, err)
	}
}

func TestChainFirstOutermost(t *testing.T) {
	var trail []string
	mw := func(name string) worker.Middleware {
		return func(next worker.Handler) worker.Handler {
			return worker.HandlerFunc(func(ctx context.Context, r *worker.Run) (json.RawMessage, error) {
				trail = append(trail, name+" in")
				cp, err := next.Handle(ctx, r)
				trail = append(trail, name+" out")
				return cp, err
			})
		}
	}
	h := worker.Chain(worker.HandlerFunc(func(ctx context.Context, r *worker.Run) (json.RawMessage, error) {
		trail = append(trail, "handler")
		return nil, nil
	}), mw("a"), nil, mw("b"))
	if _, err := h.Handle(context.Background(), worker.NewRun(worker.Run{}, nil)); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(trail, ", "); got != "a in, b in, handler, b out, a out" {
		t.Fatalf("trail: %s", got)
	}
}

// Whatever the payload, a typed handler does not panic, and it runs the
// payloads its check at create accepts and refuses, permanently, those it
// refuses.
func FuzzTyped(f *testing.F) {
	for _, p := range []string{`{"mailbox":"inbox","uid":3}`, `{"uid":"3"}`, `{"limits":{"max":1.5}}`, `null`, ``, `[`, `{"mailbox":"x","uid":-1}`} {
		f.Add([]byte(p))
	}
	f.Fuzz(func(t *testing.T, payload []byte) {
		ran := false
		h := worker.Typed(func(ctx context.Context, r *worker.Run, m mailbox) (json.RawMessage, error) {
			ran = true
			return nil, nil
		})
		verr := h.(worker.PayloadValidator).ValidatePayload(payload)
		_, err := h.Handle(context.Background(), worker.NewRun(worker.Run{Payload: payload}, nil))
		if (verr == nil) != ran || (verr == nil) != (err == nil) {
			t.Fatalf("payload %q: check %v, run %v (ran %v)", payload, verr, err, ran)
		}
		var fe *rules.FieldError
		if verr != nil && (!errors.As(verr, &fe) || !strings.HasPrefix(fe.Field, "payload") || !worker.IsPermanent(err)) {
			t.Fatalf("payload %q: check %v, run %v", payload, verr, err)
		}
	})
}
