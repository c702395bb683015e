package crontasks_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble"
	"github.com/cronactor/cronactor/actors/archetype"
	"github.com/cronactor/cronactor/actors/clock"
	"github.com/cronactor/cronactor/events/embedded"
	"github.com/cronactor/cronactor/projections/crontasks"
)

// builtView folds a small log into a view on disk, closes it and returns
// its config.
func builtView(t *testing.T, seed uint64) crontasks.Config {
	t.Helper()
	store := memStore(t)
	h := newHistory(t, store, seed, 12)
	h.run(400)
	cfg := crontasks.Config{Store: store, Dir: filepath.Join(t.TempDir(), "view")}
	v := openView(t, cfg)
	if err := v.CatchUp(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	v.Close()
	return cfg
}

// only returns the one file of dir matching pattern.
func only(t *testing.T, dir, pattern string) string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(dir, pattern))
	if len(m) == 0 {
		t.Fatalf("no %s in %s", pattern, dir)
	}
	return m[0]
}

// TestDamageIsToldByType: each kind of damage to a real view directory
// (bytes flipped, a file cut short, emptied or gone) is refused by Open with
// an error of the type that says what it is — never recognised by its
// words — that Damaged reports, and a Keeper heals it.
func TestDamageIsToldByType(t *testing.T) {
	corruption := func(err error) bool { return pebble.IsCorruptionError(err) }
	missing := func(err error) bool { return errors.Is(err, fs.ErrNotExist) }
	// Pebble's check of the tables against the MANIFEST at open says what
	// is wrong only in words: Open marks it ErrCorrupt.
	unopenable := func(err error) bool { return errors.Is(err, crontasks.ErrCorrupt) }
	cases := []struct {
		name   string
		damage func(t *testing.T, dir string)
		class  func(error) bool
	}{
		{"sstable bytes flipped", func(t *testing.T, dir string) { flipBytesAt(t, only(t, dir, "*.sst"), 0) }, corruption},
		{"sstable footer flipped", func(t *testing.T, dir string) {
			p := only(t, dir, "*.sst")
			fi, _ := os.Stat(p)
			flipBytesAt(t, p, int(fi.Size())-60)
		}, corruption},
		{"sstable truncated", func(t *testing.T, dir string) {
			p := only(t, dir, "*.sst")
			fi, _ := os.Stat(p)
			if err := os.Truncate(p, fi.Size()/2); err != nil {
				t.Fatal(err)
			}
		}, unopenable},
		{"sstable gone", func(t *testing.T, dir string) { remove(t, only(t, dir, "*.sst")) }, unopenable},
		{"MANIFEST bytes flipped", func(t *testing.T, dir string) { flipBytesAt(t, only(t, dir, "MANIFEST-*"), 0) }, corruption},
		{"MANIFEST emptied", func(t *testing.T, dir string) {
			if err := os.Truncate(only(t, dir, "MANIFEST-*"), 0); err != nil {
				t.Fatal(err)
			}
		}, corruption},
		{"MANIFEST gone", func(t *testing.T, dir string) { remove(t, only(t, dir, "MANIFEST-*")) }, missing},
		{"CURRENT garbled", func(t *testing.T, dir string) { flipBytesAt(t, only(t, dir, "CURRENT"), 0) }, corruption},
		{"CURRENT emptied", func(t *testing.T, dir string) {
			if err := os.Truncate(only(t, dir, "CURRENT"), 0); err != nil {
				t.Fatal(err)
			}
		}, unopenable},
		// Pebble would write a new MANIFEST over the old one, then panic
		// (TestGuardRecoversPebblesPanic): Open refuses it first.
		{"CURRENT gone", func(t *testing.T, dir string) { remove(t, only(t, dir, "CURRENT")) }, unopenable},
		{"OPTIONS garbled", func(t *testing.T, dir string) { flipBytesAt(t, only(t, dir, "OPTIONS-*"), 0) }, corruption},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := builtView(t, uint64(100+i))
			c.damage(t, cfg.Dir)
			before := snapshotDir(t, cfg.Dir)
			v, err := crontasks.Open(cfg)
			if err == nil {
				v.Close()
				t.Fatal("Open of a damaged view succeeded")
			}
			if !c.class(err) || !crontasks.Damaged(err) {
				t.Fatalf("Open: %v (type %T); not of the expected class, or not Damaged", err, err)
			}
			after := snapshotDir(t, cfg.Dir)
			for name, b := range before {
				if !bytes.Equal(after[name], b) {
					t.Errorf("the refused open changed %s", name)
				}
			}
			k, err := crontasks.OpenKeeper(cfg)
			if err != nil {
				t.Fatalf("OpenKeeper: %v", err)
			}
			if st := k.Status(); !strings.HasPrefix(st.MovedAside, cfg.Dir+".damaged-") {
				t.Fatalf("not moved aside: %+v", st)
			}
			keep(t, k)
			v = waitReady(t, k, cfg.Store.(*embedded.Store).Head())
			sameRows(t, "healed", dump(t, v), replay(t, readAll(t, cfg.Store)))
		})
	}
}

func remove(t *testing.T, path string) {
	t.Helper()
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
}

// TestWhatIsNotDamage: an error is not damage for its words, and a view
// another opener holds (its directory locked) is refused, not moved aside.
func TestWhatIsNotDamage(t *testing.T) {
	for _, err := range []error{
		errors.New("pebble: corruption: checksum mismatch in a corrupt invalid table: file does not exist"),
		fmt.Errorf("crontasks: read: %w", context.DeadlineExceeded),
	} {
		if crontasks.Damaged(err) {
			t.Errorf("Damaged(%q) = true", err)
		}
	}
	cfg := builtView(t, 120)
	v := openView(t, cfg)
	_, err := crontasks.Open(cfg)
	if err == nil || crontasks.Damaged(err) {
		t.Fatalf("second Open of a view in use: %v; want an error that is not damage", err)
	}
	if _, err := crontasks.OpenKeeper(cfg); err == nil || crontasks.Damaged(err) {
		t.Fatalf("OpenKeeper of a view in use: %v", err)
	}
	if m, _ := filepath.Glob(cfg.Dir + ".damaged-*"); len(m) > 0 {
		t.Errorf("a view in use was moved aside: %v", m)
	}
	if _, err := v.Query(context.Background(), crontasks.Query{}); err != nil {
		t.Errorf("the view in use after the refused open: %v", err)
	}
}

// TestKeeperKeepsTheNewestDamagedViews: moving a damaged view aside
// removes the moved-aside views older than the newest KeepDamaged, in the
// order they were moved (a -10 of the same second is newer than its -2),
// and leaves other names alone.
func TestKeeperKeepsTheNewestDamagedViews(t *testing.T) {
	cfg := builtView(t, 121)
	parent := filepath.Dir(cfg.Dir)
	old := []string{
		"view.damaged-20251231T235959Z",
		"view.damaged-20260101T000000Z",
		"view.damaged-20260101T000000Z-2",
		"view.damaged-20260101T000000Z-10",
	}
	others := []string{"view.damaged-notes", "view.damaged-20260101T000000Z-x", "other.damaged-20200101T000000Z"}
	for _, n := range append(slices.Clone(old), others...) {
		if err := os.MkdirAll(filepath.Join(parent, n, "sub"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	flipBytesAt(t, only(t, cfg.Dir, "*.sst"), 0)
	clk := clock.NewVirtual(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	cfg.Archetype = archetype.Archetype{Clock: clk}
	cfg.KeepDamaged = 2
	k, err := crontasks.OpenKeeper(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	if st := k.Status(); st.MovedAside != cfg.Dir+".damaged-20260102T030405Z" {
		t.Fatalf("moved aside to %q", st.MovedAside)
	}
	entries, err := os.ReadDir(parent)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	want := append([]string{"view", "view.damaged-20260101T000000Z-10", "view.damaged-20260102T030405Z"}, others...)
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("after moving a fifth view aside with KeepDamaged 2:\n got %v\nwant %v", got, want)
	}
	if err := (crontasks.Config{Store: cfg.Store, KeepDamaged: 101}).Validate(); err == nil || !strings.Contains(err.Error(), "KeepDamaged") {
		t.Errorf("Validate of KeepDamaged 101: %v", err)
	}
}
