package history_test

import (
	"strings"
	"testing"
	"time"

	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/projections/history"
)

// Text a table or an explanation prints — a task's name from a log written
// before names were checked, the error a handler returned (an endpoint's
// answer, a command's stderr) — cannot drive the terminal: control and
// bidirectional formatting characters are printed as Go escapes. (Bytes that
// are not UTF-8 do not survive recording: the codec writes them as U+FFFD.)
func TestPrintedTextIsEscaped(t *testing.T) {
	l := newTaskLog(t, memStore(t), "evil\x1b]0;owned\x07\u202e")
	l.created("00:00", time.Minute, 5*time.Second, 30*time.Second, "00:30")
	l.enqueued("00:30", 1, "00:30", "01:30", 0)
	l.started("00:30", 1, 30*time.Second)
	l.add("00:31", events.RunFailed{RunID: l.run(1), Run: 1, Error: "500: \x1b[2J\x1b[31mpwned\u2066|\xff\u0085"})
	rows, err := history.Rows(l.read())
	if err != nil {
		t.Fatal(err)
	}
	var table strings.Builder
	if err := history.WriteTable(&table, rows, history.Relative(t0)); err != nil {
		t.Fatal(err)
	}
	ex, err := history.Explain(l.read(), at("00:40"), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	var explained strings.Builder
	if err := ex.Write(&explained, history.Relative(t0)); err != nil {
		t.Fatal(err)
	}
	for what, out := range map[string]string{"table": table.String(), "explanation": explained.String()} {
		for _, bad := range []string{"\x1b", "\x07", "\u202e", "\u2066", "\xff", "\u0085"} {
			if strings.Contains(out, bad) {
				t.Errorf("the %s prints %q raw:\n%s", what, bad, out)
			}
		}
		for _, want := range []string{`evil\x1b]0;owned\a\u202e`, `\x1b[2J\x1b[31mpwned\u2066`, `\u0085`} {
			if !strings.Contains(out, want) {
				t.Errorf("the %s lacks %s:\n%s", what, want, out)
			}
		}
	}
}
