package httpapi_test

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/cronactor/cronactor/actors/worker"
	"github.com/cronactor/cronactor/actors/worker/kinds"
	"github.com/cronactor/cronactor/events/embedded"
)

// daemonServer is the API with the kinds the daemon registers — noop, http,
// and exec, which without allowExec is registered as the daemon does
// without --allow-exec — over a real scheduler (virtual clock) and view on
// the in-memory embedded store, which it returns too so a test can see
// that a refused request recorded nothing.
func daemonServer(t *testing.T, allowExec bool) (*httptest.Server, *embedded.Store) {
	t.Helper()
	st := memStore(t)
	run := map[string]worker.Handler{"noop": kinds.Noop(), "http": kinds.HTTP(nil)}
	if allowExec {
		run["exec"] = kinds.Exec()
	} else if h := execWithoutAllowExec(); h != nil {
		run["exec"] = h
	}
	return rig{store: st, kinds: run}.serve(t), st
}

// execWithoutAllowExec is the exec kind as cmd/cronactor registers it
// without --allow-exec.
func execWithoutAllowExec() worker.Handler {
	return kinds.Disabled("exec tasks need a daemon started with --allow-exec")
}

// refused is one request the API must refuse with 400 naming field,
// recording nothing.
type refused struct {
	name, method, path, body string
	field, msg               string
}

func expectRefused(t *testing.T, srv *httptest.Server, st *embedded.Store, cases []refused) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := st.Head()
			a := call(t, srv, c.method, c.path, c.body)
			if a.code != 400 || a.field != c.field || !strings.Contains(a.body, c.msg) {
				t.Fatalf("got %d field %q: %s; want 400 field %q with %q", a.code, a.field, a.body, c.field, c.msg)
			}
			if after := st.Head(); after != before {
				t.Fatalf("a refused request recorded events: head %v → %v", before, after)
			}
		})
	}
}

// Issue: task IDs hashed owner ‖ 0x00 ‖ name, and a NUL was accepted, so
// owner "victim" with name "b\0c" got the task of owner "victim\0b" with
// name "c" — 200 with the other owner's task and payload.
func TestOwnersCannotReachEachOthersTasks(t *testing.T) {
	srv, st := daemonServer(t, false)
	expectRefused(t, srv, st, []refused{
		{"NUL in the owner", "POST", "/v1/tasks", `{"name":"c","owner":"victim\u0000b","kind":"noop","interval":"1m","payload":{"secret":1}}`, "owner", "control"},
		{"NUL in the name", "POST", "/v1/tasks", `{"name":"b\u0000c","owner":"victim","kind":"noop","interval":"1m","payload":{"secret":1}}`, "name", "control"},
	})
	if a := call(t, srv, "GET", "/v1/tasks", ""); strings.Contains(a.body, "secret") {
		t.Fatalf("another owner's task answered: %s", a.body)
	}
}

func TestNamesAndOwnersAreChecked(t *testing.T) {
	srv, st := daemonServer(t, false)
	task := func(name, owner string) string {
		b, _ := json.Marshal(map[string]string{"name": name, "owner": owner, "kind": "noop", "interval": "1m"})
		return string(b)
	}
	expectRefused(t, srv, st, []refused{
		{"newline in the name", "POST", "/v1/tasks", task("a\nb", "o"), "name", "control"},
		{"ANSI escape in the name", "POST", "/v1/tasks", task("\x1b[2J\x1b[31mok", "o"), "name", "control"},
		{"C1 CSI in the owner", "POST", "/v1/tasks", task("n", "\u009b2J"), "owner", "control"},
		{"RTL override in the name", "POST", "/v1/tasks", task("report\u202egpj.exe", "o"), "name", "bidirectional"},
		{"RTL isolate in the owner", "POST", "/v1/tasks", task("n", "\u2067o"), "owner", "bidirectional"},
		{"line separator in the name", "POST", "/v1/tasks", task("a\u2028b", "o"), "name", "separator"},
		{"100k characters of name", "POST", "/v1/tasks", task(strings.Repeat("n", 100_000), "o"), "name", "at most 200 characters"},
		{"201 characters of owner", "POST", "/v1/tasks", task("n", strings.Repeat("ö", 201)), "owner", "at most 200 characters"},
		{"body not UTF-8", "POST", "/v1/tasks", "{\"name\":\"a\xffb\",\"owner\":\"o\",\"kind\":\"noop\",\"interval\":\"1m\"}", "body", "UTF-8"},
	})
	if a := call(t, srv, "POST", "/v1/tasks", task(strings.Repeat("ö", 200), "team/ünï 名前")); a.code != 201 {
		t.Fatalf("200 characters of name: %d %s", a.code, a.body)
	}
}

// Issue: a tolerance of "2562047h" doubled overflowed, so the check that it
// is under half the interval passed and R3 was off.
func TestHugeToleranceIsRefused(t *testing.T) {
	srv, st := daemonServer(t, false)
	id := created(t, call(t, srv, "POST", "/v1/tasks", `{`+good+`}`))
	expectRefused(t, srv, st, []refused{
		{"create", "POST", "/v1/tasks", `{"name":"n","owner":"o","kind":"noop","interval":"1m","tolerance":"2562047h"}`, "tolerance", "less than half"},
		{"create, largest duration", "POST", "/v1/tasks", `{"name":"n","owner":"o","kind":"noop","interval":"1m","tolerance":"2562047h47m16.854775807s"}`, "tolerance", "less than half"},
		{"patch", "PATCH", "/v1/tasks/" + id, `{"tolerance":"2562047h"}`, "tolerance", "less than half"},
	})
}

// Issue: keys that differ only in case passed the unknown-field check and
// set the field (Go matches names regardless of case), and a key given
// twice took the last value.
func TestBodiesAreDecodedStrictly(t *testing.T) {
	srv, st := daemonServer(t, false)
	id := created(t, call(t, srv, "POST", "/v1/tasks", `{`+good+`}`))
	hook := created(t, call(t, srv, "POST", "/v1/tasks", `{"name":"hook","owner":"o","kind":"http","interval":"1m","payload":{"url":"https://example.com/hook"}}`))
	expectRefused(t, srv, st, []refused{
		{"Name overrides name", "POST", "/v1/tasks", `{` + good + `,"Name":"other"}`, "Name", `did you mean \"name\"`},
		{"INTERVAL overrides interval", "POST", "/v1/tasks", `{"name":"n","owner":"o","kind":"noop","interval":"1m","INTERVAL":"1s"}`, "INTERVAL", `did you mean \"interval\"`},
		{"Kind alone", "POST", "/v1/tasks", `{"name":"n","owner":"o","Kind":"noop","interval":"1m"}`, "Kind", "case-sensitive"},
		{"duplicate interval", "POST", "/v1/tasks", `{"name":"n","owner":"o","kind":"noop","interval":"1h","interval":"1s"}`, "interval", "more than once"},
		{"duplicate owner", "POST", "/v1/tasks", `{"name":"n","owner":"a","kind":"noop","interval":"1m","owner":"b"}`, "owner", "more than once"},
		{"duplicate url in the payload", "POST", "/v1/tasks", `{"name":"n","owner":"o","kind":"http","interval":"1m","payload":{"url":"https://example.com","url":"http://169.254.169.254/"}}`, "payload.url", "more than once"},
		{"patch Interval", "PATCH", "/v1/tasks/" + id, `{"Interval":"2m"}`, "Interval", `did you mean \"interval\"`},
		{"patch PRIORITY", "PATCH", "/v1/tasks/" + id, `{"priority":1,"PRIORITY":9}`, "PRIORITY", "case-sensitive"},
		{"patch duplicate priority", "PATCH", "/v1/tasks/" + id, `{"priority":1,"priority":9}`, "priority", "more than once"},
		{"patch duplicate key in the payload", "PATCH", "/v1/tasks/" + hook, `{"payload":{"url":"https://example.com","url":"https://example.org"}}`, "payload.url", "more than once"},
	})
}

// Issue: first_run "0001-01-01T00:00:00Z" was read as unset (now +
// interval); the same went for a PATCH's next_run.
func TestZeroTimesAreRefused(t *testing.T) {
	srv, st := daemonServer(t, false)
	id := created(t, call(t, srv, "POST", "/v1/tasks", `{`+good+`}`))
	expectRefused(t, srv, st, []refused{
		{"first_run zero", "POST", "/v1/tasks", `{"name":"n","owner":"o","kind":"noop","interval":"1m","first_run":"0001-01-01T00:00:00Z"}`, "first_run", "zero time"},
		{"first_run before 1970", "POST", "/v1/tasks", `{"name":"n","owner":"o","kind":"noop","interval":"1m","first_run":"1969-12-31T23:59:59Z"}`, "first_run", "between"},
		{"first_run past year 9999 in UTC", "POST", "/v1/tasks", `{"name":"n","owner":"o","kind":"noop","interval":"1m","first_run":"9999-12-31T23:59:59-23:59"}`, "first_run", "between"},
		{"next_run zero", "PATCH", "/v1/tasks/" + id, `{"next_run":"0001-01-01T00:00:00Z"}`, "next_run", "zero time"},
	})
}

// DESIGN §5: a handler's payload is checked at create — http needs an
// absolute http(s) url; exec needs a command and a daemon started with
// --allow-exec, and the error names the flag.
func TestPayloadsAreCheckedByKind(t *testing.T) {
	srv, st := daemonServer(t, false)
	httpTask := func(payload string) string {
		return `{"name":"hook","owner":"o","kind":"http","interval":"1m","payload":` + payload + `}`
	}
	id := created(t, call(t, srv, "POST", "/v1/tasks", httpTask(`{"url":"https://example.com/hook","body":{"a":1}}`)))
	expectRefused(t, srv, st, []refused{
		{"http without payload", "POST", "/v1/tasks", `{"name":"h2","owner":"o","kind":"http","interval":"1m"}`, "payload", "url"},
		{"http without url", "POST", "/v1/tasks", httpTask(`{"body":1}`), "payload.url", "required"},
		{"http url not a string", "POST", "/v1/tasks", httpTask(`{"url":7}`), "payload.url", "string"},
		{"http url relative", "POST", "/v1/tasks", httpTask(`{"url":"/hook"}`), "payload.url", "absolute http or https"},
		{"http url of another scheme", "POST", "/v1/tasks", httpTask(`{"url":"file:///etc/passwd"}`), "payload.url", "absolute http or https"},
		{"http url without a host", "POST", "/v1/tasks", httpTask(`{"url":"http:///hook"}`), "payload.url", "host"},
		{"http url not a URL", "POST", "/v1/tasks", httpTask(`{"url":"http://exa mple.com/"}`), "payload.url", "URL"},
		{"http payload with an unknown key", "POST", "/v1/tasks", httpTask(`{"url":"https://example.com","URL":"http://x"}`), "payload.URL", "unknown field"},
		{"http payload not an object", "POST", "/v1/tasks", httpTask(`["https://example.com"]`), "payload", "JSON object"},
		{"patch http url", "PATCH", "/v1/tasks/" + id, `{"payload":{"url":"ftp://example.com"}}`, "payload.url", "absolute http or https"},
		{"patch http payload to null", "PATCH", "/v1/tasks/" + id, `{"payload":null}`, "payload", "required"},
		{"exec without --allow-exec", "POST", "/v1/tasks", `{"name":"e","owner":"o","kind":"exec","interval":"1m","payload":{"command":["true"]}}`, "kind", "--allow-exec"},
	})

	srv, st = daemonServer(t, true)
	execTask := func(payload string) string {
		return `{"name":"cmd","owner":"o","kind":"exec","interval":"1m","payload":` + payload + `}`
	}
	expectRefused(t, srv, st, []refused{
		{"exec without payload", "POST", "/v1/tasks", `{"name":"e","owner":"o","kind":"exec","interval":"1m"}`, "payload", "command"},
		{"exec without command", "POST", "/v1/tasks", execTask(`{}`), "payload.command", "required"},
		{"exec empty command", "POST", "/v1/tasks", execTask(`{"command":[]}`), "payload.command", "program"},
		{"exec empty program", "POST", "/v1/tasks", execTask(`{"command":[""]}`), "payload.command", "program"},
		{"exec command a string", "POST", "/v1/tasks", execTask(`{"command":"rm -rf /"}`), "payload.command", "list of strings"},
		{"exec NUL in an argument", "POST", "/v1/tasks", execTask(`{"command":["echo","a\u0000b"]}`), "payload.command[1]", "NUL"},
	})
	if a := call(t, srv, "POST", "/v1/tasks", execTask(`{"command":["true"]}`)); a.code != 201 {
		t.Fatalf("exec with --allow-exec: %d %s", a.code, a.body)
	}
}
