// Command cronactor-traceidle reads a Go execution trace (such as
// `cronactor bench scheduler --trace FILE` writes) and tells how the
// machine's Ps were used: for how long 0, 1, 2… goroutines were running,
// how long fewer than GOMAXPROCS ran while others were runnable — waiting
// for a P — and which system calls were in progress then (a goroutine in
// a system call holds its P until the runtime takes it back).
//
//	cd internal/traceidle && go run . [-procs 2] wave.trace
//
// It is its own module, like the benchmark peers, so that the product's
// go.mod does not carry the trace parser (golang.org/x/exp/trace).
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/exp/trace"
)

func main() {
	procs := flag.Int("procs", 2, "the GOMAXPROCS the trace was taken with")
	frames := flag.Int("frames", 4, "frames of a system call's stack to name it by")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: cronactor-traceidle [-procs N] [-frames N] TRACE")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	f, err := os.Open(flag.Arg(0))
	if err != nil {
		fmt.Fprintln(os.Stderr, "cronactor-traceidle:", err)
		os.Exit(1)
	}
	defer f.Close()
	trs, err := read(f, *frames)
	if err != nil {
		fmt.Fprintln(os.Stderr, "cronactor-traceidle:", err)
		os.Exit(1)
	}
	report(os.Stdout, account(trs, *procs))
}

// transition is a goroutine changing state, as account needs it.
type transition struct {
	at      int64 // ns
	g       uint64
	to      state
	syscall string // the call's stack, when to is inSyscall
}

type state uint8

const (
	other state = iota
	running
	runnable
	inSyscall
)

// read reads the goroutines' transitions from an execution trace.
func read(r io.Reader, frames int) ([]transition, error) {
	tr, err := trace.NewReader(r)
	if err != nil {
		return nil, err
	}
	var out []transition
	for {
		ev, err := tr.ReadEvent()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		if ev.Kind() != trace.EventStateTransition {
			continue
		}
		st := ev.StateTransition()
		if st.Resource.Kind != trace.ResourceGoroutine {
			continue
		}
		_, to := st.Goroutine()
		t := transition{at: int64(ev.Time()), g: uint64(st.Resource.Goroutine())}
		switch to {
		case trace.GoRunning:
			t.to = running
		case trace.GoRunnable:
			t.to = runnable
		case trace.GoSyscall:
			t.to = inSyscall
			var names []string
			for fr := range st.Stack.Frames() {
				if len(names) == frames {
					break
				}
				names = append(names, fr.Func)
			}
			t.syscall = strings.Join(names, " < ")
		}
		out = append(out, t)
	}
}

// usage is what account found.
type usage struct {
	total float64 // s, first to last transition
	// running[n] is the time n goroutines ran (n capped at procs).
	running []float64
	// starved is the time fewer than procs goroutines ran while at least
	// one was runnable; starvedBy splits it among the system calls then
	// in progress that began less than recent ago (a call blocked for
	// longer has long lost its P), "" for none.
	starved   float64
	starvedBy map[string]float64
}

// recent is how long a goroutine in a system call is taken to still hold
// its P: the runtime takes a P back from a call after 20–40 µs once it
// has work for it, so a call in progress for longer than this has lost it
// (such as a goroutine parked in a read for ever).
const recent = 2_000_000 // ns

// account integrates the goroutines' states over time.
func account(trs []transition, procs int) usage {
	u := usage{running: make([]float64, procs+1), starvedBy: map[string]float64{}}
	if len(trs) == 0 {
		return u
	}
	cur := map[uint64]state{}
	since := map[uint64]int64{} // system calls in progress: when they began
	calls := map[uint64]string{}
	var nRunning, nRunnable int
	last := trs[0].at
	u.total = float64(trs[len(trs)-1].at-trs[0].at) / 1e9
	for _, t := range trs {
		if dt := float64(t.at-last) / 1e9; dt > 0 {
			u.running[min(nRunning, procs)] += dt
			if nRunning < procs && nRunnable > 0 {
				u.starved += dt
				var holding []string
				for g, s := range since {
					if last-s < recent {
						holding = append(holding, calls[g])
					}
				}
				if len(holding) == 0 {
					u.starvedBy[""] += dt
				}
				for _, c := range holding {
					u.starvedBy[c] += dt / float64(len(holding))
				}
			}
		}
		last = t.at
		switch cur[t.g] {
		case running:
			nRunning--
		case runnable:
			nRunnable--
		case inSyscall:
			delete(since, t.g)
		}
		switch t.to {
		case running:
			nRunning++
		case runnable:
			nRunnable++
		case inSyscall:
			since[t.g], calls[t.g] = t.at, t.syscall
		}
		cur[t.g] = t.to
	}
	return u
}

func report(w io.Writer, u usage) {
	if u.total == 0 {
		fmt.Fprintln(w, "no goroutine transitions in the trace")
		return
	}
	pct := func(s float64) float64 { return 100 * s / u.total }
	fmt.Fprintf(w, "trace: %.3f s\n", u.total)
	for n, s := range u.running {
		fmt.Fprintf(w, "%d goroutines running: %.3f s (%.1f%%)\n", n, s, pct(s))
	}
	fmt.Fprintf(w, "fewer running than Ps while others were runnable: %.3f s (%.1f%%), by the system calls in progress then:\n",
		u.starved, pct(u.starved))
	type kv struct {
		k string
		v float64
	}
	var xs []kv
	for k, v := range u.starvedBy {
		xs = append(xs, kv{k, v})
	}
	// Largest first; ties by name, so the report is stable.
	for i := range xs {
		for j := i + 1; j < len(xs); j++ {
			if xs[j].v > xs[i].v || (xs[j].v == xs[i].v && xs[j].k < xs[i].k) {
				xs[i], xs[j] = xs[j], xs[i]
			}
		}
	}
	for _, x := range xs[:min(len(xs), 10)] {
		name := x.k
		if name == "" {
			name = "(no system call in progress)"
		}
		fmt.Fprintf(w, "  %.3f s (%.1f%%)  %s\n", x.v, pct(x.v), name)
	}
}
