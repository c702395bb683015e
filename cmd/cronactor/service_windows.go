//go:build windows

package main

import (
	"context"

	"golang.org/x/sys/windows/svc"
)

// runAsService runs the command line under the Windows service manager
// when it started this process (sc.exe create … binPath= "cronactor.exe
// serve --config …"): Stop and Shutdown end the daemon as SIGTERM does
// elsewhere. It reports false when the process is not a service.
func runAsService(env *cliEnv, args []string) (bool, int) {
	is, err := svc.IsWindowsService()
	if err != nil || !is {
		return false, 0
	}
	s := &service{env: env, args: args}
	// The name is ignored for a service that owns its process.
	if err := svc.Run("cronactor", s); err != nil {
		return true, 1
	}
	return true, s.code
}

type service struct {
	env  *cliEnv
	args []string
	code int
}

// Execute implements svc.Handler.
func (s *service) Execute(_ []string, req <-chan svc.ChangeRequest, status chan<- svc.Status) (bool, uint32) {
	status <- svc.Status{State: svc.StartPending}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan int, 1)
	go func() { done <- runMain(ctx, s.env, s.args) }()
	status <- svc.Status{State: svc.Running, Accepts: svc.AcceptStop | svc.AcceptShutdown}
	for {
		select {
		case c := <-req:
			switch c.Cmd {
			case svc.Interrogate:
				status <- c.CurrentStatus
			case svc.Stop, svc.Shutdown:
				status <- svc.Status{State: svc.StopPending}
				cancel()
			}
		case code := <-done:
			s.code = code
			status <- svc.Status{State: svc.Stopped}
			if code != 0 {
				return true, uint32(code) // a service-specific exit code
			}
			return false, 0
		}
	}
}
