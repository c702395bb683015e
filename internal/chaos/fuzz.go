package chaos

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"
	"unicode"
)

// FuzzConfig shapes the HTTP fuzzer.
type FuzzConfig struct {
	// Bin is the cronactor binary; Dir a scratch directory.
	Bin, Dir string
	// Requests is how many requests are sent [2000].
	Requests int
	// Seed makes the requests repeatable [1].
	Seed uint64
	// Deadline bounds each request from connect to the end of the answer
	// [10s].
	Deadline time.Duration
	// Postgres, when set, is the URL of a PostgreSQL database: the daemon
	// runs on the Postgres store in a fresh schema of it.
	Postgres string
}

// FuzzReport is what the fuzzer sent and found.
type FuzzReport struct {
	Requests int
	// ByStatus counts answers by status code (0: no answer).
	ByStatus map[int]int
	// Violations: 5xx answers, requests with no answer by the deadline, and
	// non-2xx answers after which the task list had changed.
	Violations []Violation
	// Accepted are hostile inputs the API should refuse (DESIGN §5, issue 16
	// item 8) but answered 2xx: findings, not violations of the fuzzer's own
	// invariants.
	Accepted []fuzzReq
	Elapsed  time.Duration
}

// fuzzReq is one request, as raw bytes on the wire.
type fuzzReq struct {
	what   string // how it was made, for the report
	method string
	target string
	header [][2]string
	body   []byte
	// reject: the API must answer 4xx (a hostile value in a write).
	reject bool
}

func (r fuzzReq) raw() []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: fuzz\r\nConnection: close\r\n", r.method, r.target)
	hasLen := false
	for _, h := range r.header {
		fmt.Fprintf(&b, "%s: %s\r\n", h[0], h[1])
		hasLen = hasLen || strings.EqualFold(h[0], "Content-Length") || strings.EqualFold(h[0], "Transfer-Encoding")
	}
	if !hasLen && r.body != nil {
		fmt.Fprintf(&b, "Content-Length: %d\r\n", len(r.body))
	}
	b.WriteString("\r\n")
	b.Write(r.body)
	return b.Bytes()
}

func (r fuzzReq) String() string {
	body := string(r.body)
	if len(body) > 200 {
		body = fmt.Sprintf("%s… (%d bytes)", body[:200], len(r.body))
	}
	target := r.target
	if len(target) > 200 {
		target = fmt.Sprintf("%s… (%d bytes)", target[:200], len(r.target))
	}
	return fmt.Sprintf("[%s] %q %q body %q", r.what, r.method, target, body)
}

// send writes req on a fresh connection and reads the answer, all within
// deadline. A streaming answer (server-sent events) counts once its header
// arrived.
func send(addr string, req fuzzReq, deadline time.Duration) (int, []byte, error) {
	conn, err := net.DialTimeout("tcp", addr, deadline)
	if err != nil {
		return 0, nil, err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(deadline))
	// The server may answer before reading a large body and close: write
	// from another goroutine and read the answer whatever happens.
	go func() { _, _ = conn.Write(req.raw()) }()
	rd := bufio.NewReader(conn)
	resp, err := http.ReadResponse(rd, nil)
	for err == nil && resp.StatusCode >= 100 && resp.StatusCode < 200 && resp.StatusCode != http.StatusSwitchingProtocols {
		resp, err = http.ReadResponse(rd, nil) // 100 Continue and the like come before the answer
	}
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		return resp.StatusCode, nil, nil
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, b, err
}

// gen makes hostile requests from a seed and the IDs of existing tasks.
type gen struct {
	rnd *rand.Rand
	ids []string
	n   int
}

func (g *gen) pick(xs ...string) string { return xs[g.rnd.IntN(len(xs))] }

var (
	hostileStrings = []string{"", " ", "\x00", "a\x00b", "line\nbreak", "\x1b[31mred\x1b[0m", "\u202eevil", "\u200b",
		"ok", strings.Repeat("n", 100000), "../../etc/passwd", "%00", "<script>", "名前", "\t", "\r\n"}
	hostileDurations = []string{"2562047h", "2562048h", "9223372036854775807ns", "-9223372036854775808ns", "-1s", "0s", "0",
		"1", "1e3s", "1.5h", "+1s", " 1s", "1s ", "PT1S", "\u0661s", "1ns", "1µs", "99999999999999999999s", "NaN", "1m", "1s"}
	hostileTimes = []string{"0001-01-01T00:00:00Z", "9999-12-31T23:59:59Z", "2026-13-01T00:00:00Z", "2026-01-01T00:00:00+14:00",
		"2026-01-01T00:00:00.999999999999Z", "10000-01-01T00:00:00Z", "yesterday", "", "2026-01-01", "1970-01-01T00:00:00Z"}
	jsonOddities = []string{"null", "true", "[]", "{}", "1e400", "-0", "18446744073709551616", "\"\"", `{"a":1}`, `[[[[]]]]`,
		"9223372036854775808", "-1", "1.5"}
)

// hostileText: a name or owner that must be refused — empty or blank,
// control characters, bidirectional overrides, zero-width characters, or
// longer than any sane name.
func hostileText(s string) bool {
	if strings.TrimSpace(s) == "" || len(s) > 1000 {
		return true
	}
	for _, r := range s {
		if unicode.IsControl(r) || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) || r == 0x200b {
			return true
		}
	}
	return false
}

// badDuration: a duration the API must refuse in field k of a create (or,
// with patch, an update of a task whose interval the fuzzer does not know).
func badDuration(k, s string, patch bool) bool {
	d, err := time.ParseDuration(s)
	switch {
	case err != nil:
		return true
	case k == "tolerance":
		return d < 0 || (!patch && d >= 30*time.Second) // R3 needs tolerance < interval/2 (1m)
	default:
		return d <= 0
	}
}

func (g *gen) id() string {
	if len(g.ids) > 0 && g.rnd.IntN(2) == 0 {
		return g.ids[g.rnd.IntN(len(g.ids))]
	}
	return g.pick("00000000-0000-0000-0000-000000000000", "not-a-uuid", "%00", "..%2F..", strings.Repeat("a", 5000),
		"{6ba7b810-9dad-11d1-80b4-00c04fd430c8}", "urn:uuid:6ba7b810-9dad-11d1-80b4-00c04fd430c8",
		"6BA7B810-9DAD-11D1-80B4-00C04FD430C8", "6ba7b8109dad11d180b400c04fd430c8", "%E2%80%AE", "%ff%fe")
}

// createFields is a valid create body as ordered key/value JSON text.
func (g *gen) createFields() [][2]string {
	g.n++
	return [][2]string{{"name", strconv.Quote(fmt.Sprintf("fz%05d", g.n))}, {"owner", `"fuzz/o"`}, {"kind", `"noop"`},
		{"interval", `"1m"`}}
}

func object(fields [][2]string) []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range fields {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%q:%s", f[0], f[1])
	}
	b.WriteByte('}')
	return b.Bytes()
}

// body returns a hostile JSON body for a create (or, with patch, an update)
// and whether the API must refuse it.
func (g *gen) body(patch bool) (string, []byte, bool) {
	fields := g.createFields()
	if patch {
		fields = [][2]string{{"priority", "1"}}
	}
	set := func(k, v string) {
		for i := range fields {
			if fields[i][0] == k {
				fields[i][1] = v
				return
			}
		}
		fields = append(fields, [2]string{k, v})
	}
	switch g.rnd.IntN(14) {
	case 0: // a hostile string in a text field
		k := g.pick("name", "owner", "kind")
		if patch {
			k = "interval"
		}
		s := g.pick(hostileStrings...)
		set(k, g.quote(s))
		return "string in " + k, object(fields), hostileText(s) || k == "kind" || k == "interval"
	case 1: // a hostile duration
		k := g.pick("interval", "tolerance", "timebox")
		d := g.pick(hostileDurations...)
		set(k, g.quote(d))
		return "duration " + k, object(fields), badDuration(k, d, patch)
	case 2: // a hostile time
		k := "first_run"
		if patch {
			k = "next_run"
		}
		set(k, g.quote(g.pick(hostileTimes...)))
		return "time " + k, object(fields), false
	case 3: // a key differing only in case
		k := g.pick("Name", "NAME", "iNtErVaL", "Kind", "OWNER", "Priority", "TOLERANCE")
		set(k, g.pick(`"x"`, `"1s"`, "5"))
		return "case-variant key " + k, object(fields), true
	case 4: // a duplicate key
		k := fields[g.rnd.IntN(len(fields))][0]
		fields = append(fields, [2]string{k, g.pick(`"dup"`, `"2m"`, "7")})
		return "duplicate key " + k, object(fields), true
	case 5: // an unknown field
		set(g.pick("id", "status", "run_count", "__proto__", "nextRun", ""), "1")
		return "unknown field", object(fields), true
	case 6: // wrong JSON types
		k := g.pick("name", "owner", "kind", "interval", "priority", "payload", "tolerance", "first_run")
		set(k, g.pick(jsonOddities...))
		return "type of " + k, object(fields), false
	case 7: // deep nesting
		depth := g.pick("100", "10000", "100000")
		n, _ := strconv.Atoi(depth)
		set("payload", strings.Repeat("[", n)+strings.Repeat("]", n))
		return "payload nested " + depth, object(fields), false
	case 8: // huge body
		size := g.pick("262000", "300000", "4000000")
		n, _ := strconv.Atoi(size)
		set("payload", `"`+strings.Repeat("p", n)+`"`)
		return "payload of " + size + " bytes", object(fields), n > 256<<10
	case 9: // invalid UTF-8, raw in the JSON text
		k := g.pick("name", "owner")
		set(k, "\"bad\xff\xfe\xc0\x80utf8\"")
		return "invalid UTF-8 in " + k, object(fields), true
	case 10: // trailing data or truncated JSON
		b := object(fields)
		switch g.rnd.IntN(3) {
		case 0:
			return "trailing object", append(b, []byte(" {}")...), true
		case 1:
			return "trailing garbage", append(b, []byte("garbage")...), true
		default:
			return "truncated", b[:g.rnd.IntN(len(b))], true
		}
	case 11: // not an object
		b := g.pick(append(jsonOddities, "", "not json", "\x00\x01\x02", `{"name":}`)...)
		return "not an object", []byte(b), b != "{}" // an empty update is a valid no-op
	case 12: // priority extremes
		set("priority", g.pick("9223372036854775807", "-9223372036854775808", "1e30", "0", "-1", "2147483648"))
		return "priority", object(fields), false
	default: // kinds and payloads
		switch g.rnd.IntN(4) {
		case 0:
			set("kind", `"exec"`)
			set("payload", `{"command":["/bin/true"]}`)
			return "exec without --allow-exec", object(fields), true
		case 1:
			set("kind", `"http"`)
			set("payload", g.pick(`{"url":"ftp://x"}`, `{"url":""}`, `{}`, `{"url":"http://"}`, `"x"`, `{"url":"/relative"}`))
			return "http payload", object(fields), true
		case 2:
			set("kind", g.quote(g.pick("nope", "NOOP", "Noop", " noop", "noop\x00")))
			return "unknown kind", object(fields), true
		default:
			set("payload", `"`+strings.Repeat("q", 70000)+`"`)
			return "payload 70k", object(fields), false
		}
	}
}

// quote renders s as a JSON string; control characters are escaped as JSON
// requires, and sometimes left raw (invalid JSON).
func (g *gen) quote(s string) string {
	b, _ := json.Marshal(s)
	if g.rnd.IntN(6) == 0 {
		return `"` + s + `"`
	}
	return string(b)
}

func (g *gen) query() string {
	pairs := []string{
		"limit=" + g.pick("0", "-1", "1001", "1e3", "99999999999999999999999", "abc", "1"),
		"cursor=" + g.pick("garbage", "%00", "eyJ4IjoxfQ", strings.Repeat("A", 4000), ""),
		"due_before=" + g.pick("garbage", "0001-01-01T00:00:00Z", "9999-12-31T23:59:59Z"),
		"as_of=" + g.pick("garbage", "-1", "99999999999999999999", "0", "1", "2026-01-01T00:00:00Z", "0001-01-01T00:00:00Z"),
		"owner=" + g.pick("%00", "%ff", "fuzz/o", strings.Repeat("o", 3000)),
		"status=" + g.pick("active", "ACTIVE", "weird", ""),
		"since=" + g.pick("x", "0001-01-01T00:00:00Z"), "at=" + g.pick("x", "2026-01-01T00:00:00Z", "9999-12-31T23:59:59Z"),
		"window=" + g.pick("-1s", "2562048h", "9999999h", "1s"), "count=" + g.pick("0", "-1", "1001", "1000", "99999999999999999999"),
		"cron=" + g.pick("*+*+*+*+*", "0+0+30+2+*", "%00", "*/0+*+*+*+*", "@every+1s", strings.Repeat("*", 5000), "0+0+*+*+MON-FRI"),
		"timezone=" + g.pick("UTC", "..%2F..%2Fetc%2Fpasswd", "Nowhere/City", "%00", "Local"),
		"from=" + g.pick("0", "-1", "99999999999999999999", "garbage", "9999-12-31T23:59:59Z"),
		g.pick("unknown=1", "limit=1&limit=2", "%zz=1", "a=%zz", "=", "&&&"),
	}
	n := 1 + g.rnd.IntN(3)
	var q []string
	for i := 0; i < n; i++ {
		q = append(q, pairs[g.rnd.IntN(len(pairs))])
	}
	return strings.Join(q, "&")
}

func (g *gen) next() fuzzReq {
	var r fuzzReq
	r.method = "GET"
	switch g.rnd.IntN(12) {
	case 0, 1, 2:
		what, body, reject := g.body(false)
		r = fuzzReq{what: "create: " + what, method: "POST", target: "/v1/tasks", body: body, reject: reject}
	case 3:
		what, body, reject := g.body(true)
		r = fuzzReq{what: "patch: " + what, method: "PATCH", target: "/v1/tasks/" + g.id(), body: body, reject: reject}
	case 4:
		r.what, r.method = "action", g.pick("POST", "GET", "PUT", "DELETE")
		r.target = "/v1/tasks/" + g.id() + g.pick("/pause", "/resume", "/trigger", "/events", "/history", "/explain", "/upcoming", "", "/")
	case 5:
		r.what, r.target = "query", g.pick("/v1/tasks", "/v1/tasks/"+g.id(), "/v1/tasks/"+g.id()+"/history",
			"/v1/tasks/"+g.id()+"/explain", "/v1/schedule/preview", "/v1/events/stream", "/v1/tasks/"+g.id()+"/upcoming")+"?"+g.query()
	case 6:
		r.what, r.method = "owner delete", "DELETE"
		r.target = "/v1/owners/" + g.pick("nobody-here", "%00", "%2F", "a%2Fb", "..", strings.Repeat("o", 5000), "%ff", "") + g.pick("/tasks", "", "/tasks/x")
	case 7:
		r.what = "odd method"
		r.method = g.pick("get", "FOO", "PROPFIND", "TRACE", "OPTIONS", "HEAD", "CONNECT", "PUT", strings.Repeat("M", 300))
		r.target = g.pick("/v1/tasks", "/v1/tasks/"+g.id(), "/healthz", "/metrics", "/ui/", "/")
	case 8:
		r.what = "odd path"
		r.target = g.pick("/v1/tasks/../../etc/passwd", "/v1//tasks", "/v1/tasks%2F", "/V1/TASKS", "/v1/tasks/"+g.id()+"/../..",
			"/"+strings.Repeat("a/", 3000), "/v1/tasks?%", "*", "http://evil/v1/tasks", "/v1/tasks#frag", "/ui/../../", "/v2/tasks",
			"/v1/tasks/\u202e", "/healthz/", "/metrics?x=1")
	case 9:
		what, body, _ := g.body(false)
		r = fuzzReq{what: "headers, create: " + what, method: "POST", target: "/v1/tasks", body: body}
		r.header = append(r.header, g.pick2(
			[2]string{"Content-Type", "text/plain"}, [2]string{"Content-Type", "application/json; charset=latin1"},
			[2]string{"X-Big", strings.Repeat("h", 1<<20)}, [2]string{"Authorization", "Bearer \x01"},
			[2]string{"Content-Encoding", "gzip"}, [2]string{"Expect", "100-continue"},
			[2]string{"Content-Length", strconv.Itoa(len(body)) + ", " + strconv.Itoa(len(body))}))
	case 10:
		r = fuzzReq{what: "if-match", method: g.pick("PATCH", "POST", "DELETE"), body: []byte(`{"priority":2}`)}
		r.target = "/v1/tasks/" + g.id() + g.pick("", "/pause", "/resume")
		if r.method == "DELETE" || strings.HasSuffix(r.target, "e") {
			r.body = nil
		}
		r.header = append(r.header, [2]string{"If-Match", g.pick(`"0"`, `"99999999999999999999999"`, `"-1"`, "W/\"1\"", "*", `"1", "2"`, "garbage", `""`)})
		r.reject = false
	default:
		r = fuzzReq{what: "chunked create", method: "POST", target: "/v1/tasks"}
		_, body, _ := g.body(false)
		r.header = [][2]string{{"Transfer-Encoding", "chunked"}}
		if g.rnd.IntN(2) == 0 {
			r.body = []byte(fmt.Sprintf("%x\r\n%s\r\n0\r\n\r\n", len(body), body))
		} else {
			r.what = "bad chunks"
			r.body = []byte(g.pick("zz\r\nabc\r\n0\r\n\r\n", "ffffffffffffffffff\r\nx\r\n", "3\r\nabcdef\r\n0\r\n\r\n"))
		}
	}
	return r
}

func (g *gen) pick2(xs ...[2]string) [2]string { return xs[g.rnd.IntN(len(xs))] }

// settledFingerprint is the fingerprint once no task has a run pending and
// it stayed the same for 100 ms, or after limit. A trigger is answered
// once its enqueue is recorded, before the view has folded it (no
// read-your-writes for runs), and the run then changes its task as it
// runs: on the embedded store within a millisecond, on Postgres a few
// group commits later.
func settledFingerprint(ctx context.Context, c *Client, limit time.Duration) (string, error) {
	end := time.Now().Add(limit)
	last := ""
	for {
		rows, err := c.ListAll(ctx)
		if err != nil {
			return "", err
		}
		var pending int64
		for _, r := range rows {
			pending += r.Pending
		}
		fp, err := fingerprint(ctx, c)
		if err != nil {
			return "", err
		}
		if (pending == 0 && fp == last) || time.Now().After(end) {
			return fp, nil
		}
		last = fp
		time.Sleep(100 * time.Millisecond)
	}
}

// fingerprint is the task list's state: rows, and each row's version and
// position. A refused request must leave it as it was.
func fingerprint(ctx context.Context, c *Client) (string, error) {
	rows, err := c.ListAll(ctx)
	if err != nil {
		return "", err
	}
	parts := make([]string, 0, len(rows))
	for _, r := range rows {
		parts = append(parts, fmt.Sprintf("%s@%d/%s/%s", r.ID, r.Version, r.Position, r.Status))
	}
	sort.Strings(parts)
	return strings.Join(parts, ";"), nil
}

// Fuzz starts a daemon whose clock does not tick (so only the API writes to
// the log), creates a few tasks, and sends cfg.Requests hostile requests.
func Fuzz(ctx context.Context, cfg FuzzConfig) (*FuzzReport, error) {
	if cfg.Requests == 0 {
		cfg.Requests = 2000
	}
	if cfg.Seed == 0 {
		cfg.Seed = 1
	}
	if cfg.Deadline == 0 {
		cfg.Deadline = 10 * time.Second
	}
	start := time.Now()
	addr, err := FreeAddr()
	if err != nil {
		return nil, err
	}
	data := filepath.Join(cfg.Dir, "data")
	if err := os.MkdirAll(data, 0o755); err != nil {
		return nil, err
	}
	// A tick of an hour: no run is enqueued during the fuzz, so every change
	// of the log comes from a request.
	d := Daemon{Bin: cfg.Bin, Data: data, Addr: addr, Tick: time.Hour}
	if cfg.Postgres != "" {
		pg, err := pgSchemaURL(ctx, cfg.Postgres, "fuzz")
		if err != nil {
			return nil, err
		}
		d.Args = append(d.Args, "--store", "postgres", "--postgres", pg)
	}
	p, err := startHealthy(ctx, d)
	if err != nil {
		return nil, err
	}
	defer p.Kill()
	c := NewClient(d.URL(), cfg.Deadline)
	if err := createTasks(ctx, c, "seed", 8, "noop", nil, "1m"); err != nil {
		return nil, err
	}
	rows, err := c.ListAll(ctx)
	if err != nil {
		return nil, err
	}
	g := &gen{rnd: rand.New(rand.NewPCG(cfg.Seed, 0xf022))}
	for _, r := range rows {
		g.ids = append(g.ids, r.ID)
	}
	rep := &FuzzReport{ByStatus: map[int]int{}}
	before, err := fingerprint(ctx, c)
	if err != nil {
		return nil, err
	}
	var prev fuzzReq
	prevStatus := 0
	for i := 0; i < cfg.Requests && ctx.Err() == nil; i++ {
		req := g.next()
		status, body, err := send(addr, req, cfg.Deadline)
		rep.Requests++
		rep.ByStatus[status]++
		switch {
		case status == 0 && isTimeout(err):
			rep.Violations = append(rep.Violations, Violation{InvHTTPHang, fmt.Sprintf("%s: no answer within %s", req, cfg.Deadline)})
		case status == 0:
			// A connection closed without an answer: only the daemon's
			// death is a violation, checked below.
		case status >= 500:
			rep.Violations = append(rep.Violations, Violation{InvHTTP5xx, fmt.Sprintf("%d %s ← %s", status, firstLines(string(body), 2), req)})
		case status/100 == 2 && req.reject:
			rep.Accepted = append(rep.Accepted, req)
		}
		if exited(p) {
			rep.Violations = append(rep.Violations, Violation{InvFault, fmt.Sprintf("the daemon died after %s: %s", req, refusalLines(p.Logs.Tail(10)))})
			break
		}
		var after string
		if status/100 == 2 {
			// A run the request triggered changes its task as it runs:
			// the list is compared once no run is pending (at once on the
			// embedded store; a few group commits later on Postgres).
			after, err = settledFingerprint(ctx, c, cfg.Deadline)
		} else {
			after, err = fingerprint(ctx, c)
		}
		if err != nil {
			rep.Violations = append(rep.Violations, Violation{InvHTTPHang, fmt.Sprintf("the task list after %s: %v", req, err)})
			break
		}
		if status >= 300 && after != before {
			rep.Violations = append(rep.Violations, Violation{InvHalfApplied, fmt.Sprintf("answered %d but the task list changed: %s (the request before: %d %s)", status, req, prevStatus, prev)})
		}
		before, prev, prevStatus = after, req, status
	}
	_ = p.Signal(syscall.SIGTERM)
	p.Wait(time.Minute)
	rep.Elapsed = time.Since(start)
	return rep, nil
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// WriteFuzzReport prints the fuzzer's table.
func WriteFuzzReport(w io.Writer, r *FuzzReport) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "http fuzzer\t")
	fmt.Fprintf(tw, "requests\t%d\n", r.Requests)
	codes := make([]int, 0, len(r.ByStatus))
	for c := range r.ByStatus {
		codes = append(codes, c)
	}
	sort.Ints(codes)
	for _, c := range codes {
		label := strconv.Itoa(c)
		if c == 0 {
			label = "closed without an answer"
		}
		fmt.Fprintf(tw, "answers %s\t%d\n", label, r.ByStatus[c])
	}
	fmt.Fprintf(tw, "hostile inputs accepted (2xx)\t%d\n", len(r.Accepted))
	fmt.Fprintf(tw, "wall time\t%s\n", r.Elapsed.Round(time.Second))
	tw.Flush()
	fmt.Fprintln(w)
	WriteViolations(w, FuzzInvariants, r.Violations)
	if len(r.Accepted) == 0 {
		return
	}
	// One line per kind of hostile input, with its first example.
	fmt.Fprintln(w, "\nhostile inputs answered 2xx (findings for input validation):")
	count := map[string]int{}
	var kinds []string
	first := map[string]fuzzReq{}
	for _, a := range r.Accepted {
		if count[a.what] == 0 {
			kinds = append(kinds, a.what)
			first[a.what] = a
		}
		count[a.what]++
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		fmt.Fprintf(w, "  %3d × %s, e.g. %s\n", count[k], k, oneLine(first[k].String()))
	}
}
