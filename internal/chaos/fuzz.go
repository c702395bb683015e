package chaos

import (
	"context"
	"io"
)

type FuzzConfig struct {
	Bin, Dir string
	Requests int
	Seed     uint64
}
type FuzzReport struct{ Violations []Violation }

func Fuzz(ctx context.Context, cfg FuzzConfig) (*FuzzReport, error) { return &FuzzReport{}, nil }
func WriteFuzzReport(w io.Writer, r *FuzzReport)                      {}
