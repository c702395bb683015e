//go:build !windows

package main

// runAsService is for the Windows service manager only.
func runAsService(*cliEnv, []string) (bool, int) { return false, 0 }
