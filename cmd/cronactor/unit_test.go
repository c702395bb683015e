package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestSystemdUnit checks docs/cronactor.service with systemd-analyze when
// the machine has it: no warning from verify, and an exposure level of
// "OK" or better from the offline security review.
func TestSystemdUnit(t *testing.T) {
	text, err := os.ReadFile(filepath.Join("..", "..", "docs", "cronactor.service"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"ExecStart=/usr/local/bin/cronactor serve", "NoNewPrivileges=yes", "ProtectSystem=strict", "DynamicUser=yes", "StateDirectory=cronactor"} {
		if !strings.Contains(string(text), want) {
			t.Errorf("unit lacks %s", want)
		}
	}
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Skip("systemd-analyze not installed")
	}
	// verify wants ExecStart to exist: point it at this test binary.
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	unit := filepath.Join(t.TempDir(), "cronactor.service")
	os.WriteFile(unit, []byte(strings.ReplaceAll(string(text), "/usr/local/bin/cronactor", self)), 0o644)
	out, err := exec.Command(analyze, "verify", unit).CombinedOutput()
	if err != nil || len(strings.TrimSpace(string(out))) > 0 {
		t.Errorf("systemd-analyze verify: %v\n%s", err, out)
	}
	out, _ = exec.Command(analyze, "security", "--offline=true", unit).CombinedOutput()
	m := regexp.MustCompile(`Overall exposure level for \S+: ([0-9.]+)`).FindSubmatch(out)
	if m == nil {
		t.Logf("systemd-analyze security --offline not supported here:\n%s", out)
		return
	}
	if level, _ := strconv.ParseFloat(string(m[1]), 64); level > 2.0 {
		t.Errorf("exposure level %.1f, want at most 2.0\n%s", level, out)
	}
}
