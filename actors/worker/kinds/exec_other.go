//go:build !unix

package kinds

import (
	"os"
	"os/exec"
)

// startsOwnGroup does nothing where the OS has no process groups to signal
// (Windows): the command alone is stopped at the deadline.
func startsOwnGroup(*exec.Cmd) {}

// terminate kills the command: there is no signal asking a process to
// stop cleanly, so the grace period ends at once.
func terminate(p *os.Process) error { return p.Kill() }

// kill kills the command.
func kill(p *os.Process) error { return p.Kill() }
