package schedule

import "fmt"

// Gap says what a wall time that does not exist (clocks jump forward) does.
type Gap uint8

const (
	// GapShift (the default) fires as far after the gap as the wall time
	// was into it: the wall time read with the offset in force before the
	// change (02:30 on a 02:00→03:00 night fires at 03:30).
	GapShift Gap = iota
	// GapSkip does not fire that day.
	GapSkip
)

// Overlap says what a wall time that happens twice (clocks go back) does.
type Overlap uint8

const (
	// OverlapFirst (the default) fires at the wall time's first instant.
	OverlapFirst Overlap = iota
	// OverlapLast fires at its second instant.
	OverlapLast
	// OverlapBoth fires at each.
	OverlapBoth
)

func (g Gap) String() string {
	if g == GapSkip {
		return "skip"
	}
	return "shift"
}

func (o Overlap) String() string {
	switch o {
	case OverlapLast:
		return "last"
	case OverlapBoth:
		return "both"
	}
	return "first"
}

// ParseGap reads dst_gap: "shift" (also the empty string) or "skip".
func ParseGap(s string) (Gap, error) {
	switch s {
	case "", "shift":
		return GapShift, nil
	case "skip":
		return GapSkip, nil
	}
	return 0, &Error{Field: "dst_gap", Message: fmt.Sprintf("must be shift or skip, got %q", s)}
}

// ParseOverlap reads dst_overlap: "first" (also the empty string), "last"
// or "both".
func ParseOverlap(s string) (Overlap, error) {
	switch s {
	case "", "first":
		return OverlapFirst, nil
	case "last":
		return OverlapLast, nil
	case "both":
		return OverlapBoth, nil
	}
	return 0, &Error{Field: "dst_overlap", Message: fmt.Sprintf("must be first, last or both, got %q", s)}
}
