package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

func TestVersionFromBuildInfo(t *testing.T) {
	stamped := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.0.0-20261127234344-8f2457060ab7"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "8f2457060ab76ac3f3c3645dfeb2c55100b62377"},
			{Key: "vcs.time", Value: "2026-11-27T23:43:44Z"}, {Key: "vcs.modified", Value: "true"}}}
	for _, c := range []struct {
		name            string
		bi              *debug.BuildInfo
		version, commit string
		want            buildVersion
	}{
		{"stamped by go build", stamped, "", "", buildVersion{Version: "v0.0.0-20261127234344-8f2457060ab7",
			Commit: "8f2457060ab76ac3f3c3645dfeb2c55100b62377", Time: "2026-11-27T23:43:44Z", Modified: true}},
		{"link-time values win", stamped, "v1.2.3", "8f2457060ab76ac3f3c3645dfeb2c55100b62377", buildVersion{Version: "v1.2.3",
			Commit: "8f2457060ab76ac3f3c3645dfeb2c55100b62377", Time: "2026-11-27T23:43:44Z", Modified: true}},
		{"link-time commit of another tree", stamped, "v1.2.3", "abc", buildVersion{Version: "v1.2.3", Commit: "abc"}},
		{"not stamped", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}}, "", "",
			buildVersion{Version: "(devel)", Commit: "unknown"}},
		{"no build info", nil, "", "", buildVersion{Version: "(devel)", Commit: "unknown"}},
	} {
		got := versionFrom(c.bi, c.version, c.commit)
		got.Go, got.Platform = "", ""
		if got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}

// TestReadmeBuildStamps: the README's build command, run in a fresh clone
// of this checkout, makes a binary whose `version` names the clone's
// commit (with GOFLAGS=-buildvcs=false in the environment, as some set it).
func TestReadmeBuildStamps(t *testing.T) {
	if testing.Short() {
		t.Skip("clones the repository and builds the binary")
	}
	top, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Skipf("not in a git checkout (%v)", err)
	}
	f, err := os.Open(filepath.Join(strings.TrimSpace(string(top)), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var build []string
	for sc := bufio.NewScanner(f); sc.Scan(); {
		if strings.HasPrefix(sc.Text(), "go build ") {
			line, _, _ := strings.Cut(sc.Text(), "#")
			build = strings.Fields(line)
			break
		}
	}
	if len(build) == 0 {
		t.Fatal("no go build line in README.md")
	}
	clone := filepath.Join(t.TempDir(), "clone")
	if out, err := exec.Command("git", "clone", "-q", strings.TrimSpace(string(top)), clone).CombinedOutput(); err != nil {
		t.Fatalf("git clone: %v\n%s", err, out)
	}
	head, err := exec.Command("git", "-C", clone, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(build[0], build[1:]...)
	cmd.Dir = clone
	cmd.Env = append(os.Environ(), "GOFLAGS=-buildvcs=false")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%q: %v\n%s", build, err, out)
	}
	out, err := exec.Command(filepath.Join(clone, "cronactor"), "version").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "commit:  "+strings.TrimSpace(string(head))) || strings.Contains(string(out), "(devel)") {
		t.Errorf("version of the README's build of %s: %v\n%s", strings.TrimSpace(string(head)), err, out)
	}
}
