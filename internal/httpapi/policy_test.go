package httpapi_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// policyRow is the run policy part of a task row.
type policyRow struct {
	Queue            *string         `json:"queue"`
	Retry            json.RawMessage `json:"retry"`
	MissedRunPolicy  *string         `json:"missed_run_policy"`
	MissedAfter      json.RawMessage `json:"missed_after"`
	StartDeadline    json.RawMessage `json:"start_deadline"`
	HeartbeatTimeout json.RawMessage `json:"heartbeat_timeout"`
	RetryCount       *int            `json:"retry_count"`
	RunState         *string         `json:"run_state"`
}

func policyOf(t *testing.T, a answer) policyRow {
	t.Helper()
	var p policyRow
	if err := json.Unmarshal([]byte(a.body), &p); err != nil {
		t.Fatalf("row: %v: %s", err, a.body)
	}
	if p.Queue == nil || p.MissedRunPolicy == nil || p.Retry == nil || p.MissedAfter == nil || p.StartDeadline == nil ||
		p.HeartbeatTimeout == nil || p.RetryCount == nil || p.RunState == nil {
		t.Fatalf("the row lacks a policy field: %s", a.body)
	}
	return p
}

func compact(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// The run policy goes through POST and PATCH and comes back on the row,
// every field present with its default when not given; the same create
// again is the same task, another policy another spec (409).
func TestPolicyFields(t *testing.T) {
	srv := server(t, "")
	def := call(t, srv, "POST", "/v1/tasks", `{`+good+`}`)
	p := policyOf(t, def)
	if *p.Queue != "default" || *p.MissedRunPolicy != "run_once" || string(p.Retry) != "null" || string(p.MissedAfter) != "null" ||
		string(p.StartDeadline) != "null" || string(p.HeartbeatTimeout) != "null" || *p.RetryCount != 0 || *p.RunState != "idle" {
		t.Fatalf("defaults: %s", def.body)
	}

	const pol = `"queue":"reports","retry":{"max_attempts":3,"initial_backoff":"1s","max_backoff":"1m","multiplier":2},` +
		`"missed_run_policy":"skip","missed_after":"10s","start_deadline":"20s","heartbeat_timeout":"5s"`
	other := strings.Replace(good, `"poll"`, `"poll2"`, 1)
	a := call(t, srv, "POST", "/v1/tasks", `{`+other+`,`+pol+`}`)
	id := created(t, a)
	for _, got := range []answer{a, call(t, srv, "GET", "/v1/tasks/"+id, "")} {
		p := policyOf(t, got)
		if *p.Queue != "reports" || *p.MissedRunPolicy != "skip" || string(p.MissedAfter) != `"10s"` ||
			string(p.StartDeadline) != `"20s"` || string(p.HeartbeatTimeout) != `"5s"` ||
			compact(t, p.Retry) != `{"initial_backoff":"1s","max_attempts":3,"max_backoff":"1m0s","multiplier":2}` {
			t.Fatalf("policy: %s", got.body)
		}
	}
	if a := call(t, srv, "POST", "/v1/tasks", `{`+other+`,`+pol+`}`); a.code != 200 {
		t.Fatalf("same create: %d %s", a.code, a.body)
	}
	for _, change := range []string{`"queue":"mail"`, `"missed_run_policy":"run_once"`, `"start_deadline":"25s"`,
		`"retry":{"max_attempts":4,"initial_backoff":"1s","max_backoff":"1m","multiplier":2}`} {
		body := `{` + other + `,` + change + `}`
		if a := call(t, srv, "POST", "/v1/tasks", body); a.code != 409 {
			t.Errorf("create with %s: %d %s", change, a.code, a.body)
		}
	}

	// PATCH: only the fields given change; "" or "0s" restores a default,
	// null turns retries off.
	a = call(t, srv, "PATCH", "/v1/tasks/"+id, `{"queue":"mail","heartbeat_timeout":"0s"}`)
	if p := policyOf(t, a); a.code != 200 || *p.Queue != "mail" || string(p.HeartbeatTimeout) != "null" ||
		string(p.StartDeadline) != `"20s"` || string(p.Retry) == "null" {
		t.Fatalf("patch queue: %d %s", a.code, a.body)
	}
	a = call(t, srv, "PATCH", "/v1/tasks/"+id, `{"retry":{"max_attempts":5,"initial_backoff":"2s","max_backoff":"30s","multiplier":1.5}}`)
	if p := policyOf(t, a); a.code != 200 || compact(t, p.Retry) != `{"initial_backoff":"2s","max_attempts":5,"max_backoff":"30s","multiplier":1.5}` {
		t.Fatalf("patch retry: %d %s", a.code, a.body)
	}
	a = call(t, srv, "PATCH", "/v1/tasks/"+id, `{"retry":null,"queue":"","missed_run_policy":""}`)
	if p := policyOf(t, a); a.code != 200 || string(p.Retry) != "null" || *p.Queue != "default" || *p.MissedRunPolicy != "run_once" {
		t.Fatalf("patch retry off: %d %s", a.code, a.body)
	}
	a = call(t, srv, "PATCH", "/v1/tasks/"+id, `{"retry":{"max_attempts":2,"initial_backoff":"1s","max_backoff":"1s","multiplier":1}}`)
	if p := policyOf(t, a); a.code != 200 || string(p.Retry) == "null" {
		t.Fatalf("patch retry on: %d %s", a.code, a.body)
	}
	a = call(t, srv, "PATCH", "/v1/tasks/"+id, `{"retry":{"max_attempts":1,"initial_backoff":"1s","max_backoff":"1s","multiplier":1}}`)
	if p := policyOf(t, a); a.code != 200 || string(p.Retry) != "null" {
		t.Fatalf("patch one attempt: %d %s", a.code, a.body)
	}
}

// The bad input, over the real HTTP server: each is a 400 naming
// the field, and nothing is recorded — on create and on PATCH.
func TestPolicyBadInput(t *testing.T) {
	srv, st := daemonServer(t, false)
	task := `"name":"poll","owner":"o","kind":"noop","interval":"1m","timebox":"30s"`
	retry := func(fields string) string { return `"retry":{` + fields + `}` }
	const ok = `"initial_backoff":"1s","max_backoff":"1m","multiplier":2`
	bad := []struct{ name, policy, field, msg string }{
		{"max_attempts 0", retry(`"max_attempts":0,` + ok), "retry.max_attempts", ""},
		{"max_attempts negative", retry(`"max_attempts":-1,` + ok), "retry.max_attempts", ""},
		{"max_attempts absurd", retry(`"max_attempts":101,` + ok), "retry.max_attempts", ""},
		{"max_attempts left out", retry(ok), "retry.max_attempts", ""},
		{"initial_backoff 0", retry(`"max_attempts":3,"initial_backoff":"0s","max_backoff":"1m","multiplier":2`), "retry.initial_backoff", ""},
		{"initial_backoff negative", retry(`"max_attempts":3,"initial_backoff":"-1s","max_backoff":"1m","multiplier":2`), "retry.initial_backoff", ""},
		{"max_backoff 0", retry(`"max_attempts":3,"initial_backoff":"1s","max_backoff":"0s","multiplier":2`), "retry.max_backoff", ""},
		{"initial above max", retry(`"max_attempts":3,"initial_backoff":"2m","max_backoff":"1m","multiplier":2`), "retry.initial_backoff", ""},
		{"multiplier below 1", retry(`"max_attempts":3,"initial_backoff":"1s","max_backoff":"1m","multiplier":0.5`), "retry.multiplier", ""},
		{"start_deadline above the timebox", `"start_deadline":"31s"`, "start_deadline", ""},
		{"start_deadline negative", `"start_deadline":"-1s"`, "start_deadline", ""},
		{"heartbeat_timeout above the timebox", `"heartbeat_timeout":"31s"`, "heartbeat_timeout", ""},
		{"heartbeat_timeout negative", `"heartbeat_timeout":"-5s"`, "heartbeat_timeout", ""},
		{"missed_after negative", `"missed_after":"-5s"`, "missed_after", ""},
		{"unknown missed_run_policy", `"missed_run_policy":"sometimes"`, "missed_run_policy", ""},
		{"queue with a space", `"queue":"my queue"`, "queue", ""},
		{"unknown overlap", `"overlap":"sometimes"`, "overlap", ""},
		{"overlap in another case", `"overlap":"Skip"`, "overlap", ""},
		{"pause_after_failures 0", `"pause_after_failures":0`, "pause_after_failures", "at least 1"},
		{"pause_after_failures negative", `"pause_after_failures":-2`, "pause_after_failures", "at least 1"},
		{"pause_after_failures a string", `"pause_after_failures":"3"`, "pause_after_failures", ""},
		// What the API itself reads.
		{"backoff not a duration", retry(`"max_attempts":3,"initial_backoff":"soon","max_backoff":"1m","multiplier":2`), "retry.initial_backoff", "duration"},
		{"start_deadline not a duration", `"start_deadline":"soon"`, "start_deadline", "duration"},
		{"max_attempts a string", retry(`"max_attempts":"3",` + ok), "retry.max_attempts", ""},
		{"retry not an object", `"retry":3`, "retry", ""},
		{"unknown retry field", retry(`"max_attempt":3,` + ok), "retry.max_attempt", "unknown field"},
		{"case-variant retry field", retry(`"Max_Attempts":3,` + ok), "retry.Max_Attempts", "case-sensitive"},
		{"retry field twice", retry(`"max_attempts":3,"max_attempts":4,` + ok), "retry.max_attempts", "more than once"},
		{"case-variant policy field", `"Queue":"x"`, "Queue", "case-sensitive"},
	}
	var cases []refused
	for _, b := range bad {
		cases = append(cases, refused{"create: " + b.name, "POST", "/v1/tasks", `{` + task + `,` + b.policy + `}`, b.field, b.msg})
	}
	expectRefused(t, srv, st, cases)

	id := created(t, call(t, srv, "POST", "/v1/tasks", `{`+task+`}`))
	cases = cases[:0]
	for _, b := range bad {
		cases = append(cases, refused{"patch: " + b.name, "PATCH", "/v1/tasks/" + id, `{"priority":4,` + b.policy + `}`, b.field, b.msg})
	}
	expectRefused(t, srv, st, cases)
	if a := call(t, srv, "GET", "/v1/tasks/"+id, ""); strings.Contains(a.body, `"priority": 4`) {
		t.Fatalf("a refused PATCH changed the task: %s", a.body)
	}
}

// A retry policy that gives only max_attempts (the CLI's --retry-max-attempts
// alone) gets the documented backoffs: initial 1s, max 1m (or the initial
// when longer), multiplier 2, on POST and on PATCH; a part given is kept.
func TestRetryDefaults(t *testing.T) {
	srv := server(t, "")
	for i, c := range []struct{ retry, want string }{
		{`{"max_attempts":3}`, `{"initial_backoff":"1s","max_attempts":3,"max_backoff":"1m0s","multiplier":2}`},
		{`{"max_attempts":3,"initial_backoff":"2m"}`, `{"initial_backoff":"2m0s","max_attempts":3,"max_backoff":"2m0s","multiplier":2}`},
		{`{"max_attempts":2,"multiplier":1.5,"max_backoff":"10s"}`, `{"initial_backoff":"1s","max_attempts":2,"max_backoff":"10s","multiplier":1.5}`},
	} {
		body := strings.Replace(good, `"poll"`, fmt.Sprintf(`"defaults%d"`, i), 1)
		a := call(t, srv, "POST", "/v1/tasks", `{`+body+`,"retry":`+c.retry+`}`)
		if a.code != 201 || compact(t, policyOf(t, a).Retry) != c.want {
			t.Errorf("POST retry %s: %d %s", c.retry, a.code, a.body)
		}
		id := created(t, a)
		a = call(t, srv, "PATCH", "/v1/tasks/"+id, `{"retry":`+c.retry+`}`)
		if a.code != 200 || compact(t, policyOf(t, a).Retry) != c.want {
			t.Errorf("PATCH retry %s: %d %s", c.retry, a.code, a.body)
		}
	}
	// One attempt with nothing else stays "no retry".
	a := call(t, srv, "POST", "/v1/tasks", `{`+strings.Replace(good, `"poll"`, `"once"`, 1)+`,"retry":{"max_attempts":1}}`)
	if a.code != 201 || string(policyOf(t, a).Retry) != "null" {
		t.Errorf("one attempt: %d %s", a.code, a.body)
	}
}

// A body over the limit is 413 naming "body", on POST and PATCH; one just
// under it is read (and judged on its content).
func TestOverLargeBodyIs413(t *testing.T) {
	srv := server(t, "")
	pad := func(n int) string { return `{` + good + `,"payload":{"pad":"` + strings.Repeat("x", n) + `"}}` }
	for _, c := range []struct{ method, path string }{{"POST", "/v1/tasks"}, {"PATCH", "/v1/tasks/0f6c1d2e-9a3b-4c5d-8e7f-1021324354aa"}} {
		a := call(t, srv, c.method, c.path, pad(300<<10))
		if a.code != 413 || !strings.Contains(a.body, `"field": "body"`) || !strings.Contains(a.body, "must be at most") {
			t.Errorf("%s %s with 300 KiB: %d %s", c.method, c.path, a.code, a.body)
		}
	}
	if a := call(t, srv, "POST", "/v1/tasks", pad(100<<10)); a.code == 413 {
		t.Errorf("100 KiB: %d %s", a.code, a.body)
	}
}

// overlap and pause_after_failures (DESIGN §8.4) go through POST and PATCH
// and come back on the row with the defaults when not given (overlap skip,
// pause_after_failures null), with the count of failed slots and the pause
// reason (null while active); a PATCH null turns pausing off.
func TestOverlapAndPauseFields(t *testing.T) {
	srv := server(t, "")
	type row struct {
		Overlap             *string         `json:"overlap"`
		PauseAfterFailures  json.RawMessage `json:"pause_after_failures"`
		ConsecutiveFailures *int            `json:"consecutive_failures"`
		PauseReason         json.RawMessage `json:"pause_reason"`
	}
	read := func(a answer) row {
		t.Helper()
		var r row
		if err := json.Unmarshal([]byte(a.body), &r); err != nil || r.Overlap == nil || r.PauseAfterFailures == nil ||
			r.ConsecutiveFailures == nil || r.PauseReason == nil {
			t.Fatalf("row lacks overlap, pause_after_failures, consecutive_failures or pause_reason (%v): %s", err, a.body)
		}
		return r
	}
	def := read(call(t, srv, "POST", "/v1/tasks", `{`+good+`}`))
	if *def.Overlap != "skip" || string(def.PauseAfterFailures) != "null" || *def.ConsecutiveFailures != 0 || string(def.PauseReason) != "null" {
		t.Fatalf("defaults: %+v", def)
	}
	other := strings.Replace(good, `"poll"`, `"poll2"`, 1)
	a := call(t, srv, "POST", "/v1/tasks", `{`+other+`,"overlap":"cancel_other","pause_after_failures":3}`)
	if r := read(a); a.code != 201 || *r.Overlap != "cancel_other" || string(r.PauseAfterFailures) != "3" {
		t.Fatalf("create: %d %s", a.code, a.body)
	}
	// The same create again is the same task; another overlap is another spec.
	if a := call(t, srv, "POST", "/v1/tasks", `{`+other+`,"overlap":"cancel_other","pause_after_failures":3}`); a.code != 200 {
		t.Fatalf("same create again: %d %s", a.code, a.body)
	}
	if a := call(t, srv, "POST", "/v1/tasks", `{`+other+`,"overlap":"allow","pause_after_failures":3}`); a.code != 409 {
		t.Fatalf("create with another overlap: %d %s", a.code, a.body)
	}
	pid := created(t, a)
	a = call(t, srv, "PATCH", "/v1/tasks/"+pid, `{"overlap":"buffer_one","pause_after_failures":1}`)
	if r := read(a); a.code != 200 || *r.Overlap != "buffer_one" || string(r.PauseAfterFailures) != "1" {
		t.Fatalf("patch: %d %s", a.code, a.body)
	}
	a = call(t, srv, "PATCH", "/v1/tasks/"+pid, `{"overlap":"","pause_after_failures":null}`)
	if r := read(a); a.code != 200 || *r.Overlap != "skip" || string(r.PauseAfterFailures) != "null" {
		t.Fatalf("patch back to the defaults: %d %s", a.code, a.body)
	}
}
