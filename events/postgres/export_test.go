package postgres

// SetTruncateBatch makes TruncateBefore delete at most n events per
// transaction until the returned function restores the default, so a test
// can make a removal take many batches.
func SetTruncateBatch(n int) (restore func()) {
	old := truncateBatch
	truncateBatch = n
	return func() { truncateBatch = old }
}
