package httpapi_test

import (
	"encoding/json"
	"strings"
	"testing"
)

// history_retention (DESIGN §8.3) goes through POST and PATCH and comes
// back on the row; absent when the task sets none; a bad one is a 400
// naming it, and nothing is recorded.
func TestHistoryRetention(t *testing.T) {
	srv := server(t, "")
	retention := func(a answer) string {
		t.Helper()
		var r struct {
			HistoryRetention *string `json:"history_retention"`
		}
		if err := json.Unmarshal([]byte(a.body), &r); err != nil {
			t.Fatalf("row (%v): %s", err, a.body)
		}
		if r.HistoryRetention == nil {
			return ""
		}
		return *r.HistoryRetention
	}
	def := call(t, srv, "POST", "/v1/tasks", `{`+good+`}`)
	if got := retention(def); def.code != 201 || got != "" {
		t.Fatalf("default: %d, history_retention %q, want 201 and none: %s", def.code, got, def.body)
	}
	other := strings.Replace(good, `"poll"`, `"poll2"`, 1)
	for _, body := range []string{`{` + other + `,"history_retention":"-1h"}`, `{` + other + `,"history_retention":"soon"}`,
		`{` + other + `,"history_retention":3600}`} {
		a := call(t, srv, "POST", "/v1/tasks", body)
		if a.code != 400 || a.field != "history_retention" {
			t.Errorf("%s: %d field %q: %s", body, a.code, a.field, a.body)
		}
	}
	if list := call(t, srv, "GET", "/v1/tasks?owner=channel/pop3/42", ""); strings.Contains(list.body, "poll2") {
		t.Fatalf("a refused create left a task: %s", list.body)
	}
	id := created(t, call(t, srv, "POST", "/v1/tasks", `{`+other+`,"history_retention":"720h"}`))
	if got := retention(call(t, srv, "GET", "/v1/tasks/"+id, "")); got != "720h0m0s" {
		t.Fatalf("history_retention %q, want 720h0m0s", got)
	}
	if a := call(t, srv, "POST", "/v1/tasks", `{`+other+`,"history_retention":"24h"}`); a.code != 409 {
		t.Fatalf("create with another retention: %d %s", a.code, a.body)
	}
	if a := call(t, srv, "PATCH", "/v1/tasks/"+id, `{"history_retention":"48h"}`); a.code != 200 || retention(a) != "48h0m0s" {
		t.Fatalf("patch: %d %s", a.code, a.body)
	}
	if a := call(t, srv, "PATCH", "/v1/tasks/"+id, `{"history_retention":"-5m"}`); a.code != 400 || a.field != "history_retention" {
		t.Fatalf("patch negative: %d %s", a.code, a.body)
	}
	if a := call(t, srv, "PATCH", "/v1/tasks/"+id, `{"history_retention":"0s"}`); a.code != 200 || retention(a) != "" {
		t.Fatalf("patch 0s (the default again): %d %s", a.code, a.body)
	}
}
