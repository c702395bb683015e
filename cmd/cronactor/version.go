package main

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"runtime/debug"
)

func init() {
	commands["version"] = command{summary: "print the version, commit and Go version", run: runVersion}
}

// version and commit may be set at link time (the Makefile does:
// -X main.version=… -X main.commit=…); otherwise they come from the
// binary's build info.
var version, commit string

// buildVersion is what `cronactor version` prints.
type buildVersion struct {
	Version  string `json:"version"`
	Commit   string `json:"commit"`
	Modified bool   `json:"modified,omitempty"`
	// Time is the commit's time (vcs.time), when the build recorded it.
	Time     string `json:"commit_time,omitempty"`
	Go       string `json:"go"`
	Platform string `json:"platform"`
}

// unstamped is the version of a binary that carries neither link-time
// values nor VCS information (built outside a git checkout, or with
// -buildvcs=false, which some GOFLAGS set).
const unstamped = "(devel)"

func readVersion() buildVersion {
	bi, _ := debug.ReadBuildInfo()
	return versionFrom(bi, version, commit)
}

// versionFrom is the version from the link-time values (they win) and the
// build info (nil: none): the module version `go build` stamps in a git
// checkout, vcs.revision, vcs.time and vcs.modified.
func versionFrom(bi *debug.BuildInfo, version, commit string) buildVersion {
	v := buildVersion{Version: version, Commit: commit, Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi != nil {
		if v.Version == "" {
			v.Version = bi.Main.Version
		}
		v.Go = bi.GoVersion
		vcsCommit := ""
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				vcsCommit = s.Value
			case "vcs.time":
				v.Time = s.Value
			case "vcs.modified":
				v.Modified = s.Value == "true"
			}
		}
		if v.Commit == "" {
			v.Commit = vcsCommit
		} else if vcsCommit != "" && vcsCommit != v.Commit {
			v.Time, v.Modified = "", false // they describe another commit
		}
	}
	if v.Version == "" {
		v.Version = unstamped
	}
	if v.Commit == "" {
		v.Commit = "unknown"
	}
	return v
}

func runVersion(_ context.Context, env *cliEnv, args []string) error {
	fs := newFlags(env, "version")
	asJSON := fs.Bool("json", false, "print one JSON object")
	if err := fs.parse(args); err != nil {
		return err
	}
	if err := fs.noArgs(); err != nil {
		return err
	}
	v := readVersion()
	if *asJSON {
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintln(env.stdout, string(b))
		return err
	}
	commitLine := v.Commit
	if v.Time != "" {
		commitLine += " (" + v.Time + ")"
	}
	if v.Modified {
		commitLine += " (modified)"
	}
	if v.Commit == "unknown" && v.Version == unstamped {
		commitLine += " (not stamped: build in a git checkout with `go build -buildvcs=true` or `make build`)"
	}
	_, err := fmt.Fprintf(env.stdout, "cronactor %s\ncommit:  %s\ngo:      %s %s\n", v.Version, commitLine, v.Go, v.Platform)
	return err
}
