// Command cronactor-traceidle reads a Go execution trace (such as
// `cronactor bench scheduler --trace FILE` writes) and tells how the
// machine's Ps were used: for how long 0, 1, 2… goroutines were running,
// how long fewer than GOMAXPROCS ran while others were runnable — waiting
// for a P — and which system calls held a P then (a goroutine that enters
// a system call keeps its P until the call returns or the runtime takes
// the P back, which the trace records).
//
//	cd internal/traceidle && go run . wave.trace
//
// It is its own module, like the benchmark peers, so that the product's
// go.mod does not carry the trace parser (golang.org/x/exp/trace).
package main

import (
	"cmp"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"golang.org/x/exp/trace"
)

func main() {
	procs := flag.Int("procs", 0, "the GOMAXPROCS the trace was taken with (0: the Ps that appear in it)")
	frames := flag.Int("frames", 4, "frames of a system call's stack to name it by")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: traceidle [-procs N] [-frames N] TRACE")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	f, err := os.Open(flag.Arg(0))
	if err != nil {
		fmt.Fprintln(os.Stderr, "traceidle:", err)
		os.Exit(1)
	}
	defer f.Close()
	trs, ps, err := read(f, *frames)
	if err != nil {
		fmt.Fprintln(os.Stderr, "traceidle:", err)
		os.Exit(1)
	}
	if *procs == 0 {
		*procs = ps
	}
	report(os.Stdout, account(trs, *procs))
}

// transition is a goroutine changing state, or a P leaving the running
// state, as account needs it.
type transition struct {
	at int64 // ns
	// g changes to state to; when g is 0, P p stopped running (it went
	// idle, or the runtime took it from a goroutine in a system call).
	g       uint64
	to      state
	p       int64  // the P a goroutine entering a system call holds; the P that stopped
	syscall string // the call's stack, when to is inSyscall
}

type state uint8

const (
	other state = iota
	running
	runnable
	inSyscall
)

// read reads the goroutines' transitions, and the Ps' stops, from an
// execution trace; ps is the number of Ps that appear in it.
func read(r io.Reader, frames int) (trs []transition, ps int, err error) {
	tr, err := trace.NewReader(r)
	if err != nil {
		return nil, 0, err
	}
	seen := map[trace.ProcID]bool{}
	for {
		ev, err := tr.ReadEvent()
		if err == io.EOF {
			return trs, len(seen), nil
		}
		if err != nil {
			return nil, 0, err
		}
		if ev.Kind() != trace.EventStateTransition {
			continue
		}
		st := ev.StateTransition()
		switch st.Resource.Kind {
		case trace.ResourceProc:
			p := st.Resource.Proc()
			seen[p] = true
			if _, to := st.Proc(); to != trace.ProcRunning {
				trs = append(trs, transition{at: int64(ev.Time()), p: int64(p)})
			}
		case trace.ResourceGoroutine:
			_, to := st.Goroutine()
			t := transition{at: int64(ev.Time()), g: uint64(st.Resource.Goroutine()), p: -1}
			switch to {
			case trace.GoRunning:
				t.to = running
			case trace.GoRunnable:
				t.to = runnable
			case trace.GoSyscall:
				t.to = inSyscall
				if p := ev.Proc(); p != trace.NoProc {
					t.p = int64(p)
				}
				var names []string
				for fr := range st.Stack.Frames() {
					if len(names) == frames {
						break
					}
					names = append(names, fr.Func)
				}
				t.syscall = strings.Join(names, " < ")
			}
			trs = append(trs, t)
		}
	}
}

// usage is what account found.
type usage struct {
	procs int
	total float64 // s, first to last transition
	// running[n] is the time n goroutines ran (n capped at procs).
	running []float64
	// starved is the time fewer than procs goroutines ran while at least
	// one was runnable. starvedBy splits it by what the missing Ps were
	// doing: each P held by a goroutine in a system call counts for that
	// call (by its stack), the rest for "" (a P idle, or busy in the
	// runtime with no goroutine); an interval with k of n Ps missing gives
	// each its n-th.
	starved   float64
	starvedBy map[string]float64
}

// account integrates the goroutines' states over time.
func account(trs []transition, procs int) usage {
	u := usage{procs: procs, running: make([]float64, procs+1), starvedBy: map[string]float64{}}
	if len(trs) == 0 || procs < 1 {
		return u
	}
	cur := map[uint64]state{}
	// holds: the goroutines in a system call that still hold their P.
	type call struct {
		p     int64
		stack string
	}
	holds := map[uint64]call{}
	var nRunning, nRunnable int
	last := trs[0].at
	u.total = float64(trs[len(trs)-1].at-trs[0].at) / 1e9
	for _, t := range trs {
		if dt := float64(t.at-last) / 1e9; dt > 0 {
			u.running[min(nRunning, procs)] += dt
			if missing := procs - nRunning; missing > 0 && nRunnable > 0 {
				u.starved += dt
				share := dt / float64(max(missing, len(holds)))
				for _, c := range holds {
					u.starvedBy[c.stack] += share
				}
				if idle := missing - len(holds); idle > 0 {
					u.starvedBy[""] += share * float64(idle)
				}
			}
		}
		last = t.at
		if t.g == 0 { // P t.p stopped: a goroutine in a system call no longer holds it
			for g, c := range holds {
				if c.p == t.p {
					delete(holds, g)
				}
			}
			continue
		}
		if cur[t.g] == t.to {
			continue // a state restated (the trace does so at each of its generations)
		}
		switch cur[t.g] {
		case running:
			nRunning--
		case runnable:
			nRunnable--
		case inSyscall:
			delete(holds, t.g)
		}
		switch t.to {
		case running:
			nRunning++
		case runnable:
			nRunnable++
		case inSyscall:
			if t.p >= 0 {
				holds[t.g] = call{p: t.p, stack: t.syscall}
			}
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
	fmt.Fprintf(w, "trace: %.3f s, %d Ps\n", u.total, u.procs)
	for n, s := range u.running {
		fmt.Fprintf(w, "goroutines running: %d for %.3f s (%.1f%%)\n", n, s, pct(s))
	}
	fmt.Fprintf(w, "fewer running than Ps while others were runnable: %.3f s (%.1f%%); what the missing Ps were doing:\n",
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
	slices.SortFunc(xs, func(a, b kv) int { return cmp.Or(cmp.Compare(b.v, a.v), strings.Compare(a.k, b.k)) })
	for _, x := range xs[:min(len(xs), 10)] {
		name := x.k
		if name == "" {
			name = "(held by no system call: idle, or in the runtime)"
		}
		fmt.Fprintf(w, "  %.3f s (%.1f%%)  %s\n", x.v, pct(x.v), name)
	}
}
