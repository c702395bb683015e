package main

import (
	"context"
	"errors"
	"log/slog"
	"net/http"

	"github.com/cronactor/cronactor/actors/scheduler"
	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/projections/crontasks"
	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// metrics are the daemon's Prometheus series.
type metrics struct {
	reg           *prometheus.Registry
	runs          *prometheus.CounterVec
	reasons       *prometheus.CounterVec
	lag           prometheus.Histogram
	appendSeconds prometheus.Histogram
	appendFails   *prometheus.CounterVec
}

func newMetrics() *metrics {
	m := &metrics{reg: prometheus.NewRegistry()}
	m.runs = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "cronactor_runs_total",
		Help: "Run decisions recorded since start, by outcome (enqueued, started, completed, failed, dropped, forced_end)."}, []string{"outcome"})
	m.reasons = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "cronactor_run_reasons_total",
		Help: "Run decisions recorded since start, by outcome and reason: enqueued (schedule, retry, manual, backlog), " +
			"dropped (too_soon, paused, deleted, overlap, too_late), forced_end (timebox, process_lost, heartbeat_timeout, replaced), " +
			"failed (retry: a retry is due, no_retry: none is made, not_retryable, error: the task has no retry policy), " +
			"skipped (missed: slots missed_run_policy skip ran nothing for)."}, []string{"outcome", "reason"})
	m.lag = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "cronactor_scheduling_lag_seconds",
		Help: "Time from a run's due time to its start.", Buckets: prometheus.ExponentialBuckets(0.001, 2, 18)})
	m.appendSeconds = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "cronactor_append_seconds",
		Help: "Latency of durable appends to the event store.", Buckets: prometheus.ExponentialBuckets(0.0001, 2, 16)})
	m.appendFails = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "cronactor_append_failures_total",
		Help: "Appends to the event store that failed, by reason (no_space, read_only, write_failed: the store refuses appends; version_conflict, other)."}, []string{"reason"})
	m.reg.MustRegister(m.runs, m.reasons, m.lag, m.appendSeconds, m.appendFails, collectors.NewGoCollector())
	return m
}

// appendFailed counts a failed append by reason.
func (m *metrics) appendFailed(err error) {
	reason := "other"
	switch {
	case events.Condition(err) != "":
		reason = events.Condition(err)
	case errors.Is(err, events.ErrVersionConflict):
		reason = "version_conflict"
	}
	m.appendFails.WithLabelValues(reason).Inc()
}

func (m *metrics) register(s *scheduler.Scheduler, v *crontasks.Keeper, st events.Store) {
	m.registerQueues(s)
	if ws, ok := st.(events.WriteStatusReader); ok {
		m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "cronactor_store_writable",
			Help: "1 while the event store accepts appends, 0 while it refuses them (disk full or read-only, a failed write, an EventStoreDB server that cannot be reached); /healthz says why."},
			func() float64 {
				if ws.WriteStatus().Err != nil {
					return 0
				}
				return 1
			}),
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "cronactor_store_restart_needed",
				Help: "1 while the event store refuses appends until the daemon restarts, else 0."},
				func() float64 {
					if ws.WriteStatus().RestartNeeded {
						return 1
					}
					return 0
				}))
	}
	m.reg.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "cronactor_queue_depth", Help: "Runs waiting for a worker, every queue."},
			func() float64 { return float64(s.Stats().Queued) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "cronactor_busy_workers", Help: "Workers executing a run, every queue."},
			func() float64 { return float64(s.Stats().Busy) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "cronactor_projection_lag_seconds", Help: "How far the cron_tasks view trails the log."},
			func() float64 { return v.Lag().Time.Seconds() }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "cronactor_projection_lag_events", Help: "Events the cron_tasks view has not folded yet."},
			func() float64 { return float64(v.Lag().Events) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "cronactor_projection_position", Help: "Log position (commit) the cron_tasks view has folded up to."},
			func() float64 { return float64(v.Lag().Checkpoint.Commit) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "cronactor_log_head_position", Help: "Log position (commit) of the last event appended, as far as the view knows."},
			func() float64 { return float64(v.Lag().Head.Commit) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "cronactor_view_ready",
			Help: "1 when the cron_tasks view answers queries, 0 while it is rebuilding or unavailable."},
			func() float64 {
				if st := v.Status().State; st == crontasks.StateReady || st == crontasks.StateStalled {
					return 1
				}
				return 0
			}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "cronactor_view_rebuild_progress",
			Help: "Part of the log the cron_tasks view has folded, 0 to 1 (1 when ready)."},
			func() float64 { return v.Status().Progress }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "cronactor_view_rebuilds_total",
			Help: "Fresh cron_tasks views started since the daemon started (each after a damaged one was moved aside)."},
			func() float64 { return float64(v.Status().Rebuilds) }),
	)
}

// count adds a run decision to cronactor_run_reasons_total. counted is
// false for an event type it has no rule for (the table test over every
// registered event type asks it).
func (m *metrics) count(e events.Event) (counted bool) {
	switch e := e.(type) {
	case events.RunEnqueued:
		reason := "schedule"
		switch {
		case e.RetryOf != nil || e.Attempt > 1:
			reason = "retry"
		case e.Trigger == events.TriggerManual:
			reason = "manual"
		case e.Reason == events.EnqueueBacklog:
			reason = "backlog"
		}
		m.reasons.WithLabelValues("enqueued", reason).Inc()
	case events.RunFailed:
		reason := "error"
		switch {
		case e.RetryAt != nil:
			reason = "retry"
		case e.Fatal:
			reason = "not_retryable"
		case e.NoRetry != "":
			reason = "no_retry"
		}
		m.reasons.WithLabelValues("failed", reason).Inc()
	case events.RunDropped:
		m.reasons.WithLabelValues("dropped", e.Reason).Inc()
	case events.RunForcedEnd:
		m.reasons.WithLabelValues("forced_end", e.Reason).Inc()
	case events.SlotsMissed:
		m.reasons.WithLabelValues("skipped", "missed").Add(float64(max(e.Missed, 1)))
	case events.TaskCreated, events.TaskUpdated, events.TaskPaused, events.TaskResumed, events.TaskDeleted,
		events.TaskFinished, events.TaskCompacted, events.RunStarted, events.RunCompleted, events.CheckpointSaved:
		// Not a run decision with a reason.
	default:
		return false
	}
	return true
}

// registerQueues adds the per-queue gauges, read from the scheduler at
// each scrape.
func (m *metrics) registerQueues(s *scheduler.Scheduler) {
	m.reg.MustRegister(&queueCollector{s: s,
		waiting: prometheus.NewDesc("cronactor_queue_waiting", "Runs of the queue waiting for one of its workers.", []string{"queue"}, nil),
		busy:    prometheus.NewDesc("cronactor_queue_busy_workers", "Workers of the queue executing a run.", []string{"queue"}, nil),
		limit: prometheus.NewDesc("cronactor_queue_limit",
			"Runs of the queue that may execute at once (a queue the daemon was not started with has the default queue's).", []string{"queue"}, nil),
	})
}

// queueCollector is the per-queue gauges, one series per queue (label
// queue): a queue only a task names appears once its first run arrived.
type queueCollector struct {
	s                    *scheduler.Scheduler
	waiting, busy, limit *prometheus.Desc
}

func (c *queueCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.waiting
	ch <- c.busy
	ch <- c.limit
}

func (c *queueCollector) Collect(ch chan<- prometheus.Metric) {
	for _, q := range c.s.Stats().Queues {
		ch <- prometheus.MustNewConstMetric(c.waiting, prometheus.GaugeValue, float64(q.Depth), q.Name)
		ch <- prometheus.MustNewConstMetric(c.busy, prometheus.GaugeValue, float64(q.Busy), q.Name)
		ch <- prometheus.MustNewConstMetric(c.limit, prometheus.GaugeValue, float64(q.Limit), q.Name)
	}
}

func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// follow counts run decisions from the log as they are appended.
func (m *metrics) follow(ctx context.Context, st events.Store, logger *slog.Logger) {
	from := events.Start
	if h, ok := st.(events.HeadReader); ok {
		from = h.Head()
	}
	due := map[uuid.UUID]float64{} // run → due time (unix seconds)
	err := st.Subscribe(ctx, from, func(r events.Recorded) error {
		e, err := events.Decode(r)
		if err != nil {
			return nil // the view reports undecodable events
		}
		m.count(e)
		switch e := e.(type) {
		case events.RunEnqueued:
			m.runs.WithLabelValues("enqueued").Inc()
			due[e.RunID] = float64(e.Due.UnixNano()) / 1e9
		case events.RunStarted:
			m.runs.WithLabelValues("started").Inc()
			if d, ok := due[e.RunID]; ok {
				m.lag.Observe(float64(r.At.UnixNano())/1e9 - d)
				delete(due, e.RunID)
			}
		case events.RunCompleted:
			m.runs.WithLabelValues("completed").Inc()
		case events.RunFailed:
			m.runs.WithLabelValues("failed").Inc()
		case events.RunDropped:
			m.runs.WithLabelValues("dropped").Inc()
			delete(due, e.RunID)
		case events.RunForcedEnd:
			m.runs.WithLabelValues("forced_end").Inc()
		}
		return nil
	})
	if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, events.ErrClosed) {
		logger.Error("metrics follower stopped", "err", err)
	}
}
