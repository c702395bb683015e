// Package chaos is the project's chaos harness. It drives the real
// cronactor binary the way a hostile world does and checks the scheduler's
// promises (DESIGN §2 R1–R9, §5, §6) from what the daemon wrote:
//
//   - Kill: a daemon under load (noop and http tasks, interval 1–2 s, tick
//     100–200 ms, an http sink that sleeps, fails and stalls now and then,
//     tasks created, paused, resumed and deleted while it runs) is killed
//     with SIGKILL N times at random points, some of them during start-up,
//     and restarted on the same data directory. At the end every task is
//     paused, the daemon is left to settle and stopped with SIGTERM, and the
//     whole log, read from a copy of the data directory, goes through Check.
//   - Faults: repeatable scripts for a WAL damaged in the middle, a missing
//     events/CURRENT, a full disk (a small tmpfs, skipped where mount is not
//     permitted), a graceful stop and a double signal.
//   - Fuzz: hostile requests on raw connections against a daemon whose clock
//     does not tick, so that any change of the task list comes from a
//     request: no 5xx, no hang, nothing changed by a refused request.
//
// Check is pure: it takes the log, the calls the load made and what the sink
// received, and returns counts and violations by invariant; its table tests
// break each invariant on purpose. Only the harness's restart times are
// measured against the wall clock, and they are reported, never asserted.
//
// cmd/cronactor-chaos runs the three parts and prints their tables (make
// chaos); TestChaosShort runs a small version of them in make test.
// docs/reliability.md says what is checked and what was measured.
//
// Concurrency: Kill, Faults and Fuzz each own their scratch directory and
// processes; run them one at a time per directory.
package chaos
