package postgres

import "github.com/cronactor/cronactor/events"

var _ events.SharedLog = (*Store)(nil)

// SharedLog implements events.SharedLog: every process that opens the
// database appends to the same log, and so does AppendTx in any
// transaction on it.
func (s *Store) SharedLog() bool { return true }
