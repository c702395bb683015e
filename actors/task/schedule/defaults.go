package schedule

import (
	"encoding/binary"
	"hash/fnv"
	"time"
)

// DefaultToleranceCap is R11's default tolerance for spacings of 50 s and more.
const DefaultToleranceCap = 5 * time.Second

// DefaultTolerance is R11's default tolerance for a run whose slot is
// spacing after the slot before it: 5 s, or spacing/10 when that is smaller.
func DefaultTolerance(spacing time.Duration) time.Duration {
	if spacing > 0 && spacing/10 < DefaultToleranceCap {
		return spacing / 10
	}
	return DefaultToleranceCap
}

// OnceTimebox is the default timebox of a schedule with a single slot.
const OnceTimebox = time.Hour

// timeboxSlots is how many upcoming slots DefaultTimebox looks at.
const timeboxSlots = 1000

// DefaultTimebox is R11's default timebox: half the shortest spacing among
// the next 1,000 slots after from (respecting max_runs), or OnceTimebox when
// fewer than two slots are left.
func (s *Schedule) DefaultTimebox(from time.Time) time.Duration {
	n := timeboxSlots
	if s.maxRuns > 0 && s.maxRuns < n {
		n = s.maxRuns
	}
	var prev time.Time
	shortest := time.Duration(0)
	for t := range s.Slots(from) {
		if n == 0 {
			break
		}
		n--
		if !prev.IsZero() {
			if d := t.Sub(prev); shortest == 0 || d < shortest {
				shortest = d
			}
		}
		prev = t
	}
	if shortest == 0 {
		return OnceTimebox
	}
	return shortest / 2
}

// Jitter is R17's offset of a slot: in [0, jitter), derived from the task and
// the slot alone (a hash, no randomness), so every replay and every restart
// moves the slot by the same amount. Whole milliseconds when jitter is at
// least one.
func Jitter(taskID [16]byte, slot time.Time, jitter time.Duration) time.Duration {
	if jitter <= 0 {
		return 0
	}
	h := fnv.New64a()
	h.Write(taskID[:])
	var b [12]byte
	binary.BigEndian.PutUint64(b[:8], uint64(slot.Unix()))
	binary.BigEndian.PutUint32(b[8:], uint32(slot.Nanosecond()))
	h.Write(b[:])
	x := mix(h.Sum64())
	if jitter >= time.Millisecond {
		return time.Duration(x%uint64(jitter/time.Millisecond)) * time.Millisecond
	}
	return time.Duration(x % uint64(jitter))
}

// mix is SplitMix64's finalizer: FNV's low bits alone spread poorly.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}
