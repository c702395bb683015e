//go:build unix

package kinds_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cronactor/cronactor/actors/worker"
	"github.com/cronactor/cronactor/actors/worker/kinds"
	"github.com/google/uuid"
)

// An exec task's failure is permanent for an exit status in 64–78 but 75
// (sysexits.h), retryable for any other status and for a signal.
func TestExecExitClassification(t *testing.T) {
	for _, tc := range []struct {
		script    string
		permanent bool
	}{
		{"exit 1", false},
		{"exit 2", false},
		{"exit 63", false},
		{"exit 64", true},  // EX_USAGE
		{"exit 65", true},  // EX_DATAERR
		{"exit 70", true},  // EX_SOFTWARE
		{"exit 74", true},  // EX_IOERR
		{"exit 75", false}, // EX_TEMPFAIL
		{"exit 76", true},  // EX_PROTOCOL
		{"exit 78", true},  // EX_CONFIG
		{"exit 79", false},
		{"exit 126", false},
		{"exit 127", false},
		{"exit 255", false},
		{"kill -KILL $$", false},
		{"kill -TERM $$", false},
	} {
		t.Run(tc.script, func(t *testing.T) {
			_, err := kinds.Exec().Handle(context.Background(), run(`{"command":["sh","-c",`+jsonString(tc.script)+`]}`, "", time.Now().Add(time.Minute)))
			if !errors.Is(err, kinds.ErrExit) {
				t.Fatalf("err = %v", err)
			}
			if got := worker.IsPermanent(err); got != tc.permanent {
				t.Fatalf("permanent = %v, want %v (err %v)", got, tc.permanent, err)
			}
		})
	}
}

// A command stopped at its deadline, and one that cannot be started, fail
// retryably.
func TestExecDeadlineAndStartFailureAreRetryable(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := kinds.Exec().Handle(ctx, run(`{"command":["sh","-c","sleep 60"]}`, "", time.Now()))
	if err == nil || worker.IsPermanent(err) {
		t.Fatalf("at the deadline: err = %v", err)
	}
	missing := filepath.Join(t.TempDir(), "not-there")
	_, err = kinds.Exec().Handle(context.Background(), run(`{"command":[`+jsonString(missing)+`]}`, "", time.Now().Add(time.Minute)))
	if err == nil || worker.IsPermanent(err) {
		t.Fatalf("cannot start: err = %v", err)
	}
}

// The command learns the run's attempt, the run it retries and its
// trigger.
func TestExecEnvironmentHasAttemptRetryOfAndTrigger(t *testing.T) {
	out := filepath.Join(t.TempDir(), "env")
	script := `echo "$CRONACTOR_ATTEMPT|$CRONACTOR_RETRY_OF|$CRONACTOR_TRIGGER" >> ` + out
	prev := uuid.New()
	for _, r := range []worker.Run{{Attempt: 1, Trigger: "manual"}, {Attempt: 3, RetryOf: prev}, {}} {
		r.TaskID, r.RunID, r.Number, r.Deadline = uuid.New(), uuid.New(), 1, time.Now().Add(time.Minute)
		r.Payload = []byte(`{"command":["sh","-c",` + jsonString(script) + `]}`)
		if _, err := kinds.Exec().Handle(context.Background(), worker.NewRun(r, nil)); err != nil {
			t.Fatal(err)
		}
	}
	b, _ := os.ReadFile(out)
	want := fmt.Sprintf("1||manual\n3|%s|\n1||\n", prev)
	if string(b) != want {
		t.Fatalf("the command saw\n%s\nwant\n%s", b, want)
	}
}
