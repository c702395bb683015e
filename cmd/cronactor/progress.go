package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

// progressLine is one status line on a terminal, rewritten in place as
// long work goes on and erased when it is done, so nothing of it stays
// between log lines. A nil *progressLine (stderr is not a terminal) is
// quiet: every method does nothing.
type progressLine struct {
	w     io.Writer
	mu    sync.Mutex
	last  time.Time
	shown bool
	// every is the least time between two redraws (0: 100ms).
	every time.Duration
}

// update redraws the line, at most once per p.every unless force.
func (p *progressLine) update(force bool, format string, args ...any) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	every := p.every
	if every == 0 {
		every = 100 * time.Millisecond
	}
	now := time.Now()
	if !force && p.shown && now.Sub(p.last) < every {
		return
	}
	p.last, p.shown = now, true
	fmt.Fprintf(p.w, "\r\033[K"+format, args...)
}

// done erases the line.
func (p *progressLine) done() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.shown {
		fmt.Fprint(p.w, "\r\033[K")
		p.shown = false
	}
}

// isTerminal reports whether f is a terminal (a character device), and
// TERM does not say the terminal cannot redraw a line.
func isTerminal(f *os.File) bool {
	if os.Getenv("TERM") == "dumb" {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
