package ui_test

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/uuid"
)

// What a newcomer tripped over on the dashboard (issue 38, items 3 and 10).

// rowNames is the names in the task list, top to bottom.
func rowNames(t *testing.T, ctx context.Context) []string {
	t.Helper()
	return value(t, ctx, "read the names", chromedp.Evaluate[[]string](`[...document.querySelectorAll("table.tasks tbody tr[data-id] th a")].map(a => a.textContent)`))
}

// The list hides deleted tasks unless asked, and sorts by name or by next
// run, not by ID.
func TestListHidesDeletedAndSortsByNameOrNextRun(t *testing.T) {
	d := startDaemon(t, "")
	// Names whose IDs (from owner and name) are not in name order; next
	// runs in yet another order.
	d.create(t, "mid", "team/a", "1h", t0.Add(20*time.Minute))
	d.create(t, "zeta", "team/a", "1h", t0.Add(10*time.Minute))
	d.create(t, "alpha", "team/a", "1h", t0.Add(30*time.Minute))
	gone := d.create(t, "gone", "team/a", "1h", t0.Add(5*time.Minute))
	if code, body := d.call(t, "DELETE", "/v1/tasks/"+gone.String(), ""); code/100 != 2 {
		t.Fatalf("delete: %d %s", code, body)
	}
	ctx := tab(t)
	run(t, ctx, "open the list", chromedp.Navigate(d.url("")), waitText("table.tasks tbody", "zeta"), waitText("p.count", "1 deleted hidden"))
	if got := strings.Join(rowNames(t, ctx), ","); got != "alpha,mid,zeta" {
		t.Fatalf("list by default shows %s, want alpha,mid,zeta (by name, the deleted task hidden)", got)
	}
	run(t, ctx, "show deleted", chromedp.Click(css("#f-deleted")), waitText("table.tasks tbody", "gone"))
	if got := strings.Join(rowNames(t, ctx), ","); got != "alpha,gone,mid,zeta" {
		t.Fatalf("with deleted shown: %s, want alpha,gone,mid,zeta", got)
	}
	run(t, ctx, "sort by next run", chromedp.SetValue(css("#f-sort"), "next"),
		chromedp.Evaluate[chromedp.Void](`document.getElementById("f-sort").dispatchEvent(new Event("change"))`),
		waitJS(`document.querySelector("table.tasks tbody tr[data-id] th a").textContent === "zeta"`))
	if got := strings.Join(rowNames(t, ctx), ","); got != "zeta,mid,alpha,gone" {
		t.Fatalf("by next run: %s, want zeta,mid,alpha then the deleted gone (no next run)", got)
	}
	// The choice is in the link: a reload keeps it.
	run(t, ctx, "apply", chromedp.Click(css(`form.filters button[type="submit"]`)), waitJS(`location.hash.includes("sort=next") && location.hash.includes("deleted=1")`))
}

// The last start and the last outcome are shown apart, each with its own
// run: run 1 was forced to end at its timebox while run 2, started since,
// still runs (the old page said "last run <run 2's start> forced_end").
func TestLastStartApartFromLastOutcome(t *testing.T) {
	d := startDaemon(t, "")
	id := d.create(t, "slow", "team/a", "1m", t0.Add(30*time.Second)) // timebox 30s
	d.scriptRun(id, 1, 0, 45*time.Second)                             // forced to end at 01:00
	d.scriptRun(id, 2, 0, 40*time.Second)                             // enqueued at 01:30, runs past 01:40
	d.advance(100 * time.Second)
	ctx := tab(t)
	run(t, ctx, "the list", chromedp.Navigate(d.url("")), waitText("table.tasks td.laststart", "#2"),
		waitText("table.tasks td.lastoutcome", "forced_end"), waitText("table.tasks td.lastoutcome", "#1"))
	run(t, ctx, "the task page", chromedp.Navigate(d.url("#/tasks/"+id.String())),
		waitText("#f-laststart", "run 2"), waitText("#f-lastoutcome", "forced_end"), waitText("#f-lastoutcome", "run 1,"),
		waitText("#f-lastoutcome", "timebox"))
	// The API row the page shows (read once the page has caught up).
	_, body := d.call(t, "GET", "/v1/tasks/"+id.String(), "")
	var row struct {
		LastRunNumber  int                      `json:"last_run_number"`
		LastOutcomeRun int                      `json:"last_outcome_run"`
		RunState       string                   `json:"run_state"`
		LastOutcome    struct{ Outcome string } `json:"last_outcome"`
	}
	if err := json.Unmarshal([]byte(body), &row); err != nil {
		t.Fatal(err)
	}
	if row.LastRunNumber != 2 || row.LastOutcomeRun != 1 || row.LastOutcome.Outcome != "forced_end" || row.RunState != "running" {
		t.Fatalf("the row: last_run_number %d last_outcome_run %d outcome %q run_state %q, want 2, 1, forced_end, running: %s",
			row.LastRunNumber, row.LastOutcomeRun, row.LastOutcome.Outcome, row.RunState, body)
	}
	start := value(t, ctx, "read the last start", chromedp.Evaluate[string](`document.getElementById("f-laststart").textContent`))
	if !strings.Contains(start, t0.Add(90*time.Second).Format(time.RFC3339)) || strings.Contains(start, "forced") {
		t.Fatalf("last start %q: want run 2's start %s and no outcome beside it", start, t0.Add(90*time.Second).Format(time.RFC3339))
	}
}

// The timeline offers 5 and 15 minute spans; its axis is UTC, 24-hour,
// the zone named, with the date when the span crosses a day.
func TestTimelineSpansAndUTCAxis(t *testing.T) {
	d := startDaemon(t, "")
	id := d.report(t)
	d.advance(12 * time.Minute)
	ctx := tab(t)
	run(t, ctx, "open the task page", chromedp.Navigate(d.url("#/tasks/"+id.String())), chromedp.WaitVisible(css(`#timeline svg g.run`)))
	spans := value(t, ctx, "read the spans", chromedp.Evaluate[[]string](`[...document.querySelectorAll(".zoom button")].map(b => b.textContent)`))
	if strings.Join(spans, ",") != "5m,15m,1h,6h,24h,7d,30d" {
		t.Fatalf("spans %v, want 5m, 15m, 1h, 6h, 24h, 7d, 30d", spans)
	}
	run(t, ctx, "15 minutes", chromedp.Click(css(`.zoom button[data-zoom="1"]`)),
		waitJS(`document.querySelector("#timeline svg").getAttribute("aria-label").includes("last 15m")`))
	labels := value(t, ctx, "read the axis", chromedp.Evaluate[[]string](`[...document.querySelectorAll("#timeline svg text.axis")].map(e => e.textContent)`))
	re := regexp.MustCompile(`^([A-Z][a-z]{2} \d{1,2} )?\d\d:\d\d:\d\d$`)
	for i, l := range labels {
		if i == len(labels)-1 {
			var ok bool
			if l, ok = strings.CutSuffix(l, " UTC"); !ok {
				t.Fatalf("the newest tick %q does not name the zone (UTC)", labels[i])
			}
		}
		if !re.MatchString(l) {
			t.Fatalf("axis label %q (of %v): want 24-hour UTC with seconds on a 15m span", l, labels)
		}
	}
	// The newest tick is now, in UTC.
	now := value(t, ctx, "now", chromedp.Evaluate[string](`new Date().toISOString().slice(11, 16)`))
	if last := labels[len(labels)-1]; !strings.Contains(last, now) && !strings.Contains(last, time.Now().UTC().Format("15:04")) {
		t.Fatalf("newest tick %q, want the UTC time %s", last, now)
	}
	// A span across midnight UTC dates its ticks.
	from, to := time.Date(2026, 11, 27, 23, 30, 0, 0, time.UTC), time.Date(2026, 11, 28, 0, 30, 0, 0, time.UTC)
	got := value(t, ctx, "axis label across days", chromedp.Evaluate[[]string](fmt.Sprintf(
		`import("/ui/js/timeline.js").then(m => [m.axisLabel(%d, 3600e3, %d, %d), m.axisLabel(%d, 3600e3, %d, %d)])`,
		to.Add(-20*time.Minute).UnixMilli(), from.UnixMilli(), to.UnixMilli(), to.UnixMilli(), to.Add(-30*time.Minute).UnixMilli(), to.UnixMilli()), chromedp.EvalAwaitPromise))
	if got[0] != "Nov 28 00:10" || got[1] != "00:30" {
		t.Fatalf("axis labels %v, want Nov 28 00:10 (span across midnight) and 00:30 (within a day)", got)
	}
}

// On a phone the timeline scrolls sideways and opens at its newest end.
func TestTimelineOpensAtTheNewestEndOnAPhone(t *testing.T) {
	d := startDaemon(t, "")
	id := d.report(t)
	d.advance(12 * time.Minute)
	ctx := tab(t)
	run(t, ctx, "open on a phone", chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile),
		chromedp.Navigate(d.url("#/tasks/"+id.String())), chromedp.WaitVisible(css(`#timeline svg g.run`)))
	var pos struct{ Left, Width, Scroll float64 }
	pos = value(t, ctx, "read the scroll", chromedp.Evaluate[struct{ Left, Width, Scroll float64 }](
		`(() => { const e = document.getElementById("timeline"); return {Left: e.scrollLeft, Width: e.clientWidth, Scroll: e.scrollWidth}; })()`))
	if pos.Scroll <= pos.Width {
		t.Fatalf("the timeline does not scroll on a phone (%+v): the test shows nothing", pos)
	}
	if pos.Left+pos.Width < pos.Scroll-2 {
		t.Fatalf("the timeline opens at %v of %v (view %v): want its newest end in view", pos.Left, pos.Scroll, pos.Width)
	}
}

// "Next slots" relative times age on screen: the page's timer refreshes
// them. The page's clock is moved an hour on; the next timer tick says so.
func TestNextSlotsRelativeTimesRefresh(t *testing.T) {
	d := startDaemon(t, "")
	id := d.create(t, "soon", "team/a", "1m", time.Now().UTC().Add(30*time.Minute).Truncate(time.Second))
	ctx := tab(t)
	run(t, ctx, "open the task page", chromedp.Navigate(d.url("#/tasks/"+id.String())), waitText("#slots", "(in "))
	run(t, ctx, "an hour later", chromedp.Evaluate[chromedp.Void](`(() => { const real = Date.now; Date.now = () => real() + 3600e3; })()`),
		waitJS(`document.querySelector("#slots li").textContent.includes(" ago)")`))
}

// The create form offers at, retry, queue and the DST policies.
func TestCreateFormPolicyAndAt(t *testing.T) {
	d := startDaemon(t, "")
	ctx := tab(t)
	at1, at2 := time.Now().UTC().Add(2*time.Hour).Truncate(time.Second), time.Now().UTC().Add(3*time.Hour).Truncate(time.Second)
	get := func(what string) map[string]any {
		id := value(t, ctx, what+": the task's ID", chromedp.Evaluate[string](`location.hash.slice("#/tasks/".length)`))
		if _, err := uuid.Parse(id); err != nil {
			t.Fatalf("%s: the page is at %q, not a task page", what, id)
		}
		_, body := d.call(t, "GET", "/v1/tasks/"+id, "")
		var m map[string]any
		if err := json.Unmarshal([]byte(body), &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	run(t, ctx, "an at task with retries in a queue", chromedp.Navigate(d.url("#/new")),
		chromedp.SendKeys(css("#c-name"), "twice"), chromedp.SendKeys(css("#c-owner"), "team/data"),
		setInput("#c-at", at1.Format(time.RFC3339)+", "+at2.Format(time.RFC3339)), waitText(".preview", "Once at each of 2 times"),
		setInput("#c-queue", "mail"), setInput("#c-retry_max_attempts", "3"), setInput("#c-retry_initial_backoff", "2s"),
		chromedp.Click(css(`form.create button[type="submit"]`)), waitText("h1", "twice"))
	m := get("at task")
	retry, _ := m["retry"].(map[string]any)
	if at, _ := m["at"].([]any); len(at) != 2 || m["queue"] != "mail" || retry["max_attempts"] != 3.0 || retry["initial_backoff"] != "2s" {
		t.Fatalf("created at %v queue %v retry %v, want two times, queue mail, 3 attempts from 2s", m["at"], m["queue"], m["retry"])
	}
	pick := func(sel, v string) step {
		return chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`(() => { const e = document.querySelector(%q); e.value = %q; e.dispatchEvent(new Event("change", {bubbles: true})); })()`, sel, v))
	}
	run(t, ctx, "a cron task with DST policies", chromedp.Navigate(d.url("#/new")),
		chromedp.SendKeys(css("#c-name"), "morning"), chromedp.SendKeys(css("#c-owner"), "team/data"),
		setInput("#c-cron", "30 2 * * *"), setInput("#c-timezone", "America/New_York"),
		pick("#c-dst_gap", "skip"), pick("#c-dst_overlap", "both"),
		chromedp.Click(css(`form.create button[type="submit"]`)), waitText("h1", "morning"))
	m = get("cron task")
	if m["dst_gap"] != "skip" || m["dst_overlap"] != "both" || m["timezone"] != "America/New_York" {
		t.Fatalf("created dst_gap %v dst_overlap %v timezone %v, want skip, both, America/New_York", m["dst_gap"], m["dst_overlap"], m["timezone"])
	}
}

// A task deleted and created again starts clean (README): the page shows
// the new incarnation's counts and says since when they count.
func TestRecreatedTaskCountsFromZero(t *testing.T) {
	d := startDaemon(t, "")
	id := d.create(t, "again", "team/a", "1m", t0.Add(30*time.Second))
	d.advance(3 * time.Minute) // runs 1–3
	ctx := tab(t)
	run(t, ctx, "the first incarnation", chromedp.Navigate(d.url("#/tasks/"+id.String())), waitText("#f-runs", "3 enqueued: 3 completed"))
	if code, body := d.call(t, "DELETE", "/v1/tasks/"+id.String(), ""); code/100 != 2 {
		t.Fatalf("delete: %d %s", code, body)
	}
	if again := d.create(t, "again", "team/a", "1m", t0.Add(5*time.Minute)); again != id {
		t.Fatalf("created again as %s, want the same ID %s", again, id)
	}
	run(t, ctx, "created again", waitText("#f-runs", "0 enqueued: 0 completed"), waitText("#f-runs", "counted since it was created again"),
		waitText("#f-lastoutcome", "-"))
	_, body := d.call(t, "GET", "/v1/tasks/"+id.String(), "")
	var row struct {
		RunCount    int64 `json:"run_count"`
		Incarnation int   `json:"incarnation"`
	}
	if err := json.Unmarshal([]byte(body), &row); err != nil {
		t.Fatal(err)
	}
	if row.RunCount != 0 || row.Incarnation != 2 {
		t.Fatalf("the API row: run_count %d incarnation %d, want 0 and 2", row.RunCount, row.Incarnation)
	}
}
