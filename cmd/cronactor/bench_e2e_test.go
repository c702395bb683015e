package main_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestBenchSchedulerJSON runs the real binary's `bench scheduler` on 200
// tasks with a fake peers program: the last line of stdout is one JSON
// object with every field of DESIGN.md §6, the restart measured in a fresh
// process of the binary itself (its hidden bench-restart-child command).
// It checks shapes and plausibility, never speed, and that the profiles
// --cpuprofile, --memprofile and --trace ask for are written. Then `bench report`
// turns that output into the table.
func TestBenchSchedulerJSON(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary, writes to disk, takes seconds")
	}
	bin := buildBinary(t)
	dir := t.TempDir()
	peers := filepath.Join(dir, "peers")
	line := `{"peer":"fake","version":"v0","label":"in memory, not durable","jobs":200,"setup_s":0.1,"runs_s":0.01,"runs_per_s":20000,"lag_p50_ms":1,"lag_p99_ms":2}`
	if err := os.WriteFile(peers, []byte("#!/bin/sh\necho '"+line+"'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	cpu, mem, trc := filepath.Join(dir, "cpu.pprof"), filepath.Join(dir, "mem.pprof"), filepath.Join(dir, "wave.trace")
	cmd := exec.Command(bin, "bench", "scheduler", "--tasks", "200", "--workers", "8", "--peers", peers, "--json",
		"--cpuprofile", cpu, "--memprofile", mem, "--trace", trc)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("bench scheduler: %v\n%s", err, stderr.String())
	}
	for _, f := range []string{cpu, cpu + ".create", mem, mem + ".created", mem + ".start", trc} {
		if fi, err := os.Stat(f); err != nil || fi.Size() == 0 {
			t.Errorf("profile %s: %v (want a non-empty file)", filepath.Base(f), err)
		}
	}
	// An execution trace opens with its format's header.
	if b, err := os.ReadFile(trc); err == nil && !bytes.HasPrefix(b, []byte("go 1.")) {
		t.Errorf("trace %s starts %q, want a Go execution trace's header", filepath.Base(trc), b[:min(len(b), 16)])
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	last := lines[len(lines)-1]
	var m map[string]any
	if err := json.Unmarshal([]byte(last), &m); err != nil {
		t.Fatalf("last line %q: %v", last, err)
	}
	for _, k := range []string{"tasks", "runs_per_s", "events_per_s", "raw_events_per_s", "ratio", "lag_p50_ms",
		"lag_p99_ms", "rss_bytes_per_task", "restart_s"} {
		v, ok := m[k].(float64)
		if !ok {
			t.Errorf("%s = %v (%T), want a number", k, m[k], m[k])
			continue
		}
		// With 200 tasks the resident memory they add is within the
		// process's own noise (a GC may hand back more than they take), so
		// rss_bytes_per_task may come out negative here: only its presence
		// and that it was measured are checked (below).
		if k != "lag_p50_ms" && k != "rss_bytes_per_task" && !(v > 0) {
			t.Errorf("%s = %v, want more than 0", k, v)
		}
	}
	if runtime.GOOS == "linux" && m["rss_measured"] != true {
		t.Errorf("rss_measured = %v on linux, want true", m["rss_measured"])
	}
	if m["tasks"] != 200.0 {
		t.Errorf("tasks %v", m["tasks"])
	}
	ps, _ := m["peers"].(map[string]any)
	if p, _ := ps["fake"].(map[string]any); len(ps) != 1 || p["label"] != "in memory, not durable" {
		t.Errorf("peers %v", m["peers"])
	}

	out := filepath.Join(dir, "scheduler.json")
	os.WriteFile(out, stdout.Bytes(), 0o644)
	table, err := exec.Command(bin, "bench", "report", "--scheduler", out).CombinedOutput()
	if err != nil {
		t.Fatalf("bench report: %v\n%s", err, table)
	}
	for _, want := range []string{"scheduler: 200 tasks all due", "restart to first tick, fresh process", "peer: fake v0", "in memory, not durable"} {
		if !strings.Contains(string(table), want) {
			t.Errorf("report lacks %q:\n%s", want, table)
		}
	}
}
