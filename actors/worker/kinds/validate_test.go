package kinds_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cronactor/cronactor/actors/task/rules"
	"github.com/cronactor/cronactor/actors/worker"
	"github.com/cronactor/cronactor/actors/worker/kinds"
)

func TestPayloadChecks(t *testing.T) {
	cases := []struct {
		kind    string
		payload string
		field   string // "" when accepted
		msg     string
	}{
		{"http", `{"url":"https://example.com/hook"}`, "", ""},
		{"http", `{"url":"http://127.0.0.1:8080/hook?x=1","body":{"a":[1,2]}}`, "", ""},
		{"http", `{"url":"HTTPS://EXAMPLE.COM"}`, "", ""},
		{"http", ``, "payload", "required"},
		{"http", `null`, "payload", "required"},
		{"http", `"https://example.com"`, "payload", "JSON object"},
		{"http", `{}`, "payload.url", "required"},
		{"http", `{"url":null}`, "payload.url", "string"},
		{"http", `{"url":""}`, "payload.url", "absolute"},
		{"http", `{"url":"example.com/hook"}`, "payload.url", "absolute"},
		{"http", `{"url":"//example.com/hook"}`, "payload.url", "absolute"},
		{"http", `{"url":"ftp://example.com"}`, "payload.url", "http or https"},
		{"http", `{"url":"javascript:alert(1)"}`, "payload.url", "http or https"},
		{"http", `{"url":"https://"}`, "payload.url", "host"},
		{"http", `{"url":"https://:80/x"}`, "payload.url", "host"},
		{"http", `{"url":"https://exa\nmple.com"}`, "payload.url", "URL"},
		{"http", `{"url":"https://example.com","Url":"http://other"}`, "payload.Url", "unknown field"},
		{"exec", `{"command":["/bin/true"]}`, "", ""},
		{"exec", `{"command":["sh","-c","echo hi"]}`, "", ""},
		{"exec", `null`, "payload", "required"},
		{"exec", `[]`, "payload", "JSON object"},
		{"exec", `{}`, "payload.command", "required"},
		{"exec", `{"command":null}`, "payload.command", "list of strings"},
		{"exec", `{"command":"ls"}`, "payload.command", "list of strings"},
		{"exec", `{"command":[1]}`, "payload.command", "list of strings"},
		{"exec", `{"command":[]}`, "payload.command", "program"},
		{"exec", `{"command":["","x"]}`, "payload.command", "program"},
		{"exec", `{"command":["ls","a\u0000"]}`, "payload.command[1]", "NUL"},
		{"exec", `{"command":["ls"],"cmd":["rm"]}`, "payload.cmd", "unknown field"},
	}
	handlers := map[string]worker.Handler{"http": kinds.HTTP(nil), "exec": kinds.Exec()}
	for _, c := range cases {
		t.Run(c.kind+" "+c.payload, func(t *testing.T) {
			v, ok := handlers[c.kind].(worker.PayloadValidator)
			if !ok {
				t.Fatalf("the %s handler checks no payload", c.kind)
			}
			err := v.ValidatePayload(json.RawMessage(c.payload))
			if c.field == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var fe *rules.FieldError
			if !errors.As(err, &fe) || fe.Field != c.field || !strings.Contains(fe.Message, c.msg) {
				t.Fatalf("got %v; want field %q with %q", err, c.field, c.msg)
			}
		})
	}
}

func TestDisabled(t *testing.T) {
	h := kinds.Disabled("exec tasks need a daemon started with --allow-exec")
	var fe *rules.FieldError
	if err := h.(worker.PayloadValidator).ValidatePayload(json.RawMessage(`{"command":["true"]}`)); !errors.As(err, &fe) ||
		fe.Field != "kind" || !strings.Contains(fe.Message, "--allow-exec") {
		t.Fatalf("ValidatePayload: %v", err)
	}
	_, err := h.Handle(context.Background(), run(`{"command":["true"]}`, "", time.Now().Add(time.Minute)))
	if !errors.Is(err, kinds.ErrDisabled) || !strings.Contains(err.Error(), "--allow-exec") {
		t.Fatalf("Handle: %v", err)
	}
}
