package ui_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/cronactor/cronactor/actors/clock"
	"github.com/cronactor/cronactor/actors/scheduler"
	"github.com/cronactor/cronactor/actors/worker"
	"github.com/cronactor/cronactor/events/embedded"
	"github.com/cronactor/cronactor/internal/httpapi"
	"github.com/cronactor/cronactor/projections/crontasks"
	"github.com/google/uuid"
)

// The dashboard is tested in a real headless Chromium against the real
// daemon pieces running in-process: the scheduler on the embedded store in
// a temporary directory (on a virtual clock, so runs happen exactly when the
// test says), the cron_tasks view, the HTTP API and a real HTTP server.
//
// Chromium comes from scripts/install-chromium (make test runs it). Where it
// is missing and cannot be installed (a developer machine without root) the
// tests skip; in CI (CI set) or as root they fail instead.
//
// CRONACTOR_SCREENSHOTS=1 also writes the README's screenshots to docs/.

// browser is one Chromium for the package; each test opens its own tab.
var browser struct {
	once   sync.Once
	ctx    context.Context
	cancel context.CancelFunc
	err    error
}

func chromiumPath() string {
	if p := os.Getenv("CRONACTOR_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

func TestMain(m *testing.M) {
	code := m.Run()
	if browser.cancel != nil {
		browser.cancel()
	}
	os.Exit(code)
}

// tab opens a new browser tab; the test fails after 60s.
func tab(t *testing.T) context.Context {
	t.Helper()
	path := chromiumPath()
	if path == "" {
		msg := "no Chromium found (looked for chromium, chromium-browser, google-chrome; CRONACTOR_CHROMIUM names another): run scripts/install-chromium"
		if os.Getenv("CI") != "" || os.Geteuid() == 0 {
			t.Fatal(msg + " — browser tests must run in CI and as root")
		}
		t.Skip(msg)
	}
	browser.once.Do(func() {
		dir, err := os.MkdirTemp("", "cronactor-chromium-")
		if err != nil {
			browser.err = err
			return
		}
		opts := []chromedp.ExecAllocatorOption{
			chromedp.ExecPath(path),
			chromedp.Headless,
			chromedp.NoSandbox,
			chromedp.DisableGPU,
			chromedp.NoFirstRun,
			chromedp.NoDefaultBrowserCheck,
			chromedp.Flag("disable-quic", true),
			chromedp.Flag("disable-background-networking", true),
			chromedp.Flag("disable-component-update", true),
			chromedp.Flag("disable-sync", true),
			chromedp.Flag("disable-dev-shm-usage", true),
			chromedp.UserDataDir(dir),
			chromedp.WindowSize(1280, 860),
		}
		actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
		bctx, cancelB := chromedp.NewContext(actx)
		browser.ctx = bctx
		browser.cancel = func() { cancelB(); cancelA(); os.RemoveAll(dir) }
		browser.err = chromedp.Do(bctx) // starts the browser
	})
	if browser.err != nil {
		t.Fatalf("start Chromium %s: %v", path, browser.err)
	}
	ctx, cancel := chromedp.NewContext(browser.ctx)
	ctx, cancelT := context.WithTimeout(ctx, 60*time.Second)
	t.Cleanup(func() { cancelT(); cancel() })
	// The page's console, shown when a step fails.
	c := &console{}
	messages := chromedp.Console(ctx)
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			c.add(m.String())
		}
	}()
	return context.WithValue(ctx, consoleKey{}, c)
}

type consoleKey struct{}

type console struct {
	mu    sync.Mutex
	lines []string
}

func (c *console) add(s string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lines = append(c.lines, s)
}

func (c *console) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return strings.Join(c.lines, "\n")
}

// daemon is the daemon's pieces in-process.
type daemon struct {
	srv   *httptest.Server
	clk   *clock.Virtual
	sched *scheduler.Scheduler
	token string
	// delay scripts when a worker takes a run: task ID → run number → delay.
	mu    sync.Mutex
	delay map[uuid.UUID]map[int]time.Duration
	work  map[uuid.UUID]map[int]time.Duration
	// shutdown ends every event stream (the daemon going away).
	shutdown chan struct{}
}

// t0 puts the virtual past a little before the browser's real now, so the
// timeline's last hour shows it.
var t0 = time.Now().UTC().Truncate(time.Minute).Add(-40 * time.Minute)

func startDaemon(t *testing.T, token string) *daemon {
	t.Helper()
	d := &daemon{clk: clock.NewVirtual(t0), token: token, delay: map[uuid.UUID]map[int]time.Duration{},
		work: map[uuid.UUID]map[int]time.Duration{}, shutdown: make(chan struct{})}
	dir := t.TempDir()
	st, err := embedded.Open(filepath.Join(dir, "events"), embedded.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	s, err := scheduler.New(scheduler.Config{Store: st, Clock: d.clk, Tick: 30 * time.Second, Workers: 4,
		PickupDelay: func(r worker.QueuedRun) time.Duration { return d.script(d.delay, r.TaskID, r.Run) }})
	if err != nil {
		t.Fatal(err)
	}
	work := worker.HandlerFunc(func(ctx context.Context, r *worker.Run) (json.RawMessage, error) {
		if err := clock.Sleep(ctx, d.clk, d.script(d.work, r.TaskID, r.Number)); err != nil {
			return nil, err
		}
		return json.RawMessage(fmt.Sprintf(`{"done":%d}`, r.Number)), nil
	})
	if err := s.Register("noop", work); err != nil {
		t.Fatal(err)
	}
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	d.sched = s
	v, err := crontasks.Open(crontasks.Config{Store: st, Dir: crontasks.DirIn(dir)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	viewDone := make(chan struct{})
	go func() { v.Run(ctx); close(viewDone) }()
	api := httpapi.New(httpapi.Config{Scheduler: s, View: v, ViewConfig: crontasks.Config{Store: st}, Store: st, Token: token,
		Stream: httpapi.StreamConfig{Shutdown: d.shutdown}})
	d.srv = httptest.NewServer(api)
	t.Cleanup(func() {
		d.closeStreams()
		d.srv.Close()
		stop, c := context.WithCancel(context.Background())
		c()
		s.Stop(stop)
		cancel()
		<-viewDone
		v.Close()
	})
	return d
}

var closeOnce sync.Map

func (d *daemon) closeStreams() {
	if _, done := closeOnce.LoadOrStore(d, true); !done {
		close(d.shutdown)
	}
}

func (d *daemon) script(m map[uuid.UUID]map[int]time.Duration, id uuid.UUID, run int) time.Duration {
	d.mu.Lock()
	defer d.mu.Unlock()
	return m[id][run]
}

// call is an API call from the test itself; it returns the status and body.
func (d *daemon) call(t *testing.T, method, path, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, d.srv.URL+path, strings.NewReader(body))
	if d.token != "" {
		req.Header.Set("Authorization", "Bearer "+d.token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// create makes a task over the API and returns its ID.
func (d *daemon) create(t *testing.T, name, owner, interval string, firstRun time.Time) uuid.UUID {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"name": name, "owner": owner, "kind": "noop", "interval": interval,
		"first_run": firstRun.Format(time.RFC3339), "payload": map[string]any{"mailbox": owner}})
	code, resp := d.call(t, "POST", "/v1/tasks", string(body))
	if code != 201 {
		t.Fatalf("create %q: %d %s", name, code, resp)
	}
	var tk struct{ ID uuid.UUID }
	json.Unmarshal([]byte(resp), &tk)
	return tk.ID
}

func (d *daemon) scriptRun(id uuid.UUID, run int, pickup, work time.Duration) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.delay[id] == nil {
		d.delay[id], d.work[id] = map[int]time.Duration{}, map[int]time.Duration{}
	}
	d.delay[id][run], d.work[id][run] = pickup, work
}

// report is a task with a history: completed runs, a dropped run (R3: its
// worker asked 5 s after the previous start) and a forced end (R4).
func (d *daemon) report(t *testing.T) uuid.UUID {
	id := d.create(t, "report", "channel/pop3/42", "1m", t0.Add(30*time.Second))
	for run := 1; run <= 30; run++ {
		d.scriptRun(id, run, 2*time.Second, 12*time.Second)
	}
	d.scriptRun(id, 1, 70*time.Second, 3*time.Second) // A1 waits; A2 is enqueued meanwhile
	d.scriptRun(id, 2, 15*time.Second, 0)             // asks 5 s after A1 started (A1 has ended: no overlap): dropped
	d.scriptRun(id, 5, 2*time.Second, 45*time.Second) // overruns its 30 s timebox: forced end
	return id
}

func (d *daemon) advance(to time.Duration) { d.clk.RunUntil(t0.Add(to)) }

func (d *daemon) url(hash string) string { return d.srv.URL + "/ui/" + hash }

type step = chromedp.Action[chromedp.Void]

func css(sel string) chromedp.CSS { return chromedp.CSS(sel) }

// waitJS waits until the expression is truthy.
func waitJS(expr string) step {
	return chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingInterval(20*time.Millisecond))
}

// waitText waits until the first element matching sel contains want.
func waitText(sel, want string) step {
	return waitJS(fmt.Sprintf(`(() => { const e = document.querySelector(%q); return !!e && e.textContent.includes(%q); })()`, sel, want))
}

// setInput sets an input's value as typing would (an input event follows).
func setInput(sel, v string) step {
	return chromedp.Evaluate[chromedp.Void](fmt.Sprintf(
		`(() => { const e = document.querySelector(%q); e.value = %q; e.dispatchEvent(new Event("input", {bubbles: true})); })()`, sel, v))
}

// waitLive waits until the page follows the event stream.
var waitLive = waitJS(`window.cronactorLive && window.cronactorLive()`)

func run(t *testing.T, ctx context.Context, what string, steps ...step) {
	t.Helper()
	if err := chromedp.Do(ctx, steps...); err != nil {
		fail(t, ctx, what, err)
	}
}

// value runs an action that returns a value.
func value[T any](t *testing.T, ctx context.Context, what string, a chromedp.Action[T]) T {
	t.Helper()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		fail(t, ctx, what, err)
	}
	return v
}

func fail(t *testing.T, ctx context.Context, what string, err error) {
	t.Helper()
	page, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText.slice(0, 3000) : ""`))
	c, _ := ctx.Value(consoleKey{}).(*console)
	if errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("%s: timed out; the page shows:\n%s\nconsole:\n%s", what, page, c)
	}
	t.Fatalf("%s: %v; the page shows:\n%s\nconsole:\n%s", what, err, page, c)
}

func TestListShowsTasksCreatedOverTheAPILive(t *testing.T) {
	d := startDaemon(t, "")
	d.create(t, "inbox", "channel/pop3/42", "2m", t0.Add(time.Hour))
	ctx := tab(t)
	run(t, ctx, "open the list", chromedp.Navigate(d.url("")), waitText("table.tasks tbody", "inbox"),
		waitLive)
	// A task created while the page is open appears without a reload,
	// carried by the event stream.
	d.create(t, "mailer", "team/ops", "90s", t0.Add(time.Hour))
	run(t, ctx, "see the new task", waitText("table.tasks tbody", "mailer"))
	row := value(t, ctx, "read the row", chromedp.Evaluate[string](
		`[...document.querySelectorAll("table.tasks tbody tr")].find(r => r.textContent.includes("mailer")).innerText`))
	for _, want := range []string{"every 1 minute 30 seconds", "@every 1m30s", "UTC", "active", "team/ops", "in "} {
		if !strings.Contains(row, want) {
			t.Fatalf("the row lacks %q:\n%s", want, row)
		}
	}
	// The owner filter asks the server.
	run(t, ctx, "filter by owner", chromedp.SendKeys(css("#f-owner"), "team/ops"), chromedp.Click(css(`form.filters button[type="submit"]`)),
		waitJS(`document.querySelectorAll("table.tasks tbody tr[data-id]").length === 1`), waitText("table.tasks tbody", "mailer"))
}

func TestTimelineShowsCompletedAndDroppedRuns(t *testing.T) {
	d := startDaemon(t, "")
	id := d.report(t)
	d.advance(12 * time.Minute)
	ctx := tab(t)
	run(t, ctx, "open the task page",
		chromedp.Navigate(d.url("#/tasks/"+id.String())),
		chromedp.WaitVisible(css(`#timeline svg g.run`)))
	outcomes := value(t, ctx, "read the bars", chromedp.Evaluate[[]string](`[...document.querySelectorAll("#timeline svg g.run")].map(g => g.dataset.outcome)`))
	has := map[string]bool{}
	for _, o := range outcomes {
		has[o] = true
	}
	if !has["completed"] || !has["dropped"] || !has["forced"] {
		t.Fatalf("timeline outcomes %v: want completed, dropped and forced bars", outcomes)
	}
	drop := value(t, ctx, "read the dropped run's tooltip",
		chromedp.Evaluate[string](`document.querySelector('#timeline g.run[data-run="2"] title').textContent`))
	if !strings.Contains(drop, "run 2: dropped") || !strings.Contains(drop, "5 s after") {
		t.Fatalf("dropped run's tooltip: %q", drop)
	}
	// The audit trail reads like `cronactor history`.
	run(t, ctx, "audit trail", waitText("#trail", "Cron enqueues report1"), waitText("#trail", "report2 is dropped (5 s after"))
	// Why didn't it run? Explain the time of the drop.
	run(t, ctx, "explain", chromedp.SetValue(css("#explain-at"), t0.Add(105*time.Second).Format(time.RFC3339)),
		chromedp.Click(css(`form.explain button`)), waitText("#explain-out", "report2 was dropped (R3)"))
	if os.Getenv("CRONACTOR_SCREENSHOTS") != "" {
		screenshots(t, d, ctx, id)
	}
}

func TestPauseAndTriggerButtons(t *testing.T) {
	d := startDaemon(t, "")
	id := d.create(t, "poll", "channel/pop3/7", "1m", t0.Add(30*time.Second))
	ctx := tab(t)
	run(t, ctx, "pause", chromedp.Navigate(d.url("#/tasks/"+id.String())), waitText(".pagehead .badge", "active"),
		chromedp.Click(css("#act-pause"), chromedp.NodeVisible), waitText(".pagehead .badge", "paused"),
		chromedp.WaitVisible(css("#act-resume")), waitText("#trail", "poll is paused"))
	if _, body := d.call(t, "GET", "/v1/tasks/"+id.String(), ""); !strings.Contains(body, `"status": "paused"`) {
		t.Fatalf("the API does not show the task paused: %s", body)
	}
	// A paused task refuses a trigger (409); the page shows the reason.
	run(t, ctx, "trigger while paused", chromedp.Click(css("#act-trigger")),
		waitText("#action-error", "Could not trigger the task: "), waitText("#action-error", "paused"))
	run(t, ctx, "resume", chromedp.Click(css("#act-resume")), waitText(".pagehead .badge", "active"))

	// Trigger: the page calls POST /v1/tasks/{id}/trigger and shows the
	// run's ID, which the task's audit trail has as a manual run.
	run(t, ctx, "trigger", chromedp.Click(css("#act-trigger")), waitText("#action-ok", "Triggered: run "))
	msg := value(t, ctx, "read the trigger's answer", chromedp.Evaluate[string](`document.getElementById("action-ok").textContent`))
	runID, err := uuid.Parse(strings.TrimSuffix(strings.TrimPrefix(msg, "Triggered: run "), "."))
	if err != nil {
		t.Fatalf("the page shows %q, not a run ID: %v", msg, err)
	}
	_, body := d.call(t, "GET", "/v1/tasks/"+id.String()+"/events", "")
	var list struct {
		Events []struct {
			Type  string
			RunID uuid.UUID `json:"run_id"`
			Data  struct{ Trigger string }
		}
	}
	if err := json.Unmarshal([]byte(body), &list); err != nil {
		t.Fatal(err)
	}
	manual := false
	for _, e := range list.Events {
		manual = manual || (e.Type == "RunEnqueued" && e.RunID == runID && e.Data.Trigger == "manual")
	}
	if !manual {
		t.Fatalf("the run the page shows (%s) is not a manual run of the task: %s", runID, body)
	}
	run(t, ctx, "triggered run in the trail", waitText("#trail", "Manual trigger enqueues poll"))

	// Delete asks first; cancelling keeps the task.
	run(t, ctx, "delete, cancel", chromedp.Click(css("#act-delete")), chromedp.WaitVisible(css("#confirm-dialog")),
		chromedp.Click(css(`#confirm-dialog button[value="cancel"]`)), chromedp.WaitNotVisible(css("#confirm-dialog")))
	if _, body := d.call(t, "GET", "/v1/tasks/"+id.String(), ""); strings.Contains(body, `"deleted"`) {
		t.Fatal("cancelled delete deleted the task")
	}
	run(t, ctx, "delete, confirm", chromedp.Click(css("#act-delete")), chromedp.WaitVisible(css("#confirm-dialog")),
		chromedp.Click(css("#confirm-ok")), waitText(".pagehead .badge", "deleted"))
	// A refused action shows the API's error: pausing a deleted task is a 409.
	// The button is shown and clicked in one step: a live update between
	// the two would hide it again (the page re-renders a deleted task).
	run(t, ctx, "refused action", chromedp.Evaluate[chromedp.Void](`(() => { const b = document.getElementById("act-pause"); b.hidden = false; b.click(); })()`),
		waitText("#action-error", "the task is deleted"))
}

// The task page shows the run policy and what the task is doing now.
func TestTaskPagePolicy(t *testing.T) {
	d := startDaemon(t, "")
	body := `{"name":"mail","owner":"team/ops","kind":"noop","interval":"1m","first_run":"` + t0.Add(30*time.Second).Format(time.RFC3339) + `",` +
		`"queue":"mail","retry":{"max_attempts":3,"initial_backoff":"1s","max_backoff":"1m","multiplier":2},"start_deadline":"10s","heartbeat_timeout":"20s",` +
		`"overlap":"buffer_one","pause_after_failures":3}`
	code, resp := d.call(t, "POST", "/v1/tasks", body)
	if code != 201 {
		t.Fatalf("create: %d %s", code, resp)
	}
	var tk struct{ ID uuid.UUID }
	json.Unmarshal([]byte(resp), &tk)
	d.scriptRun(tk.ID, 1, 0, 25*time.Second)
	ctx := tab(t)
	run(t, ctx, "policy facts", chromedp.Navigate(d.url("#/tasks/"+tk.ID.String())),
		waitText("#f-queue", "mail"), waitText("#f-retry", "3 attempts, backoff 1s × 2 up to 1m0s"),
		waitText("#f-missed", "run_once; missed after one spacing"), waitText("#f-deadlines", "10s / 20s"),
		waitText("#f-overlap", "buffer_one; pause after 3 failed slots in a row (0 now)"),
		waitText("#f-runstate", "idle"))
	d.advance(40 * time.Second) // run 1 is enqueued at 00:30 and runs 25 s
	run(t, ctx, "running", waitText("#f-runstate", "running"), waitText("#f-runstate", "run 1 "))
}

func TestCreateForm(t *testing.T) {
	d := startDaemon(t, "")
	ctx := tab(t)
	run(t, ctx, "create", chromedp.Navigate(d.url("#/new")),
		chromedp.SendKeys(css("#c-name"), "nightly"), chromedp.SendKeys(css("#c-owner"), "team/data"),
		chromedp.SendKeys(css("#c-interval"), "often"), waitText("#create-error, .preview", "not a duration"),
		chromedp.Click(css(`form.create button[type="submit"]`)), waitText("#create-error", "interval: must be a duration"),
		setInput("#c-interval", "10m"),
		waitText(".preview", "Every 10 minutes"),
		chromedp.Click(css(`form.create button[type="submit"]`)), waitText("h1", "nightly"), waitText(".pagehead .badge", "active"))
}

// The create form takes overlap and pause_after_failures (DESIGN §8.4); a
// pause_after_failures below 1 is refused naming the field.
func TestCreateFormRunPolicy(t *testing.T) {
	d := startDaemon(t, "")
	ctx := tab(t)
	run(t, ctx, "create", chromedp.Navigate(d.url("#/new")),
		chromedp.SendKeys(css("#c-name"), "guarded"), chromedp.SendKeys(css("#c-owner"), "team/data"),
		setInput("#c-interval", "10m"), chromedp.SetValue(css("#c-overlap"), "cancel_other"),
		setInput("#c-pause_after_failures", "0"),
		chromedp.Click(css(`form.create button[type="submit"]`)), waitText("#create-error", "pause_after_failures: must be at least 1"),
		setInput("#c-pause_after_failures", "2"),
		chromedp.Click(css(`form.create button[type="submit"]`)), waitText("h1", "guarded"),
		waitText("#f-overlap", "cancel_other; pause after 2 failed slots in a row (0 now)"))
}

func TestTokenGateHolds(t *testing.T) {
	d := startDaemon(t, "s3cret")
	d.create(t, "secret-task", "team/sec", "1m", t0.Add(time.Hour))
	ctx := tab(t)
	run(t, ctx, "open without a token", chromedp.Navigate(d.url("")), chromedp.WaitVisible(css("#token-dialog")))
	rows := value(t, ctx, "count rows", chromedp.Evaluate[int](`document.querySelectorAll("tr[data-id]").length`))
	if rows != 0 {
		t.Fatalf("%d task rows shown without a token", rows)
	}
	page := value(t, ctx, "read the page", chromedp.Evaluate[string](`document.documentElement.outerHTML`))
	if strings.Contains(page, "secret-task") {
		t.Fatal("the page holds task data without a token")
	}
	run(t, ctx, "wrong token", chromedp.SendKeys(css("#token-input"), "guess"), chromedp.Click(css(`#token-form button`)),
		waitText("#token-error", "refused"), chromedp.WaitVisible(css("#token-dialog")))
	run(t, ctx, "right token", chromedp.SendKeys(css("#token-input"), "s3cret"), chromedp.Click(css(`#token-form button`)),
		waitText("table.tasks tbody", "secret-task"), chromedp.WaitNotVisible(css("#token-dialog")),
		waitLive)
	stored := value(t, ctx, "token kept in session storage", chromedp.Evaluate[string](`sessionStorage.getItem("cronactor.token")`))
	if stored != "s3cret" {
		t.Fatalf("session storage holds %q", stored)
	}
}

func TestUserTextIsInert(t *testing.T) {
	d := startDaemon(t, "")
	evil := `<script>window.__xss=1</script><img src=x onerror="window.__xss=2">`
	owner := `<b onmouseover="window.__xss=3">own</b>`
	body, _ := json.Marshal(map[string]any{"name": evil, "owner": owner, "kind": "noop", "interval": "1m",
		"payload": map[string]string{"html": `<img src=x onerror="window.__xss=4">`}})
	code, resp := d.call(t, "POST", "/v1/tasks", string(body))
	if code != 201 {
		t.Fatalf("create: %d %s", code, resp)
	}
	var tk struct{ ID string }
	json.Unmarshal([]byte(resp), &tk)
	ctx := tab(t)
	run(t, ctx, "list", chromedp.Navigate(d.url("")), waitText("table.tasks tbody", "<script>"))
	name := value(t, ctx, "list name", chromedp.Evaluate[string](`document.querySelector("table.tasks tbody th a").textContent`))
	run(t, ctx, "task page", chromedp.Navigate(d.url("#/tasks/"+tk.ID)), waitText("h1", "<img"), waitText("dl.facts", `onerror=\"window.__xss=4\"`))
	title := value(t, ctx, "title", chromedp.Evaluate[string](`document.querySelector("h1").textContent`))
	xss := value(t, ctx, "xss", chromedp.Evaluate[any](`window.__xss === undefined ? null : window.__xss`))
	imgs := value(t, ctx, "elements", chromedp.Evaluate[int](`document.querySelectorAll("main img, main script, main b").length`))
	if name != evil || title != evil {
		t.Fatalf("the name was not shown as text: list %q, title %q", name, title)
	}
	if xss != nil || imgs != 0 {
		t.Fatalf("user text became markup: window.__xss=%v, %d elements", xss, imgs)
	}
}

func TestBannerWhenTheStreamDrops(t *testing.T) {
	d := startDaemon(t, "")
	ctx := tab(t)
	run(t, ctx, "live", chromedp.Navigate(d.url("")), waitLive)
	d.closeStreams()
	run(t, ctx, "banner", chromedp.WaitVisible(css("#banner")), waitText("#banner", "Live updates stopped"),
		waitText("#live", "offline"))
}

// screenshots writes the README's pictures: the list and a task page.
func screenshots(t *testing.T, d *daemon, ctx context.Context, id uuid.UUID) {
	t.Helper()
	for i, spec := range []struct{ name, owner, every string }{
		{"inbox", "channel/pop3/42", "2m"}, {"sync-contacts", "channel/imap/7", "15m"}, {"nightly-export", "team/data", "24h"},
		{"cleanup", "team/ops", "1h"}, {"digest", "team/data", "6h"},
	} {
		tid := d.create(t, spec.name, spec.owner, spec.every, t0.Add(time.Duration(20+i*7)*time.Minute))
		if spec.name == "cleanup" {
			d.call(t, "POST", "/v1/tasks/"+tid.String()+"/pause", "")
		}
	}
	d.clk.RunUntil(time.Now())
	docs := filepath.Join("..", "..", "docs")
	run(t, ctx, "open the list", chromedp.EmulateViewport(1280, 560), chromedp.Navigate(d.url("")),
		waitText("table.tasks tbody", "nightly-export"), waitText("table.tasks tbody", "completed"))
	list := value(t, ctx, "screenshot the list", chromedp.CaptureScreenshot())
	run(t, ctx, "open the task", chromedp.EmulateViewport(1280, 1300), chromedp.Navigate(d.url("#/tasks/"+id.String())),
		chromedp.WaitVisible(css(`#timeline svg g.run`)),
		chromedp.SetValue(css("#explain-at"), t0.Add(105*time.Second).Format(time.RFC3339)),
		chromedp.Click(css(`form.explain button`)), waitText("#explain-out", "dropped"))
	task := value(t, ctx, "screenshot the task", chromedp.CaptureScreenshot())
	for name, b := range map[string][]byte{"dashboard-list.png": list, "dashboard-task.png": task} {
		if err := os.WriteFile(filepath.Join(docs, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// The audit trail shows a page of rows at a time: "Older" adds the page
// before, until the task's first event, when it hides.
func TestAuditTrailPagesOlder(t *testing.T) {
	d := startDaemon(t, "")
	id := d.report(t)
	d.advance(12 * time.Minute)
	code, body := d.call(t, "GET", "/v1/tasks/"+id.String()+"/history", "")
	var all struct {
		Rows []struct{ Text string } `json:"rows"`
	}
	if err := json.Unmarshal([]byte(body), &all); code != 200 || err != nil || len(all.Rows) < 12 {
		t.Fatalf("history: %d %s", code, body)
	}
	ctx := tab(t)
	rowCount := `document.querySelectorAll("#trail tr").length`
	run(t, ctx, "open the task page with pages of 5 rows",
		chromedp.Navigate(d.srv.URL+"/ui/?trail_page=5#/tasks/"+id.String()),
		waitJS(rowCount+` === 5`), chromedp.WaitVisible(css("#trail-older")))
	run(t, ctx, "older once", chromedp.Click(css("#trail-older")), waitJS(rowCount+` === 10`))
	for i := 0; i < len(all.Rows); i++ {
		hidden := value(t, ctx, "is Older hidden", chromedp.Evaluate[bool](`document.querySelector("#trail-older").hidden`))
		if hidden {
			break
		}
		run(t, ctx, "older", chromedp.Click(css("#trail-older")),
			waitJS(fmt.Sprintf(`%s > %d || document.querySelector("#trail-older").hidden`, rowCount, 10+5*i)))
	}
	n := value(t, ctx, "count the rows", chromedp.Evaluate[int](rowCount))
	if n != len(all.Rows) {
		t.Fatalf("the trail shows %d rows after every page, want %d", n, len(all.Rows))
	}
	// Newest first: the last row is the task's creation.
	run(t, ctx, "first event last", waitText("#trail tr:last-child", all.Rows[0].Text))
}

// The create form's hints give the cron day forms (L, W, #) and exclude; a
// cron task made with an exclude list shows it on its page. The task page
// shows the past slots a backfill has still waiting for room.
func TestCreateFormExcludeAndPendingBackfill(t *testing.T) {
	d := startDaemon(t, "")
	ctx := tab(t)
	run(t, ctx, "create", chromedp.Navigate(d.url("#/new")),
		waitText("#c-cron-hint", "FRI#2"), waitText("#c-cron-hint", "15W"), waitText("#c-cron-hint", "L-3"),
		waitText("#c-exclude-hint", "a date (2026-12-25"),
		chromedp.SendKeys(css("#c-name"), "report"), chromedp.SendKeys(css("#c-owner"), "team/data"),
		setInput("#c-cron", "0 9 * * *"), setInput("#c-exclude", "2026-12-25\n0 9 * * SAT,SUN"),
		chromedp.Click(css(`form.create button[type="submit"]`)), waitText("h1", "report"),
		waitText("#f-exclude", "2026-12-25; 0 9 * * SAT,SUN"))

	body := `{"name":"sync","owner":"team/ops","kind":"noop","interval":"1m","max_waiting":1,"first_run":"` + t0.Add(10*time.Minute).Format(time.RFC3339) + `"}`
	code, resp := d.call(t, "POST", "/v1/tasks", body)
	if code != 201 {
		t.Fatalf("create: %d %s", code, resp)
	}
	var tk struct{ ID uuid.UUID }
	json.Unmarshal([]byte(resp), &tk)
	d.scriptRun(tk.ID, 1, time.Hour, time.Second) // the first backfill run waits: no room for the rest
	d.advance(5 * time.Minute)
	code, resp = d.call(t, "POST", "/v1/tasks/"+tk.ID.String()+"/backfill",
		`{"from":"`+t0.Format(time.RFC3339)+`","to":"`+t0.Add(4*time.Minute).Format(time.RFC3339)+`"}`)
	if code != 202 {
		t.Fatalf("backfill: %d %s", code, resp)
	}
	run(t, ctx, "pending backfill", chromedp.Navigate(d.url("#/tasks/"+tk.ID.String())),
		waitText("#f-backfill", "3 past slots waiting for room to be enqueued (max_waiting 1)"),
		waitText("#f-runs", "1 backfilled"))
}
