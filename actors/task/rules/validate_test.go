package rules_test

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/cronactor/cronactor/actors/task/rules"
	"github.com/cronactor/cronactor/events"
)

// validSpec is a spec every case below changes one thing of.
func validSpec() rules.Spec {
	return rules.Defaults(rules.Spec{Name: "poll", Owner: "channel/pop3/42", Kind: "noop",
		Schedule: events.Schedule{Interval: events.Duration(time.Minute)}})
}

func TestValidate(t *testing.T) {
	const maxDur = time.Duration(math.MaxInt64)
	cases := []struct {
		name  string
		edit  func(*rules.Spec)
		field string // "" when the spec is valid
		msg   string // part of the message
	}{
		{"valid", func(*rules.Spec) {}, "", ""},

		// Tolerance: 2·tolerance ≥ interval without overflowing.
		{"tolerance just under half", func(s *rules.Spec) { s.Tolerance = 30*time.Second - 1 }, "", ""},
		{"tolerance half", func(s *rules.Spec) { s.Tolerance = 30 * time.Second }, "tolerance", "less than half"},
		{"tolerance 2562047h doubles past the int64 range", func(s *rules.Spec) { s.Tolerance = 2562047 * time.Hour }, "tolerance", "less than half"},
		{"tolerance at the largest duration", func(s *rules.Spec) { s.Tolerance = maxDur }, "tolerance", "less than half"},
		{"tolerance just over a quarter of the largest duration", func(s *rules.Spec) { s.Tolerance = maxDur/4 + 1 }, "tolerance", "less than half"},
		{"largest interval, tolerance just under half", func(s *rules.Spec) {
			s.Schedule.Interval, s.Tolerance, s.Timebox = events.Duration(maxDur), maxDur/2, maxDur
		}, "", ""},
		{"largest interval, tolerance half rounded up", func(s *rules.Spec) {
			s.Schedule.Interval, s.Tolerance, s.Timebox = events.Duration(maxDur), maxDur/2+1, maxDur
		}, "tolerance", "less than half"},
		{"negative tolerance", func(s *rules.Spec) { s.Tolerance = -1 }, "tolerance", "negative"},
		{"most negative tolerance", func(s *rules.Spec) { s.Tolerance = math.MinInt64 }, "tolerance", "negative"},
		{"timebox over the interval", func(s *rules.Spec) { s.Timebox = time.Minute + 1 }, "timebox", "exceed"},

		// Names and owners.
		{"empty name", func(s *rules.Spec) { s.Name = "" }, "name", "required"},
		{"empty owner", func(s *rules.Spec) { s.Owner = "" }, "owner", "required"},
		{"blank name", func(s *rules.Spec) { s.Name = "  \u3000 " }, "name", "white space"},
		{"NUL in name", func(s *rules.Spec) { s.Name = "b\x00c" }, "name", "control"},
		{"NUL in owner", func(s *rules.Spec) { s.Owner = "victim\x00b" }, "owner", "control"},
		{"newline in name", func(s *rules.Spec) { s.Name = "a\nb" }, "name", "control"},
		{"carriage return in owner", func(s *rules.Spec) { s.Owner = "a\rb" }, "owner", "control"},
		{"tab in name", func(s *rules.Spec) { s.Name = "a\tb" }, "name", "control"},
		{"ANSI escape in name", func(s *rules.Spec) { s.Name = "\x1b[31mred\x1b[0m" }, "name", "control"},
		{"DEL in name", func(s *rules.Spec) { s.Name = "a\x7f" }, "name", "control"},
		{"C1 CSI in owner", func(s *rules.Spec) { s.Owner = "a\u009b31m" }, "owner", "control"},
		{"C1 NEL in name", func(s *rules.Spec) { s.Name = "a\u0085b" }, "name", "control"},
		{"RLO in name", func(s *rules.Spec) { s.Name = "invoice\u202egnp.exe" }, "name", "bidirectional"},
		{"LRE in owner", func(s *rules.Spec) { s.Owner = "\u202aowner" }, "owner", "bidirectional"},
		{"PDF in name", func(s *rules.Spec) { s.Name = "a\u202c" }, "name", "bidirectional"},
		{"LRI in name", func(s *rules.Spec) { s.Name = "a\u2066b" }, "name", "bidirectional"},
		{"PDI in owner", func(s *rules.Spec) { s.Owner = "a\u2069" }, "owner", "bidirectional"},
		{"RLM in name", func(s *rules.Spec) { s.Name = "a\u200fb" }, "name", "bidirectional"},
		{"ALM in name", func(s *rules.Spec) { s.Name = "a\u061cb" }, "name", "bidirectional"},
		{"line separator in name", func(s *rules.Spec) { s.Name = "a\u2028b" }, "name", "separator"},
		{"paragraph separator in owner", func(s *rules.Spec) { s.Owner = "a\u2029b" }, "owner", "separator"},
		{"invalid UTF-8 in name", func(s *rules.Spec) { s.Name = "a\xffb" }, "name", "UTF-8"},
		{"surrogate half in owner", func(s *rules.Spec) { s.Owner = "a\xed\xa0\x80" }, "owner", "UTF-8"},
		{"name of 100k characters", func(s *rules.Spec) { s.Name = strings.Repeat("x", 100_000) }, "name", "at most 200 characters, got 100000"},
		{"name of 201 characters", func(s *rules.Spec) { s.Name = strings.Repeat("x", 201) }, "name", "at most 200"},
		{"owner of 201 characters", func(s *rules.Spec) { s.Owner = strings.Repeat("é", 201) }, "owner", "at most 200"},
		{"name of 200 two-byte characters", func(s *rules.Spec) { s.Name = strings.Repeat("é", 200) }, "", ""},
		{"owner of 200 characters", func(s *rules.Spec) { s.Owner = strings.Repeat("o", 200) }, "", ""},
		{"spaces, slashes and punctuation", func(s *rules.Spec) { s.Name, s.Owner = "nightly report #3 (eu-west)", "team/billing:42" }, "", ""},
		{"letters of other scripts", func(s *rules.Spec) { s.Name, s.Owner = "Ünïcødé 名前 عربي", "владелец/7" }, "", ""},
		{"emoji joined by ZWJ", func(s *rules.Spec) { s.Name = "family \U0001F468\u200d\U0001F469\u200d\U0001F467" }, "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := validSpec()
			c.edit(&s)
			err := rules.Validate(s)
			if c.field == "" {
				if err != nil {
					t.Fatalf("Validate: %v, want nil", err)
				}
				return
			}
			var fe *rules.FieldError
			if !errors.As(err, &fe) || !errors.Is(err, rules.ErrInvalidSpec) {
				t.Fatalf("Validate: %v, want a *FieldError for %s", err, c.field)
			}
			if fe.Field != c.field || !strings.Contains(fe.Message, c.msg) {
				t.Fatalf("Validate: field %q message %q; want field %q message containing %q", fe.Field, fe.Message, c.field, c.msg)
			}
		})
	}
}

func TestTimeProblem(t *testing.T) {
	cases := []struct {
		t  time.Time
		ok bool
	}{
		{time.Time{}, false},
		{time.Date(1, 1, 1, 0, 0, 1, 0, time.UTC), false},
		{time.Date(1969, 12, 31, 23, 59, 59, 999999999, time.UTC), false},
		{rules.MinTime, true},
		{time.Date(2026, 3, 8, 2, 30, 0, 0, time.UTC), true},
		{rules.MaxTime, true},
		{rules.MaxTime.Add(1), false},
		// 9999-12-31T23:59:59-23:59 is a valid RFC 3339 text whose UTC
		// instant is in year 10000, which RFC 3339 cannot write.
		{time.Date(9999, 12, 31, 23, 59, 59, 0, time.FixedZone("", -(23*3600+59*60))), false},
	}
	for _, c := range cases {
		if msg := rules.TimeProblem(c.t); (msg == "") != c.ok {
			t.Errorf("TimeProblem(%s) = %q, want ok %v", c.t, msg, c.ok)
		}
	}
}

// legacy is a task recorded before names were checked: its name holds a
// NUL and its owner a newline.
func legacy(t *testing.T) rules.State {
	t.Helper()
	e := events.TaskCreated{TaskID: id, Name: "b\x00c", Owner: "victim\nx", Kind: "noop",
		Schedule: events.Schedule{Interval: events.Duration(time.Minute)}, Tolerance: events.Duration(5 * time.Second),
		Timebox: events.Duration(30 * time.Second), NextRun: t0.Add(time.Minute)}
	return rules.Evolve(rules.State{}, events.Metadata{Stream: events.TaskStream(id), At: t0}, e)
}

// An update cannot change a name or owner, so a task recorded with one the
// rules now refuse can still be updated.
func TestUpdateOfATaskWithALegacyName(t *testing.T) {
	iv := 2 * time.Minute
	evs, err := rules.Decide(legacy(t), rules.Update{Interval: &iv}, t0)
	if err != nil || len(evs) != 1 {
		t.Fatalf("update of a legacy task: %v %v", evs, err)
	}
	// Creating one with such a name is refused.
	_, err = rules.Decide(rules.State{}, rules.Create{TaskID: id, FirstRun: t0, Spec: rules.Spec{Name: "b\x00c", Owner: "victim",
		Kind: "noop", Schedule: events.Schedule{Interval: events.Duration(time.Minute)}}}, t0)
	var fe *rules.FieldError
	if !errors.As(err, &fe) || fe.Field != "name" {
		t.Fatalf("create with a NUL in the name: %v", err)
	}
}

// The zero time is never read as "unset" once it is given: a first run or
// a new nextRun at 0001-01-01T00:00:00Z is refused, naming the field.
func TestZeroTimesAreRefused(t *testing.T) {
	spec := rules.Spec{Name: "n", Owner: "o", Kind: "noop", Schedule: events.Schedule{Interval: events.Duration(time.Minute)}}
	for _, first := range []time.Time{time.Date(1, 1, 1, 0, 0, 0, 1, time.UTC), time.Date(1969, 7, 20, 20, 17, 0, 0, time.UTC)} {
		_, err := rules.Decide(rules.State{}, rules.Create{TaskID: id, FirstRun: first, Spec: spec}, t0)
		var fe *rules.FieldError
		if !errors.As(err, &fe) || fe.Field != "first_run" {
			t.Errorf("create with first run %s: %v, want a first_run error", first, err)
		}
	}
	zero := time.Time{}
	_, err := rules.Decide(legacy(t), rules.Update{NextRun: &zero}, t0)
	var fe *rules.FieldError
	if !errors.As(err, &fe) || fe.Field != "next_run" {
		t.Fatalf("update to the zero next run: %v, want a next_run error", err)
	}
}

// A payload checked for one kind is not recorded on a task of another (one
// deleted and created again between the check and the update).
func TestUpdateOfAPayloadCheckedForAnotherKind(t *testing.T) {
	p := []byte(`{"url":"https://example.com"}`)
	_, err := rules.Decide(legacy(t), rules.Update{Payload: p, PayloadKind: "http"}, t0)
	var fe *rules.FieldError
	if !errors.As(err, &fe) || fe.Field != "payload" || !strings.Contains(fe.Message, `checked for kind "http"`) {
		t.Fatalf("update checked for http on a noop task: %v", err)
	}
	if evs, err := rules.Decide(legacy(t), rules.Update{Payload: p, PayloadKind: "noop"}, t0); err != nil || len(evs) != 1 {
		t.Fatalf("update checked for the task's kind: %v %v", evs, err)
	}
}
