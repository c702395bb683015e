// Package postgres is an events.Store on PostgreSQL (through jackc/pgx v5):
// the event log in a database most Go teams already run, shared by every
// process that opens it.
//
// Schema: Open creates and migrates its tables (cronactor_events, the
// global log with a position and a unique (stream, version), whose index
// also gives each stream's version, its last event's;
// cronactor_head, the one-row counter of the global log; cronactor_snapshot,
// the snapshot table; cronactor_schema, the applied migrations). Migrations
// run in one transaction under a transaction-level advisory lock, so several
// processes opening the same database at once apply each exactly once.
//
// One order no reader can skip: a position is taken from the head row
// (UPDATE … RETURNING) in the appending transaction, as its last step before
// commit. The row lock serialises the transactions that append: the next one
// gets its positions only after the one before it committed and became
// visible, so positions become visible in order, without gaps. A bigserial
// would not do: with two transactions in flight a reader can see position 11
// committed before 10, go past it, and never see 10.
// docs/decisions/0021-postgres-store.md gives the reasons.
//
// Group commit: a single committer goroutine per Store takes the appends
// waiting at that moment (up to Options.MaxBatchEvents events) and decides
// them in one transaction: it takes the streams' versions from what it
// remembers of its own writes (versions.go) or reads them, checks each
// append's expected version in the order the appends came, and writes the
// ones that pass, with the head row taken first and the remembered versions
// checked under it. A conflict fails only its own append. Every appender
// inserts only while it holds the head row, so a version another process
// moved meanwhile makes the check or the unique (stream, version) refuse
// the group, which is then decided again with the head row taken before
// the read (commitTx). Appends are
// answered after the commit returns, so an acknowledged append is durable
// (synchronous_commit as the server has it: on by default). AppendAsync
// (events.AsyncAppender) queues an append the same way and calls the
// caller's callback instead of waking a goroutine.
//
// Followers: Subscribe reads the global log in pages and then waits for new
// events, woken by the store's own commits, by LISTEN/NOTIFY (appends of
// other processes), and by a poll (Options.PollInterval) should a
// notification be lost. Head (events.HeadReader) is the highest position
// the store knows of, without a round trip.
//
// Faults: while the server cannot be reached, appends and reads fail with
// an error matching ErrUnavailable (which matches events.ErrUnreachable),
// and the driver's error. What is retried behind the caller's back: a
// read, or a group commit, that meets a pooled connection found broken
// (killed, or dead since a restart) goes again on another connection; a
// group whose connection broke after its writes were sent goes again too
// when every event has an ID, since retried then recognises what landed;
// if the server is gone and cannot say, that group's appends are held (at
// most OpTimeout) and answered with their real outcome once it answers
// (resolve.go); Subscribe waits and reads again for as long as its context
// lasts. WriteStatus (events.WriteStatusReader, health.go) says, without a
// round trip, whether the server answers: a prober with a connection of
// its own decides it, called in by any broken connection the store meets
// and repeating every 500 ms while the server is away, so one killed
// connection is not taken for an outage and an idle store still sees the
// server leave and return.
//
// Retention: TruncateBefore (events.Truncater, truncate.go) deletes a
// stream's oldest events in small transactions, oldest first; positions are
// not renumbered and a stream's last event stays, so readers see no gap and
// no false end.
//
// Concurrency: a Store is safe for concurrent use.
package postgres
