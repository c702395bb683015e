package httpapi

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/cronactor/cronactor/actors/scheduler"
)

// policyBody holds the run policy fields of a create or PATCH body (R12–R16,
// docs/policies.md); every one is optional. What the values mean together
// (attempts from 1 to 100, positive backoffs, initial ≤ max, a multiplier of
// at least 1, deadlines within the timebox, a known policy name) the task's
// rules check, naming the field.
type policyBody struct {
	// Queue names the queue the task's runs wait in ("" or absent:
	// "default").
	Queue *string `json:"queue"`
	// Retry is the retry policy, a whole object: fields left out are zero
	// (and refused where zero is not allowed). In a PATCH, null turns
	// retries off, as {"max_attempts":1} does.
	Retry            *retryBody `json:"retry"`
	MissedRunPolicy  *string    `json:"missed_run_policy"`
	MissedAfter      *string    `json:"missed_after"`
	StartDeadline    *string    `json:"start_deadline"`
	HeartbeatTimeout *string    `json:"heartbeat_timeout"`
	// Overlap is "skip" (default), "buffer_one", "cancel_other" or
	// "allow"; PauseAfterFailures at least 1 (in a PATCH, null turns
	// pausing off). DESIGN §8.4.
	Overlap            *string `json:"overlap"`
	PauseAfterFailures *int    `json:"pause_after_failures"`
}

// retryBody is {"max_attempts":3,"initial_backoff":"1s","max_backoff":"1m","multiplier":2}.
type retryBody struct {
	MaxAttempts    *int     `json:"max_attempts"`
	InitialBackoff *string  `json:"initial_backoff"`
	MaxBackoff     *string  `json:"max_backoff"`
	Multiplier     *float64 `json:"multiplier"`
}

// parsedPolicy is a policyBody read: nil where the body says nothing.
type parsedPolicy struct {
	queue, missedRunPolicy                   *string
	retry                                    *scheduler.RetryPolicy
	missedAfter, startDeadline, heartbeatTTL *time.Duration
	overlap                                  *string
	pauseAfterFailures                       *int
}

// parse reads the fields, naming the one that is wrong. retryNull and
// pauseNull say the body's retry or pause_after_failures was JSON null
// (PATCH: turn retries or pausing off).
func (b policyBody) parse(retryNull, pauseNull bool) (parsedPolicy, error) {
	p := parsedPolicy{queue: b.Queue, missedRunPolicy: b.MissedRunPolicy, overlap: b.Overlap}
	switch n := b.PauseAfterFailures; {
	case n != nil && *n < 1:
		return p, &fieldErr{"pause_after_failures", fmt.Sprintf("must be at least 1, got %d", *n)}
	case n != nil:
		p.pauseAfterFailures = n
	case pauseNull:
		p.pauseAfterFailures = new(int)
	}
	for _, f := range []struct {
		name string
		in   *string
		out  **time.Duration
	}{{"missed_after", b.MissedAfter, &p.missedAfter}, {"start_deadline", b.StartDeadline, &p.startDeadline},
		{"heartbeat_timeout", b.HeartbeatTimeout, &p.heartbeatTTL}} {
		if f.in == nil {
			continue
		}
		d, err := parseDuration(f.name, *f.in)
		if err != nil {
			return p, err
		}
		*f.out = &d
	}
	switch {
	case b.Retry != nil:
		r := &scheduler.RetryPolicy{}
		if b.Retry.MaxAttempts != nil {
			r.MaxAttempts = *b.Retry.MaxAttempts
		}
		if b.Retry.Multiplier != nil {
			r.Multiplier = *b.Retry.Multiplier
		}
		for _, f := range []struct {
			name string
			in   *string
			out  *time.Duration
		}{{"retry.initial_backoff", b.Retry.InitialBackoff, &r.InitialBackoff}, {"retry.max_backoff", b.Retry.MaxBackoff, &r.MaxBackoff}} {
			if f.in == nil {
				continue
			}
			d, err := parseDuration(f.name, *f.in)
			if err != nil {
				return p, err
			}
			*f.out = d
		}
		r.FillDefaults(b.Retry.InitialBackoff != nil, b.Retry.MaxBackoff != nil, b.Retry.Multiplier != nil)
		p.retry = r
	case retryNull:
		p.retry = &scheduler.RetryPolicy{MaxAttempts: 1}
	}
	return p, nil
}

// nullField reports whether the top-level object in body gives field as
// JSON null (a body decodeStrict accepted).
func nullField(body []byte, field string) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(body, &m) != nil {
		return false
	}
	v, ok := m[field]
	return ok && string(v) == "null"
}

// spec puts the policy into a create's spec.
func (p parsedPolicy) spec(s *scheduler.TaskSpec) {
	s.Queue, s.MissedRunPolicy = deref(p.queue), deref(p.missedRunPolicy)
	s.Retry = p.retry
	s.MissedAfter, s.StartDeadline, s.HeartbeatTimeout = derefDur(p.missedAfter), derefDur(p.startDeadline), derefDur(p.heartbeatTTL)
	s.Overlap = deref(p.overlap)
	if p.pauseAfterFailures != nil {
		s.PauseAfterFailures = *p.pauseAfterFailures
	}
}

// update puts the policy into a PATCH's update.
func (p parsedPolicy) update(u *scheduler.TaskUpdate) {
	u.Queue, u.MissedRunPolicy, u.Retry = p.queue, p.missedRunPolicy, p.retry
	u.MissedAfter, u.StartDeadline, u.HeartbeatTimeout = p.missedAfter, p.startDeadline, p.heartbeatTTL
	u.Overlap, u.PauseAfterFailures = p.overlap, p.pauseAfterFailures
}

func derefDur(d *time.Duration) time.Duration {
	if d == nil {
		return 0
	}
	return *d
}
