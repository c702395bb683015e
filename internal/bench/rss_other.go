//go:build !linux

package bench

// residentBytes is not measured here: getrusage only gives the peak
// resident set, not the current one, so the RSS figures read 0.
func residentBytes() (int64, bool) { return 0, false }
