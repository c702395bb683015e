package bench

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
)

// Profiles names the files a scheduler wave writes Go profiles to, for
// `go tool pprof`: where the CPU time and the allocations of creating the
// tasks and of running them go. Empty fields write nothing.
type Profiles struct {
	// CPU is the CPU profile of the wave, from the due instant until every
	// run completed (the store's compactions of the created tasks during
	// the wait are left out); CPU+".create" is the one of creating the
	// tasks.
	CPU string
	// Mem is the allocation profile (allocs) at the end of the wave;
	// Mem+".created" is the same profile when every task was created and
	// Mem+".start" before the first was: each is cumulative from the
	// process's start, so `go tool pprof -diff_base Mem.created Mem`
	// isolates the wave's allocations, and -diff_base Mem.start
	// Mem.created those of creating the tasks.
	Mem string
	// The fresh process of the restart measurement (RestartChild) writes
	// CPU+".restart", the CPU profile of its store's opening and its
	// scheduler's start (the recovery), and Mem+".restart", its allocation
	// profile once started. Profiling slows that process: restart_s is
	// not comparable with a run without profiles.
	//
	// Trace is an execution trace of the wave (runtime/trace, for `go tool
	// trace`), over the same span as CPU's profile: which goroutines ran,
	// waited to run or sat in system calls, and when.
	Trace string
}

// wave reports whether a measurement of the wave itself (a CPU profile or
// an execution trace) is asked for: it starts at the due instant.
func (p Profiles) wave() bool { return p.CPU != "" || p.Trace != "" }

// openTrace creates p.Trace when set, before the tasks are created, so
// that a path that cannot be written fails the run at once; nil when not
// set.
func (p Profiles) openTrace() (*os.File, error) {
	if p.Trace == "" {
		return nil, nil
	}
	f, err := os.Create(p.Trace)
	if err != nil {
		return nil, fmt.Errorf("bench: execution trace: %w", err)
	}
	return f, nil
}

// startTrace starts the execution trace into f (from openTrace) and
// returns the function that stops it and closes f; with f nil it does
// nothing. When the trace cannot start, f is left to its caller.
func startTrace(f *os.File) (stop func() error, err error) {
	if f == nil {
		return func() error { return nil }, nil
	}
	if err := trace.Start(f); err != nil {
		return nil, fmt.Errorf("bench: execution trace: %w", err)
	}
	return func() error {
		trace.Stop()
		return f.Close()
	}, nil
}

// startCPU starts a CPU profile into path+suffix when p.CPU is set and
// returns the function that stops it; the error is the file's.
func (p Profiles) startCPU(suffix string) (stop func() error, err error) {
	if p.CPU == "" {
		return func() error { return nil }, nil
	}
	f, err := os.Create(p.CPU + suffix)
	if err != nil {
		return nil, fmt.Errorf("bench: CPU profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("bench: CPU profile: %w", err)
	}
	return func() error {
		pprof.StopCPUProfile()
		return f.Close()
	}, nil
}

// writeAllocs writes the allocation profile so far into p.Mem+suffix when
// p.Mem is set.
func (p Profiles) writeAllocs(suffix string) error {
	if p.Mem == "" {
		return nil
	}
	f, err := os.Create(p.Mem + suffix)
	if err != nil {
		return fmt.Errorf("bench: allocation profile: %w", err)
	}
	runtime.GC() // the profile counts allocations up to the last GC
	if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
		f.Close()
		return fmt.Errorf("bench: allocation profile: %w", err)
	}
	return f.Close()
}

// restart returns the files the restart's fresh process writes: p.CPU and
// p.Mem with ".restart" appended, empty where p's are.
func (p Profiles) restart() (cpu, mem string) {
	if p.CPU != "" {
		cpu = p.CPU + ".restart"
	}
	if p.Mem != "" {
		mem = p.Mem + ".restart"
	}
	return cpu, mem
}
