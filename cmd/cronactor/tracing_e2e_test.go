package main_test

import (
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cronactor/cronactor/projections/crontasks"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"
)

// collector is a stand-in OTLP/HTTP collector: it keeps the spans posted to
// /v1/traces.
type collector struct {
	mu    sync.Mutex
	spans []string // "name trace-id span-id key=value… parent=span-id"
}

func (c *collector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	var req coltracepb.ExportTraceServiceRequest
	if r.URL.Path != "/v1/traces" || proto.Unmarshal(b, &req) != nil {
		http.Error(w, "not an OTLP trace export", http.StatusBadRequest)
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, rs := range req.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			for _, s := range ss.Spans {
				line := fmt.Sprintf("%s %s %s", s.Name, hex.EncodeToString(s.TraceId), hex.EncodeToString(s.SpanId))
				for _, kv := range s.Attributes {
					line += fmt.Sprintf(" %s=%s", kv.Key, kv.Value.GetStringValue())
				}
				line += " parent=" + hex.EncodeToString(s.ParentSpanId)
				c.spans = append(c.spans, line)
			}
		}
	}
	w.Header().Set("Content-Type", "application/x-protobuf")
}

func (c *collector) find(prefix string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, s := range c.spans {
		if strings.HasPrefix(s, prefix) {
			out = append(out, s)
		}
	}
	return out
}

// The daemon with OTEL_EXPORTER_OTLP_ENDPOINT set exports a span per run and
// per API request to the collector, and the http kind's endpoint receives
// the traceparent of the handler span, the run span's child.
func TestDaemonExportsSpansToOTLPCollector(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test builds and runs the daemon")
	}
	col := &collector{}
	colSrv := httptest.NewServer(col)
	defer colSrv.Close()
	var mu sync.Mutex
	var parents []string
	ep := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		parents = append(parents, r.Header.Get("traceparent"))
		mu.Unlock()
	}))
	defer ep.Close()

	bin := buildBinary(t)
	addr := freeAddr(t)
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "OTEL_") && !strings.HasPrefix(kv, "CRONACTOR_") {
			env = append(env, kv)
		}
	}
	env = append(env, "OTEL_EXPORTER_OTLP_ENDPOINT="+colSrv.URL, "OTEL_BSP_SCHEDULE_DELAY=50", "OTEL_SERVICE_NAME=cronactor-e2e")
	cmd := exec.Command(bin, "serve", "--data", filepath.Join(t.TempDir(), "data"), "--listen", addr, "--tick", "100ms")
	cmd.Env = env
	logs := &syncBuf{}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	d := &daemon{t: t, cmd: cmd, url: "http://" + addr}
	waitFor(t, 20*time.Second, "daemon up\n"+logs.String(), func() bool {
		resp, err := http.Get(d.url + "/healthz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == 200
	})
	if !strings.Contains(logs.String(), "tracing on") {
		t.Errorf("no \"tracing on\" line in the log:\n%s", logs.String())
	}
	var task crontasks.Task
	if code := d.call("POST", "/v1/tasks", map[string]any{"name": "hook", "owner": "o", "kind": "http",
		"payload": map[string]any{"url": ep.URL}, "interval": "1s"}, &task); code != 201 {
		t.Fatalf("create: %d", code)
	}
	var parent string
	waitFor(t, 30*time.Second, "a run of the http task", func() bool {
		mu.Lock()
		defer mu.Unlock()
		if len(parents) > 0 {
			parent = parents[0]
		}
		return parent != ""
	})
	// traceparent: 00-<trace id>-<span id>-01
	f := strings.Split(parent, "-")
	if len(f) != 4 || f[0] != "00" || f[3] != "01" {
		t.Fatalf("traceparent %q", parent)
	}
	handle := fmt.Sprintf("handle http %s %s", f[1], f[2])
	waitFor(t, 30*time.Second, "the handler's span at the collector (has "+fmt.Sprint(col.find(""))+")", func() bool { return len(col.find(handle)) == 1 })
	hf := strings.Fields(col.find(handle)[0])
	want := fmt.Sprintf("run http %s %s", f[1], strings.TrimPrefix(hf[len(hf)-1], "parent="))
	waitFor(t, 30*time.Second, "the run's span, the handler span's parent, at the collector (has "+fmt.Sprint(col.find(""))+")", func() bool { return len(col.find(want)) == 1 })
	run := col.find(want)[0]
	for _, kv := range []string{"cronactor.task.id=" + task.ID.String(), "cronactor.task.name=hook", "cronactor.run.outcome=completed"} {
		if !strings.Contains(run, kv) {
			t.Errorf("run span %q lacks %s", run, kv)
		}
	}
	waitFor(t, 30*time.Second, "the create request's span", func() bool { return len(col.find("POST /v1/tasks ")) == 1 })

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("daemon exit: %v\n%s", err, logs.String())
	}
}
