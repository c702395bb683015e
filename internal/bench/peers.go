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
	"time"
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
	// Workers is the peer's worker count where it has one (River).
	Workers int `json:"workers,omitempty"`
}

// PeerResults are the peers of one run, in the order measured. In JSON
// they are one object keyed by peer name (DESIGN.md §8.1:
// peers.river.runs_per_s), {} when none was measured; an array of results,
// as earlier versions wrote, is read too.
type PeerResults []PeerResult

// MarshalJSON writes the peers as one object keyed by name, in order.
func (ps PeerResults) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, p := range ps {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := json.Marshal(p.Peer)
		if err != nil {
			return nil, err
		}
		v, err := json.Marshal(p)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// UnmarshalJSON reads an object keyed by peer name (in the order written)
// or an array of results.
func (ps *PeerResults) UnmarshalJSON(data []byte) error {
	data = bytes.TrimSpace(data)
	if len(data) > 0 && data[0] == '[' {
		var list []PeerResult
		if err := json.Unmarshal(data, &list); err != nil {
			return err
		}
		*ps = list
		return nil
	}
	if bytes.Equal(data, []byte("null")) {
		*ps = nil
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return fmt.Errorf("bench: peers: want an object or an array, got %.40s", data)
	}
	out := PeerResults{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		name, _ := t.(string)
		var p PeerResult
		if err := dec.Decode(&p); err != nil {
			return fmt.Errorf("bench: peers: %s: %w", name, err)
		}
		if p.Peer == "" {
			p.Peer = name
		}
		out = append(out, p)
	}
	*ps = out
	return nil
}

// Find is the result of the peer named name.
func (ps PeerResults) Find(name string) (PeerResult, bool) {
	for _, p := range ps {
		if p.Peer == name {
			return p, true
		}
	}
	return PeerResult{}, false
}

// Text is the result as one line for people.
func (p PeerResult) Text() string {
	workers := ""
	if p.Workers > 0 {
		workers = fmt.Sprintf(" %d workers:", p.Workers)
	}
	return fmt.Sprintf("%s %s:%s %d jobs due at once, all ran in %.2fs = %.0f runs/s | lag p50 %.0fms p99 %.0fms (%s)",
		p.Peer, p.Version, workers, p.Jobs, p.RunsS, p.RunsPerS, p.LagP50ms, p.LagP99ms, p.Label)
}

// Peers is how a measurement runs the peers: Path is the peers binary
// (cronactor-benchpeers); empty means the peers are not measured and Note
// says why (it is copied into the result).
type Peers struct {
	Path string
	Note string
}

// measure runs the in-memory peers with jobs jobs.
func (p Peers) measure(ctx context.Context, jobs int, progress Progress) (PeerResults, string, error) {
	return p.measureOn(ctx, jobs, peerArgs{}, progress)
}

// peerArgs are what the peers program is told besides the jobs: with a
// Postgres URL it measures River there too, with our workers and our tick
// as its poll interval.
type peerArgs struct {
	postgres string
	workers  int
	tick     time.Duration
	// alsoWorkers, when > 0, has River measured once more with that many
	// workers ("river-N-workers").
	alsoWorkers int
}

func (a peerArgs) args() []string {
	if a.postgres == "" {
		return nil
	}
	args := []string{"--postgres", a.postgres, "--workers", strconv.Itoa(a.workers), "--poll", a.tick.String()}
	if a.alsoWorkers > 0 && a.alsoWorkers != a.workers {
		args = append(args, "--also-workers", strconv.Itoa(a.alsoWorkers))
	}
	return args
}

// measureOn runs the peers binary with jobs jobs and parses what it prints.
func (p Peers) measureOn(ctx context.Context, jobs int, a peerArgs, progress Progress) (PeerResults, string, error) {
	if p.Path == "" {
		return PeerResults{}, p.Note, nil
	}
	progress.note("bench: peers (%s), %d jobs due at once...", p.Path, jobs)
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, p.Path, append([]string{"--jobs", strconv.Itoa(jobs)}, a.args()...)...)
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
func ParsePeers(r io.Reader) (PeerResults, error) {
	out := PeerResults{}
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
