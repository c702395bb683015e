package schedule

import (
	"fmt"
	"math"
	"sync"
	"time"
)

// Horizon is how far ahead of its argument Next looks before it answers
// that no slot is left. It is longer than the longest wait a valid
// expression can have: which days of a month match depends only on the
// month, its length and the weekday of its 1st, and the rarest such month
// is a leap February starting on a given weekday (MON#5 in February:
// 29 February on a Monday, 2072 then 2112 — 40 years across 2100).
const Horizon = 50 * 366 * 24 * time.Hour

// The instants a schedule can name: years 1 to 9999, less the very first
// second, which is the zero time.Time that means "no slot".
var (
	minUnix = time.Date(1, 1, 1, 0, 0, 1, 0, time.UTC).Unix()
	maxUnix = time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC).Unix()
)

// maxJump bounds the length of any gap or overlap: zone offsets stay within
// ±26 h, so no change of offset moves the clock by more than 52 h.
const maxJump = 52 * 3600

// zones shares one *time.Location per zone name: loading one costs about
// 6 µs and 5 KB, which a million tasks in a few hundred zones must not pay
// each. A Location is read-only once loaded, so sharing it is safe.
var zones sync.Map // string → *time.Location

// LoadZone reads the timezone field: an IANA zone name, UTC when empty.
// "Local" is refused: it would mean different things on different hosts.
func LoadZone(name string) (*time.Location, error) {
	if name == "" || name == "UTC" {
		return time.UTC, nil
	}
	if name == "Local" {
		return nil, &Error{Field: "timezone", Message: `"Local" depends on the host; give an IANA zone name such as "Europe/Berlin"`}
	}
	if loc, ok := zones.Load(name); ok {
		return loc.(*time.Location), nil
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, &Error{Field: "timezone", Message: fmt.Sprintf("unknown zone %q; give an IANA zone name such as \"Europe/Berlin\"", name)}
	}
	actual, _ := zones.LoadOrStore(name, loc)
	return actual.(*time.Location), nil
}

// Cron is one cron expression compiled for a zone and a DST policy.
// It is immutable and safe for concurrent use.
type Cron struct {
	e       *expr
	loc     *time.Location
	gap     Gap
	overlap Overlap
	// ex: the schedule's exclude list (nil: none), shared by its
	// expressions; coveredDays: for each set of its expressions that match
	// on one of this expression's days (a bit per index), whether they
	// cover all its times of day (coveredBy).
	ex          *exclusion
	coveredDays map[uint64]bool
}

// ParseCron compiles expr read in loc (nil means UTC). A rejection is an
// *Error for the field "cron" whose message names the position
// ("field 2 (hour): 24 is above 23").
func ParseCron(expr string, loc *time.Location, gap Gap, overlap Overlap) (*Cron, error) {
	e, err := parseExpr(expr)
	if err != nil {
		return nil, &Error{Field: "cron", Message: err.Error()}
	}
	if loc == nil {
		loc = time.UTC
	}
	return &Cron{e: e, loc: loc, gap: gap, overlap: overlap}, nil
}

// zoneAt is the offset in force at the instant u and the bounds of the
// period it stays in force ([start, end), open ends as MinInt64/MaxInt64).
func zoneAt(loc *time.Location, u int64) (off, start, end int64) {
	off, start, end = bounds(loc, u)
	if end <= u {
		// Past the zone's table, ZoneBounds cuts the rule-made periods at
		// each new year, and asked about the very instant of such a cut it
		// answers the period that ends there. The period after it is the
		// one wanted (the offset does not change at a cut).
		off, _, end = bounds(loc, u+1)
		start = u
		if end <= u {
			end = u + 3600 // never reached; keeps the walk moving
		}
	}
	return off, min(start, u), end
}

func bounds(loc *time.Location, u int64) (off, start, end int64) {
	t := time.Unix(u, 0).In(loc)
	_, o := t.Zone()
	zs, ze := t.ZoneBounds()
	start, end = math.MinInt64, math.MaxInt64
	if !zs.IsZero() {
		start = zs.Unix()
	}
	if !ze.IsZero() {
		end = ze.Unix()
	}
	return int64(o), start, end
}

func offsetAt(loc *time.Location, u int64) int64 {
	_, o := time.Unix(u, 0).In(loc).Zone()
	return int64(o)
}

// Next is the first slot strictly after after, or the zero time when there
// is none within Horizon.
//
// It walks the zone's periods of constant offset. Inside one period wall
// time and instant move together, so the period's slots are its matching
// wall times minus its offset; at the period's edges the policies add the
// shifted wall times of a gap before it and drop the wall times an overlap
// shows twice.
func (c *Cron) Next(after time.Time) time.Time {
	u := after.Unix()
	if u >= maxUnix {
		return time.Time{}
	}
	u++
	if u < minUnix {
		u = minUnix
	}
	limit := u + int64(Horizon/time.Second)
	if limit > maxUnix {
		limit = maxUnix
	}
	for u <= limit {
		off, start, end := zoneAt(c.loc, u)
		best, found := int64(math.MaxInt64), false
		lo, hi := u+off, limit+off+1
		if end != math.MaxInt64 && end+off < hi {
			hi = end + off
		}
		if start != math.MinInt64 && u-start < maxJump {
			prev := offsetAt(c.loc, start-1)
			switch {
			case prev < off && c.gap == GapShift:
				// The wall times [start+prev, start+off) were never shown;
				// each fires read with the offset before the change.
				if w, ok := c.nextWall(u+prev, start+off); ok {
					best, found = w-prev, true
					hi = min(hi, best+off)
				}
			case prev > off && c.overlap == OverlapFirst:
				// The wall times [start+off, start+prev) were shown before
				// the change: only their first instant is a slot.
				lo = max(lo, start+prev)
			}
		}
		if lo < hi {
			if w, ok := c.nextWall(lo, hi); ok {
				if c.overlap == OverlapLast && end != math.MaxInt64 && end+off-w <= maxJump {
					// Wall times at or after end+next come again after the
					// change: only their second instant is a slot.
					if next := offsetAt(c.loc, end); next < off && w >= end+next {
						w, ok = 0, false
					}
				}
				if ok && w-off < best {
					best, found = w-off, true
				}
			}
		}
		if found {
			if best > limit {
				return time.Time{}
			}
			return time.Unix(best, 0).In(c.loc)
		}
		if end == math.MaxInt64 {
			break
		}
		u = end
	}
	return time.Time{}
}
