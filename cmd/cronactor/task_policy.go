package main

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// policyFlags are the run policy fields of task create and update (R12–R16):
// the same names as the API's fields, with - for _ (docs/policies.md).
type policyFlags struct {
	queue, missedRunPolicy, missedAfter, startDeadline, heartbeatTimeout string
	maxAttempts, initialBackoff, maxBackoff, multiplier                  string
	fs                                                                   *flag.FlagSet
}

func addPolicyFlags(fs *flag.FlagSet) *policyFlags {
	f := &policyFlags{fs: fs}
	fs.StringVar(&f.queue, "queue", "", "named `queue` the task's runs wait in (default \"default\"; serve --queue sets each one's limit)")
	fs.StringVar(&f.maxAttempts, "retry-max-attempts", "", "retry a failed run: at most this `number` of attempts, the first included (1: no retry)")
	fs.StringVar(&f.initialBackoff, "retry-initial-backoff", "", "wait this `duration` before the first retry")
	fs.StringVar(&f.maxBackoff, "retry-max-backoff", "", "never wait longer than this `duration` before a retry")
	fs.StringVar(&f.multiplier, "retry-multiplier", "", "multiply the backoff by this `factor` (at least 1) for each further retry")
	fs.StringVar(&f.missedRunPolicy, "missed-run-policy", "", "`policy` for a slot found late: run_once (default: one run) or skip (no run)")
	fs.StringVar(&f.missedAfter, "missed-after", "", "a slot is missed when found later than slot + this `duration` (default: one spacing)")
	fs.StringVar(&f.startDeadline, "start-deadline", "", "drop a run (too_late) that would start later than its slot + this `duration`")
	fs.StringVar(&f.heartbeatTimeout, "heartbeat-timeout", "", "force a run to end when it has not heartbeated for this `duration`")
	return f
}

func (f *policyFlags) given(name string) bool {
	seen := false
	f.fs.Visit(func(fl *flag.Flag) { seen = seen || fl.Name == name })
	return seen
}

// apply puts the fields given into a create or PATCH body. The retry flags
// make one retry object: the API takes it whole, so an update that changes
// it gives every part it wants (the ones left out are zero, and refused
// where zero is not allowed).
func (f *policyFlags) apply(body map[string]any) error {
	for _, s := range []struct{ flag, field, v string }{{"queue", "queue", f.queue}, {"missed-run-policy", "missed_run_policy", f.missedRunPolicy},
		{"missed-after", "missed_after", f.missedAfter}, {"start-deadline", "start_deadline", f.startDeadline},
		{"heartbeat-timeout", "heartbeat_timeout", f.heartbeatTimeout}} {
		if f.given(s.flag) {
			body[s.field] = s.v
		}
	}
	retry := map[string]any{}
	if f.given("retry-max-attempts") {
		n, err := strconv.Atoi(f.maxAttempts)
		if err != nil {
			return fmt.Errorf("%w: --retry-max-attempts must be a whole number, got %q", errUsage, f.maxAttempts)
		}
		retry["max_attempts"] = n
	}
	for _, s := range []struct{ flag, field, v string }{{"retry-initial-backoff", "initial_backoff", f.initialBackoff},
		{"retry-max-backoff", "max_backoff", f.maxBackoff}} {
		if f.given(s.flag) {
			if _, err := time.ParseDuration(s.v); err != nil {
				return fmt.Errorf("%w: --%s must be a duration such as 1s or 1m, got %q", errUsage, s.flag, s.v)
			}
			retry[s.field] = s.v
		}
	}
	if f.given("retry-multiplier") {
		x, err := strconv.ParseFloat(f.multiplier, 64)
		if err != nil {
			return fmt.Errorf("%w: --retry-multiplier must be a number such as 2 or 1.5, got %q", errUsage, f.multiplier)
		}
		retry["multiplier"] = x
	}
	if len(retry) > 0 {
		body["retry"] = retry
	}
	return nil
}

// runTaskTrigger is `task trigger ID`: one run now, outside the schedule
// (R15). It prints the run's ID (-o json: the API's answer).
func runTaskTrigger(ctx context.Context, env *cliEnv, c *client, fs *flag.FlagSet, asJSON bool) error {
	if fs.NArg() != 1 {
		return fmt.Errorf("%w: task trigger needs one TASK_ID", errUsage)
	}
	var ans struct {
		RunID string `json:"run_id"`
	}
	raw, err := c.do(ctx, http.MethodPost, "/v1/tasks/"+url.PathEscape(fs.Arg(0))+"/trigger", nil, &ans)
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
