package tracing_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Heavy clients stay at the edge (docs/decisions/0011-tracing.md): only
// this package and cmd/ import the OpenTelemetry SDK, its exporters or the
// OTLP protobufs, or this package; the core imports no OpenTelemetry at all.
// Test files are not checked.
func TestOnlyTheEdgeImportsTheSDK(t *testing.T) {
	root := filepath.Join("..", "..")
	edge := func(dir string) bool { return dir == "internal/tracing" || strings.HasPrefix(dir, "cmd/") }
	core := []string{"actors/task", "actors/archetype", "actors/clock", "actors/dueindex", "events", "projections"}
	heavy := []string{"go.opentelemetry.io/otel/sdk", "go.opentelemetry.io/otel/exporters", "go.opentelemetry.io/proto",
		"github.com/cronactor/cronactor/internal/tracing"}
	checked := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != root && (strings.HasPrefix(n, ".") || n == "testdata" || n == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		dir := filepath.ToSlash(filepath.Dir(rel))
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		checked++
		for _, im := range f.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			for _, h := range heavy {
				if strings.HasPrefix(p, h) && !edge(dir) {
					t.Errorf("%s imports %s: only internal/tracing and cmd/ may", rel, p)
				}
			}
			for _, c := range core {
				if (dir == c || strings.HasPrefix(dir, c+"/")) && strings.HasPrefix(p, "go.opentelemetry.io/") {
					t.Errorf("%s imports %s: the core does not trace", rel, p)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 50 {
		t.Fatalf("checked only %d files: is the module root at %s?", checked, root)
	}
}
