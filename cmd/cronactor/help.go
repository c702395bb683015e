package main

// helpText is what `--help` prints for one command path besides its flags.
type helpText struct {
	// summary is the one line shown in its parent's command list.
	summary string
	usage   string
	about   string
	// example is a worked example, one command per line.
	example string
}

// helps holds the help of every command and subcommand, by path. A test
// checks that every registered command has an entry with an example.
var helps = map[string]helpText{
	"serve": {
		usage: "cronactor serve [--config FILE] [--data DIR] [--listen ADDR] [--tick DUR] [--store embedded|esdb] [--esdb URL] [FLAGS]",
		about: `Run the scheduler daemon: the event store, the task actors, the workers and the HTTP API.
Every flag can also come from the environment (CRONACTOR_<FLAG>, e.g. CRONACTOR_TICK) or from a
YAML file given with --config (keys as the flags, e.g. "tick: 30s"). Precedence: flag, then
environment, then file, then default. --print-config shows the result and exits.
The listen address is bound first: a busy port fails before anything is opened or recorded.
Each --queue NAME=N gives a named queue its own N workers; --workers is the default queue's (docs/queues.md).
SIGINT/SIGTERM stop gracefully (running runs may finish for --drain-timeout); a second signal exits at once.
Tracing (OpenTelemetry over OTLP) is off unless the standard OTEL_* variables ask for it, e.g.
OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318; docs/operations.md lists the ones honoured.`,
		example: `cronactor serve --data /var/lib/cronactor --listen 127.0.0.1:7070 --tick 1s
cronactor serve --config /etc/cronactor/config.yaml --print-config
cronactor serve --workers 4 --queue reports=2 --queue mail=8
OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318 cronactor serve`,
	},

	"task": {
		usage: "cronactor task COMMAND [ARGS] [FLAGS]",
		about: "Create, list, change, trigger, pause, resume and delete tasks through the daemon's HTTP API.",
		example: `cronactor task create --name inbox --owner channel/pop3/42 --kind noop --interval 1m
cronactor task list --owner channel/pop3/42`,
	},
	"task create": {
		summary: "create a task (or get the existing one with the same owner and name)",
		usage:   "cronactor task create --name NAME --owner OWNER --kind KIND (--interval DUR | --cron EXPR... | --at TIMES) [FLAGS]",
		about: `Create a task. Its schedule is exactly one of --interval, --cron (repeat it for a list of
expressions whose slots are united; read in --timezone, default UTC, with the --dst-gap and
--dst-overlap policies, less the dates and expressions of --exclude) and --at (comma-separated
RFC 3339 times; one time is a one-time task).
--start-at, --end-at, --max-runs and --jitter bound any schedule (docs/schedules.md). The run
policy (docs/policies.md): --queue names the queue its runs wait in; the --retry-* flags retry a
failed run after a backoff (initial × multiplier^(attempt-1), at most the max), up to
--retry-max-attempts tries; --missed-run-policy skip runs nothing for a slot found later than
--missed-after; --start-deadline drops a run that would start too late; --heartbeat-timeout ends a
run that stopped heartbeating. --history-retention keeps the task's events for that long (default:
the server's --history-retention, none unless set). Creating a task whose owner and name exist returns the existing task
when the spec is the same, and fails with 409 when it differs. Prints the task's row.`,
		example: `cronactor task create --name inbox --owner channel/pop3/42 --kind http --interval 1m \
  --payload '{"url":"https://example.com/poll"}' --timebox 30s \
  --retry-max-attempts 3 --retry-initial-backoff 1s --retry-max-backoff 1m --retry-multiplier 2
cronactor task create --name report --owner team/finance --kind noop --queue reports \
  --cron '0 9 * * MON-FRI' --cron '0 12 * * SAT' --timezone Europe/Berlin --max-runs 100 \
  --missed-run-policy skip --start-deadline 10m`,
	},
	"task list": {
		summary: "list tasks from the cron_tasks view (deleted ones with --all)",
		usage:   "cronactor task list [--owner OWNER] [--status STATUS] [--all] [-o table|wide|json] [FLAGS]",
		about: `List tasks, one row each: ID, NAME, OWNER, SCHEDULE, ZONE, STATUS, NEXT RUN, LAST RUN and AGE;
-o wide adds the kind, timing and run counts; -o json prints the server's page as it came.
Deleted tasks are left out unless --all or --status deleted. Control characters in names and
owners are shown escaped (\n, \x1b), so a name cannot break the table or the terminal.`,
		example: `cronactor task list --owner channel/pop3/42 -o wide
cronactor task list --all -o json`,
	},
	"task get": {
		summary: "show one task",
		usage:   "cronactor task get (TASK_ID | --owner OWNER --name NAME) [-o table|wide|json]",
		about:   "Show one task's row of the cron_tasks view.",
		example: "cronactor task get 0f6c1d2e-9a3b-4c5d-8e7f-1021324354aa -o wide",
	},
	"task update": {
		summary: "change a task's payload, schedule, timing, priority, run policy or next run",
		usage:   "cronactor task update (TASK_ID | --owner OWNER --name NAME) [--payload JSON] [--interval DUR | --cron EXPR... | --at TIMES] [--timezone TZ] [--tolerance DUR] [--timebox DUR] [--priority N] [--next-run TIME] [--queue NAME] [--retry-* …] [FLAGS]",
		about: `Change some of a task's fields; fields not given stay as they are. A new schedule (or
window) recomputes the next run from it; --start-at '' or --end-at '' clears one. The retry
policy is replaced whole: the --retry-* parts not given take their defaults (initial backoff 1s,
max backoff 1m, multiplier 2); --retry-max-attempts 1 turns retries off. --queue '', --missed-run-policy '', and 0s for --missed-after, --start-deadline or
--heartbeat-timeout restore the default; --history-retention 0s restores the server's.`,
		example: `cronactor task update 0f6c1d2e-9a3b-4c5d-8e7f-1021324354aa --interval 5m --priority 2
cronactor task update 0f6c1d2e-9a3b-4c5d-8e7f-1021324354aa --retry-max-attempts 5 --retry-initial-backoff 2s \
  --retry-max-backoff 1m --retry-multiplier 2 --heartbeat-timeout 30s`,
	},
	"task trigger": {
		summary: "run a task now, outside its schedule",
		usage:   "cronactor task trigger (TASK_ID | --owner OWNER --name NAME) [-o json] [FLAGS]",
		about: `Enqueue one run of the task now (R15) and print its run ID. The run moves neither nextRun nor
lastRun and skips the spacing check, but still waits while another run of the task is running
(it is dropped with reason overlap if one runs when it asks to start). A paused, finished or
deleted task refuses, and the command exits 1 with the reason.`,
		example: "cronactor task trigger 0f6c1d2e-9a3b-4c5d-8e7f-1021324354aa",
	},
	"task upcoming": {
		summary: "show a task's next slots",
		usage:   "cronactor task upcoming (TASK_ID | --owner OWNER --name NAME) [--count N] [-o json]",
		about: `Print the task's next N slots (default 10, at most 1000), one per line, RFC 3339 in the
task's zone offset, capped by its max_runs and end_at. A task with none gets one line saying why:
a paused, deleted or finished task has no slots (as on the dashboard; -o json is the server's
answer, which lists a paused task's slots once resumed), nor one whose schedule ended.`,
		example: "cronactor task upcoming 0f6c1d2e-9a3b-4c5d-8e7f-1021324354aa --count 3",
	},
	"task pause": {
		summary: "pause a task: it enqueues nothing until resumed",
		usage:   "cronactor task pause (TASK_ID | --owner OWNER --name NAME)",
		about:   "Pause a task. Runs of it still waiting are dropped when a worker asks to start them.",
		example: "cronactor task pause 0f6c1d2e-9a3b-4c5d-8e7f-1021324354aa",
	},
	"task resume": {
		summary: "resume a paused task",
		usage:   "cronactor task resume (TASK_ID | --owner OWNER --name NAME)",
		about:   "Resume a paused task.",
		example: "cronactor task resume 0f6c1d2e-9a3b-4c5d-8e7f-1021324354aa",
	},
	"task delete": {
		summary: "delete a task (its history stays in the log)",
		usage:   "cronactor task delete (TASK_ID | --owner OWNER --name NAME)",
		about:   "Delete a task. It enqueues nothing more; its events stay for audit (cronactor history).",
		example: "cronactor task delete 0f6c1d2e-9a3b-4c5d-8e7f-1021324354aa",
	},

	"owner": {
		usage:   "cronactor owner delete OWNER [FLAGS]",
		about:   "Act on every task of an owner.",
		example: "cronactor owner delete channel/pop3/42",
	},
	"owner delete": {
		summary: "delete every task of an owner",
		usage:   "cronactor owner delete OWNER [FLAGS]",
		about:   "Delete every task of an owner and print how many were deleted.",
		example: "cronactor owner delete channel/pop3/42",
	},

	"history": {
		usage: "cronactor history (TASK_ID | --owner OWNER --name NAME) [--format table|json] [--limit N] [--before VERSION] [FLAGS]",
		about: `Print a task's audit trail from its event log: the table of decisions with nextRun and lastRun
after each (--format table), or one JSON object per event (--format json). Retries show their
attempt and the run they retry, a failure the backoff chosen and when its retry is due (or why
no retry is made), a manual trigger's run is marked (trigger "manual").
It shows the latest --limit events (1000 by default); when older ones exist, it says on stderr
how to see them: --before VERSION shows the page before that stream version.`,
		example: "cronactor history 0f6c1d2e-9a3b-4c5d-8e7f-1021324354aa --format json --limit 50",
	},
	"explain": {
		usage: "cronactor explain (TASK_ID | --owner OWNER --name NAME) --at TIME [--window DUR] [FLAGS]",
		about: `Answer "why did (or didn't) this task run at TIME?" from its event log: the decisions around
TIME and the rule that applied. Only the events around TIME are read, however long the task's log.`,
		example: "cronactor explain 0f6c1d2e-9a3b-4c5d-8e7f-1021324354aa --at 2026-11-22T02:03:00Z --window 5m",
	},
	"simulate": {
		usage: "cronactor simulate SCENARIO [--format table|json] [--hide-idle]",
		about: `Run a scenario (YAML or JSON) on a virtual clock with the daemon's own actors, decisions and store
code, and print what happened: the audit table, or one JSON object per line. Nothing waits for
real time. A scenario of several tasks gets a Task column in the table; --hide-idle leaves out
the ticks that found nothing to do. The scenario format is in docs/simulation.md.`,
		example: "cronactor simulate actors/simulation/testdata/design_scenario.yaml --format json",
	},

	"projections": {
		usage:   "cronactor projections COMMAND [FLAGS]",
		about:   "Look after the cron_tasks view: the read model the API and `task list` query.",
		example: "cronactor projections status --data ./cronactor-data",
	},
	"projections rebuild": {
		summary: "rebuild the cron_tasks view from the event log (daemon stopped)",
		usage:   "cronactor projections rebuild [--data DIR] [--batch N]",
		about: `Rebuild the cron_tasks view from position 0 of the event log. The daemon must be stopped: the
data directory is opened for writing. A progress line is shown on a terminal.`,
		example: "cronactor projections rebuild --data /var/lib/cronactor",
	},
	"projections status": {
		summary: "how far the view trails the log (works while the daemon runs)",
		usage:   "cronactor projections status [--data DIR] [--server URL]",
		about: `Show the view's position, the log's head and how many events the view has not folded yet.
With the daemon stopped it reads the data directory; while the daemon holds the directory (or
with --server given) it asks the running daemon over HTTP (its /metrics).`,
		example: `cronactor projections status --data ./cronactor-data
cronactor projections status --server http://127.0.0.1:7070`,
	},

	"bench": {
		usage: "cronactor bench COMMAND [FLAGS]",
		about: `Measure throughput and latency next to a baseline measured in the same run. Figures go to
stdout (one JSON object per line with --json); progress notes to stderr on a terminal.`,
		example: "cronactor bench store --duration 5s --json",
	},
	"bench store": {
		summary: "append throughput of the embedded store (or --store postgres) next to the disk's raw limit",
		usage:   "cronactor bench store [--writers N] [--duration DUR] [--dir DIR] [--json] [--store embedded|postgres] [--postgres URL]",
		about:   "Append 200-byte events with 1 then 64 writers (or --writers), next to a raw group-committed file.",
		example: "cronactor bench store --writers 64 --duration 5s",
	},
	"bench projections": {
		summary: "how far the live cron_tasks view trails the log under full append load",
		usage:   "cronactor bench projections [--writers N] [--duration DUR] [--rounds N] [--memory-view] [--dir DIR] [--json]",
		about:   "Append task events at full speed without, then with, the live view following; time ack → visible.",
		example: "cronactor bench projections --duration 5s --rounds 3",
	},
	"bench scheduler": {
		summary: "N tasks all due at once: runs/s end to end next to the store's raw append rate (--store postgres: and River's)",
		usage:   "cronactor bench scheduler [--tasks N] [--workers N] [--tick DUR] [--peers PATH|none] [--dir DIR] [--json] [--cpuprofile FILE] [--memprofile FILE] [--trace FILE] [--store embedded|postgres] [--postgres URL] [--river-workers N]",
		about: `Create N noop tasks all due at one instant on the embedded store and time every run enqueued,
started and completed (three durable decisions each): runs_per_s, events_per_s, lag_p50_ms and
lag_p99_ms (due → started). In the same run: raw_events_per_s, the store's raw append limit with as
many writers as workers (ratio = events_per_s / raw_events_per_s); rss_bytes_per_task, the process's
resident memory with every task created and idle minus the same process before, per task, both read
after a GC that returns the freed heap to the OS (Linux, /proc/self/statm; 0 and rss_measured false
elsewhere); restart_s, this program run again as a fresh process on the same data directory, timed
from its exec until the first tick after its start has durably decided a run of a probe task left
due (so it includes the runtime's start, the store's open, the recovery of every task and one tick);
then the peers (robfig/cron, gocron: in memory, not durable), run by the separate program
cronactor-benchpeers that make builds next to bin/cronactor. The last line of stdout is one JSON
object with --json; its peers are keyed by name (peers.gocron.runs_per_s).
With --store postgres --postgres URL (default $CRONACTOR_POSTGRES) the tasks and the raw appends go to
the Postgres store, in a schema of the run's own dropped afterwards, the restart is not measured, and
the peers add River on the same database: N jobs scheduled at one instant, timed until River has
recorded the last completion, with --workers workers (peers.river.runs_per_s) and once more with
--river-workers (default 1000; 0: not). See docs/benchmarks.md.`,
		example: "cronactor bench scheduler --tasks 100000 --json",
	},
	"bench lag": {
		summary: "p99 lag beyond the tick with due times arriving at a fraction of the measured peak",
		usage:   "cronactor bench lag [--tasks N] [--load F | --rate R] [--workers N] [--tick DUR] [--peers PATH|none] [--dir DIR] [--json]",
		about: `Two phases in one run. Peak: N noop tasks all due at one instant, as bench scheduler; peak_runs_per_s
is N / (last run completed − due). Paced: on a fresh data directory and scheduler, N interval tasks
(1h) whose first due times are spaced evenly at rate_per_s = load × peak, each run once. For every run,
the tick that enqueued it is read from its RunEnqueued event (an interval task's next_run is that
tick's instant + the interval) and lag = RunStarted's time − that tick: due → started minus the
tick's quantization (the wait from due to the next tick, tick_wait_p99_ms, at most one tick).
lag_p50_ms, lag_p99_ms and lag_max_ms are over all N runs; due_lag_p99_ms is due → started with the
tick. tick_p99_median_ms is the median over the ticks of each tick's own p99 lag, ticks_over_50ms
the ticks whose p99 was above 50 ms: a lag_p99_ms far above the median comes from a few slow ticks
(stalls), not from every tick's burst. The raw append limit and the peers are measured in the same
run, as in bench scheduler. --rate R skips the peak phase and paces the due times at R per second
(peak_runs_per_s 0): the same rate for every build when comparing builds on a busy machine, where
the measured peak, and so the paced rate, moves from run to run. The tick is 25ms unless --tick says
otherwise (bench scheduler's is 100ms): a tick hands the workers every run due since the last one at
once, and at half load that burst takes about half a tick to start, so half a tick is the floor of the
lag beyond the tick.`,
		example: "cronactor bench lag --tasks 100000 --load 0.5 --json",
	},
	"bench history": {
		summary: "one old task of N events: cold load, a history page and explain, next to a young task's",
		usage:   "cronactor bench history [--events N] [--baseline N] [--page N] [--dir DIR] [--json]",
		about: `Write one task's stream of N events straight into a fresh embedded store (a 1 s task's runs:
enqueued, started, completed; every 1000th failed), start a scheduler on it and stop it (its
recovery and snapshot), then start a fresh one and time: cold_load_ms, a call about the resting
task (Scheduler.Task), once; history_page_ms, GET /v1/tasks/{id}/history?limit=PAGE, the latest
page, and explain_ms, GET /v1/tasks/{id}/explain at a time in the middle of the stream, each the
median of 5 calls (the first beside it: *_first_ms). The same run
measures a task of --baseline events first (baseline_* and the ratios). DESIGN.md §8.3's bar: each
at most 50 ms at 1,000,000 events, within 3x of a task of 1,000.`,
		example: "cronactor bench history --events 1000000 --json",
	},
	"bench report": {
		summary: "one table of the --json outputs of bench store, projections, scheduler (embedded and Postgres), lag and history",
		usage:   "cronactor bench report [--store FILE] [--projections FILE] [--scheduler FILE] [--scheduler-postgres FILE] [--lag FILE] [--history FILE]",
		about: `Read the --json output of each bench named (a file of JSON lines; the last line counts, every
line for bench store) and print one table: each figure beside its baseline of the same run or the bar
of the design, the peers, and the load average each measurement started at. make bench ends with it.`,
		example: "cronactor bench report --scheduler scheduler.json --lag lag.json",
	},
	"bench backlog": {
		summary: "too few workers for N tasks: queue depth, log growth, restart and drain times (R18)",
		usage:   "cronactor bench backlog [--tasks N] [--workers N] [--tick DUR] [--interval DUR] [--work DUR] [--duration DUR] [--dir DIR] [--json]",
		about:   "Overload a scheduler on the real clock (N tasks due every interval, too few workers), then reopen its data and time the restart and the drain of what waits.",
		example: "cronactor bench backlog --tasks 2000 --workers 4 --duration 60s --json",
	},

	restartChildCommand: {
		summary: "internal: the fresh process of bench scheduler's restart measurement",
		usage:   "cronactor " + restartChildCommand + " --dir DIR --probe TASK-ID [--tick DUR] [--workers N]",
		about: `Internal to bench scheduler, which runs its own executable with this command to time a restart:
reopen DIR, start a scheduler, print one JSON line the moment the first tick has durably decided a run
of the probe task, then a line with the resident memory, then stop.`,
		example: "cronactor " + restartChildCommand + " --dir /tmp/cronactor-bench-1/store --probe 0b3c… --tick 100ms",
	},

	"schedule": {
		usage:   "cronactor schedule preview --cron EXPR [--timezone TZ] [FLAGS]",
		about:   "Offline schedule tools: nothing here needs a daemon.",
		example: "cronactor schedule preview --cron '30 2 * * *' --timezone America/New_York --from 2026-03-07T00:00:00Z --count 3",
	},
	"schedule preview": {
		summary: "the next slots of a cron schedule, offline",
		usage: `cronactor schedule preview --cron EXPR [--timezone TZ] [--dst-gap shift|skip]
                                 [--dst-overlap first|last|both] [--exclude DATE|EXPR]... [--from RFC3339]
                                 [--count N] [-o plain|wide]`,
		about: `Print the next N slots of a cron schedule strictly after --from, one per line, in RFC 3339
with the zone's offset. Needs no daemon. Besides values, ranges, lists and steps, the day fields take
L (last day), L-n (n days before it), nW (the weekday nearest day n), LW (the last weekday) in
day-of-month, and d#n (the n-th weekday d) and dL (the last weekday d) in day-of-week; WED-SUN is
Wednesday to Sunday. --exclude (repeatable) takes a date (2026-12-25, that day in the zone) or a cron
expression out of the schedule. -o wide adds after each instant what a DST policy did to it ("shifted from
02:30 (does not exist)", "first of two 01:30", "second of two 01:30"). A bad expression, zone or
value: nothing on stdout, the reason on stderr, exit status 1. See docs/schedules.md for the syntax
and the DST policies.`,
		example: `cronactor schedule preview --cron '30 2 * * *' --timezone America/New_York --from 2026-03-07T00:00:00Z --count 3
cronactor schedule preview --cron '0 9 LW * *' --cron '0 9 * * FRI#2' --timezone Europe/Berlin --count 4
cronactor schedule preview --cron '30 1,2 * * *' --timezone America/New_York --dst-overlap both \
  --from 2026-11-01T00:00:00-04:00 --count 3 -o wide
cronactor schedule preview --cron '0 9 * * MON-FRI' --exclude 2026-12-25 --exclude '0 9 * * FRI#2' --count 5`,
	},

	"version": {
		usage:   "cronactor version [--json]",
		about:   "Print the version, the commit it was built from and the Go version (from the binary's build info).",
		example: "cronactor version",
	},
	"completion": {
		usage: "cronactor completion bash|zsh|fish",
		about: `Print a shell completion script for commands, subcommands and flags.`,
		example: `cronactor completion bash > /etc/bash_completion.d/cronactor   # bash; or: source <(cronactor completion bash)
cronactor completion zsh > "${fpath[1]}/_cronactor"              # zsh
cronactor completion fish > ~/.config/fish/completions/cronactor.fish`,
	},
	"completion bash": {
		summary: "bash completion script",
		usage:   "cronactor completion bash",
		about:   "Print the bash completion script (needs bash 4 or later).",
		example: "cronactor completion bash > /etc/bash_completion.d/cronactor",
	},
	"completion zsh": {
		summary: "zsh completion script",
		usage:   "cronactor completion zsh",
		about:   "Print the zsh completion script; put it in a directory of $fpath as _cronactor.",
		example: `cronactor completion zsh > "${fpath[1]}/_cronactor"`,
	},
	"completion fish": {
		summary: "fish completion script",
		usage:   "cronactor completion fish",
		about:   "Print the fish completion script.",
		example: "cronactor completion fish > ~/.config/fish/completions/cronactor.fish",
	},
}
