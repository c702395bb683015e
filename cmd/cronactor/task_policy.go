package main

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// policyFlags are the run policy fields of task create and update (R12–R16):
// the same names as the API's fields, with - for _ (docs/policies.md).
type policyFlags struct {
	maxAttempts, initialBackoff, maxBackoff, multiplier string
	pauseAfterFailures                                  string
	fs                                                  *flagSet
}

// policyStrings are the policy flags that go into the body as given.
var policyStrings = []string{"queue", "missed-run-policy", "missed-after", "start-deadline", "heartbeat-timeout", "overlap", "history-retention"}

func addPolicyFlags(fs *flagSet) *policyFlags {
	f := &policyFlags{fs: fs}
	fs.String("queue", "", "named `queue` the task's runs wait in (default \"default\"; serve --queue sets each one's limit)")
	fs.StringVar(&f.maxAttempts, "retry-max-attempts", "", "retry a failed run: at most this `number` of attempts, the first included (1: no retry)")
	fs.StringVar(&f.initialBackoff, "retry-initial-backoff", "", "wait this `duration` before the first retry (default 1s)")
	fs.StringVar(&f.maxBackoff, "retry-max-backoff", "", "never wait longer than this `duration` before a retry (default 1m)")
	fs.StringVar(&f.multiplier, "retry-multiplier", "", "multiply the backoff by this `factor` (at least 1) for each further retry (default 2)")
	fs.String("missed-run-policy", "", "`policy` for a slot found late: run_once (default: one run) or skip (no run)")
	fs.String("missed-after", "", "a slot is missed when found later than slot + this `duration` (default: one spacing)")
	fs.String("start-deadline", "", "drop a run (too_late) that would start later than its slot + this `duration`")
	fs.String("heartbeat-timeout", "", "force a run to end when it has not heartbeated for this `duration`")
	fs.String("overlap", "", "`policy` for a run asking to start while another runs: skip (default: drop it), buffer_one (it waits; at most one does), cancel_other (the running one is cancelled, reason replaced) or allow")
	fs.StringVar(&f.pauseAfterFailures, "pause-after-failures", "", "pause the task once the runs of this `number` (at least 1) of slots in a row have failed, each after its retries")
	fs.String("history-retention", "", "keep the task's events for this `duration` (0s: the server's --history-retention)")
	return f
}

// apply puts the fields given into a create or PATCH body. The retry flags
// make one retry object: the API takes it whole, and fills in the default
// backoffs and multiplier for the parts left out (docs/policies.md).
func (f *policyFlags) apply(body map[string]any) error {
	f.fs.putGiven(body, policyStrings...)
	if f.fs.given("pause-after-failures") {
		n, err := strconv.Atoi(f.pauseAfterFailures)
		if err != nil {
			return fmt.Errorf("%w: --pause-after-failures must be a whole number, got %q", errUsage, f.pauseAfterFailures)
		}
		body["pause_after_failures"] = n
	}
	retry := map[string]any{}
	if f.fs.given("retry-max-attempts") {
		n, err := strconv.Atoi(f.maxAttempts)
		if err != nil {
			return fmt.Errorf("%w: --retry-max-attempts must be a whole number, got %q", errUsage, f.maxAttempts)
		}
		retry["max_attempts"] = n
	}
	for _, s := range []struct{ flag, field, v string }{{"retry-initial-backoff", "initial_backoff", f.initialBackoff},
		{"retry-max-backoff", "max_backoff", f.maxBackoff}} {
		if f.fs.given(s.flag) {
			if _, err := time.ParseDuration(s.v); err != nil {
				return fmt.Errorf("%w: --%s must be a duration such as 1s or 1m, got %q", errUsage, s.flag, s.v)
			}
			retry[s.field] = s.v
		}
	}
	if f.fs.given("retry-multiplier") {
		x, err := strconv.ParseFloat(f.multiplier, 64)
		if err != nil {
			return fmt.Errorf("%w: --retry-multiplier must be a number such as 2 or 1.5, got %q", errUsage, f.multiplier)
		}
		retry["multiplier"] = x
	}
	if len(retry) > 0 {
		if _, ok := retry["max_attempts"]; !ok {
			// The retry flags give the whole policy (the API takes it
			// whole): without the number of attempts the daemon would
			// refuse a flag the user never typed.
			return fmt.Errorf("%w: %s: --%s needs --retry-max-attempts N too (the attempts, the first included; the retry flags give the whole policy)",
				errUsage, f.fs.path, f.firstRetryFlag())
		}
		body["retry"] = retry
	}
	return nil
}

// firstRetryFlag is the first retry flag given, in the order of the help.
func (f *policyFlags) firstRetryFlag() string {
	for _, name := range []string{"retry-initial-backoff", "retry-max-backoff", "retry-multiplier"} {
		if f.fs.given(name) {
			return name
		}
	}
	return "retry-max-attempts"
}

// runTaskTrigger is `task trigger ID`: one run now, outside the schedule
// (R15). It prints the run's ID (-o json: the API's answer).
func runTaskTrigger(ctx context.Context, env *cliEnv, c *client, id string, asJSON bool) error {
	var ans struct {
		RunID string `json:"run_id"`
	}
	raw, err := c.do(ctx, http.MethodPost, "/v1/tasks/"+url.PathEscape(id)+"/trigger", nil, &ans)
	if err != nil {
		return err
	}
	if asJSON {
		_, err := env.stdout.Write(raw)
		return err
	}
	_, err = fmt.Fprintln(env.stdout, ans.RunID)
	return err
}
