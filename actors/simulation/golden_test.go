package simulation_test

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cronactor/cronactor/actors/simulation"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

func simulate(t *testing.T, path string) *simulation.Result {
	t.Helper()
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := simulation.Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	res, err := simulation.Run(context.Background(), sc, simulation.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// Every scenario under testdata/ prints its golden table and JSON lines,
// byte for byte, and the same bytes when run again.
func TestGolden(t *testing.T) {
	paths, err := filepath.Glob("testdata/*.yaml")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no scenarios: %v", err)
	}
	for _, path := range paths {
		name := strings.TrimSuffix(filepath.Base(path), ".yaml")
		t.Run(name, func(t *testing.T) {
			var outs [2]map[string][]byte
			for i := range outs {
				res := simulate(t, path)
				outs[i] = map[string][]byte{}
				for _, format := range []string{"table", "json"} {
					var b bytes.Buffer
					if err := render(&b, res.Entries, format); err != nil {
						t.Fatal(err)
					}
					outs[i][format] = b.Bytes()
				}
			}
			for _, format := range []string{"table", "json"} {
				got := outs[0][format]
				if !bytes.Equal(got, outs[1][format]) {
					t.Errorf("%s: two runs differ:\n%s\n---\n%s", format, got, outs[1][format])
				}
				golden := filepath.Join("testdata", name+"."+format+".golden")
				if *update {
					if err := os.WriteFile(golden, got, 0o644); err != nil {
						t.Fatal(err)
					}
					continue
				}
				want, err := os.ReadFile(golden)
				if err != nil {
					t.Fatalf("%v (run with -update to create it)", err)
				}
				if !bytes.Equal(got, want) {
					t.Errorf("%s differs from %s:\n%s\nwant:\n%s", format, golden, got, want)
				}
			}
		})
	}
}
