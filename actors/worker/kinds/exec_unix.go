//go:build unix

package kinds

import (
	"os"
	"os/exec"
	"syscall"
)

// startsOwnGroup puts the command in a process group of its own, so that
// what it starts is stopped with it.
func startsOwnGroup(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }

// terminate asks the command's process group to stop.
func terminate(p *os.Process) error { return syscall.Kill(-p.Pid, syscall.SIGTERM) }

// kill ends the command's process group at once.
func kill(p *os.Process) error { return syscall.Kill(-p.Pid, syscall.SIGKILL) }
