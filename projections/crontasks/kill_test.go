package crontasks_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/cronactor/cronactor/events/embedded"
	"github.com/cronactor/cronactor/projections/crontasks"
)

// childEnv names the data directory a child process folds (see
// TestKillDuringFold).
const childEnv = "CRONACTOR_CRONTASKS_KILL_CHILD"

func TestMain(m *testing.M) {
	if dir := os.Getenv(childEnv); dir != "" {
		os.Exit(foldChild(dir))
	}
	os.Exit(m.Run())
}

// foldChild folds the store in dir into dir/view in small batches,
// printing the checkpoint after each, until killed.
func foldChild(dir string) int {
	store, err := embedded.Open(dir, embedded.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	v, err := crontasks.Open(crontasks.Config{Store: store, Dir: filepath.Join(dir, "view"), BatchSize: 16})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	err = v.CatchUp(context.Background(), func(p crontasks.Progress) {
		fmt.Printf("applied %d\n", p.Applied)
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println("done")
	select {} // wait to be killed
}

// TestKillDuringFold kills (SIGKILL) a real process while it folds the log
// into its view, then reopens the view: it resumes from its checkpoint and
// ends equal to the reference fold, nothing counted twice.
func TestKillDuringFold(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	dir := t.TempDir()
	store, err := embedded.Open(dir, embedded.Options{})
	if err != nil {
		t.Fatal(err)
	}
	h := newHistory(t, store, 9, 40)
	h.run(6000)
	recs := readAll(t, store)
	if err := store.Close(); err != nil {
		t.Fatal(err)
	}
	for round, killAt := range []uint64{40, 400, 1200} {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), childEnv+"="+dir)
		cmd.Stderr = os.Stderr
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			line := sc.Text()
			n, _ := strconv.ParseUint(strings.TrimPrefix(line, "applied "), 10, 64)
			if line == "done" || n >= killAt {
				break
			}
		}
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		t.Logf("round %d: killed after about %d events", round, killAt)
	}
	store, err = embedded.Open(dir, embedded.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	v := openView(t, crontasks.Config{Store: store, Dir: filepath.Join(dir, "view")})
	if v.Checkpoint().IsZero() {
		t.Fatal("nothing of the killed folds survived")
	}
	if err := v.CatchUp(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	sameRows(t, "after kill -9 and catch-up", dump(t, v), replay(t, recs))
}
