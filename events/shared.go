package events

// SharedLog is implemented by stores whose global log other processes may
// append to while a scheduler runs on it (PostgreSQL: an embedder's own
// transaction, other nodes). A scheduler on such a store follows the log
// to learn of the tasks others create, change or delete (see
// scheduler.Config.Follow). The embedded store is not one: its directory
// lock keeps it to one writer process. Callers test for it with a type
// assertion.
type SharedLog interface {
	// SharedLog reports whether others may append to the log.
	SharedLog() bool
}
