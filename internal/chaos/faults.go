package chaos

import (
	"context"
	"io"
)

type FaultConfig struct{ Bin, Dir string }
type FaultStatus string

const (
	FaultPassed  FaultStatus = "pass"
	FaultFailed  FaultStatus = "FAIL"
	FaultSkipped FaultStatus = "skip"
)

type FaultResult struct {
	Name   string
	Status FaultStatus
	Detail string
}

func Faults(ctx context.Context, cfg FaultConfig) []FaultResult { return nil }
func WriteFaults(w io.Writer, rs []FaultResult)                  {}
