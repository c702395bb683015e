package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// TestEveryPeerRunsEveryJobOnce checks the shape of each peer's result on a
// small wave, not its speed.
func TestEveryPeerRunsEveryJobOnce(t *testing.T) {
	for _, p := range memPeers {
		t.Run(p.name, func(t *testing.T) {
			r, err := measure(context.Background(), p, 200)
			if err != nil {
				t.Fatal(err)
			}
			if r.Peer != p.name || r.Jobs != 200 || r.Label != p.label || r.RunsPerS <= 0 || r.RunsS <= 0 ||
				r.LagP99ms < r.LagP50ms || r.SetupS <= 0 || r.Version == "" {
				t.Fatalf("result %+v", r)
			}
			b, _ := json.Marshal(r)
			for _, k := range []string{`"peer"`, `"version"`, `"label"`, `"jobs"`, `"runs_per_s"`, `"lag_p50_ms"`, `"lag_p99_ms"`} {
				if !strings.Contains(string(b), k) {
					t.Errorf("JSON %s lacks %s", b, k)
				}
			}
		})
	}
}
