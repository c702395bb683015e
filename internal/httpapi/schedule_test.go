package httpapi_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

const named = `"name":"n","owner":"o","kind":"noop"`

// TestCreateRejectsBadSchedules: every schedule field is checked before
// anything is recorded, and the error names the field.
func TestCreateRejectsBadSchedules(t *testing.T) {
	srv := server(t, "")
	for _, c := range []struct {
		name, body, field, msg string
	}{
		{"hour 24", `"cron":"0 24 * * *"`, "cron", "field 2 (hour): 24 is above 23"},
		{"second of a list", `"cron":["0 9 * * *","0 9 * * 8"]`, "cron", "expression 2: field 5 (day-of-week): 8 is above 7"},
		{"never matches", `"cron":"0 0 30 2 *"`, "cron", "never"},
		{"31W never in February", `"cron":"0 0 31W 2 *"`, "cron", "never"},
		{"fifth Friday at most", `"cron":"0 0 * * FRI#6"`, "cron", `field 5 (day-of-week): \"FRI#6\"`},
		{"L in the minute", `"cron":"L 0 * * *"`, "cron", "field 1 (minute)"},
		{"W in a range", `"cron":["0 9 * * *","0 0 10-15W * *"]`, "cron", "expression 2: field 3 (day-of-month)"},
		{"exclude on an interval", `"interval":"1m","exclude":["2026-12-25"]`, "exclude", "cron schedules only"},
		{"exclude on at", `"at":["2030-01-01T00:00:00Z"],"exclude":"2030-01-01"`, "exclude", "cron schedules only"},
		{"exclude not text", `"cron":"0 9 * * *","exclude":[7]`, "exclude", "date"},
		{"exclude a bad date", `"cron":"0 9 * * *","exclude":["2026-12-32"]`, "exclude", "entry 1"},
		{"exclude everything", `"cron":"0 9 * * MON-FRI","exclude":["* * * * 1-5"]`, "exclude", "excludes every slot"},
		{"every slot in the gap", `"cron":"30 2 * 3 SUNL","timezone":"Europe/Berlin","dst_gap":"skip"`, "cron", "no slot in the 50 years"},
		{"CRON_TZ prefix", `"cron":"CRON_TZ=Europe/Berlin 0 9 * * *"`, "cron", "timezone"},
		{"cron not a string", `"cron":9`, "cron", "expression"},
		{"empty cron list", `"cron":[]`, "cron", "empty"},
		{"unknown zone", `"cron":"0 9 * * *","timezone":"Europe/Atlantis"`, "timezone", "unknown"},
		{"bad dst_gap", `"cron":"0 9 * * *","dst_gap":"later"`, "dst_gap", "shift or skip"},
		{"bad dst_overlap", `"cron":"0 9 * * *","dst_overlap":"twice"`, "dst_overlap", "first, last or both"},
		{"at only in the past", `"at":["2025-01-01T00:00:00Z"]`, "at", "past"},
		{"at not RFC 3339", `"at":["tomorrow"]`, "at", "instant 1"},
		{"end_at before start_at", `"cron":"0 9 * * *","start_at":"2026-03-01T00:00:00Z","end_at":"2026-02-01T00:00:00Z"`, "end_at", "before start_at"},
		{"two kinds", `"interval":"1m","cron":"0 9 * * *"`, "cron", "exactly one"},
		{"no kind", ``, "interval", "required"},
		{"first_run on cron", `"cron":"0 9 * * *","first_run":"2026-01-02T00:00:00Z"`, "first_run", "interval"},
		{"negative max_runs", `"cron":"0 9 * * *","max_runs":-1`, "max_runs", "negative"},
		{"bad jitter", `"cron":"0 9 * * *","jitter":"soon"`, "jitter", "duration"},
		{"dst_gap on an interval", `"interval":"1m","dst_gap":"skip"`, "dst_gap", "cron"},
	} {
		t.Run(c.name, func(t *testing.T) {
			body := `{` + named
			if c.body != "" {
				body += "," + c.body
			}
			a := call(t, srv, "POST", "/v1/tasks", body+`}`)
			if a.code != 400 || a.field != c.field || !strings.Contains(a.body, c.msg) {
				t.Fatalf("got %d field %q: %s; want 400 field %q with %q", a.code, a.field, a.body, c.field, c.msg)
			}
		})
	}
	if a := call(t, srv, "GET", "/v1/tasks", ""); !strings.Contains(a.body, `"tasks": []`) {
		t.Fatalf("rejected creates left tasks behind: %s", a.body)
	}
}

type schedRow struct {
	ID         string   `json:"id"`
	Interval   string   `json:"interval"`
	Cron       []string `json:"cron"`
	At         []string `json:"at"`
	Timezone   string   `json:"timezone"`
	DSTGap     string   `json:"dst_gap"`
	DSTOverlap string   `json:"dst_overlap"`
	StartAt    *string  `json:"start_at"`
	EndAt      *string  `json:"end_at"`
	MaxRuns    int      `json:"max_runs"`
	Jitter     string   `json:"jitter"`
	Tolerance  string   `json:"tolerance"`
	Timebox    string   `json:"timebox"`
	Status     string   `json:"status"`
	NextRun    *string  `json:"next_run"`
}

func decodeSchedRow(t *testing.T, s string) schedRow {
	t.Helper()
	var r schedRow
	if err := json.Unmarshal([]byte(s), &r); err != nil {
		t.Fatal(err)
	}
	return r
}

func slots(t *testing.T, body string) []string {
	t.Helper()
	var s struct{ Slots []string }
	if err := json.Unmarshal([]byte(body), &s); err != nil {
		t.Fatal(err)
	}
	return s.Slots
}

// TestCronTaskRowUpcomingAndPatch: a cron task's schedRow shows the schedule as
// written with its zone; upcoming answers in the zone's offset, capped by
// max_runs; PATCH reschedules; an at task of one past-due instant is
// listed under status=finished once it ran.
func TestCronTaskRowUpcomingAndPatch(t *testing.T) {
	srv := server(t, "") // the clock stands at 2026-01-01T00:00:00Z
	a := call(t, srv, "POST", "/v1/tasks", `{`+named+`,"cron":"30 2 * * *","timezone":"America/New_York","start_at":"2026-03-07T00:00:00Z","max_runs":3,"jitter":"1s"}`)
	if a.code != 201 {
		t.Fatalf("create: %d %s", a.code, a.body)
	}
	r := decodeSchedRow(t, a.body)
	// The same create again is the same task (R6); another schedule is not.
	again := `{` + named + `,"cron":"30 2 * * *","timezone":"America/New_York","start_at":"2026-03-07T00:00:00Z","max_runs":3,"jitter":"1s"}`
	if a := call(t, srv, "POST", "/v1/tasks", again); a.code != 200 {
		t.Fatalf("create again: %d %s", a.code, a.body)
	}
	if a := call(t, srv, "POST", "/v1/tasks", `{`+named+`,"cron":"30 3 * * *","timezone":"America/New_York"}`); a.code != 409 {
		t.Fatalf("create with another schedule: %d %s", a.code, a.body)
	}
	if !slices.Equal(r.Cron, []string{"30 2 * * *"}) || r.Timezone != "America/New_York" || r.DSTGap != "shift" || r.DSTOverlap != "first" ||
		r.Interval != "" || r.MaxRuns != 3 || r.Jitter != "1s" || r.StartAt == nil || *r.StartAt != "2026-03-07T00:00:00Z" ||
		r.Tolerance != "5s" || r.Timebox != "11h30m0s" || r.Status != "active" || r.NextRun == nil || !strings.HasPrefix(*r.NextRun, "2026-03-07T07:30:0") {
		t.Fatalf("schedRow: %s", a.body)
	}
	a = call(t, srv, "GET", "/v1/tasks/"+r.ID+"/upcoming", "")
	if got := slots(t, a.body); !slices.Equal(got, []string{"2026-03-07T02:30:00-05:00", "2026-03-08T03:30:00-04:00", "2026-03-09T02:30:00-04:00"}) {
		t.Fatalf("upcoming: %d %s", a.code, a.body)
	}
	a = call(t, srv, "GET", "/v1/tasks/"+r.ID+"/upcoming?count=1", "")
	if got := slots(t, a.body); !slices.Equal(got, []string{"2026-03-07T02:30:00-05:00"}) {
		t.Fatalf("upcoming count=1: %s", a.body)
	}
	for _, q := range []string{"count=0", "count=1001", "count=x", "n=3"} {
		if a := call(t, srv, "GET", "/v1/tasks/"+r.ID+"/upcoming?"+q, ""); a.code != 400 {
			t.Errorf("%s: %d %s", q, a.code, a.body)
		}
	}
	// PATCH: a new cron list in another zone; dst policies reset with a new
	// zone only when given.
	a = call(t, srv, "PATCH", "/v1/tasks/"+r.ID, `{"cron":["0 9 * * MON-FRI","0 12 * * SAT"],"timezone":"Europe/Berlin","max_runs":0,"start_at":""}`)
	if a.code != 200 {
		t.Fatalf("patch: %d %s", a.code, a.body)
	}
	r = decodeSchedRow(t, a.body)
	if len(r.Cron) != 2 || r.Timezone != "Europe/Berlin" || r.MaxRuns != 0 || r.StartAt != nil {
		t.Fatalf("patched schedRow: %s", a.body)
	}
	a = call(t, srv, "GET", "/v1/tasks/"+r.ID+"/upcoming?count=3", "")
	if got := slots(t, a.body); !slices.Equal(got, []string{"2026-01-01T09:00:00+01:00", "2026-01-02T09:00:00+01:00", "2026-01-03T12:00:00+01:00"}) {
		t.Fatalf("upcoming after patch: %s", a.body)
	}
	if a := call(t, srv, "PATCH", "/v1/tasks/"+r.ID, `{"cron":"0 25 * * *"}`); a.code != 400 || a.field != "cron" {
		t.Fatalf("bad patch: %d %s", a.code, a.body)
	}
	// An at task: listed with the zone, and under status=active.
	a = call(t, srv, "POST", "/v1/tasks", `{"name":"once","owner":"o","kind":"noop","at":["2026-01-05T10:00:00+01:00"]}`)
	if a.code != 201 {
		t.Fatalf("create at: %d %s", a.code, a.body)
	}
	r = decodeSchedRow(t, a.body)
	if !slices.Equal(r.At, []string{"2026-01-05T09:00:00Z"}) || r.Timezone != "UTC" || r.Timebox != "1h0m0s" {
		t.Fatalf("at schedRow: %s", a.body)
	}
	if a := call(t, srv, "GET", "/v1/tasks?status=finished", ""); a.code != 200 || !strings.Contains(a.body, `"tasks": []`) {
		t.Fatalf("status=finished: %d %s", a.code, a.body)
	}
}

// TestCronTaskExtendedDays: a task on §8.4's day forms — the last weekday of
// the month in Berlin — has its first slot as nextRun and lists its
// upcoming slots (31 Jan 2026 and 28 Feb are Saturdays; 31 March a Tuesday,
// after the clocks went forward on the 29th).
func TestCronTaskExtendedDays(t *testing.T) {
	srv := server(t, "") // the clock stands at 2026-01-01T00:00:00Z
	a := call(t, srv, "POST", "/v1/tasks", `{`+named+`,"cron":"0 9 LW * *","timezone":"Europe/Berlin"}`)
	if a.code != 201 {
		t.Fatalf("create: %d %s", a.code, a.body)
	}
	r := decodeSchedRow(t, a.body)
	if !slices.Equal(r.Cron, []string{"0 9 LW * *"}) || r.NextRun == nil || *r.NextRun != "2026-01-30T08:00:00Z" {
		t.Fatalf("row: %s", a.body)
	}
	a = call(t, srv, "GET", "/v1/tasks/"+r.ID+"/upcoming?count=3", "")
	if got := slots(t, a.body); !slices.Equal(got, []string{"2026-01-30T09:00:00+01:00", "2026-02-27T09:00:00+01:00", "2026-03-31T09:00:00+02:00"}) {
		t.Fatalf("upcoming: %d %s", a.code, a.body)
	}
}

// TestCronTaskExclude: a cron task's exclude list is on its row, honoured
// by upcoming, replaced and cleared by PATCH (2026: 1 and 2 January are a
// Thursday and a Friday).
func TestCronTaskExclude(t *testing.T) {
	srv := server(t, "") // the clock stands at 2026-01-01T00:00:00Z
	a := call(t, srv, "POST", "/v1/tasks", `{`+named+`,"cron":"0 9 * * *","timezone":"Europe/Berlin","exclude":["2026-01-01","0 9 * * SAT,SUN"]}`)
	if a.code != 201 {
		t.Fatalf("create: %d %s", a.code, a.body)
	}
	r := decodeSchedRow(t, a.body)
	var row struct{ Exclude []string }
	if err := json.Unmarshal([]byte(a.body), &row); err != nil || !slices.Equal(row.Exclude, []string{"2026-01-01", "0 9 * * SAT,SUN"}) {
		t.Fatalf("row: %v %s", err, a.body)
	}
	if r.NextRun == nil || *r.NextRun != "2026-01-02T08:00:00Z" {
		t.Fatalf("next_run skips 1 January: %s", a.body)
	}
	a = call(t, srv, "GET", "/v1/tasks/"+r.ID+"/upcoming?count=3", "")
	if got := slots(t, a.body); !slices.Equal(got, []string{"2026-01-02T09:00:00+01:00", "2026-01-05T09:00:00+01:00", "2026-01-06T09:00:00+01:00"}) {
		t.Fatalf("upcoming: %d %s", a.code, a.body)
	}
	// The same create again is the same task; another exclude list is not.
	if a := call(t, srv, "POST", "/v1/tasks", `{`+named+`,"cron":"0 9 * * *","timezone":"Europe/Berlin","exclude":["2026-01-01","0 9 * * SAT,SUN"]}`); a.code != 200 {
		t.Fatalf("create again: %d %s", a.code, a.body)
	}
	if a := call(t, srv, "POST", "/v1/tasks", `{`+named+`,"cron":"0 9 * * *","timezone":"Europe/Berlin","exclude":"2026-01-01"}`); a.code != 409 {
		t.Fatalf("create with another exclude: %d %s", a.code, a.body)
	}
	// PATCH replaces the list, then [] clears it.
	if a = call(t, srv, "PATCH", "/v1/tasks/"+r.ID, `{"exclude":"0 9 * * FRI"}`); a.code != 200 {
		t.Fatalf("patch: %d %s", a.code, a.body)
	}
	// A new exclude list is a reschedule: nextRun is recomputed (1 January
	// is a slot again).
	if p := decodeSchedRow(t, a.body); p.NextRun == nil || *p.NextRun != "2026-01-01T08:00:00Z" {
		t.Fatalf("next_run after patch: %s", a.body)
	}
	a = call(t, srv, "GET", "/v1/tasks/"+r.ID+"/upcoming?count=2", "")
	if got := slots(t, a.body); !slices.Equal(got, []string{"2026-01-01T09:00:00+01:00", "2026-01-03T09:00:00+01:00"}) {
		t.Fatalf("upcoming after patch: %s", a.body)
	}
	if a = call(t, srv, "PATCH", "/v1/tasks/"+r.ID, `{"exclude":[]}`); a.code != 200 || !strings.Contains(a.body, `"exclude": null`) && !strings.Contains(a.body, `"exclude":null`) {
		t.Fatalf("patch clearing: %d %s", a.code, a.body)
	}
	a = call(t, srv, "GET", "/v1/tasks/"+r.ID+"/upcoming?count=2", "")
	if got := slots(t, a.body); !slices.Equal(got, []string{"2026-01-01T09:00:00+01:00", "2026-01-02T09:00:00+01:00"}) {
		t.Fatalf("upcoming after clearing: %s", a.body)
	}
	if a := call(t, srv, "PATCH", "/v1/tasks/"+r.ID, `{"exclude":["* * * * *"]}`); a.code != 400 || a.field != "exclude" {
		t.Fatalf("patch excluding everything: %d %s", a.code, a.body)
	}
}
