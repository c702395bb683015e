package httpapi_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/cronactor/cronactor/internal/httpapi"
)

// preview asks GET /v1/schedule/preview; the preview needs no scheduler,
// view or store.
func preview(t *testing.T, query string) (int, []string, string, string) {
	t.Helper()
	srv := httptest.NewServer(httpapi.New(httpapi.Config{}))
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/v1/schedule/preview?" + query)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		Slots []string `json:"slots"`
		Error struct {
			Field   string `json:"field"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("content type %q", ct)
	}
	return resp.StatusCode, body.Slots, body.Error.Field, body.Error.Message
}

func TestSchedulePreview(t *testing.T) {
	for _, c := range []struct {
		query string
		want  []string
	}{
		{"cron=" + url.QueryEscape("30 2 * * *") + "&timezone=America/New_York&from=2026-03-07T12:00:00Z&count=2",
			[]string{"2026-03-08T03:30:00-04:00", "2026-03-09T02:30:00-04:00"}},
		{"cron=" + url.QueryEscape("30 2 * * *") + "&timezone=America/New_York&dst_gap=skip&from=2026-03-07T12:00:00Z&count=1",
			[]string{"2026-03-09T02:30:00-04:00"}},
		{"cron=" + url.QueryEscape("30 1 * * *") + "&timezone=America/New_York&dst_overlap=both&from=2026-10-31T12:00:00Z&count=3",
			[]string{"2026-11-01T01:30:00-04:00", "2026-11-01T01:30:00-05:00", "2026-11-02T01:30:00-05:00"}},
		{"cron=" + url.QueryEscape("0 9 * * MON-FRI") + "&cron=" + url.QueryEscape("0 12 * * SAT") + "&from=2026-03-06T09:00:00Z&count=2",
			[]string{"2026-03-07T12:00:00Z", "2026-03-09T09:00:00Z"}},
		// §8.4's day forms: the last day and the second Friday (either, as
		// both day fields are restricted), in Berlin.
		{"cron=" + url.QueryEscape("0 9 L * FRI#2") + "&timezone=Europe/Berlin&from=2026-01-01T00:00:00Z&count=3",
			[]string{"2026-01-09T09:00:00+01:00", "2026-01-31T09:00:00+01:00", "2026-02-13T09:00:00+01:00"}},
		// exclude (repeatable): a date and an expression are no slots.
		{"cron=" + url.QueryEscape("0 9 * * *") + "&exclude=2026-12-25&exclude=" + url.QueryEscape("0 9 * * SAT,SUN") + "&from=2026-12-24T00:00:00Z&count=3",
			[]string{"2026-12-24T09:00:00Z", "2026-12-28T09:00:00Z", "2026-12-29T09:00:00Z"}},
		// 15 Aug 2026 is a Saturday → Friday the 14th.
		{"cron=" + url.QueryEscape("0 9 15W 8 *") + "&from=2026-01-01T00:00:00Z&count=1", []string{"2026-08-14T09:00:00Z"}},
	} {
		code, slots, field, msg := preview(t, c.query)
		if code != http.StatusOK || !slices.Equal(slots, c.want) {
			t.Errorf("%s: %d %q (%s: %s); want %q", c.query, code, slots, field, msg, c.want)
		}
	}
	if code, slots, _, _ := preview(t, "cron=@hourly&from=2026-01-01T00:00:00Z"); code != http.StatusOK || len(slots) != 10 {
		t.Errorf("default count: %d, %d slots", code, len(slots))
	}
	if code, slots, _, _ := preview(t, "cron=@hourly&from=2026-01-01T00:00:00Z&count=1000"); code != http.StatusOK || len(slots) != 1000 {
		t.Errorf("count 1000: %d, %d slots", code, len(slots))
	}
	if code, slots, _, _ := preview(t, "cron=@hourly&count=1"); code != http.StatusOK || len(slots) != 1 {
		t.Errorf("from now: %d, %q", code, slots)
	}
}

func TestSchedulePreviewRejects(t *testing.T) {
	for _, c := range []struct {
		query, field, msg string
	}{
		{"cron=" + url.QueryEscape("0 24 * * *"), "cron", "field 2 (hour): 24 is above 23"},
		{"cron=" + url.QueryEscape("0 0 30 2 *"), "cron", "never matches"},
		{"cron=" + url.QueryEscape("0 0 L-30 2 *"), "cron", "never matches"},
		{"cron=" + url.QueryEscape("0 0 * * 2-4#2"), "cron", `field 5 (day-of-week): "2-4#2": a range cannot take #`},
		{"cron=" + url.QueryEscape("0 L * * *"), "cron", "field 2 (hour)"},
		{"cron=%40daily&exclude=2026-02-30", "exclude", "entry 1"},
		{"cron=%40daily&exclude=" + url.QueryEscape("* * * * *"), "exclude", "excludes every slot"},
		{"cron=" + url.QueryEscape("CRON_TZ=UTC 0 0 * * *"), "cron", "use timezone"},
		{"cron=%40daily&cron=" + url.QueryEscape("0 0 * 13 *"), "cron", "expression 2: field 4 (month)"},
		{"", "cron", "required"},
		{"cron=%40daily&timezone=Mars/Olympus_Mons", "timezone", "unknown zone"},
		{"cron=%40daily&dst_gap=sideways", "dst_gap", "shift or skip"},
		{"cron=%40daily&dst_overlap=twice", "dst_overlap", "first, last or both"},
		{"cron=%40daily&from=yesterday", "from", "RFC 3339"},
		{"cron=%40daily&count=0", "count", "1 to 1000"},
		{"cron=%40daily&count=1001", "count", "1 to 1000"},
		{"cron=%40daily&count=x", "count", "1 to 1000"},
		{"cron=%40daily&count=1&count=2", "count", "once"},
		{"cron=%40daily&tz=UTC", "tz", "unknown parameter"},
	} {
		code, slots, field, msg := preview(t, c.query)
		if code != http.StatusBadRequest || field != c.field || !strings.Contains(msg, c.msg) || slots != nil {
			t.Errorf("%q: %d, field %q, message %q; want 400, %q, %q", c.query, code, field, msg, c.field, c.msg)
		}
	}
}
