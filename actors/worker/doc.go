// Package worker executes runs: the run queue, the worker actors that take
// runs off it, and the Handler interface that embedders implement per task
// kind (the kinds the daemon ships are in package kinds), with what helps
// write them: Typed, a handler over a payload decoded into a Go type (an
// undecodable payload is a permanent failure, and refused at create), and
// Middleware, a wrapper the scheduler puts around every handler
// (scheduler.Config.Middleware), among them Tracing, the handler's span
// under the run span the pool keeps (PoolConfig.TracerProvider).
//
// It owns what happens between a run being enqueued and its outcome being
// reported; it decides nothing about a task. The queue actor (Queue) takes
// the runs task actors enqueue (Enqueued, this package's message) into the
// named queue the run's task names (docs/queues.md). Each named queue has
// its own workers, as many as its limit (PoolConfig.Workers for "default",
// PoolConfig.Queues for the others; a queue no configuration names gets the
// default's limit), so one queue's runs never take another's slots; within
// a queue runs wait in priority order, then enqueue order; several runs of
// one task may wait at once (R2). A Worker takes one run at a time, asks
// the task actor (PoolConfig.Ask) for permission to start it (R3: the task
// actor alone decides, and may drop the run), runs the handler with a
// context that ends at the run's deadline (R4), lets the handler save
// checkpoints through the task actor (R5) and heartbeat (R16: Run.Heartbeat,
// sent with PoolConfig.Tell without waiting, at most one per HeartbeatGap),
// and reports the outcome (completed, failed, or forced to end when the
// deadline passed) back to the task actor, which records it. A failure is
// fatal — not retried (R13) — when the handler's error is marked Permanent;
// a handler's panic is reported as a retryable failure.
//
// A forced end the task actor records itself — its heartbeat watch (R16),
// or its deadline timer before the worker noticed the deadline — reaches
// the worker that asked to start the run as a StopRun (the task actor
// remembers, per running run, who asked; internal/counted carries it). The
// worker cancels the handler's context at once with a *ForcedEndError as
// its cause ("worker: forced to end: heartbeat_timeout"; errors.Is finds
// ErrForcedEnd), so a hung handler stops before its deadline instead of
// running on beside the run's retry. The worker reports nothing more for
// that run; an outcome that crossed the StopRun on its way is refused with
// rules.ErrUnknownRun, which is not logged: the run has one outcome. The
// worker's slot stays taken until the handler has returned.
//
// Concurrency: the queue and each worker are actors and process one message
// at a time. A handler runs on a goroutine of its own, so a worker is busy
// until that goroutine has reported the outcome. That goroutine is counted
// as work in flight on the clock (Clock.Begin/End; messages are counted by
// internal/counted), so a virtual clock does not move while a handler
// works — nor between a StopRun and the stopped handler's return, so a
// stopped handler must return without waiting on the clock again. Handlers must be safe for concurrent runs, as several workers may
// run runs of the same kind at once. The handler map is read-only once the
// queue has started; Stats are updated atomically and may be read from any
// goroutine.
package worker
