package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
)

// PeerLabel marks every peer figure: the peers keep their jobs in memory
// and record nothing, so a crash loses them.
const PeerLabel = "in memory, not durable"

// PeerResult is one peer scheduler's measurement (robfig/cron, gocron):
// Jobs jobs all due at one instant, timed from that instant until every job
// ran once. It is what the peers program (module internal/benchpeers,
// binary cronactor-benchpeers) prints, one JSON object per line.
type PeerResult struct {
	Peer    string `json:"peer"`
	Version string `json:"version"`
	// Label is PeerLabel.
	Label    string  `json:"label"`
	Jobs     int     `json:"jobs"`
	SetupS   float64 `json:"setup_s"`
	RunsS    float64 `json:"runs_s"`
	RunsPerS float64 `json:"runs_per_s"`
	// LagP50ms and LagP99ms are due → the job's function entered.
	LagP50ms float64 `json:"lag_p50_ms"`
	LagP99ms float64 `json:"lag_p99_ms"`
}

// Text is the result as one line for people.
func (p PeerResult) Text() string {
	return fmt.Sprintf("%s %s: %d jobs due at once, all ran in %.2fs = %.0f runs/s | lag p50 %.0fms p99 %.0fms (%s)",
		p.Peer, p.Version, p.Jobs, p.RunsS, p.RunsPerS, p.LagP50ms, p.LagP99ms, p.Label)
}

// Peers is how a measurement runs the peers: Path is the peers binary
// (cronactor-benchpeers); empty means the peers are not measured and Note
// says why (it is copied into the result).
type Peers struct {
	Path string
	Note string
}

// measure runs the peers binary with jobs jobs and parses what it prints.
func (p Peers) measure(ctx context.Context, jobs int, progress Progress) ([]PeerResult, string, error) {
	if p.Path == "" {
		return []PeerResult{}, p.Note, nil
	}
	progress.note("bench: peers (%s), %d jobs due at once...", p.Path, jobs)
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, p.Path, "--jobs", strconv.Itoa(jobs))
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, "", fmt.Errorf("bench: peers %s: %w: %s", p.Path, err, strings.TrimSpace(stderr.String()))
	}
	res, err := ParsePeers(&stdout)
	if err != nil {
		return nil, "", fmt.Errorf("bench: peers %s: %w", p.Path, err)
	}
	return res, "", nil
}

// ParsePeers reads the peers program's output: one JSON object per line,
// each with a peer name and a positive runs/s.
func ParsePeers(r io.Reader) ([]PeerResult, error) {
	out := []PeerResult{}
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var p PeerResult
		if err := json.Unmarshal(line, &p); err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		if p.Peer == "" || p.Jobs < 1 || !(p.RunsPerS > 0) {
			return nil, fmt.Errorf("line %d: want a peer, jobs ≥ 1 and runs_per_s > 0: %s", n, line)
		}
		out = append(out, p)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no peer result")
	}
	return out, nil
}
