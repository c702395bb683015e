package embedded_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/events/embedded"
)

const (
	crashChildEnv = "CRONACTOR_CRASH_CHILD_DIR"
	crashWriters  = 16
	crashKills    = 20
)

type crashBody struct {
	Writer  int    `json:"w"`
	Version uint64 `json:"v"`
}

func crashStream(w int) string { return fmt.Sprintf("task-crash-%02d", w) }

// TestMain lets the crash test re-execute this test binary as the child that
// appends under load until it is killed.
func TestMain(m *testing.M) {
	if dir := os.Getenv(crashChildEnv); dir != "" {
		crashChild(dir)
		return
	}
	os.Exit(m.Run())
}

// crashChild appends from many goroutines and prints one line per
// acknowledged append: "ack <writer> <version> <position>". It never returns
// on its own; the parent kills it.
func crashChild(dir string) {
	s, err := embedded.Open(dir, embedded.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "child open:", err)
		os.Exit(3)
	}
	out := bufio.NewWriter(os.Stdout)
	var mu sync.Mutex
	ctx := context.Background()
	for w := 0; w < crashWriters; w++ {
		go func() {
			exp := events.NoStream
			if got, err := s.ReadStream(ctx, crashStream(w), 0, 0); err == nil && len(got) > 0 {
				exp = events.Exactly(got[len(got)-1].Version)
			}
			for {
				next := uint64(0)
				if v, ok := exp.Exact(); ok {
					next = v + 1
				}
				// Two events per append, to catch a half-written batch.
				var batch []events.Proposed
				for i := uint64(0); i < 2; i++ {
					body, _ := json.Marshal(crashBody{Writer: w, Version: next + i})
					batch = append(batch, events.Proposed{Type: "CrashTestAppended", Schema: 1, At: testTime, Data: body})
				}
				res, err := s.Append(ctx, crashStream(w), exp, batch...)
				if err != nil {
					fmt.Fprintln(os.Stderr, "child append:", err)
					os.Exit(4)
				}
				mu.Lock()
				fmt.Fprintf(out, "ack %d %d %d\n", w, res.Version, res.Position.Commit)
				out.Flush()
				mu.Unlock()
				exp = events.Exactly(res.Version)
			}
		}()
	}
	select {}
}

// TestKill9LosesNoAcknowledgedAppend kills a child process that appends under
// load at random moments and checks, after every kill, that each
// acknowledged append is present, in order, whole and only once.
func TestKill9LosesNoAcknowledgedAppend(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test skipped in -short mode")
	}
	dir := t.TempDir()
	rng := rand.New(rand.NewSource(time.Now().UnixNano()))
	acked := map[int]uint64{} // writer → highest acknowledged version
	ackedPos := map[int]uint64{}
	totalAcks := 0
	for kill := 0; kill < crashKills; kill++ {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), crashChildEnv+"="+dir)
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(stdout)
		// Kill after a random number of acknowledgements, mid-stream.
		killAfter := 10 + rng.Intn(200)
		n := 0
		for sc.Scan() {
			f := strings.Fields(sc.Text())
			if len(f) != 4 || f[0] != "ack" {
				t.Fatalf("child printed %q", sc.Text())
			}
			w, _ := strconv.Atoi(f[1])
			v, _ := strconv.ParseUint(f[2], 10, 64)
			p, _ := strconv.ParseUint(f[3], 10, 64)
			if prev, ok := acked[w]; !ok || v > prev {
				acked[w], ackedPos[w] = v, p
			}
			n++
			if n == killAfter {
				_ = cmd.Process.Signal(syscall.SIGKILL)
			}
		}
		_ = cmd.Wait()
		if n < killAfter {
			t.Fatalf("child died after %d acks before it was killed: %s", n, stderr.String())
		}
		totalAcks += n
		verifyAfterCrash(t, dir, acked, ackedPos)
	}
	t.Logf("%d kills, %d acknowledged appends checked", crashKills, totalAcks)
}

func verifyAfterCrash(t *testing.T, dir string, acked, ackedPos map[int]uint64) {
	t.Helper()
	s, err := embedded.Open(dir, embedded.Options{})
	if err != nil {
		t.Fatalf("reopen after kill: %v", err)
	}
	defer s.Close()
	ctx := context.Background()
	for w, v := range acked {
		got, err := s.ReadStream(ctx, crashStream(w), 0, 0)
		if err != nil {
			t.Fatalf("writer %d: %v", w, err)
		}
		if uint64(len(got)) < v+1 {
			t.Fatalf("writer %d: acknowledged version %d, store holds %d events", w, v, len(got))
		}
		if len(got)%2 != 0 {
			t.Fatalf("writer %d: odd event count %d: a two-event append was torn", w, len(got))
		}
		for i, r := range got {
			var b crashBody
			if err := json.Unmarshal(r.Data, &b); err != nil || b.Writer != w || b.Version != uint64(i) || r.Version != uint64(i) {
				t.Fatalf("writer %d event %d: %s (version %d, %v)", w, i, r.Data, r.Version, err)
			}
		}
		if got[v].Position.Commit != ackedPos[w] {
			t.Fatalf("writer %d version %d at position %d, acknowledged at %d", w, v, got[v].Position.Commit, ackedPos[w])
		}
	}
	all, err := s.ReadAll(ctx, events.Start, 0)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for i, r := range all {
		if r.Position.Commit != uint64(i+1) {
			t.Fatalf("global log has a gap: event %d at position %d", i, r.Position.Commit)
		}
		key := fmt.Sprint(r.Stream, "/", r.Version)
		if seen[key] {
			t.Fatalf("%s appears twice in the global log", key)
		}
		seen[key] = true
	}
}
